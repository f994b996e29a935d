"""The package is fully type-annotated: mypy (configured in pyproject.toml) finds nothing."""
import pytest


def test_mypy_clean():
    api = pytest.importorskip("mypy.api")
    stdout, stderr, status = api.run(["gradlab", "--no-incremental"])
    assert status == 0, stdout + stderr
