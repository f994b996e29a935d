"""Which values are known to share a shape (gradlab/codegen/shapes.py), found without knowing
a shape, and the helpers the generated code leaves out because of it: only where both sides' shapes
are known, and never at the cost of a gradient (cases checked against finite differences)."""
from __future__ import annotations

import numpy as np
import pytest

import gradlab
from gradlab.codegen.shapes import SCALAR, shape_classes
from tests.codegen.ir_text import normalized
from tests.conftest import to_framework, to_numpy


def shapes_of(x, W, n):
    h = np.tanh(x)
    c = h * 2.0
    k = np.sqrt(n)
    m = x @ W
    e = np.exp(W)
    t = c * k
    return np.sum(t) + np.sum(m) + np.sum(e)


def classes():
    return shape_classes(normalized(shapes_of).ir, {"n"})


def test_elementwise_results_share_their_operands_class() -> None:
    c = classes()
    assert c["h"] == c["c"] == c["t"] == c["x"] == "param:x"
    assert c["e"] == c["W"] == "param:W"


def test_numbers_and_full_reductions_are_scalars_and_a_product_is_its_own_class() -> None:
    c = classes()
    assert c["n"] == c["k"] == SCALAR == "()"
    assert c["sum_t"] == SCALAR
    assert c["m"] not in (c["x"], c["W"], SCALAR)


def loop_changes_shape(x, v):
    h = x
    for i in range(2):
        h = h * v                 # may broadcast to v's shape: not surely x's
    return np.sum(h)


def test_a_value_assigned_with_two_shapes_is_mixed() -> None:
    c = shape_classes(normalized(loop_changes_shape).ir, set())
    assert str(c["h"]).startswith("mixed:")


def broadcasts(x, v):
    h = np.tanh(x) * v
    return np.sum(h)


def test_what_shares_a_shape_needs_no_unbroadcast_and_what_may_not_gets_one() -> None:
    df = gradlab.grad(shapes_of)
    assert "    dh = 2.0 * dc\n" in df.source                  # c = h * 2.0: h's shape
    assert "dc = gl.unbroadcast(dt * k, c)" in df.source       # k may be an array here
    source = gradlab.grad(broadcasts).source
    assert "gl.unbroadcast(" in source.split("# ── backward ──")[1]
    x, v = np.full(1, 0.3), np.array([0.5, 2.0])
    np.testing.assert_allclose(gradlab.grad(broadcasts)(x, v),
                               [(1 - np.tanh(0.3) ** 2) * np.sum(v)], rtol=1e-14)


def numeric(f, args, i, eps=1e-6):
    """Central differences of ``f`` in argument ``i`` (an array or a Python number)."""
    x = args[i]
    if isinstance(x, float):
        plus, minus = list(args), list(args)
        plus[i], minus[i] = x + eps, x - eps
        return (f(*plus) - f(*minus)) / (2 * eps)
    out = np.zeros_like(x)
    for k in np.ndindex(x.shape):
        e = np.zeros_like(x)
        e[k] = eps
        plus, minus = list(args), list(args)
        plus[i], minus[i] = x + e, x - e
        out[k] = (f(*plus) - f(*minus)) / (2 * eps)
    return out


def scalar_and_array(s, x):
    return np.sum(s * x + x / (s + 3.0))


def mean_by_len(x, k):
    n = len(x)
    return np.sum(x) / n * k + x[0] * x.shape[0]


def scalar_state(u, T0):
    T = T0
    c = 0.0
    for t in range(u.shape[0]):
        T = T + 0.2 * ((10.0 - T) * 0.1 + u[t] * 0.5)
        c = c + np.sum((T - 21.0) ** 2)
    return c


def test_a_python_number_among_arrays_gets_the_variant_for_numbers() -> None:
    """``s`` a Python float, ``x`` an array: ``x``'s gradient needs no unbroadcast (every term
    has ``x``'s shape); ``s``'s still sums over ``x``'s entries."""
    df = gradlab.grad(scalar_and_array, wrt=(0, 1))
    x = np.linspace(0.5, 1.5, 4)
    code = df.variant_source(2.0, x)
    assert code != df.source
    assert "dx = dtotal / s_plus_3" in code and "dx = dx + s * dtotal" in code
    assert "gl.unbroadcast(dtotal * x, s)" in code
    ds, dx = df(2.0, x)
    assert type(ds) is float
    np.testing.assert_allclose(ds, numeric(scalar_and_array, [2.0, x], 0), rtol=1e-6)
    np.testing.assert_allclose(dx, numeric(scalar_and_array, [2.0, x], 1), rtol=1e-6)


def test_len_and_shape_are_numbers() -> None:
    df = gradlab.grad(mean_by_len, wrt=(0, 1))
    code = df.source
    assert "dsum_x = dsum_x_over_n / n" in code, code
    assert "dx_0 = dx_0_times_t * gl.shape(x)[0]" in code, code
    x = np.linspace(-1.0, 2.0, 5)
    for k in (3.0, np.float64(3.0)):
        dx, dk = df(x, k)
        np.testing.assert_allclose(dx, numeric(mean_by_len, [x, 3.0], 0), rtol=1e-6)
        np.testing.assert_allclose(dk, numeric(mean_by_len, [x, 3.0], 1), rtol=1e-6)


@pytest.mark.parametrize("framework", ["numpy", "torch"])
@pytest.mark.parametrize("shape", [(6,), (6, 3)])
def test_a_state_from_u_t_is_right_whatever_u_is(framework: str, shape: tuple[int, ...]
                                                 ) -> None:
    """``u[t]`` is a number for a vector and a row for a matrix: nothing about ``T``'s shape
    is assumed, with ``T0`` a Python float or an array."""
    pytest.importorskip(framework)
    u = np.random.default_rng(0).normal(size=shape)
    df = gradlab.grad(scalar_state)
    for T0 in (20.0, np.full(shape[1:], 20.0)):
        got = to_numpy(df(to_framework(u, framework), T0 if isinstance(T0, float)
                          else to_framework(T0, framework)))
        want = numeric(scalar_state, [u, T0], 0, eps=1e-5)
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_unbroadcast_of_two_numbers_is_the_first() -> None:
    from gradlab.tensor.registry import backend
    gl = backend("numpy")
    for x, like in ((np.float64(2.0), 3.0), (2.0, np.float32(1.0)), (2, 1.0)):
        assert gl.unbroadcast(x, like) is x
    np.testing.assert_allclose(gl.unbroadcast(np.ones((3, 2)), np.float64(1.0)), 6.0)
    np.testing.assert_allclose(gl.unbroadcast(0.0, np.ones(2)), np.zeros(2))


def test_u_t_of_a_vector_is_a_number_and_a_matrix_gets_its_own_variant() -> None:
    """The variant for a 1-d ``u`` knows ``u[t]`` is a scalar (no unbroadcast, three values
    saved a step); the same gradient called with a 2-d ``u`` of the same type runs the general
    variant (the types of the arguments alone do not pick a variant here)."""
    df = gradlab.grad(scalar_state)
    rng = np.random.default_rng(1)
    vector, matrix = rng.normal(size=5), rng.normal(size=(5, 2))
    code = df.variant_source(vector, 20.0)
    assert "unbroadcast" not in code and "broadcast_like" not in code, code
    assert "unbroadcast" in df.variant_source(matrix, 20.0)
    for u in (vector, matrix, vector, matrix):
        np.testing.assert_allclose(df(u, 20.0), numeric(scalar_state, [u, 20.0], 0, eps=1e-5),
                                   rtol=1e-5, atol=1e-6)


def test_indexed_parameters_are_those_read_at_an_integer() -> None:
    from gradlab.codegen.program import normalize_function
    from gradlab.codegen.shapes import indexed_parameters

    def f(u, v, w, k):
        s = 0.0
        for t in range(3):
            s = s + u[t] + np.sum(v[t:t + 1]) + w[k] + u[0]
        return s

    assert indexed_parameters(normalize_function(f).ir) == {"u"}
