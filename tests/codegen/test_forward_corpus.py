"""Forward mode on the whole reverse-mode corpus, every backend: the jvp equals the directional
finite difference and <grad, v> from reverse mode, and comes back as the value's type (framework,
dtype, shape). Hessian-vector products on the corpus: test_hvp_corpus.py."""
from __future__ import annotations

import numpy as np
import pytest

import gradlab
from tests.codegen.corpus import CORPUS, Case, same_meaning
from tests.conftest import to_framework, to_numpy


def _tangents(case: Case, args: list) -> list:
    rng = np.random.default_rng(1)
    wrts = case.wrt if isinstance(case.wrt, tuple) else (case.wrt,)
    out = []
    for w in wrts:
        v = rng.normal(size=np.shape(args[w]))
        out.append(float(v) if w in case.scalars else np.asarray(v, dtype=np.float64))
    return out


def _directional(case: Case, args: list, tangents: list, eps: float = 1e-6) -> float:
    wrts = case.wrt if isinstance(case.wrt, tuple) else (case.wrt,)
    plus, minus = list(args), list(args)
    for w, v in zip(wrts, tangents):
        plus[w] = args[w] + eps * v
        minus[w] = args[w] - eps * v
    return (case.fn(*plus) - case.fn(*minus)) / (2 * eps)


@pytest.mark.parametrize("case", CORPUS, ids=lambda c: c.name)
def test_jvp_matches_directional_derivative_and_reverse_mode(case: Case, framework: str) -> None:
    if framework not in case.frameworks:
        pytest.skip(f"{case.name} is not meant for {framework}")
    args = case.inputs()
    tangents = _tangents(case, args)
    convert = lambda i, a: a if (i in case.scalars or i in case.ints) else to_framework(  # noqa
        a, framework)
    fw_args = [convert(i, a) for i, a in enumerate(args)]
    wrts = case.wrt if isinstance(case.wrt, tuple) else (case.wrt,)
    fw_tangents = [convert(w, v) for w, v in zip(wrts, tangents)]
    jvp = gradlab.jvp(case.fn, case.wrt)
    tangent_arg = tuple(fw_tangents) if isinstance(case.wrt, tuple) else fw_tangents[0]
    if not same_meaning(case, args, fw_args):
        # as in reverse mode (test_reverse_corpus): the guard refuses a reading of the
        # function that differs from what it computes on these arrays; off, NumPy's reading
        with pytest.raises(gradlab.ForwardMismatchError):
            jvp(*fw_args, tangent_arg)
        jvp = gradlab.jvp(case.fn, case.wrt, check=False)
    value, derivative = jvp(*fw_args, tangent_arg)
    np.testing.assert_allclose(float(to_numpy(value)), case.fn(*args), rtol=1e-9, atol=1e-9)
    assert type(derivative) is type(value), (type(derivative), type(value))
    assert np.shape(to_numpy(derivative)) == np.shape(to_numpy(value))
    assert getattr(derivative, "dtype", None) == getattr(value, "dtype", None)
    expected = _directional(case, args, tangents)
    np.testing.assert_allclose(float(to_numpy(derivative)), expected, rtol=case.tol,
                               atol=case.tol, err_msg=jvp.source)
    grads = gradlab.grad(case.fn, case.wrt)(*args)
    grads = grads if isinstance(case.wrt, tuple) else (grads,)
    dot = sum(float(np.sum(np.asarray(g) * np.asarray(v))) for g, v in zip(grads, tangents))
    np.testing.assert_allclose(float(to_numpy(derivative)), dot, rtol=1e-7, atol=1e-9)
