"""gradlab's jvp and hvp against two other autodiff systems, run on the same functions:

- ``torch.func``: ``jvp``, and ``jvp`` of ``grad`` for H v, on functions written with torch
  (below), on torch tensors;
- JAX: ``jax.jvp``, and ``jax.jvp`` of ``jax.grad`` for H v, on corpus functions with their
  ``numpy`` pointed at ``jax.numpy`` (those JAX can run as written: no item assignment, no
  helper of the user's, no SciPy), on JAX arrays.

Two independent implementations of the same mathematics agree to rounding (rtol 1e-9), which
finite differences cannot show; the corpus tests compare both modes with finite differences.
"""
from __future__ import annotations

import numpy as np
import pytest

import gradlab
from tests.codegen.corpus import CORPUS, Case
from tests.conftest import require, to_numpy

RTOL, ATOL = 1e-9, 1e-11
torch = pytest.importorskip("torch")


# --- functions written with torch -------------------------------------------------------------------
def t_mlp(W, x):
    h = torch.tanh(x @ W)
    return torch.sum(h ** 2) / 5.0


def t_softmax_cross_entropy(z):
    m = torch.amax(z, dim=1, keepdim=True)
    e = torch.exp(z - m)
    p = e / torch.sum(e, dim=1, keepdim=True)
    return -torch.sum(torch.log(p[:, 0]))


def t_rnn(W, xs):
    h = xs[0] * 0.0
    for t in range(4):
        h = torch.tanh(W @ h + xs[t])
    return torch.sum(h * h)


def t_while_and_branch(x):
    y = x * 1.0
    k = 0
    while k < 3:
        if torch.sum(y) > 0:
            y = torch.sin(y) * x
        else:
            y = y * y + x
        k += 1
    return torch.sum(y)


def t_rows(A):
    total = 0.0
    for row in A:
        total = total + torch.sum(torch.exp(row * 0.5) * row)
    return total


def t_reversed_loop(x):
    y = x[0] * 0.0
    for i in reversed(range(4)):
        y = torch.sin(y) * 1.5 + x[i] * x[i]
    return y * y


def t_list_stack(x):
    ys = []
    for i in range(3):
        ys.append(torch.sin(x * (i + 1.0)))
    return torch.sum(torch.stack(ys) ** 2)


def _t_layer(h, W, scale=1.0):
    return torch.tanh(h @ W) * scale


def t_helper(x, W):
    h = _t_layer(x, W)
    return torch.sum(_t_layer(h, W, scale=0.5) ** 3)


def t_select(x, y):
    return torch.sum(torch.where(x > y, x * y, torch.maximum(x, y * y)) + torch.clamp(x, -0.5, 0.5))


def t_indexing(x):
    return x[0, 1] * x[2, 3] + torch.sum(x[1:, ::2] ** 3) + torch.sum(torch.mean(x, dim=0) ** 2)


def t_early_return(x):
    if torch.max(x) > 10.0:
        return torch.sum(x)
    y = torch.log(torch.sum(torch.exp(x)))
    return y * y


def t_defaults(x, n=2, scale=0.5):
    y = x
    for i in range(n):
        y = torch.cos(y) * scale + x
    return torch.sum(y ** 2)


R = np.random.default_rng(7)
TORCH_CASES = [  # (function, inputs, wrt)
    (t_mlp, [R.normal(size=(4, 3)), R.normal(size=(5, 4))], 0),
    (t_mlp, [R.normal(size=(4, 3)), R.normal(size=(5, 4))], 1),
    (t_softmax_cross_entropy, [R.normal(size=(3, 4))], 0),
    (t_rnn, [R.normal(size=(3, 3)) * 0.5, R.normal(size=(4, 3))], 0),
    (t_rnn, [R.normal(size=(3, 3)) * 0.5, R.normal(size=(4, 3))], 1),
    (t_while_and_branch, [R.normal(size=5)], 0),
    (t_rows, [R.normal(size=(3, 4))], 0),
    (t_reversed_loop, [R.normal(size=4)], 0),
    (t_list_stack, [R.normal(size=5)], 0),
    (t_helper, [R.normal(size=(2, 3)), R.normal(size=(3, 3))], 0),
    (t_helper, [R.normal(size=(2, 3)), R.normal(size=(3, 3))], 1),
    (t_select, [R.normal(size=6), R.normal(size=6)], 0),
    (t_indexing, [R.normal(size=(3, 4))], 0),
    (t_early_return, [R.normal(size=5)], 0),
    (t_defaults, [R.normal(size=5)], 0),
]


def _partial(f, args, wrt):
    """f as a function of argument ``wrt`` alone (torch.func and JAX differentiate those)."""
    def g(x):
        return f(*args[:wrt], x, *args[wrt + 1:])
    return g


@pytest.mark.parametrize("fn, inputs, wrt", TORCH_CASES,
                         ids=[f"{c[0].__name__}-{c[2]}" for c in TORCH_CASES])
def test_against_torch_func(fn, inputs, wrt) -> None:
    import torch.func
    args = [torch.as_tensor(a) for a in inputs]
    v = torch.as_tensor(np.random.default_rng(wrt + 1).normal(size=inputs[wrt].shape))
    g = _partial(fn, args, wrt)
    want_value, want_jvp = torch.func.jvp(g, (args[wrt],), (v,))
    want_hvp = torch.func.jvp(torch.func.grad(g), (args[wrt],), (v,))[1]
    value, derivative = gradlab.jvp(fn, wrt)(*args, v)
    np.testing.assert_allclose(to_numpy(value), to_numpy(want_value), rtol=RTOL, atol=ATOL)
    np.testing.assert_allclose(to_numpy(derivative), to_numpy(want_jvp), rtol=RTOL, atol=ATOL)
    hv = gradlab.hvp(fn, wrt)(*args, v)
    assert isinstance(hv, torch.Tensor) and hv.shape == args[wrt].shape
    np.testing.assert_allclose(to_numpy(hv), to_numpy(want_hvp), rtol=RTOL, atol=ATOL)


# --- corpus functions on JAX ---------------------------------------------------------------------------
#: Corpus functions that JAX runs with jax.numpy for numpy (no item assignment, no helper of the
#: user's, no SciPy), one or two of each kind of construct: eager JAX compiles every operation
#: of every shape on its first call, which makes each case a second or more.
JAX_CASES = ["op_matmul", "op_scalar_array", "f_maximum_minimum", "f_where", "r_max_min",
             "r_logsumexp_by_hand", "la_concat_stack", "ix_read", "a_tuple_unpack", "b_if_elif",
             "l_for_rows", "l_while", "l_break", "l_rnn_all", "r_return_in_loop",
             "li_append_index", "c_integer_argument", "m_methods", "s_simulation"]
BY_NAME = {c.name: c for c in CORPUS}


@pytest.mark.parametrize("name", JAX_CASES)
def test_against_jax(name: str) -> None:
    require("jax")
    import jax
    import jax.numpy as jnp
    from gradlab.tensor.swap import with_module_swapped
    case: Case = BY_NAME[name]
    traced = with_module_swapped(case.fn, "numpy", jnp)
    args = [a if (i in case.scalars or i in case.ints) else jnp.asarray(a)
            for i, a in enumerate(case.inputs())]
    wrts = case.wrt if isinstance(case.wrt, tuple) else (case.wrt,)
    rng = np.random.default_rng(11)
    vs = [float(rng.normal()) if w in case.scalars else jnp.asarray(rng.normal(
        size=np.shape(args[w]))) for w in wrts]

    def of_wrt(*xs):
        full = list(args)
        for w, x in zip(wrts, xs):
            full[w] = x
        return traced(*full)
    primals = tuple(args[w] for w in wrts)

    def references(*tangents):
        value, jv = jax.jvp(of_wrt, primals, tangents)
        hv = jax.jvp(jax.grad(of_wrt, argnums=tuple(range(len(wrts)))), primals, tangents)[1]
        return value, jv, hv
    try:   # one compiled program is quicker than compiling each operation eagerly
        want_value, want_jvp, want_hvp = jax.jit(references)(*vs)
    except jax.errors.ConcretizationTypeError:   # a branch on a value: JAX runs it eagerly
        want_value, want_jvp, want_hvp = references(*vs)
    tangent = tuple(vs) if isinstance(case.wrt, tuple) else vs[0]
    value, derivative = gradlab.jvp(case.fn, case.wrt)(*args, tangent)
    np.testing.assert_allclose(float(to_numpy(value)), float(want_value), rtol=RTOL, atol=ATOL)
    np.testing.assert_allclose(float(to_numpy(derivative)), float(want_jvp), rtol=RTOL,
                               atol=ATOL)
    hv = gradlab.hvp(case.fn, case.wrt)(*args, tangent)
    hv = hv if isinstance(case.wrt, tuple) else (hv,)
    for got, want, w in zip(hv, want_hvp, wrts):
        np.testing.assert_allclose(to_numpy(got), to_numpy(want), rtol=RTOL, atol=ATOL,
                                   err_msg=f"H v of {name}, argument {w}")
