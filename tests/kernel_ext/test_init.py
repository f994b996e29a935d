"""``%load_ext gradlab`` (gradlab.kernel_ext): registers ``%%grad`` once, and removes it again."""
from __future__ import annotations

import pytest
from IPython.core.interactiveshell import InteractiveShell


@pytest.fixture()
def shell():
    ip = InteractiveShell.instance()
    ip.run_line_magic("load_ext", "gradlab")
    yield ip
    ip.run_line_magic("unload_ext", "gradlab")


def test_load_twice_and_unload(shell):
    shell.run_line_magic("load_ext", "gradlab")   # harmless
    assert "grad" in shell.magics_manager.magics["cell"]
    shell.run_line_magic("unload_ext", "gradlab")
    assert "grad" not in shell.magics_manager.magics["cell"]
    shell.run_line_magic("load_ext", "gradlab")
    assert "grad" in shell.magics_manager.magics["cell"]


def test_unloading_what_was_never_loaded_changes_nothing(shell):
    from gradlab.kernel_ext import unload_ipython_extension
    other = InteractiveShell()          # a shell gradlab was never loaded into
    unload_ipython_extension(other)
    assert "grad" not in other.magics_manager.magics["cell"]
    assert "grad" in shell.magics_manager.magics["cell"]     # the loaded one keeps it
