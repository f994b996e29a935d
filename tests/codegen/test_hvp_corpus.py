"""Hessian-vector products (forward mode over the generated gradient code) on the corpus: H v
equals the central difference of the gradient along v, stays in the inputs' framework with their
shapes, and the Hessian is symmetric (<u, H v> = <v, H u>). The whole corpus on NumPy and
torch; ``REPRESENTATIVE`` on TensorFlow and JAX."""
from __future__ import annotations

import numpy as np
import pytest

import gradlab
from tests.codegen.corpus import CORPUS, REPRESENTATIVE, Case, same_meaning
from tests.conftest import to_framework, to_numpy

EPS = 1e-5


def _wrts(case: Case) -> tuple[int, ...]:
    return case.wrt if isinstance(case.wrt, tuple) else (case.wrt,)


def _vectors(case: Case, args: list, seed: int) -> list:
    rng = np.random.default_rng(seed)
    return [float(rng.normal()) if w in case.scalars else rng.normal(size=np.shape(args[w]))
            for w in _wrts(case)]


def _gradient(case: Case, args: list, vs: list, step: float) -> list:
    """gradlab's NumPy gradient (checked against finite differences by the reverse corpus) at
    args + step * v."""
    moved = list(args)
    for w, v in zip(_wrts(case), vs):
        moved[w] = args[w] + step * v
    g = gradlab.grad(case.fn, case.wrt)(*moved)
    return [np.asarray(x, dtype=np.float64) for x in (g if isinstance(case.wrt, tuple) else (g,))]


def _hvp(case: Case, args: list, vs: list, framework: str) -> tuple:
    convert = lambda i, a: a if (i in case.scalars or i in case.ints) else to_framework(  # noqa
        a, framework)
    fw_args = [convert(i, a) for i, a in enumerate(args)]
    fw_vs = [convert(w, v) for w, v in zip(_wrts(case), vs)]
    h = gradlab.hvp(case.fn, case.wrt)
    v = tuple(fw_vs) if isinstance(case.wrt, tuple) else fw_vs[0]
    if not same_meaning(case, args, fw_args):
        # as in reverse mode (test_reverse_corpus): the guard refuses a reading of the
        # function that differs from what it computes on these arrays; off, NumPy's reading
        with pytest.raises(gradlab.ForwardMismatchError):
            h(*fw_args, v)
        h = gradlab.hvp(case.fn, case.wrt, check=False)
    got = h(*fw_args, v)
    return got if isinstance(case.wrt, tuple) else (got,), fw_args, h


def _cases(framework: str) -> list:
    slow = framework in ("tensorflow", "jax")
    return [pytest.param(framework, c, id=f"{framework}-{c.name}") for c in CORPUS
            if framework in c.frameworks and (not slow or c.name in REPRESENTATIVE)]


def test_representative_cases_exist():
    names = {c.name for c in CORPUS}
    assert REPRESENTATIVE <= names, REPRESENTATIVE - names


@pytest.mark.parametrize("framework, case", [p for fw in ("numpy", "torch", "tensorflow", "jax")
                                             for p in _cases(fw)])
def test_hvp_matches_the_gradients_difference(framework: str, case: Case) -> None:
    from tests.conftest import require
    require(framework)
    args = case.inputs()
    vs = _vectors(case, args, seed=3)
    got, fw_args, h = _hvp(case, args, vs, framework)
    plus, minus = _gradient(case, args, vs, EPS), _gradient(case, args, vs, -EPS)
    for position, g, p, m in zip(_wrts(case), got, plus, minus):
        value = to_numpy(g)
        assert np.shape(value) == np.shape(args[position]), (position, np.shape(value))
        np.testing.assert_allclose(value, (p - m) / (2 * EPS), rtol=case.tol * 10,
                                   atol=case.tol * 10,
                                   err_msg=f"H v of {case.name} (arg {position}) on {framework}"
                                           f"\n{h.source}")
        if framework != "numpy" and position not in case.scalars:
            assert type(g).__module__.split(".")[0] == type(
                fw_args[position]).__module__.split(".")[0], "H v must stay in the framework"


@pytest.mark.parametrize("case", CORPUS, ids=lambda c: c.name)
def test_hessian_is_symmetric(case: Case) -> None:
    args = case.inputs()
    u, v = _vectors(case, args, seed=4), _vectors(case, args, seed=5)
    hu, _, _ = _hvp(case, args, u, "numpy")
    hv, _, _ = _hvp(case, args, v, "numpy")
    u_hv = sum(float(np.sum(np.asarray(a) * np.asarray(b))) for a, b in zip(u, hv))
    v_hu = sum(float(np.sum(np.asarray(a) * np.asarray(b))) for a, b in zip(v, hu))
    assert u_hv == pytest.approx(v_hu, rel=1e-9, abs=1e-10)
