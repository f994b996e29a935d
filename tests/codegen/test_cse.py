"""One entry read once a step (gradlab.codegen.cse): a second ``u[t]`` of a block reads the
first one's value, where that is proved; the gradients stay right on every backend."""
from __future__ import annotations

import numpy as np
import pytest

import gradlab
from gradlab.codegen.cse import share_entries
from tests.codegen.ir_text import lines, normalized


def twice(u, T0):
    T = T0
    c = 0.0
    for t in range(u.shape[0]):
        T = T * 0.9 + u[t] * 0.5
        c = c + 0.3 * u[t] * u[t] + T ** 2
    return c


def test_a_second_read_of_the_same_entry_reads_the_first() -> None:
    fn = normalized(twice).ir
    share_entries(fn)
    assert lines(fn.body)[3:9] == [
        "    T_times_0_9 = multiply(T, 0.9)",
        "    u_t = getitem(u, t)",
        "    u_t_times_0_5 = multiply(u_t, 0.5)",
        "    T = add(T_times_0_9, u_t_times_0_5)",
        "    v0_3_times_u_t_2 = multiply(0.3, u_t)",      # was u_t_2 = getitem(u, t)
        "    product = multiply(v0_3_times_u_t_2, u_t)",
    ]


def written_between(u):
    s = 0.0
    for t in range(u.shape[0]):
        a = u[t] * 2.0
        u = u * 1.5                 # the array changes: the second read is another value
        s = s + a * u[t]
    return s


def index_changes(u):
    s = 0.0
    i = 0
    for t in range(u.shape[0] - 1):
        a = u[i] * 2.0
        i = i + 1
        s = s + a * u[i]
    return s


def read_before_in_next_step(u):
    s = 0.0
    b = 0.0
    for t in range(u.shape[0]):
        s = s + b               # the previous step's second read
        a = u[t] * 2.0
        s = s * a
        b = u[t]
    return s


@pytest.mark.parametrize("f", [written_between, index_changes])
def test_a_read_that_may_differ_stays(f) -> None:
    fn = normalized(f).ir
    before = lines(fn.body)
    share_entries(fn)
    assert lines(fn.body) == before


@pytest.mark.parametrize("framework", ["numpy", "torch", "tensorflow", "jax"])
@pytest.mark.parametrize("f", [twice, written_between, index_changes, read_before_in_next_step])
def test_gradients_match_finite_differences(f, framework: str) -> None:
    """grad, jvp and hvp of the functions above against central differences."""
    convert = {"numpy": lambda a: a}.get(framework)
    if convert is None:
        mod = pytest.importorskip({"torch": "torch", "tensorflow": "tensorflow",
                                   "jax": "jax.numpy"}[framework])
        convert = {"torch": lambda a: mod.tensor(a), "tensorflow": lambda a: mod.constant(a),
                   "jax": lambda a: mod.asarray(a)}[framework]
    rng = np.random.default_rng(3)
    u, v = rng.normal(size=5) * 0.5, rng.normal(size=5)
    extra = (0.3,) if f is twice else ()
    eps = 1e-6

    def fd(fun, x, d):
        return (fun(x + eps * d) - fun(x - eps * d)) / (2 * eps)

    numeric = np.array([fd(lambda x: f(x, *extra), u, e) for e in np.eye(5)])
    df = gradlab.grad(f)
    got = df(convert(u), *extra)
    np.testing.assert_allclose(np.asarray(got), numeric, rtol=1e-5, atol=1e-8)
    value, tangent = gradlab.jvp(f)(convert(u), *extra, convert(v))
    np.testing.assert_allclose(float(np.asarray(tangent)), numeric @ v, rtol=1e-5, atol=1e-8)
    numeric_hvp = fd(lambda x: np.asarray(gradlab.grad(f)(x, *extra)), u, v)
    hv = gradlab.hvp(f)(convert(u), *extra, convert(v))
    np.testing.assert_allclose(np.asarray(hv), numeric_hvp, rtol=1e-4, atol=1e-6)


def test_the_w6_loop_adds_into_du_once_a_step() -> None:
    """(Once, and as a store: each ``du[t]`` is written once into zeros, see inplace.py.)"""
    source = gradlab.grad(twice).source
    assert source.count("du[t] = ") == 1 and "du[t] +=" not in source and "u_t_2" not in source.replace(
        "v0_3_times_u_t_2", "")
