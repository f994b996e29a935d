"""Every saved failing program in ``regressions/`` (written by ``test_generated`` after
hypothesis shrinks a failure), replayed on every backend with the same checks.

A file defines ``f`` (and the helpers it calls), ``SHAPES``, ``WRT``, ``SEED`` and ``XFAIL``:
``None``, ``"gradlab bug: ..."`` (expected to fail on every backend) or a dict
``{framework: "gradlab bug: ..."}``. The folder may be empty.
"""
from __future__ import annotations

import glob
import os

import pytest

from tests.conftest import require
from tests.hardening.differential import (REGRESSIONS, Refused, check_backend, reference,
                                          transforms)
from tests.hardening.generator import import_file, make_inputs, wrt_indices

FILES = sorted(glob.glob(os.path.join(REGRESSIONS, "*.py")))
_modules: dict[str, object] = {}


def load(path: str):   # type: ignore[no-untyped-def]
    if path not in _modules:
        name = "gradlab_regression_" + os.path.splitext(os.path.basename(path))[0]
        _modules[path] = import_file(path, name)
    return _modules[path]


def _params() -> list[object]:
    from gradlab.tensor import FRAMEWORKS
    out = []
    for path in FILES:
        module = load(path)
        xfail = getattr(module, "XFAIL", None)
        for fw in FRAMEWORKS:
            reason = xfail.get(fw) if isinstance(xfail, dict) else xfail
            marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
            out.append(pytest.param(path, fw, marks=marks,
                                    id=f"{os.path.basename(path)}-{fw}"))
    return out


def test_regression_files_are_complete() -> None:
    """Passes with zero files too: each file has what the replay needs."""
    for path in FILES:
        module = load(path)
        for attr in ("f", "SHAPES", "WRT", "SEED"):
            assert hasattr(module, attr), f"{path} lacks {attr}"


@pytest.mark.parametrize("path, framework", _params())
def test_regression(path: str, framework: str) -> None:
    require(framework)
    module = load(path)
    shapes = module.SHAPES
    args = make_inputs(shapes, module.SEED)
    wrt = wrt_indices(module.WRT, len(shapes))
    ref = reference(module.f, args, wrt, module.SEED)
    try:
        vg, fwd = transforms(module.f, module.WRT)
    except Refused as refusal:  # a refusal is not a wrong gradient
        pytest.skip(f"gradlab now refuses this program: {refusal}")
    numpy_grads = None
    if framework != "numpy":
        numpy_grads = check_backend("numpy", ref, vg, fwd, module.WRT)
    check_backend(framework, ref, vg, fwd, module.WRT, numpy_grads)
