"""Every corpus function's generated gradient, on every backend, against central finite
differences in float64 (and against HIPS autograd where autograd can run the function)."""
from __future__ import annotations

import numpy as np
import pytest

import gradlab
from tests.conftest import to_framework, to_numpy
from tests.codegen.corpus import CORPUS, Case, same_meaning


def finite_differences(case: Case, args: list, wrt: int, eps: float = 1e-6) -> np.ndarray:
    x = np.asarray(args[wrt], dtype=np.float64)
    grad = np.zeros_like(x)
    for idx in np.ndindex(x.shape):
        plus, minus = list(args), list(args)
        xp, xm = x.copy(), x.copy()
        xp[idx] += eps
        xm[idx] -= eps
        plus[wrt] = float(xp) if wrt in case.scalars else xp
        minus[wrt] = float(xm) if wrt in case.scalars else xm
        grad[idx] = (case.fn(*plus) - case.fn(*minus)) / (2 * eps)
    return grad


def _wrts(case: Case) -> tuple[int, ...]:
    return case.wrt if isinstance(case.wrt, tuple) else (case.wrt,)


def test_corpus_is_large_enough():
    assert len(CORPUS) >= 80, len(CORPUS)


def generic_only(df) -> None:
    """``df`` runs its generic code whatever its arguments' shapes (not the code specialised
    for them, which a gradient runs by default: see gradlab.codegen.textbook)."""
    df._specializes = False


@pytest.mark.parametrize("form", ["specialised", "generic"])
@pytest.mark.parametrize("case", CORPUS, ids=lambda c: c.name)
def test_gradient_matches_finite_differences(case: Case, framework: str, form: str) -> None:
    if framework not in case.frameworks:
        pytest.skip(f"{case.name} is not meant for {framework}")
    args = case.inputs()
    df = gradlab.grad(case.fn, case.wrt)
    converted = [a if (i in case.scalars or i in case.ints) else to_framework(a, framework)
                 for i, a in enumerate(args)]
    if form == "generic":
        if df.source_for(*converted) == df.variant_source(*converted):
            pytest.skip("no code specialised for these shapes: the other form is this one")
        generic_only(df)
    if not same_meaning(case, args, converted):
        # Called with this framework's arrays, the function itself computes something else
        # than its NumPy reading (torch's x.std() is unbiased): the semantic guard refuses the
        # gradient, naming the line; switched off, gradlab differentiates the NumPy reading.
        if form == "specialised":   # (the guard checks each kind of arguments once)
            with pytest.raises(gradlab.ForwardMismatchError):
                df(*converted)
        df = gradlab.grad(case.fn, case.wrt, check=False)
        if form == "generic":
            generic_only(df)
    got = df(*converted)
    got = got if isinstance(case.wrt, tuple) else (got,)
    for position, g in zip(_wrts(case), got):
        expected = finite_differences(case, args, position)
        value = to_numpy(g)
        assert value.shape == expected.shape, (position, value.shape, expected.shape)
        np.testing.assert_allclose(value, expected, rtol=case.tol, atol=case.tol,
                                   err_msg=f"d{case.name}/d(arg {position}) on {framework}\n"
                                           f"{df.source_for(*converted)}")
        if framework != "numpy" and position not in case.scalars:
            assert type(g).__module__.split(".")[0] == type(converted[position]).__module__.split(
                ".")[0], "the gradient must stay in the inputs' framework"


@pytest.mark.parametrize("case", [c for c in CORPUS if not c.scalars], ids=lambda c: c.name)
def test_gradient_matches_autograd(case: Case) -> None:
    autograd = pytest.importorskip("autograd")
    from gradlab.tensor.swap import with_module_swapped
    import autograd.numpy as anp
    args = case.inputs()
    traced = with_module_swapped(case.fn, "numpy", anp)
    try:
        reference = autograd.grad(traced, case.wrt)(*args)
    except Exception as e:  # autograd cannot run every NumPy program (item assignment, scipy)
        pytest.skip(f"HIPS autograd cannot differentiate {case.name}: {type(e).__name__}")
    got = gradlab.grad(case.fn, case.wrt)(*args)
    for g, r in zip(got if isinstance(case.wrt, tuple) else (got,),
                    reference if isinstance(case.wrt, tuple) else (reference,)):
        np.testing.assert_allclose(np.asarray(g), np.asarray(r), rtol=1e-7, atol=1e-9)
