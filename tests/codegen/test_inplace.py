"""Gradient buffers the generated code owns are updated in place (``du[t] += du_t``); nothing
the user passed or sees is ever changed, repeated indices still add up, and a buffer another
name shares is never updated in place."""
from __future__ import annotations

import numpy as np
import pytest

import gradlab
from tests.conftest import require, to_framework, to_numpy


def loop_over_rows(u, T0):
    T = T0
    c = 0.0
    for t in range(u.shape[0]):
        T = T + 0.2 * ((10.0 - T) * 0.1 + u[t] * 0.5)
        c = c + 0.3 * u[t] * u[t] + (T - 21.0) ** 2
    return c


def rows_of_a_matrix(x, W):
    for t in range(W.shape[0]):
        x = np.tanh(W[t] * x)
    return np.sum(x)


def negative_and_tuple_indices(x):
    return x[-1, 0] * x[0, 1] + np.sum(x[1]) * x[-2, -1]


def slices(x):
    return np.sum(x[1:] * x[:-1]) + np.sum(x[:, 2] ** 2)


def repeated_literal(x):
    return np.sum(x[[0, 0, 1]] ** 2)


def repeated_indices(x, idx):
    return np.sum(x[idx] * np.arange(1.0, 4.0))


def shared_buffer(x):
    y = x                     # dx = dy: one array under two names
    s = y[0] * 2.0 + x[1] * 3.0
    return s * s


def each_step_twice(x, u):
    for t in range(u.shape[0]):
        x = x * u[t] + u[t - 1]
    return np.sum(x)


def vector_output(x):
    return x[0] * x + x[1]


rng = np.random.default_rng(0)
CASES = [
    (loop_over_rows, (rng.normal(size=6), 19.0), (0, 1)),
    (rows_of_a_matrix, (rng.normal(size=3), rng.normal(size=(5, 3))), (0, 1)),
    (negative_and_tuple_indices, (rng.normal(size=(3, 4)),), 0),
    (slices, (rng.normal(size=(4, 3)),), 0),
    (repeated_literal, (rng.normal(size=3),), 0),
    (repeated_indices, (rng.normal(size=4), np.array([2, 2, 0])), 0),
    (shared_buffer, (rng.normal(size=3),), 0),
    (each_step_twice, (rng.normal(size=3), rng.normal(size=4)), (0, 1)),
]
IDS = [c[0].__name__ for c in CASES]


def _numeric(fn, args, position, eps=1e-6):
    """Central differences of ``fn`` with respect to argument ``position``."""
    x = np.array(args[position], dtype=float)
    out = np.zeros_like(x)
    for i in np.ndindex(*x.shape):
        plus, minus = x.copy(), x.copy()
        plus[i] += eps
        minus[i] -= eps
        a = list(args)
        a[position] = plus
        f_plus = fn(*a)
        a[position] = minus
        out[i] = (f_plus - fn(*a)) / (2 * eps)
    return out


@pytest.mark.parametrize("fn, args, wrt", CASES, ids=IDS)
def test_gradient_matches_finite_differences(fn, args, wrt):
    grads = gradlab.grad(fn, wrt)(*args)
    positions = wrt if isinstance(wrt, tuple) else (wrt,)
    grads = grads if isinstance(wrt, tuple) else (grads,)
    for p, g in zip(positions, grads):
        np.testing.assert_allclose(g, _numeric(fn, args, p), rtol=1e-5, atol=1e-6)


def test_a_loop_over_rows_adds_into_its_buffer():
    source = gradlab.grad(rows_of_a_matrix, 1).source
    assert "dW = gl.zeros_like(W)" in source
    assert "dW[t] " in source
    assert "index_add" not in source


def from_minus_two(u):
    s = 0.0
    for t in range(-2, u.shape[0]):     # t = -2 and t = 1 name one entry of 3
        s = s + u[t] * u[t]
    return s


def read_in_the_loop(u):
    s = 0.0
    for t in range(u.shape[0]):
        s = s + u[t] * np.sum(u)
    return s


def test_each_entry_written_once_into_zeros_is_a_store():
    """``du[t] = du_t``: a buffer of zeros, a loop over range(n), nothing else naming it."""
    source = gradlab.grad(loop_over_rows).source
    assert "du[t] = " in source and "du[t] +=" not in source


def test_an_entry_two_steps_may_name_keeps_adding():
    source = gradlab.grad(from_minus_two).source
    assert "du[t] = " not in source
    u = np.array([1.0, 2.0, 3.0])
    np.testing.assert_allclose(gradlab.grad(from_minus_two)(u), [2.0, 8.0, 12.0])
    np.testing.assert_allclose(gradlab.grad(read_in_the_loop)(u), _numeric(
        read_in_the_loop, (u,), 0), rtol=1e-6)


@pytest.mark.parametrize("framework", ["jax", "tensorflow", "torch"])
def test_a_store_is_written_back_functionally_where_arrays_cannot_change(framework):
    require(framework)
    u = np.random.default_rng(3).normal(size=5)
    x = to_framework(u, framework)
    if framework == "torch":
        x.requires_grad_(True)       # torch under autograd: the functional twin too
    g = gradlab.grad(loop_over_rows)(x, 19.0)
    np.testing.assert_allclose(to_numpy(g), _numeric(loop_over_rows, (u, 19.0), 0),
                               rtol=1e-5, atol=1e-6)


def test_literal_indices_negative_ones_and_tuples_are_updated_in_place():
    source = gradlab.grad(negative_and_tuple_indices).source
    assert "dx[-1, 0] += " in source and "dx[1] += " in source


def test_repeated_indices_keep_index_add():
    # x[[0, 0, 1]] and x[idx] may name an entry twice: `dx[[0, 0]] += g` would add g once
    assert "gl.index_add(" in gradlab.grad(repeated_literal).source
    assert "gl.index_add(" in gradlab.grad(repeated_indices).source
    g = gradlab.grad(repeated_indices)(np.zeros(4), np.array([2, 2, 0]))
    np.testing.assert_allclose(g, [3.0, 0.0, 3.0, 0.0])


def test_a_buffer_another_name_shares_is_not_updated_in_place():
    source = gradlab.grad(shared_buffer).source
    assert "+= " not in source
    x = np.array([1.0, 2.0, 3.0])
    s = 2.0 * x[0] + 3.0 * x[1]
    np.testing.assert_allclose(gradlab.grad(shared_buffer)(x), [4 * s, 6 * s, 0.0])


def test_the_seed_is_never_a_buffer():
    x = np.array([1.0, 2.0, 3.0])
    seed = np.array([1.0, -1.0, 2.0])
    kept = seed.copy()
    df = gradlab.grad(vector_output)
    g = df(x, seed=seed)
    np.testing.assert_array_equal(seed, kept)
    expected = x[0] * seed + np.array([np.sum(seed * x), np.sum(seed), 0.0])
    np.testing.assert_allclose(g, expected)


def _snapshot(values):
    return [np.array(to_numpy(v), copy=True) for v in values]


@pytest.mark.parametrize("fn, args, wrt", CASES, ids=IDS)
def test_nothing_the_user_passed_or_sees_changes(framework, fn, args, wrt):
    """grad (and value_and_grad), jvp and hvp leave their inputs alone, and a gradient handed
    back is not changed by a later call."""
    inputs = [a if isinstance(a, float) else to_framework(a, framework) for a in args]
    before = _snapshot(inputs)
    first = gradlab.grad(fn, wrt)(*inputs)
    first = first if isinstance(first, tuple) else (first,)
    kept = _snapshot(first)
    value, again = gradlab.value_and_grad(fn, wrt)(*inputs)
    for a, b in zip(_snapshot(first), kept):
        np.testing.assert_array_equal(a, b)
    for a, b in zip(_snapshot(inputs), before):
        np.testing.assert_array_equal(a, b)
    position = wrt[0] if isinstance(wrt, tuple) else wrt
    tangent = to_framework(np.ones_like(np.asarray(args[position], dtype=float)), framework) \
        if not isinstance(args[position], float) else 1.0
    tangent_kept = _snapshot([tangent])
    gradlab.jvp(fn, position)(*inputs, tangent)
    gradlab.hvp(fn, position)(*inputs, tangent)
    for a, b in zip(_snapshot(inputs) + _snapshot([tangent]), before + tangent_kept):
        np.testing.assert_array_equal(a, b)


def test_torch_autograd_through_the_gradient_falls_back_to_new_arrays():
    """An input that requires grad: autograd records the gradient's code, which then changes
    nothing in place, and its derivative is gradlab's Hessian-vector product."""
    require("torch")
    import torch
    u = torch.tensor(rng.normal(size=5), requires_grad=True)
    df = gradlab.grad(loop_over_rows)
    g = df(u, 19.0)
    v = torch.tensor(rng.normal(size=5))
    (hv,) = torch.autograd.grad((g * v).sum(), u)
    expected = gradlab.hvp(loop_over_rows)(u.detach(), 19.0, v)
    np.testing.assert_allclose(hv.numpy(), to_numpy(expected), rtol=1e-10)
    plain = df(u.detach(), 19.0)
    np.testing.assert_allclose(g.detach().numpy(), plain.numpy(), rtol=1e-12)


def test_torch_func_transforms_fall_back_to_new_arrays():
    require("torch")
    import torch
    df = gradlab.grad(loop_over_rows)
    u = torch.tensor(rng.normal(size=5))
    v = torch.tensor(rng.normal(size=5))
    hv = torch.func.grad(lambda w: (df(w, 19.0) * v).sum())(u)
    expected = gradlab.hvp(loop_over_rows)(u, 19.0, v)
    np.testing.assert_allclose(hv.numpy(), to_numpy(expected), rtol=1e-10)


def test_trace_records_each_steps_buffer_as_it_was():
    """The tracer runs the update as a new array per step: the rows of dW filled so far, step
    by step, not the finished buffer at every step."""
    W = rng.normal(size=(4, 3))
    report = gradlab.trace(gradlab.grad(rows_of_a_matrix, 1), keep_values=True)(
        rng.normal(size=3), W)
    buffers = [v.raw for step in report.steps for v in step.values if v.name == "dW"]
    filled = [int(np.sum(np.any(to_numpy(b) != 0, axis=1))) for b in buffers]
    assert filled[0] == 0 and filled[-1] == 4
    assert filled == sorted(filled) and len(set(filled)) == 5


def test_torch_autograd_through_a_buffer_updated_in_place():
    """A closed-over tensor that requires grad: the call's arguments do not, so the buffer is
    updated in place while autograd records it; its derivative is still torch's own."""
    require("torch")
    import torch
    W = torch.tensor(rng.normal(size=4), requires_grad=True)

    def f(x, u):
        for t in range(u.shape[0]):
            x = torch.tanh(W * x + u[t])
        return torch.sum(x * x)

    x, u, v = (torch.tensor(rng.normal(size=s)) for s in (4, (5, 4), (5, 4)))
    df = gradlab.grad(f, 1)
    assert "du[t] = " in df.source       # (a store: each entry written once, see inplace.py)
    (through_gradlab,) = torch.autograd.grad((df(x, u) * v).sum(), W)
    u_leaf = u.clone().requires_grad_(True)
    (du,) = torch.autograd.grad(f(x, u_leaf), u_leaf, create_graph=True)
    (through_torch,) = torch.autograd.grad((du * v).sum(), W)
    np.testing.assert_allclose(through_gradlab.numpy(), through_torch.numpy(), rtol=1e-10)
