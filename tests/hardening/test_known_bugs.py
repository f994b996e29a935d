"""Minimal reproductions of the gradlab bugs the hardening tests found, one test each.

Each test states the correct behaviour; ``bug=`` says what gradlab did when it was found. An
open bug is marked ``xfail(strict=True)`` on the backends where gradlab is wrong (``on("torch",
bug=...)``): when it is fixed the test XPASSes, which fails the run until the mark is removed
(and the matching switch in ``generator.py`` turned back on, so the fuzzer covers the construct
again). Bugs whose tests carry no xfail were fixed (in 393225c); their tests stay as regression
tests.
"""
from __future__ import annotations

import atexit
import shutil

import numpy as np
import pytest

import gradlab
from gradlab.tensor import FRAMEWORKS, backend, is_installed
from tests.conftest import central_difference, require, to_framework, to_numpy


def on(*broken: str, bug: str) -> list[object]:
    """The four frameworks, xfail(strict) on those in ``broken`` ("all": every one) while
    ``bug`` is open. ``bug`` says what gradlab did when the bug was found; a fixed bug keeps
    its test, with nothing in ``broken``."""
    out = []
    for fw in FRAMEWORKS:
        marks = [pytest.mark.xfail(strict=True, reason=bug)] if (
            "all" in broken or fw in broken) else []
        out.append(pytest.param(fw, marks=marks, id=fw))
    return out


def central(f, x: np.ndarray, eps: float = 1e-6) -> np.ndarray:
    x = np.asarray(x, dtype=np.float64)
    g = np.zeros_like(x)
    for idx in np.ndindex(x.shape):
        xp, xm = x.copy(), x.copy()
        xp[idx] += eps
        xm[idx] -= eps
        g[idx] = (f(xp) - f(xm)) / (2 * eps)
    return g


X3 = np.array([0.3, -0.2, 0.5])
X4 = np.array([0.3, -0.2, 0.5, 0.9])


# --- A: wrt given as a one-element tuple ----------------------------------------------------------
def product(x, y):
    return np.sum(x * y)


def broadcast_scalar(x):
    v = x * np.ones(4)
    return np.sum(v) + x


@pytest.mark.parametrize("framework", on(
    bug=(
        "grad(f, wrt=(1,)) returns the bare gradient, and api._conform iterates over it: "
        "(array([0., 0., 0.]),) instead of (x,)")))
def test_wrt_one_element_tuple(framework: str) -> None:
    require(framework)
    x, y = to_framework(X3, framework), to_framework(np.ones(3), framework)
    (dy,) = gradlab.grad(product, (1,))(x, y)
    np.testing.assert_allclose(to_numpy(dy), X3)


@pytest.mark.parametrize("framework", on(
    bug=(
        "grad(f, wrt=(0,)) of a 0-d parameter raises TypeError: 'numpy.float64' object is not "
        "iterable (api._conform)")))
def test_wrt_one_element_tuple_scalar(framework: str) -> None:
    require(framework)
    (dx,) = gradlab.grad(broadcast_scalar, (0,))(to_framework(0.5, framework))
    np.testing.assert_allclose(to_numpy(dx), 5.0)


# --- B: primitives applied to Python floats -------------------------------------------------------
def sin_of_constant(w):
    c = 0.5
    return np.sum(w) + np.sin(c)


def sin_of_conditional_constant(x):
    return np.sum(x) + np.sin(x[1] * 1.0 if x[1] < 0.0 else 0.5)


def _shifted(a, scale=1.5):
    return a + np.abs(scale)


def abs_of_default_argument(x):
    return np.sum(_shifted(x))


@pytest.mark.parametrize("framework", on(
    bug=(
        "gradlab bug: the else branch makes the operand the Python float 0.5 at run time and "
        "gl.sin(0.5) follows: torch raises TypeError (sin(): argument 'input' must be Tensor, "
        "not float), TensorFlow computes in float32 and adding it to float64 raises "
        "InvalidArgumentError")))
def test_primitive_of_python_float_from_conditional(framework: str) -> None:
    require(framework)
    x = np.array([0.3, 0.2, 0.5])
    g = gradlab.grad(sin_of_conditional_constant)(to_framework(x, framework))
    np.testing.assert_allclose(to_numpy(g), np.ones(3))


@pytest.mark.parametrize("framework", on(
    bug=(
        "gradlab bug: the generated copy of _shifted computes gl.abs(scale) on the default "
        "argument 1.5: torch raises TypeError (abs(): argument 'input' must be Tensor, not "
        "float), TensorFlow computes in float32 and adding it to float64 raises "
        "InvalidArgumentError")))
def test_primitive_of_python_float_default_argument(framework: str) -> None:
    require(framework)
    g = gradlab.grad(abs_of_default_argument)(to_framework(X3, framework))
    np.testing.assert_allclose(to_numpy(g), np.ones(3))


@pytest.mark.parametrize("framework", on(
    bug=(
        "gl.sin(0.5) on a Python float: torch raises TypeError (sin(): argument 'input' must be"
        " Tensor, not float); TensorFlow makes a float32 tensor and adding it to float64 raises"
        " InvalidArgumentError")))
def test_primitive_of_python_float(framework: str) -> None:
    require(framework)
    g = gradlab.grad(sin_of_constant)(to_framework(X4, framework))
    np.testing.assert_allclose(to_numpy(g), np.ones(4))


def sum_axis0(x):
    return np.sum(x, axis=0)


def max_axis0(x):
    return np.max(x, axis=0)


@pytest.mark.parametrize("framework", on(
    bug=(
        "the gradient of np.sum(x, axis=0) (x 1-D) is gl.expand_dims(<seed 1.0>, 0), and "
        "torch's expand_dims rejects the Python float")))
def test_axis_reduction_to_scalar(framework: str) -> None:
    require(framework)
    g = gradlab.grad(sum_axis0)(to_framework(X4, framework))
    np.testing.assert_allclose(to_numpy(g), np.ones(4))


@pytest.mark.parametrize("framework", on(
    bug=(
        "the gradient of np.max(x, axis=0) (x 1-D): torch rejects the Python-float seed in "
        "expand_dims, TensorFlow raises `x` and `y` must have the same dtype (float32 != "
        "float64)")))
def test_axis_max_to_scalar(framework: str) -> None:
    require(framework)
    g = gradlab.grad(max_axis0)(to_framework(X4, framework))
    np.testing.assert_allclose(to_numpy(g), [0.0, 0.0, 0.0, 1.0])


# --- C: conditional expressions share computations across their branches -------------------------
def ifexp_in_loop(x):
    s = 0.0
    for i in range(2):
        s = s + np.sum(np.sin(x * i) if i == 0 else np.sin(x * i) * 2.0)
    return s


def ifexp_same_subexpression(x):
    return np.sum(x * np.ones(4) if np.sum(x) > 10.0 else x * np.ones(4) * 2.0)


@pytest.mark.parametrize("framework", on(
    bug=(
        "the normalizer memoizes `x * i` across the branches of the conditional expression; in "
        "the loop the else branch reuses iteration 0's value: NumPy/JAX give value 0.0 and "
        "gradient 0 (silently wrong), torch/TensorFlow crash on a None")))
def test_conditional_expression_in_loop(framework: str) -> None:
    require(framework)
    value, g = gradlab.value_and_grad(ifexp_in_loop)(to_framework(X4, framework))
    np.testing.assert_allclose(float(to_numpy(value)), ifexp_in_loop(X4))
    np.testing.assert_allclose(to_numpy(g), 2.0 * np.cos(X4))


@pytest.mark.parametrize("framework", on(
    bug=(
        "np.ones(4) is computed in the if branch only and reused in the else branch: "
        "UnboundLocalError")))
def test_conditional_expression_shared_subexpression(framework: str) -> None:
    require(framework)
    g = gradlab.grad(ifexp_same_subexpression)(to_framework(X4, framework))
    np.testing.assert_allclose(to_numpy(g), 2.0 * np.ones(4))


# --- D: TensorFlow's index_update/index_add round Python floats to float32 ------------------------
def read_last(w):
    return w[-1] * 1.2


def write_constant(x):
    out = np.zeros(4)
    out[1] = 0.3
    return np.sum(out) + x[0]


@pytest.mark.parametrize("framework", on(
    bug=(
        "tf.cast(<Python float>, float64) goes through float32: the gradient is "
        "1.2000000476837158")))
def test_index_add_with_python_float(framework: str) -> None:
    require(framework)
    g = gradlab.grad(read_last)(to_framework(X4, framework))
    np.testing.assert_allclose(to_numpy(g), [0.0, 0.0, 0.0, 1.2], rtol=1e-12, atol=0)


@pytest.mark.parametrize("framework", on(
    bug=(
        "out[1] = 0.3 stores 0.30000001192092896 on TensorFlow (the forward value is off by "
        "1.2e-8)")))
def test_index_update_with_python_float(framework: str) -> None:
    require(framework)
    value, _ = gradlab.value_and_grad(write_constant)(to_framework(X4, framework))
    np.testing.assert_allclose(float(to_numpy(value)), write_constant(X4), rtol=1e-12, atol=0)


# --- E, K: conditions are kept as written --------------------------------------------------------
def condition_on_created_array(x):
    if np.sum(np.ones(4)) > 0.0:
        return np.sum(x)
    return np.mean(x)


def condition_with_matmul(v, m):
    if np.sum(v @ m) > 0.0:
        return np.sum(v * 2.0)
    return np.sum(v)


@pytest.mark.parametrize("framework", on(
    bug=(
        "the condition becomes np.sum(gl.ones(4)) > 0.0: NumPy's sum of a torch tensor raises "
        "TypeError: sum() got an unexpected keyword argument 'axis'")))
def test_condition_on_created_array(framework: str) -> None:
    require(framework)
    g = gradlab.grad(condition_on_created_array)(to_framework(X4, framework))
    np.testing.assert_allclose(to_numpy(g), np.ones(4))


@pytest.mark.parametrize("framework", on(
    bug=(
        "`v @ m` stays an operator in the condition; TensorFlow's @ of a vector and a matrix "
        "raises InvalidArgumentError (In[0] and In[1] has different ndims)")))
def test_condition_with_matmul(framework: str) -> None:
    require(framework)
    v, m = to_framework(X3, framework), to_framework(np.ones((3, 4)), framework)
    g = gradlab.grad(condition_with_matmul)(v, m)
    np.testing.assert_allclose(to_numpy(g), 2.0 * np.ones(3))


# --- F1: targets of one tuple assignment get one shape class --------------------------------------
def tuple_of_shapes(x, w):
    a, b = x * 1.0, w * 2.0
    return np.sum(a * b)


@pytest.mark.parametrize("framework", on(
    bug=(
        "analyze.shape_classes gives every target of a tuple assignment the same class, so "
        "unbroadcast is dropped: the gradient wrt w (4,) comes back (3, 4)")))
def test_tuple_assignment_of_different_shapes(framework: str) -> None:
    require(framework)
    x = np.arange(12.0).reshape(3, 4)
    g = gradlab.grad(tuple_of_shapes, 1)(to_framework(x, framework),
                                         to_framework(np.ones(4), framework))
    np.testing.assert_allclose(to_numpy(g), 2.0 * x.sum(axis=0))


# --- F2, M, O, P: early returns ------------------------------------------------------------------
def two_nested_returns(x):
    if np.sum(x) > 100.0:
        if np.sum(x) > 200.0:
            return np.sum(x * 2.0)
    if np.sum(x) > 100.0:
        if np.sum(x) > 200.0:
            return np.sum(x * 3.0)
    return np.sum(x)


def _pair(a):
    return a * 2.0, a * 3.0


def tuple_call_in_branch(x):
    s = np.sum(x)
    if np.sum(x) > -100.0:
        p, q = _pair(x)
        s = np.sum(q)
    return s


def return_in_loop_in_branch(x):
    if np.sum(x) > 0.0:
        for i in range(2):
            if x[0] > -5.0:
                return np.sum(x * 2.0)
    return np.sum(x)


def zero_adjoint_unbroadcast(x):
    a = x[1] * np.ones(4)
    a = a + x[1]
    if x[1] > 0.0:
        a = a * 2.0
    if x[1] > 0.0:
        return np.sum(a)
    return np.mean(x)


@pytest.mark.parametrize("framework", on(
    bug=(
        "two `if: if: return` blocks in a row: the generated code reads the result variable "
        "before assigning it (UnboundLocalError)")))
def test_two_nested_early_returns(framework: str) -> None:
    require(framework)
    g = gradlab.grad(two_nested_returns)(to_framework(X4, framework))
    np.testing.assert_allclose(to_numpy(g), np.ones(4))


@pytest.mark.parametrize("framework", on(
    bug=(
        "the adjoint of a tuple-valued call inside a branch starts as 0.0 and is indexed: "
        "TypeError: 'float' object is not subscriptable")))
def test_tuple_call_in_branch(framework: str) -> None:
    require(framework)
    g = gradlab.grad(tuple_call_in_branch)(to_framework(X3, framework))
    np.testing.assert_allclose(to_numpy(g), 3.0 * np.ones(3))


@pytest.mark.parametrize("framework", on(
    bug=(
        "a return inside a loop inside an if is dropped: value 1.0 and gradient [1, 1, 1] "
        "instead of 2.0 and [2, 2, 2] (silently wrong)")))
def test_return_in_loop_in_branch(framework: str) -> None:
    require(framework)
    value, g = gradlab.value_and_grad(return_in_loop_in_branch)(to_framework(X3, framework))
    np.testing.assert_allclose(float(to_numpy(value)), return_in_loop_in_branch(X3))
    np.testing.assert_allclose(to_numpy(g), 2.0 * np.ones(3))


@pytest.mark.parametrize("framework", on(
    bug=(
        "the adjoint of `a` is 0.0 on the path that returns np.mean(x), and gl.unbroadcast(0.0,"
        " a) fails (NumPy: cannot reshape array of size 1 into shape (4,))")))
def test_zero_adjoint_into_unbroadcast(framework: str) -> None:
    require(framework)
    g = gradlab.grad(zero_adjoint_unbroadcast)(to_framework(X3, framework))
    np.testing.assert_allclose(to_numpy(g), np.ones(3) / 3.0)


def zero_adjoint_indexed(x):
    if x[1] > 0.0:
        return x[1] * 1.0
    out = np.zeros(4)
    out[1] += x[1]
    if x[1] > 5.0:
        return np.sum(out)
    return np.mean(x)


@pytest.mark.parametrize("framework", on(
    bug=(
        "after an early return, the adjoint of `out` is 0.0 on the path that returns np.mean(x)"
        " and the adjoint of out[1] += ... indexes it: TypeError: 'float' object is not "
        "subscriptable")))
def test_zero_adjoint_indexed(framework: str) -> None:
    require(framework)
    g = gradlab.grad(zero_adjoint_indexed)(to_framework(X3, framework))
    np.testing.assert_allclose(to_numpy(g), np.ones(3) / 3.0)


def zero_adjoint_index_add(x):
    if x[1] > 0.0:
        return x[1] * 1.0
    v = x[1] * np.ones(4)
    out = np.zeros(4)
    out[1] += v[1]
    return np.sum(v * 1.0 if x[1] > 0.0 else out * 1.0)


@pytest.mark.parametrize("framework", on(
    bug=(
        "after an early return the adjoint of v is 0.0 on one path and gl.index_add(0.0, 1, "
        "...) fails (NumPy: IndexError: too many indices for array: array is 0-dimensional)")))
def test_zero_adjoint_index_add(framework: str) -> None:
    require(framework)
    g = gradlab.grad(zero_adjoint_index_add)(to_framework(X3, framework))
    np.testing.assert_allclose(to_numpy(g), [0.0, 1.0, 0.0])


def python_float_accumulator(x):
    s = 0.5 ** 2
    for i in range(1):
        s += x[1]
    return np.sum(x) + s


@pytest.mark.parametrize("framework", on(
    bug=(
        "gradlab bug: forward mode starts the tangent of s (the Python float 0.25) as "
        "gl.zeros_like(s): torch raises TypeError (zeros_like(): argument 'input' must be "
        "Tensor, not float), TensorFlow makes it float32 and adding float64 raises "
        "InvalidArgumentError")))
def test_jvp_of_python_float_variable(framework: str) -> None:
    require(framework)
    _, derivative = gradlab.jvp(python_float_accumulator)(to_framework(X3, framework),
                                                          to_framework(np.ones(3), framework))
    np.testing.assert_allclose(float(to_numpy(derivative)), 4.0)


# --- R: a tuple return with an element computed from constants --------------------------------
def _value_and_constant(a, scale=1.5):
    return a * 2.0, scale * 1.0


def tuple_return_with_a_constant(x):
    p, q = _value_and_constant(x)
    return np.sum(p) + q


@pytest.mark.parametrize("framework", on(
    bug=(
        "gradlab bug: the adjoint of the returned tuple is gl.zeros_like_list(out), whose "
        "element 1 is the Python float 1.5: torch raises TypeError (zeros_like(): argument "
        "'input' must be Tensor, not float); TensorFlow makes it float32 and adding the float64"
        " seed raises InvalidArgumentError")))
def test_tuple_return_with_a_constant(framework: str) -> None:
    require(framework)
    g = gradlab.grad(tuple_return_with_a_constant)(to_framework(X3, framework))
    np.testing.assert_allclose(to_numpy(g), 2.0 * np.ones(3))


# --- S: a user function called with a constant ------------------------------------------------
def _sin_helper(a):
    return np.sin(a) * 2.0


def helper_called_with_a_constant(x):
    v = _sin_helper(0.5)
    return np.sum(x) + v


@pytest.mark.parametrize("framework", on(
    bug=(
        "gradlab bug: the generated copy of _sin_helper computes gl.sin(0.5) on the Python "
        "float: torch raises TypeError (sin(): argument 'input' must be Tensor, not float), "
        "TensorFlow computes in float32 and adding it to float64 raises InvalidArgumentError")))
def test_helper_called_with_a_constant(framework: str) -> None:
    require(framework)
    g = gradlab.grad(helper_called_with_a_constant)(to_framework(X3, framework))
    np.testing.assert_allclose(to_numpy(g), np.ones(3))


def _scaled_sin(a, k):
    return np.sin(a) * k


def helper_on_numbers_and_on_arrays(x):
    c = _scaled_sin(0.5, 2.0)
    return np.sum(_scaled_sin(x, 3.0)) + c


@pytest.mark.parametrize("framework", on(bug=""))
def test_helper_called_with_numbers_and_with_arrays(framework: str) -> None:
    """One helper, two calls: each gets its own copy, and the copy for Python numbers says so
    in its name and computes with NumPy as written."""
    require(framework)
    df = gradlab.grad(helper_on_numbers_and_on_arrays)
    assert "def _scaled_sin_of_numbers_a_k(a, k):" in df.source
    assert "sin_a = np.sin(a)" in df.source
    g = df(to_framework(X3, framework))
    np.testing.assert_allclose(to_numpy(g), 3.0 * np.cos(X3), rtol=1e-12)
    _, derivative = gradlab.jvp(helper_on_numbers_and_on_arrays)(
        to_framework(X3, framework), to_framework(np.ones(3), framework))
    np.testing.assert_allclose(float(to_numpy(derivative)), 3.0 * np.sum(np.cos(X3)),
                               rtol=1e-12)


# --- J, L: loop-carried updates ------------------------------------------------------------------
def square_in_loop(x):
    y = x * 1.0
    for i in range(2):
        y = y * y
    return np.sum(y)


def divide_in_loop(x):
    y = x * 1.0
    for i in range(1):
        y = y / x
    return np.sum(y)


def tanh_in_loop(x):
    y = x * 1.0
    for i in range(2):
        y = np.tanh(y)
    return np.sum(y)


def exp_in_while(x):
    y = x * 1.0
    n = 0
    while n < 2:
        n += 1
        y = np.exp(y)
    return np.sum(y)


@pytest.mark.parametrize("framework", on(
    bug=(
        "forward mode updates y = y * y before computing its tangent from y (the jvp is 2.19 "
        "instead of 3.49; silently wrong)")))
def test_jvp_of_loop_carried_update(framework: str) -> None:
    require(framework)
    _, derivative = gradlab.jvp(square_in_loop)(to_framework(X4, framework),
                                               to_framework(np.ones(4), framework))
    expected = float(np.sum(central(square_in_loop, X4)))
    np.testing.assert_allclose(float(to_numpy(derivative)), expected, rtol=1e-6)


@pytest.mark.parametrize("fn", [divide_in_loop, tanh_in_loop, exp_in_while],
                         ids=lambda f: f.__name__)
@pytest.mark.parametrize("framework", on(
    bug=(
        "reverse mode: a rule that uses its result (divide, tanh, exp, sqrt) overwriting its "
        "operand in a loop reads the restored operand as the result (silently wrong gradient)")))
def test_loop_carried_update_through_result_rule(framework: str, fn) -> None:
    require(framework)
    g = gradlab.grad(fn)(to_framework(X4, framework))
    np.testing.assert_allclose(to_numpy(g), central(fn, X4), rtol=1e-6, atol=1e-8)


# --- Q: dead branches under a condition that calls a user function --------------------------------
def _double(a):
    return a * 2.0


def call_in_condition(x):
    if np.sum(_double(x)) > 0.0:
        v = x[0]
    return np.sum(x)


@pytest.mark.parametrize("framework", on(
    bug=(
        "the branch body is dead code and removed, but the if stays (its condition calls a user"
        " function): the generated code does not compile (IndentationError: expected an "
        "indented block after 'if' statement)")))
def test_call_in_condition_with_dead_branch(framework: str) -> None:
    require(framework)
    g = gradlab.grad(call_in_condition)(to_framework(X3, framework))
    np.testing.assert_allclose(to_numpy(g), np.ones(3))


# --- N: a valid program refused --------------------------------------------------------------------
def writes_then_branch(x):
    out = np.zeros(4)
    for i in range(2):
        out[i] = x[i]
    if np.sum(x) > 0.0:
        out = out * x
    return np.sum(out)


def test_writes_in_loop_then_branch_not_refused() -> None:
    """Found: refused with 'out[...] is assigned while out_1 refers to the same array' (out_1
    was gradlab's own renamed variable; nothing aliases out)."""
    g = gradlab.grad(writes_then_branch)(X4)
    np.testing.assert_allclose(g, central(writes_then_branch, X4), rtol=1e-6)


# ==================================================================================================
# Classes found by the people generator (tests/hardening/people/): one test per switch in
# people/switches.py that is off, named in its comment. The class ids are those of
# people/classes.py and of the catalogue. When a test XPASSes, remove its mark and turn the
# switch on.
# ==================================================================================================
import functools  # noqa: E402
import math  # noqa: E402

import scipy.special  # noqa: E402

try:  # the torch-, TF- and JAX-written functions below need their framework at call time only
    import torch
except ImportError:  # pragma: no cover
    torch = None
try:
    import tensorflow as tf
except ImportError:  # pragma: no cover
    tf = None
try:
    import jax.numpy as jnp
except ImportError:  # pragma: no cover
    jnp = None

from gradlab.errors import GradlabError  # noqa: E402

V3 = np.array([0.3, -0.7, 1.1])
M23 = np.array([[0.3, -0.7, 1.1], [0.5, 0.2, -0.4]])


def only(framework: str, bug: str, fixed: bool = False) -> list[object]:
    """A test of code written in one framework: that framework, xfail(strict) while ``bug``
    is open; a fixed bug keeps its text and says ``fixed=True``."""
    marks = [pytest.mark.xfail(strict=True, reason=bug)] if bug and not fixed else []
    return [pytest.param(framework, marks=marks, id=framework)]


def assert_derivatives(f, x: np.ndarray, framework: str, reference=None) -> None:
    """grad, jvp (value and tangent) and hvp of ``f`` at ``x`` on ``framework``, each against
    central differences of ``reference`` (``f`` on the framework's arrays unless given; for
    hvp, of gradlab's gradient, itself checked first)."""
    if reference is None:
        def reference(a):
            return f(to_framework(a, framework))
    fx = to_framework(x, framework)
    expected = central_difference(reference, x)
    g = gradlab.grad(f)
    np.testing.assert_allclose(to_numpy(g(fx)), expected, rtol=1e-5, atol=1e-7)
    v = np.random.default_rng(3).normal(size=x.shape)
    value, tangent = gradlab.jvp(f)(fx, to_framework(v, framework))
    assert float(to_numpy(value)) == pytest.approx(float(to_numpy(reference(x))), rel=1e-9)
    assert float(to_numpy(tangent)) == pytest.approx(float(np.sum(expected * v)), abs=1e-6)
    fd = (np.asarray(to_numpy(g(to_framework(x + 1e-5 * v, framework))))
          - np.asarray(to_numpy(g(to_framework(x - 1e-5 * v, framework))))) / 2e-5
    h = to_numpy(gradlab.hvp(f)(fx, to_framework(v, framework)))
    np.testing.assert_allclose(h, fd, rtol=1e-4, atol=1e-5)


def answers_or_refuses(call) -> tuple[bool, object]:  # type: ignore[no-untyped-def]
    """(True, result) when the call answers, (False, error) when gradlab refuses."""
    try:
        return True, call()
    except GradlabError as e:
        return False, e


# --- output-not-scalar (switch TUPLE_AND_ARRAY_OUTPUTS) -------------------------------------------
def returns_a_tuple(x):
    return np.sum(x ** 2), x


def returns_an_array(x):
    return x * 1.0


@pytest.mark.parametrize("framework", on(
    bug=(
        "grad of a function returning a tuple crashes inside (NumPy: TypeError: 'float' object "
        "is not subscriptable) instead of a GradlabError")))
def test_grad_of_tuple_output_is_refused(framework: str) -> None:
    require(framework)
    with pytest.raises(GradlabError):
        gradlab.grad(returns_a_tuple)(to_framework(V3, framework))


@pytest.mark.parametrize("framework", on(
    bug=(
        "hvp of a function returning an array answers (d(sum f)) instead of asking for a seed")))
def test_hvp_of_array_output_is_refused(framework: str) -> None:
    require(framework)
    with pytest.raises(GradlabError):
        gradlab.hvp(returns_an_array)(to_framework(V3, framework), to_framework(V3, framework))


# --- value-is-the-function (switch RETURN_FLOAT) --------------------------------------------------
def returns_float_of_sum(x):
    return float(np.sum(x ** 2))


@pytest.mark.parametrize("framework", on(
    bug=(
        "value_and_grad of `return float(...)` returns the function object itself as the value")))
def test_value_and_grad_of_float_return(framework: str) -> None:
    require(framework)
    value, g = gradlab.value_and_grad(returns_float_of_sum)(to_framework(V3, framework))
    assert float(to_numpy(value)) == pytest.approx(np.sum(V3 ** 2))
    np.testing.assert_allclose(to_numpy(g), 2 * V3)


# --- int-bool-input-gradient-truncated (switch DIFFERENTIATE_INT_AND_BOOL) ------------------------
def scaled_sum(x):
    return np.sum(x * 1.5)


@pytest.mark.parametrize("framework", on(
    bug=(
        "the gradient w.r.t. an int input is truncated to int64 ([1, 1, 1]); TensorFlow: "
        "TypeError: Cannot convert 1.5 to EagerTensor of dtype int64")))
def test_gradient_wrt_int_input(framework: str) -> None:
    """Either refuse (as JAX does) or promote: never a gradient truncated to the int dtype."""
    require(framework)
    answered, g = answers_or_refuses(
        lambda: gradlab.grad(scaled_sum)(to_framework(np.array([1, 2, 3]), framework)))
    if answered:
        np.testing.assert_allclose(to_numpy(g), [1.5, 1.5, 1.5])


# --- complex-real-is-a-copy (switch COMPLEX_INPUTS) ----------------------------------------------
def real_part_sum(z, x):
    return np.sum(z.real ** 2) + np.sum(x)


@pytest.mark.parametrize("framework", on(
    bug=(
        "z.real is read as a copy: the value comes back complex")))
def test_real_part_of_complex_input(framework: str) -> None:
    require(framework)
    z = to_framework(np.array([1.0 + 2.0j, -0.5 + 1.0j]), framework)
    value, _ = gradlab.value_and_grad(real_part_sum, 1)(z, to_framework(V3, framework))
    assert np.isrealobj(to_numpy(value))
    assert float(np.real(to_numpy(value))) == pytest.approx(1.25 + np.sum(V3))


# --- builtin-max-min-constant (switch BUILTIN_MAX_MIN_OF_MANY) ------------------------------------
def max_of_three(x):
    return max(x[0], x[1], 0.1)


def min_of_a_list(x):
    return min([x[0], x[1]])


@pytest.mark.parametrize("framework", on(
    bug=(
        "builtin max of three arguments is a constant: zero gradient (silently wrong)")))
def test_builtin_max_of_three(framework: str) -> None:
    require(framework)
    g = gradlab.grad(max_of_three)(to_framework(V3, framework))
    np.testing.assert_allclose(to_numpy(g), [1.0, 0.0, 0.0])


@pytest.mark.parametrize("framework", on(
    bug=(
        "builtin min of a list is a constant: zero gradient (silently wrong)")))
def test_builtin_min_of_a_list(framework: str) -> None:
    require(framework)
    g = gradlab.grad(min_of_a_list)(to_framework(V3, framework))
    np.testing.assert_allclose(to_numpy(g), [0.0, 1.0, 0.0])


# --- builtin-sum-of-array (switch BUILTIN_SUM_OF_ARRAYS) ------------------------------------------
def builtin_sum_of_matrix(x):
    return np.sum(sum(x) ** 2)


@pytest.mark.parametrize("framework", on(
    bug=(
        "builtin sum() of a matrix (the sum of its rows) crashes in the generated code")))
def test_builtin_sum_of_matrix(framework: str) -> None:
    require(framework)
    answered, g = answers_or_refuses(
        lambda: gradlab.grad(builtin_sum_of_matrix)(to_framework(M23, framework)))
    if answered:
        np.testing.assert_allclose(to_numpy(g), 2 * np.broadcast_to(M23.sum(axis=0), M23.shape))


# --- bool-values-on-backends (switch BOOL_VALUES) -------------------------------------------------
def bool_mask_times_x(x):
    m = np.isfinite(x)
    return np.sum(m * x)


@pytest.mark.parametrize("framework", on(
    bug=(
        "a bool array times a float crashes in the generated code (InvalidArgumentError: Value "
        "for attr 'T' of bool)")))
def test_bool_times_float_on_backends(framework: str) -> None:
    require(framework)
    g = gradlab.grad(bool_mask_times_x)(to_framework(V3, framework))
    np.testing.assert_allclose(to_numpy(g), np.ones(3))


# --- divmod-on-tensors (switch DIVMOD) ------------------------------------------------------------
def divmod_remainder(x):
    q, r = divmod(x, 2.0)
    return np.sum(r) + np.sum(x)


@pytest.mark.parametrize("framework", on(
    bug=(
        "divmod(x, 2.0): the remainder gets a zero gradient (NumPy), the generated code calls "
        "divmod on tensors (TypeError)")))
def test_divmod_on_backends(framework: str) -> None:
    require(framework)
    answered, g = answers_or_refuses(
        lambda: gradlab.grad(divmod_remainder)(to_framework(V3, framework)))
    if answered:
        np.testing.assert_allclose(to_numpy(g), 2 * np.ones(3))


# --- conversion-is-a-constant (switch CONVERSIONS) ------------------------------------------------
def asarray_of_parameter(x):
    x = np.asarray(x)
    return np.sum(x ** 2)


@pytest.mark.parametrize("framework", on(
    bug=(
        "x = np.asarray(x) gives a zero gradient (silently wrong)")))
def test_asarray_of_parameter(framework: str) -> None:
    require(framework)
    g = gradlab.grad(asarray_of_parameter)(to_framework(V3, framework))
    np.testing.assert_allclose(to_numpy(g), 2 * V3)


# --- decorator-dropped (switch DECORATORS) --------------------------------------------------------
def _doubled(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        return 2.0 * fn(*args, **kwargs)
    return wrapper


@_doubled
def doubled_square_sum(x):
    return np.sum(x ** 2)


@pytest.mark.parametrize("framework", on(
    bug=(
        "the functools.wraps decorator is dropped: value and gradient of the undecorated "
        "function")))
def test_functools_wraps_decorator(framework: str) -> None:
    """Differentiate the function called (2 * sum(x^2)), or refuse."""
    require(framework)
    answered, out = answers_or_refuses(
        lambda: gradlab.value_and_grad(doubled_square_sum)(to_framework(V3, framework)))
    if answered:
        value, g = out
        assert float(to_numpy(value)) == pytest.approx(2 * np.sum(V3 ** 2))
        np.testing.assert_allclose(to_numpy(g), 4 * V3)


# --- builtin-round-on-tensors (switch BUILTIN_ROUND) ----------------------------------------------
def rounded_first(x):
    return np.sum(x ** 2) + round(x[0], 1)


@pytest.mark.parametrize("framework", on(
    bug=(
        "round(x[0], 1) in the generated code: torch: no __round__; TensorFlow: no astype")))
def test_builtin_round_on_backends(framework: str) -> None:
    require(framework)
    g = gradlab.grad(rounded_first)(to_framework(V3, framework))
    np.testing.assert_allclose(to_numpy(g), 2 * V3)


# --- loop-over-dict (switch LOOP_OVER_DICT) -------------------------------------------------------
def loop_over_dict(x, w):
    p = {"a": x, "b": w}
    s = 0.0
    for k in p:
        s = s + np.sum(p[k] ** 2)
    return s


@pytest.mark.parametrize("framework", on(
    bug=(
        "for k in a dict: KeyError: 0 in the generated code")))
def test_loop_over_dict(framework: str) -> None:
    require(framework)
    answered, g = answers_or_refuses(lambda: gradlab.grad(loop_over_dict)(
        to_framework(V3, framework), to_framework(V3, framework)))
    if answered:
        np.testing.assert_allclose(to_numpy(g), 2 * V3)


# --- mixed-float32-float64 (switch MIXED_PRECISION) -----------------------------------------------
def product_sum(x, w):
    return np.sum(x * w)


@pytest.mark.parametrize("framework", on(
    bug=(
        "float32 times float64 (NumPy promotes): InvalidArgumentError on TensorFlow (now "
        "refused there, at the user's line, with the cast to write)")))
def test_float32_times_float64_on_tensorflow(framework: str) -> None:
    require(framework)
    x = to_framework(V3.astype(np.float32), framework)
    answered, g = answers_or_refuses(
        lambda: gradlab.grad(product_sum)(x, to_framework(V3, framework)))
    if answered:
        assert to_numpy(g).dtype == np.float32
        np.testing.assert_allclose(to_numpy(g), V3, rtol=1e-6)
    else:
        assert framework == "tensorflow"
        assert "return np.sum(x * w)" in str(g) and "tf.cast" in str(g)


# --- attribute-of-expression-is-constant (switch ATTRIBUTE_OF_EXPRESSION) -------------------------
def transpose_of_expression(w):
    v = (w * 2.0).T
    return np.sum(v ** 2)


@pytest.mark.parametrize("framework", on(
    bug=(
        "(w * 2.0).T is read as a constant: zero gradient (silently wrong)")))
def test_transpose_of_expression(framework: str) -> None:
    require(framework)
    g = gradlab.grad(transpose_of_expression)(to_framework(M23, framework))
    np.testing.assert_allclose(to_numpy(g), 8 * M23)


# --- negative-step-slice-on-torch (switch NEGATIVE_STEP_SLICES) -----------------------------------
def reversed_weights(x):
    return np.sum(x[::-1] * np.arange(3.0))


@pytest.mark.parametrize("framework", on(
    bug=(
        "x[::-1]: ValueError: step must be greater than zero (torch)")))
def test_negative_step_slice_on_torch(framework: str) -> None:
    require(framework)
    g = gradlab.grad(reversed_weights)(to_framework(V3, framework))
    np.testing.assert_allclose(to_numpy(g), [2.0, 1.0, 0.0])


# --- dict-literal-is-a-constant (switch DICT_LITERALS) --------------------------------------------
def dict_literal_of_arrays(x, w):
    p = {"a": x, "b": w}
    return np.sum(p["a"] * 2.0 + p["b"])


@pytest.mark.parametrize("framework", on(
    bug=(
        "a dict literal holding arrays: zero gradient (silently wrong)")))
def test_dict_literal_of_arrays(framework: str) -> None:
    require(framework)
    g = gradlab.grad(dict_literal_of_arrays)(to_framework(V3, framework),
                                             to_framework(V3, framework))
    np.testing.assert_allclose(to_numpy(g), 2 * np.ones(3))


# --- mod-is-a-constant (switch MOD) ---------------------------------------------------------------
def mod_of_parameter(x):
    return np.sum(x % 0.5)


@pytest.mark.parametrize("framework", on(
    bug=(
        "x % 0.5 is a constant: zero gradient (silently wrong; it is 1)")))
def test_mod_of_parameter(framework: str) -> None:
    require(framework)
    g = gradlab.grad(mod_of_parameter)(to_framework(V3, framework))
    np.testing.assert_allclose(to_numpy(g), np.ones(3))


# --- axis-function-of-scalar (switch AXIS_FUNCTIONS_OF_SCALARS) -----------------------------------
def softmax_of_a_number(x):
    return scipy.special.softmax(x[0]) * x[1]


def argsort_of_a_number(x):
    return np.sum(np.argsort(x[0]) * 1.0 + x)


@pytest.mark.parametrize("framework", on(
    bug=(
        "softmax of a 0-d value: axis -1 is out of bounds (JAX), Invalid reduction dimension "
        "(TensorFlow)")))
def test_softmax_of_a_number(framework: str) -> None:
    require(framework)
    g = gradlab.grad(softmax_of_a_number)(to_framework(V3, framework))
    np.testing.assert_allclose(to_numpy(g), [0.0, 1.0, 0.0], atol=1e-12)


@pytest.mark.parametrize("framework", on(
    bug=(
        "argsort of a 0-d value crashes in the generated code (on TensorFlow the int64 result "
        "times 1.0 is now refused at the user's line)")))
def test_argsort_of_a_number(framework: str) -> None:
    require(framework)
    answered, g = answers_or_refuses(
        lambda: gradlab.grad(argsort_of_a_number)(to_framework(V3, framework)))
    if answered:
        np.testing.assert_allclose(to_numpy(g), np.ones(3))
    else:
        assert framework == "tensorflow"
        assert "np.argsort(x[0]) * 1.0" in str(g)


# --- solve-missing-adjoint-name (switch LINALG_SOLVE) ---------------------------------------------
def solve_with_constant_rhs(a):
    return np.sum(np.linalg.solve(a, np.ones(2)))


@pytest.mark.parametrize("framework", on(
    bug=(
        "grad of np.linalg.solve(a, np.ones(2)) w.r.t. a: NameError in the generated code")))
def test_solve_with_constant_right_hand_side(framework: str) -> None:
    require(framework)
    a = np.array([[2.0, 0.5], [0.3, 1.5]])
    g = gradlab.grad(solve_with_constant_rhs)(to_framework(a, framework))
    x = np.linalg.solve(a, np.ones(2))
    np.testing.assert_allclose(to_numpy(g), -np.outer(np.linalg.solve(a.T, np.ones(2)), x))


# --- hvp-float-tangent-on-torch (switch HVP_SHAPE_FUNCTIONS_ON_TORCH) ------------------------------
def cube_sum_over_axis(x):
    return np.sum(x ** 3, axis=0)


@pytest.mark.parametrize("framework", on(
    bug=(
        "hvp of np.sum(x ** 3, axis=0) of a vector: unsqueeze() gets a Python float (torch)")))
def test_hvp_of_sum_over_axis_of_vector(framework: str) -> None:
    require(framework)
    hv = gradlab.hvp(cube_sum_over_axis)(to_framework(V3, framework),
                                         to_framework(np.ones(3), framework))
    np.testing.assert_allclose(to_numpy(hv), 6 * V3)


# --- list-index-on-jax-tf (switch LIST_INDICES) ---------------------------------------------------
def squeeze_of_first(x):
    return torch.squeeze(x[0][None])


@pytest.mark.parametrize("framework", only(
    "torch", fixed=True, bug=(
        "hvp of torch.squeeze(x[0][None]) (a zero Hessian): reshape() gets the Python float 0.0")))
def test_hvp_of_squeeze_on_torch(framework: str) -> None:
    require(framework)
    x = torch.tensor(V3)
    hv = gradlab.hvp(squeeze_of_first)(x, torch.ones(3, dtype=torch.float64))
    np.testing.assert_allclose(to_numpy(hv), np.zeros(3))


def list_index(x):
    return np.sum(x[[0, 2]] ** 2)


@pytest.mark.parametrize("framework", on(
    bug=(
        "x[[0, 2]]: JAX: TypeError: Using a non-tuple sequence for multidimensional indexing; "
        "TensorFlow: Index out of range")))
def test_list_index(framework: str) -> None:
    require(framework)
    g = gradlab.grad(list_index)(to_framework(V3, framework))
    np.testing.assert_allclose(to_numpy(g), [2 * V3[0], 0.0, 2 * V3[2]])


# --- unknown-call-chain-not-refused (switch CHAINED_OFF_TABLE_CALLS) ------------------------------
def two_unknown_calls(x):
    v = np.positive(x)
    return np.sum(np.sinc(v))


@pytest.mark.parametrize("framework", on(
    bug=(
        "np.positive then np.sinc (neither has a rule): not refused, a zero gradient (silently "
        "wrong)")))
def test_two_unknown_calls_in_a_row(framework: str) -> None:
    require(framework)
    with pytest.raises(GradlabError):
        gradlab.grad(two_unknown_calls)(to_framework(V3, framework))


# --- framework-code-on-python-numbers (switch FRAMEWORK_CODE_ON_NUMBERS) --------------------------
def torch_code_on_a_number(x):
    return torch.mean(x + torch.ones(3, dtype=torch.float64))


@pytest.mark.parametrize("framework", only(
    "torch", fixed=True, bug=(
        "torch code called with a Python float runs on the NumPy backend: TypeError: Cannot "
        "interpret 'torch.float64' as a data type")))
def test_torch_code_called_with_a_python_float(framework: str) -> None:
    require(framework)
    g = gradlab.grad(torch_code_on_a_number)(0.5)
    assert float(to_numpy(g)) == pytest.approx(1.0)


# --- torch-max-min-with-dim (switch TORCH_MAX_MIN_WITH_DIM) ---------------------------------------
def torch_max_with_dim(x):
    return torch.sum(torch.max(x, 1)[0] ** 2)


@pytest.mark.parametrize("framework", only(
    "torch", fixed=True, bug=(
        "torch.max(x, 1)[0] is read as the plain max: a wrong value and gradient")))
def test_torch_max_with_dim(framework: str) -> None:
    require(framework)
    x = torch.tensor(M23)
    value, g = gradlab.value_and_grad(torch_max_with_dim)(x)
    assert float(value) == pytest.approx(float(np.sum(M23.max(axis=1) ** 2)))
    expected = np.zeros_like(M23)
    expected[np.arange(2), M23.argmax(axis=1)] = 2 * M23.max(axis=1)
    np.testing.assert_allclose(to_numpy(g), expected)


# --- hvp-zero-hessian-float (switch HVP_ZERO_HESSIAN_SHAPED) --------------------------------------
def linear_in_x(x):
    return x * 2.0


@pytest.mark.parametrize("framework", on(
    bug=(
        "hvp of a linear function returns the Python float 0.0, not an array shaped like x")))
def test_hvp_of_linear_function_is_an_array(framework: str) -> None:
    require(framework)
    x = to_framework(np.array(0.5), framework)
    hv = gradlab.hvp(linear_in_x)(x, to_framework(np.array(1.0), framework))
    assert type(hv).__module__.split(".")[0] == type(x).__module__.split(".")[0]
    assert np.shape(to_numpy(hv)) == ()


# --- hvp-one-element-tuple-wrt (switch HVP_ONE_ELEMENT_TUPLE) -------------------------------------
def cube_sum(x):
    return np.sum(x ** 3)


@pytest.mark.parametrize("framework", on(
    bug=(
        "hvp(f, (0,)) returns tuple(H v): the rows of H v instead of a one-element tuple")))
def test_hvp_one_element_tuple_wrt(framework: str) -> None:
    require(framework)
    (hv,) = gradlab.hvp(cube_sum, (0,))(to_framework(V3, framework),
                                        (to_framework(np.ones(3), framework),))
    np.testing.assert_allclose(to_numpy(hv), 6 * V3)


# --- forward-drops-default-arguments (switch FORWARD_DEFAULT_ARGUMENTS) ---------------------------
def cube_sum_with_default(x, n=2):
    return np.sum(x ** 3)


@pytest.mark.parametrize("framework", on(
    bug=(
        "jvp of def f(x, n=2): the tangent lands in n's place (TypeError: missing argument "
        "'x_dot')")))
def test_jvp_with_default_argument(framework: str) -> None:
    require(framework)
    _, d = gradlab.jvp(cube_sum_with_default)(to_framework(V3, framework),
                                              to_framework(np.ones(3), framework))
    assert float(to_numpy(d)) == pytest.approx(3 * np.sum(V3 ** 2))


# --- hvp-through-loops (switch HVP_THROUGH_LOOPS) -------------------------------------------------
def loop_over_rows(b):
    s = 0.0
    for row in b:
        s = s + np.sum(row ** 3)
    return s


@pytest.mark.parametrize("framework", on(
    bug=(
        "hvp through `for row in b`: the rows come back in reverse order (silently wrong)")))
def test_hvp_loop_over_rows(framework: str) -> None:
    require(framework)
    v = np.array([[1.0, 0.0, 0.0], [0.0, 0.0, 0.0]])
    hv = gradlab.hvp(loop_over_rows)(to_framework(M23, framework), to_framework(v, framework))
    np.testing.assert_allclose(to_numpy(hv), 6 * M23 * v)


# --- numpy-call-on-other-backend (switch OFF_TABLE_CALLS_ON_OTHER_BACKENDS) -----------------------
def numpy_call_kept(x):
    m = np.roll(x, 1) > 0.0
    return np.mean(m * 2.0) + np.sum(x)


@pytest.mark.parametrize("framework", on(
    bug=(
        "np.roll(x, 1) > 0.0 is kept as written (no gradient through a comparison) and runs "
        "NumPy on a torch tensor: mean() gets a numpy.ndarray")))
def test_numpy_call_kept_on_torch(framework: str) -> None:
    require(framework)
    answered, g = answers_or_refuses(
        lambda: gradlab.grad(numpy_call_kept)(to_framework(V3, framework)))
    if answered:
        np.testing.assert_allclose(to_numpy(g), np.ones(3))


# --- hvp-of-containers (switch HVP_OF_CONTAINERS) -------------------------------------------------
def product_through_a_tuple(b):
    p = (b, b)
    return np.sum(p[1] * p[0])


@pytest.mark.parametrize("framework", on(
    bug=(
        "hvp of a program holding a tuple of arrays crashes (the tangent of a tuple is built as"
        " an array)")))
def test_hvp_with_a_tuple(framework: str) -> None:
    require(framework)
    hv = gradlab.hvp(product_through_a_tuple)(to_framework(V3, framework),
                                              to_framework(np.ones(3), framework))
    np.testing.assert_allclose(to_numpy(hv), 2 * np.ones(3))


# --- python-float-into-torch-tf (switch PYTHON_FLOATS_ON_TORCH_TF) --------------------------------
def outer_with_python_float(x, b):
    return np.sum(np.outer(b, x))


@pytest.mark.parametrize("framework", on(
    bug=(
        "np.outer of a Python float and an array: torch: 'float' object has no attribute 'dim';"
        " TensorFlow: float32 vs float64")))
def test_outer_of_python_float(framework: str) -> None:
    require(framework)
    g = gradlab.grad(outer_with_python_float)(to_framework(V3, framework), 0.5)
    np.testing.assert_allclose(to_numpy(g), 0.5 * np.ones(3))


# --- int-float-mix-on-backends (switches INT_ARRAYS_ON_TF, INT_ARRAYS_ON_TORCH) ------------------
def int_array_times_x(x):
    return np.sum(np.arange(1, 4) * x)


@pytest.mark.parametrize("framework", on(
    bug=(
        "np.arange(1, 4) * x: int64 times float64 (NumPy promotes): InvalidArgumentError on "
        "TensorFlow (now refused there, at the user's line)")))
def test_int_array_times_float_on_tensorflow(framework: str) -> None:
    require(framework)
    answered, g = answers_or_refuses(
        lambda: gradlab.grad(int_array_times_x)(to_framework(V3, framework)))
    if answered:
        np.testing.assert_allclose(to_numpy(g), [1.0, 2.0, 3.0])
    else:
        assert framework == "tensorflow"
        assert "np.arange(1, 4) * x" in str(g)


# --- matrix-norm-ords (switch NORM_ORDS) ----------------------------------------------------------
def frobenius_norm(x):
    return np.linalg.norm(x, "fro")


def spectral_norm(x):
    return np.linalg.norm(x, 2)


def nuclear_norm(x):
    return np.linalg.norm(x, "nuc")


@pytest.mark.parametrize("framework", on(
    bug=(
        "np.linalg.norm(M, 'fro'): zero gradient (silently wrong)")))
def test_frobenius_norm(framework: str) -> None:
    require(framework)
    g = gradlab.grad(frobenius_norm)(to_framework(M23, framework))
    np.testing.assert_allclose(to_numpy(g), M23 / np.linalg.norm(M23))


@pytest.mark.parametrize("framework", on(
    bug=(
        "np.linalg.norm(M, 2) of a matrix is read as a vector norm: a wrong value (the spectral"
        " norm is meant)")))
def test_spectral_norm_of_matrix(framework: str) -> None:
    """Differentiate the spectral norm (the largest singular value) or refuse it."""
    require(framework)
    answered, out = answers_or_refuses(
        lambda: gradlab.value_and_grad(spectral_norm)(to_framework(M23, framework)))
    if answered:
        assert float(to_numpy(out[0])) == pytest.approx(np.linalg.norm(M23, 2))
    else:
        assert "largest singular value" in str(out)


@pytest.mark.parametrize("framework", on(
    bug=(
        "np.linalg.norm(M, 'nuc'): TypeError in gradlab's norm (a power with a string exponent)")))
def test_nuclear_norm(framework: str) -> None:
    """Differentiate the nuclear norm (the sum of singular values) or refuse it."""
    require(framework)
    answered, out = answers_or_refuses(
        lambda: gradlab.value_and_grad(nuclear_norm)(to_framework(M23, framework)))
    if answered:
        assert float(to_numpy(out[0])) == pytest.approx(np.linalg.norm(M23, "nuc"))


#: NumPy-written norms with an ord, squared (so that hvp has a curvature to find), each run on
#: every framework's arrays: (text, the array's shape)
NUMPY_NORMS = [
    ("np.linalg.norm(x, 'fro')", (2, 3)), ("np.linalg.norm(x, 1)", (2, 3)),
    ("np.linalg.norm(x, 1)", (4,)), ("np.linalg.norm(x, np.inf)", (2, 3)),
    ("np.linalg.norm(x, np.inf)", (4,)), ("np.linalg.norm(x, -np.inf)", (3, 2)),
    ("np.linalg.norm(x, ord=-math.inf)", (4,)), ("np.linalg.norm(x, 2)", (4,)),
    ("np.linalg.norm(x, 3)", (4,)), ("np.linalg.norm(x, -1)", (4,)),
    ("np.linalg.norm(x, 1, axis=(1, 0))", (2, 3)),
    ("np.sum(np.linalg.norm(x, np.inf, axis=(0, 2), keepdims=True))", (2, 3, 2)),
    ("np.sum(np.linalg.norm(x, float('inf'), axis=1))", (2, 3)),
    ("np.sum(np.linalg.norm(x, ord=1, axis=-1))", (3, 2)),
    ("np.sum(np.linalg.norm(x, 1, keepdims=True))", (2, 3)),
    ("np.linalg.matrix_norm(x, ord=np.inf)", (2, 3)),
    ("np.linalg.vector_norm(x, ord=-np.inf)", (2, 3)),
]
#: Norms written in a framework, run on that framework's arrays
FRAMEWORK_NORMS = [
    ("torch", "torch.linalg.norm(x, 1)", (2, 3)), ("torch", "torch.linalg.norm(x, 'fro')", (2, 3)),
    ("torch", "torch.sum(torch.norm(x, p=float('inf'), dim=1))", (2, 3)),
    ("torch", "torch.linalg.matrix_norm(x, -float('inf'))", (2, 3)),
    ("torch", "torch.linalg.vector_norm(x, -torch.inf)", (2, 3)),
    ("torch", "x.norm(3)", (2, 3)), ("torch", "torch.norm(x, p='fro')", (2, 3)),
    ("tensorflow", "tf.norm(x, ord=1, axis=[0, 1])", (2, 3)),
    ("tensorflow", "tf.norm(x, ord=np.inf)", (2, 3)),
    ("tensorflow", "tf.norm(x, ord='euclidean', axis=[0, 1])", (2, 3)),
    ("tensorflow", "tf.norm(x, ord=np.inf, axis=[1, 0])", (2, 3)),
    ("jax", "jnp.linalg.norm(x, jnp.inf)", (2, 3)), ("jax", "jnp.linalg.norm(x, 'fro')", (2, 3)),
    ("jax", "jnp.linalg.norm(x, -1)", (4,)),
]


_NORMS_DIR: str | None = None


def squared_norm(text: str):  # type: ignore[no-untyped-def]
    """``def f(x): return (<text>) ** 2`` in a file of its own (gradlab reads the source)."""
    import importlib.util
    import pathlib
    import tempfile
    source = f"import math\nimport numpy as np\n{_FRAMEWORK_IMPORTS}\n\n\ndef f(x):\n" \
             f"    return ({text}) ** 2\n"
    global _NORMS_DIR
    if _NORMS_DIR is None:
        _NORMS_DIR = tempfile.mkdtemp(prefix="gradlab-norms-")
        atexit.register(shutil.rmtree, _NORMS_DIR, True)
    path = pathlib.Path(_NORMS_DIR) / f"norm_program_{abs(hash(text))}.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(f"norm_program_{abs(hash(text))}", path)
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module.f


_FRAMEWORK_IMPORTS = "\n".join(f"try:\n    {line}\nexcept ImportError:\n    pass" for line in (
    "import torch", "import tensorflow as tf", "import jax.numpy as jnp"))


def _norm_input(shape) -> np.ndarray:
    """Entries away from 0, of magnitudes (and sums of them) with no ties."""
    n = int(np.prod(shape))
    magnitudes = np.random.default_rng(n).uniform(0.5, 1.5, n)
    signs = np.where(np.arange(n) % 3 == 1, -1.0, 1.0)
    return (magnitudes * signs).reshape(shape)


@pytest.mark.parametrize("framework", FRAMEWORKS)
@pytest.mark.parametrize("text,shape", NUMPY_NORMS, ids=[t for t, _ in NUMPY_NORMS])
def test_norm_with_an_ord(framework: str, text: str, shape) -> None:
    """Vector norms of every ord, and matrix norms 'fro', 1, inf, -inf: value, grad, jvp and
    hvp equal NumPy's and central differences."""
    require(framework)
    f = squared_norm(text)
    assert_derivatives(f, _norm_input(shape), framework, reference=f)


@pytest.mark.parametrize("framework,text,shape", FRAMEWORK_NORMS,
                         ids=[t for _, t, _ in FRAMEWORK_NORMS])
def test_norm_with_an_ord_in_each_framework(framework: str, text: str, shape) -> None:
    require(framework)
    assert_derivatives(squared_norm(text), _norm_input(shape), framework)


@pytest.mark.parametrize("framework", FRAMEWORKS)
@pytest.mark.parametrize("text,what", [
    ("np.linalg.norm(x, 2)", "largest singular value"),
    ("np.linalg.norm(x, -2)", "smallest singular value"),
    ("np.linalg.norm(x, -1)", "smallest column sum"),
    ("np.linalg.norm(x, 'nuc')", "ord='nuc'"),
    ("np.linalg.norm(x, 2, axis=(0, 1))", "largest singular value"),
])
def test_matrix_norms_needing_singular_values_are_refused(framework: str, text: str,
                                                          what: str) -> None:
    """Refused, at the user's line: not computed as a vector norm under the matrix norm's name."""
    require(framework)
    f = squared_norm(text)
    for run in (lambda: gradlab.grad(f)(to_framework(M23, framework)),
                lambda: gradlab.jvp(f)(to_framework(M23, framework),
                                       to_framework(M23, framework))):
        with pytest.raises(GradlabError, match=what) as info:
            run()
        where = str(info.value) + " ".join(getattr(info.value, "__notes__", []))
        assert text in where


def norms_of_a_number(x, b):
    return np.linalg.norm(b) * b + np.linalg.norm(b, 1) + np.linalg.norm(b, np.inf) * x[0]


@pytest.mark.parametrize("framework", on(bug=(
    "np.linalg.norm(b) of a Python float b on torch and TensorFlow: TypeError in torch.sum "
    "(a float is no tensor), a float32 value on TensorFlow (people program cf60b54210)")))
def test_norm_of_a_python_number(framework: str) -> None:
    """A number's norm is its magnitude (a float64 array, as NumPy makes of it)."""
    require(framework)
    x, b = to_framework(V3, framework), -0.7
    value, g = gradlab.value_and_grad(norms_of_a_number, wrt=1)(x, b)
    assert float(to_numpy(value)) == pytest.approx(-0.49 + 0.7 + 0.7 * 0.3)
    assert float(to_numpy(g)) == pytest.approx(1.4 - 1.0 - 0.3)
    _, tangent = gradlab.jvp(norms_of_a_number, wrt=1)(x, b, 1.0)
    assert float(to_numpy(tangent)) == pytest.approx(1.4 - 1.0 - 0.3)
    h = gradlab.hvp(norms_of_a_number, wrt=1)(x, b, 1.0)
    assert float(to_numpy(h)) == pytest.approx(-2.0)


# --- transpose-of-scalar-on-torch (switch TRANSPOSE_OF_SCALARS) -----------------------------------
def sine_of_transpose(x):
    return np.sin(x.T)


@pytest.mark.parametrize("framework", on(
    bug=(
        "x.T of a 0-d tensor: permute() missing dims (torch)")))
def test_transpose_of_a_number_on_torch(framework: str) -> None:
    require(framework)
    g = gradlab.grad(sine_of_transpose)(to_framework(np.array(0.5), framework))
    assert float(to_numpy(g)) == pytest.approx(np.cos(0.5))


def matrix_transpose_of(x):
    return torch.sum(torch.sin(x.mT) * x.mT)


@pytest.mark.parametrize("framework", on(
    bug=(
        "x.mT of a 0-d torch tensor (the tensor itself, as torch gives it): IndexError in the "
        "generated code (it was swapaxes(x, -2, -1))")))
@pytest.mark.parametrize("shape", [(), (2, 3), (2, 2, 3)])
def test_matrix_transpose_of_a_number_and_of_matrices(framework: str, shape) -> None:
    require(framework)
    require("torch")
    x = np.random.default_rng(5).uniform(-1, 1, shape)
    if framework == "torch":
        assert_derivatives(matrix_transpose_of, x, framework)
        return
    # the torch-written function on another framework's arrays: gradlab's gl runs it there
    g = gradlab.grad(matrix_transpose_of)(to_framework(x, framework))
    np.testing.assert_allclose(to_numpy(g), central_difference(
        lambda a: matrix_transpose_of(torch.as_tensor(a)), x), rtol=1e-5, atol=1e-7)


def mT_of_vector(x):
    return torch.sum(x.mT)


def test_matrix_transpose_of_a_vector_is_refused() -> None:
    """torch, NumPy and JAX raise on a vector's .mT; gradlab refuses, at the user's line."""
    require("torch")
    with pytest.raises(GradlabError, match="no matrix transpose") as info:
        gradlab.grad(mT_of_vector)(torch.ones(3, dtype=torch.float64))
    assert "return torch.sum(x.mT)" in " ".join(getattr(info.value, "__notes__", []))


# --- std-of-one-element-nan (switch STATISTICS_OF_SCALARS) ----------------------------------------
def std_plus_x(x):
    return x.std() + x


@pytest.mark.parametrize("framework", on(
    bug=(
        "x.std() of a 0-d value (the constant 0): the gradient is NaN")))
def test_std_of_a_number(framework: str) -> None:
    require(framework)
    g = gradlab.grad(std_plus_x)(to_framework(np.array(0.5), framework))
    if framework == "torch":
        # torch's x.std() is unbiased: of one entry it is NaN, its value and gradient too
        assert np.isnan(float(to_numpy(g)))
    else:
        assert float(to_numpy(g)) == pytest.approx(1.0)


def norm_of_difference(x, t):
    return np.linalg.norm(x - t) + np.sum(std_rows(x))


def std_rows(x):
    return np.std(x, axis=1)


@pytest.mark.parametrize("framework", on(
    bug=(
        "np.linalg.norm(x - t) at x == t and np.std of a row of equal entries: the gradient "
        "was NaN (0 / 0); 0 is a subgradient, as torch's norm gives")))
def test_norm_and_std_at_zero_are_not_nan(framework: str) -> None:
    require(framework)
    x = np.array([[1.0, 1.0, 1.0], [1.0, 2.0, 4.0]])
    args = (to_framework(x, framework), to_framework(x, framework))
    g = to_numpy(gradlab.grad(norm_of_difference)(*args))
    d = x[1] - x[1].mean()
    np.testing.assert_allclose(g, [[0.0, 0.0, 0.0], d / np.sqrt(np.mean(d * d)) / 3])
    tangent = to_numpy(gradlab.jvp(norm_of_difference)(*args, to_framework(x, framework))[1])
    assert np.isfinite(tangent)
    h = to_numpy(gradlab.hvp(norm_of_difference)(*args, to_framework(np.ones_like(x), framework)))
    assert np.all(np.isfinite(h))


# --- numpy-repeat-read-as-tile (switch NUMPY_REPEAT) ----------------------------------------------
def repeated_second(x):
    return x.repeat(3)[1] + np.sum(x)


@pytest.mark.parametrize("framework", on(
    bug=(
        "x.repeat(3) of a NumPy array (each element three times) is read as tile: "
        "x.repeat(3)[1] is x[1], not x[0]")))
def test_numpy_repeat_method(framework: str) -> None:
    require(framework)
    value, _ = gradlab.value_and_grad(repeated_second)(to_framework(V3, framework))
    assert float(to_numpy(value)) == pytest.approx(V3[0] + np.sum(V3))


def loop_over_indices(x):
    s = 0.0
    for i in range(len(x)):
        s = s + x[i] ** 3
    return s


@pytest.mark.parametrize("framework", on(
    bug=(
        "hvp through `for i in range(len(x))` reading x[i]: H v comes back reversed (silently "
        "wrong)")))
def test_hvp_loop_over_indices(framework: str) -> None:
    require(framework)
    v = np.array([1.0, 0.0, 0.0])
    hv = gradlab.hvp(loop_over_indices)(to_framework(V3, framework), to_framework(v, framework))
    np.testing.assert_allclose(to_numpy(hv), 6 * V3 * v)


def cube_sum_mixed(x):
    return np.sum((x @ np.eye(3)) ** 3)


@pytest.mark.parametrize("framework", on(
    bug=(
        "hvp of a float32 input that meets a float64 constant (np.eye) comes back float64 (grad"
        " keeps float32); torch/TF crash on the mixed matmul")))
def test_hvp_keeps_float32(framework: str) -> None:
    require(framework)
    x = to_framework(V3.astype(np.float32), framework)
    hv = gradlab.hvp(cube_sum_mixed)(x, to_framework(np.ones(3, dtype=np.float32), framework))
    assert to_numpy(hv).dtype == np.float32
    np.testing.assert_allclose(to_numpy(hv), 6 * V3, rtol=1e-5)


# --- torch-var-std-methods-biased (switch TORCH_VAR_STD_METHODS) ----------------------------------
def torch_var_method(x):
    return torch.sum(x.var(0))


@pytest.mark.parametrize("framework", only(
    "torch", fixed=True, bug=(
        "x.var(0) of a torch tensor (unbiased) is read as NumPy's var (biased): a wrong value")))
def test_torch_var_method(framework: str) -> None:
    require(framework)
    x = torch.tensor(M23)
    value, g = gradlab.value_and_grad(torch_var_method)(x)
    assert float(value) == pytest.approx(float(np.sum(M23.var(axis=0, ddof=1))))
    np.testing.assert_allclose(to_numpy(g), 2 * (M23 - M23.mean(axis=0)) / 1)


# --- transpose-of-scalar-or-vector (switch TRANSPOSE_OF_SCALARS) ----------------------------------
def transpose_method_one_axis(x):
    return np.sum(2.0 / x.transpose(0))


@pytest.mark.parametrize("framework", on(
    bug=(
        "x.transpose(0) of a vector: TypeError: 'int' object is not iterable (inverse_axes), "
        "torch permute, TF perm must be rank 1")))
def test_transpose_method_with_one_axis(framework: str) -> None:
    require(framework)
    g = gradlab.grad(transpose_method_one_axis)(to_framework(V3, framework))
    np.testing.assert_allclose(to_numpy(g), -2.0 / V3 ** 2)


# --- scipy-softmax-over-all-entries (switch SCIPY_SOFTMAX_OVER_ALL) -------------------------------
def scipy_softmax_of_matrix(x):
    return scipy.special.softmax(x)[0, 0]


@pytest.mark.parametrize("framework", on(
    bug=(
        "scipy.special.softmax(M) without an axis is a softmax over all entries; gradlab "
        "normalises each row: a wrong value")))
def test_scipy_softmax_of_matrix(framework: str) -> None:
    require(framework)
    value, _ = gradlab.value_and_grad(scipy_softmax_of_matrix)(to_framework(M23, framework))
    assert float(to_numpy(value)) == pytest.approx(np.exp(M23[0, 0]) / np.exp(M23).sum())


# --- sum-of-list-broadcast (found by the people fuzzer, seed 606) -----------------------------------
def sum_of_split_pieces(x):
    return np.mean(sum(np.split(x, [1])))


@pytest.mark.parametrize("framework", on(
    bug=(
        "sum(np.split(x, [1])) adds a (1,) piece to a (2,) one by broadcasting; its adjoint "
        "gave each piece the whole (2,) gradient: a gradient of shape (4,) for a (3,) input "
        "(silently wrong)")))
def test_sum_of_pieces_of_different_shapes(framework: str) -> None:
    require(framework)
    g = gradlab.grad(sum_of_split_pieces)(to_framework(V3, framework))
    np.testing.assert_allclose(to_numpy(g), [1.0, 0.5, 0.5])
    hv = gradlab.hvp(square_of_pieces)(to_framework(V3, framework),
                                       to_framework(np.ones(3), framework))
    np.testing.assert_allclose(to_numpy(hv), [8.0, 4.0, 4.0])


def square_of_pieces(x):
    return np.sum(sum(np.split(x, [1])) ** 2)


# --- index-past-the-end-on-jax (found by the people fuzzer, seed 606) -------------------------------
def index_past_the_end(x):
    return np.sum(x[np.array([0, 7])] ** 2)


@pytest.mark.parametrize("framework", only(
    "jax", fixed=True, bug=(
        "x[[0, 7]] of 4 entries on JAX reads x[3] for the 7 (JAX clamps), but the gradient of "
        "that entry was dropped: a zero where 2 * x[3] belongs (silently wrong)")))
def test_index_past_the_end_on_jax(framework: str) -> None:
    require(framework)
    x = to_framework(X4, framework)
    g = gradlab.grad(index_past_the_end)(x)
    np.testing.assert_allclose(to_numpy(g), [2 * X4[0], 0.0, 0.0, 2 * X4[3]])


# --- tf-axis-defaults (found by the people fuzzer, seed 202) -----------------------------------------
def tf_cumsum_and_argmax(w):
    return tf.reduce_sum(tf.math.cumsum(w) * w) + tf.cast(tf.argmax(w), tf.float64)[1]


@pytest.mark.parametrize("framework", only("tensorflow", fixed=True, bug=(
    "tf.math.cumsum(w) and tf.argmax(w) of a matrix work along axis 0; gradlab read them over "
    "every entry (NumPy's meaning): grad refused through the guard, jvp gave a wrong value")))
def test_tensorflow_axis_defaults(framework: str) -> None:
    require(framework)
    w = tf.constant(np.random.default_rng(0).normal(size=(3, 3)))
    value, tangent = gradlab.jvp(tf_cumsum_and_argmax)(w, tf.ones((3, 3), tf.float64))
    assert float(value) == pytest.approx(float(tf_cumsum_and_argmax(w)))
    with tf.GradientTape() as tape:
        tape.watch(w)
        y = tf_cumsum_and_argmax(w)
    expected = tape.gradient(y, w)
    assert float(tangent) == pytest.approx(float(tf.reduce_sum(expected)))
    np.testing.assert_allclose(gradlab.grad(tf_cumsum_and_argmax)(w).numpy(), expected.numpy())


# --- conversion-of-a-list-on-backends --------------------------------------------------------------
def array_of_a_list(x, b):
    counts = np.array(b.argmin(0).tolist())
    return np.sum(x ** 2) + np.mean(np.arange(0.0, 1.5, 0.5) - counts)


@pytest.mark.parametrize("framework", on(
    bug=(
        "np.array(v.tolist()) of a value with no gradient was kept as the list itself: "
        "`tensor - list` crashed on torch and JAX; TensorFlow's tensors have no tolist (now a "
        "NumPy copy's); TensorFlow's float64 - int64 is refused at the user's line")))
def test_array_of_a_list_on_backends(framework: str) -> None:
    require(framework)
    b = np.array([[0.3, 0.1, 0.5], [0.2, 0.4, 0.1]])
    answered, g = answers_or_refuses(lambda: gradlab.grad(array_of_a_list)(
        to_framework(V3, framework), to_framework(b, framework)))
    if not answered:
        assert framework == "tensorflow" and "your line" in str(g)
        return
    np.testing.assert_allclose(to_numpy(g), 2 * V3)


# --- mean-of-ints-on-backends ----------------------------------------------------------------------
def mean_of_argmax(x):
    counts = x.argmax(0)
    return np.sum(x) + counts.mean() + np.var(counts)


@pytest.mark.parametrize("framework", on(
    bug=(
        "the mean of an int array (NumPy: a float): TensorFlow gave the int mean, rounded down "
        "(a wrong value, silently); torch crashed")))
def test_mean_of_an_int_array(framework: str) -> None:
    require(framework)
    x = np.array([[0.1, 0.5, 0.2], [0.3, 0.1, 0.9]])
    value, g = gradlab.value_and_grad(mean_of_argmax)(to_framework(x, framework))
    assert float(to_numpy(value)) == pytest.approx(mean_of_argmax(x))
    np.testing.assert_allclose(to_numpy(g), np.ones_like(x))


# --- torch-size-of-a-dim ---------------------------------------------------------------------------
def divided_by_size_of_dim(b):
    return torch.sum(b / b.size(0)) + b.size()[0]


@pytest.mark.parametrize("framework", only(
    "torch", fixed=True, bug=(
        "torch's x.size(0) was read as NumPy's x.size, then called: TypeError in the generated "
        "code")))
def test_torch_size_of_a_dim(framework: str) -> None:
    require(framework)
    g = gradlab.grad(divided_by_size_of_dim)(torch.tensor([1.0, 2.0, 4.0], dtype=torch.float64))
    np.testing.assert_allclose(to_numpy(g), np.full(3, 1 / 3))


# --- loop-carried-broadcast (found while writing tests/codegen/test_shapes.py) -----------------------
def grows_in_a_loop(x, v):
    h = x
    for i in range(2):
        h = h * v           # h broadcasts from x's shape (1,) to v's (2,) in the first iteration
    return np.sum(h)


@pytest.mark.parametrize("framework", on(bug=(
    "a loop-carried value that broadcasts to a larger shape inside the loop: the adjoint "
    "`dh = dh * v` is not unbroadcast to the popped h, and `dx = dh` returns a gradient of v's "
    "shape (2,) for x of shape (1,): [0.25, 4.0] instead of [4.25] (silently wrong; jvp is "
    "right)")))
def test_loop_carried_value_that_broadcasts(framework: str) -> None:
    require(framework)
    x, v = np.ones(1), np.array([0.5, 2.0])
    g = gradlab.grad(grows_in_a_loop)(to_framework(x, framework), to_framework(v, framework))
    expected = central(lambda a: grows_in_a_loop(a, v), x)
    assert tuple(to_numpy(g).shape) == (1,)
    np.testing.assert_allclose(to_numpy(g), expected, rtol=1e-6)


# --- builtin round of an array (fuzz seed 4444) ---------------------------------------------------
def rounded_array(x):
    return np.mean(round(x) ** 2) + np.sum(x * 2.0) + round(x[0])


@pytest.mark.parametrize("framework", ["torch", "tensorflow", "jax"])   # NumPy: no __round__
def test_builtin_round_of_an_array(framework: str) -> None:
    """It was int(np.round(x)): a TypeError where x has more than one entry."""
    require(framework)
    x = np.array([0.4, 1.6, 2.5, -0.7])
    g = gradlab.grad(rounded_array)(to_framework(x, framework))
    np.testing.assert_allclose(to_numpy(g), np.full_like(x, 2.0))


# --- numbers reaching shape functions and logsumexp on torch and TF (people fuzz, seed 2024) -----
def logsumexp_of_a_counter(w, b):
    v5 = b
    for i in range(2):
        v5 = np.tanh(v5 * w + 0.1)
    return scipy.special.logsumexp(i) + v5


def transposed_number(w, b):
    v1 = w * 1.0
    return np.transpose(v1, axes=()) + w * b


@pytest.mark.parametrize("framework", on(bug=(
    "scipy.special.logsumexp of a Python int (a loop counter): torch's max and TF's isfinite "
    "take no int (crash); np.transpose of a Python float: torch's permute crashed, "
    "TensorFlow's transpose made it float32 (a value wrong in the 8th digit)")))
def test_numbers_through_logsumexp_and_transpose(framework: str) -> None:
    require(framework)
    w = to_framework(np.array(0.5), framework)
    for fn in (logsumexp_of_a_counter, transposed_number):
        for args in ((w, 0.7), (0.5, 0.7)):        # a 0-d array, or a Python float, for w
            value, grads = gradlab.value_and_grad(fn, (0, 1))(*args)
            assert float(to_numpy(value)) == pytest.approx(fn(0.5, 0.7), rel=1e-12)
            for g, step in zip(grads, ((1e-6, 0.0), (0.0, 1e-6))):
                want = (fn(0.5 + step[0], 0.7 + step[1]) -
                        fn(0.5 - step[0], 0.7 - step[1])) / 2e-6
                assert float(to_numpy(g)) == pytest.approx(want, rel=1e-6)


# --- issue 15: bool and int values, kept NumPy calls, complex inputs on every backend -------------
# Each example: grad, jvp and hvp against central differences (and the value against NumPy's) on
# every backend, w.r.t. the real first argument; ``refusable`` names the backends that may refuse
# (TensorFlow's operators do not promote mixed dtypes: refused at the user's line, with the cast).
def three_modes(f, rest, framework: str, refusable: tuple[str, ...] = ()) -> None:
    require(framework)
    x = X3
    fw_rest = [to_framework(r, framework) if isinstance(r, np.ndarray) else r for r in rest]
    want = float(np.real(f(x, *rest)))
    g_fd = central(lambda v: float(np.real(f(v, *rest))), x)
    v = np.array([0.7, -0.4, 0.2])
    h_fd = central(lambda u: central(lambda w: float(np.real(f(w, *rest))), u, 1e-4) @ v, x, 1e-4)
    try:
        value, g = gradlab.value_and_grad(f)(to_framework(x, framework), *fw_rest)
        _, t = gradlab.jvp(f)(to_framework(x, framework), *fw_rest, to_framework(v, framework))
        hv = gradlab.hvp(f)(to_framework(x, framework), *fw_rest, to_framework(v, framework))
    except GradlabError as e:
        assert framework in refusable, f"refused on {framework}: {e}"
        assert "your line" in str(e) or "line " in str(e)
        return
    assert np.isrealobj(to_numpy(value)) and float(to_numpy(value)) == pytest.approx(want)
    np.testing.assert_allclose(to_numpy(g), g_fd, rtol=1e-5, atol=1e-7)
    assert np.isrealobj(to_numpy(t))
    assert float(to_numpy(t)) == pytest.approx(float(g_fd @ v), rel=1e-5, abs=1e-7)
    np.testing.assert_allclose(to_numpy(hv), h_fd, rtol=1e-4, atol=1e-5)


def abs_and_floor_of_a_mask(x):
    m = x > 0.0
    return np.sum(np.abs(m) * x ** 2) + np.sum(np.floor(m) * np.sin(x))


def exp_of_a_mask(x):
    m = np.logical_not(x > 0.1)
    return np.sum(np.exp(m) * x ** 2) + np.sum(np.tanh(m))


def sum_of_a_mask(x):
    m = np.isfinite(x)
    return np.sum(x ** 3) * m.sum() + np.mean(m) * np.sum(x)


def float_minus_a_mask(x):
    m = np.greater(x, 0.1)
    return np.sum(np.subtract(x, m) * x)


def rounded_mask(x):
    v = np.round(np.less_equal(x, 0.1))
    return np.mean(v) * np.sum(x ** 2) + np.sum(np.round(np.argmax(x)) * x)


@pytest.mark.parametrize("f", [bool_mask_times_x, abs_and_floor_of_a_mask, exp_of_a_mask,
                               sum_of_a_mask, float_minus_a_mask, rounded_mask])
def test_bool_values_on_backends(f, framework: str) -> None:
    """abs/floor of bools crashed on torch, everything on TensorFlow; exp of bools was float32
    on torch and JAX (NumPy: float16)."""
    three_modes(f, [], framework, refusable=("tensorflow",) + (
        ("torch",) if f is float_minus_a_mask else ()))


def log_of_ints(x, n):
    return np.sum(np.log(n) * x ** 2) + np.sum(np.sqrt(np.arange(1, 4)) * np.sin(x))


def tanh_of_argmax(x, b):
    k = np.argmax(b, axis=0)
    return np.sum(np.tanh(k) * x ** 2)


@pytest.mark.parametrize("f, rest", [(log_of_ints, [np.array([1, 2, 3])]),
                                     (tanh_of_argmax, [np.array([[0.3, 0.1, 0.5],
                                                                 [0.2, 0.4, 0.1]])])])
def test_float_functions_of_int_arrays(f, rest, framework: str) -> None:
    """np.log of an int array: float32 on torch (its gradient code then mixed it with float64),
    a crash on TensorFlow; NumPy computes it in float64."""
    three_modes(f, rest, framework)


def kept_calls(x, b):
    u = np.unique(b)
    h, edges = np.histogram(b, bins=3)
    n = len(b.tolist())
    return np.sum(x ** 2) * n + np.sum(np.sin(x)) * np.sum(u) + np.sum(x) * edges[1]


def test_kept_numpy_calls_on_backends(framework: str) -> None:
    """np.unique(b) gave a NumPy array that torch's sum refused; TensorFlow's tensors have no
    tolist: kept calls now run on NumPy copies and give back the backend's arrays."""
    three_modes(kept_calls, [np.array([[0.3, 0.1, 0.5], [0.2, 0.4, 0.1]])], framework)


def test_kept_numpy_call_on_a_gradient_is_refused(framework: str) -> None:
    require(framework)
    with pytest.raises(GradlabError, match="np.unique"):
        gradlab.grad(lambda_unique_of_x)(to_framework(X3, framework))


def lambda_unique_of_x(x):
    return np.sum(np.unique(x))


Z3 = np.array([1.0 + 2.0j, -0.5 + 1.0j, 0.3 - 0.7j])


def parts_of_complex(x, z):
    return (np.sum(z.real ** 2 * x) + np.sum(z.imag * x ** 2) + np.sum(np.abs(z) * np.sin(x))
            + np.sum(np.conj(z).imag * x) + np.sum(np.angle(z) * x ** 3)
            + np.sum(np.real(z) * np.imag(z) * x))


def test_parts_of_a_complex_input(framework: str) -> None:
    """z.real, z.imag, np.abs, np.conj, np.angle of a complex argument not differentiated: real
    values, and the rest differentiates w.r.t. the real argument."""
    three_modes(parts_of_complex, [Z3], framework)


def abs_of_complex_times_x(x, z):
    return np.sum(np.abs(z * x))


def test_gradient_through_a_complex_value_is_refused(framework: str) -> None:
    """|z x| depends on x through a complex value: refused (abs's rule is not the complex one),
    never its real part silently."""
    require(framework)
    with pytest.raises(GradlabError):
        gradlab.grad(abs_of_complex_times_x)(to_framework(X3, framework),
                                             to_framework(Z3, framework))


# --- int-times-python-float-on-torch (switch INT_ARRAYS_ON_TORCH) ---------------------------------
def mean_of_argmax_times_one(x):
    k = x.argmax(-1)
    return (k * 1.0).mean() + np.sum(x)


def test_int_tensor_times_python_float_on_torch(framework: str) -> None:
    """``k * 1.0`` of an int tensor is float32 on torch (its default dtype; NumPy: float64), a
    value off by float32's round-off: the semantic guard compares in the function's own precision
    and refuses it; TensorFlow refuses the mix at the user's line; NumPy and JAX answer, right."""
    require(framework)
    x = np.array([[0.3, 0.9, 0.1], [0.2, 0.8, 0.7], [0.5, 0.4, 0.3]])   # mean 2/3
    answered, out = answers_or_refuses(
        lambda: gradlab.value_and_grad(mean_of_argmax_times_one)(to_framework(x, framework)))
    if not answered:
        assert framework in ("torch", "tensorflow"), out
        assert ("different forward value" if framework == "torch" else "your line") in str(out)
        return
    value, g = out
    assert float(to_numpy(value)) == pytest.approx(mean_of_argmax_times_one(x), rel=1e-12)
    np.testing.assert_allclose(to_numpy(g), np.ones((3, 3)))


def parts_of_python_numbers(x, n=2):
    return min((np.real(n), x[0], 0.5)) + np.angle(-3) * x[1] + np.imag(n) + np.conj(n) * x[2] ** 2


def test_parts_of_python_numbers(framework: str) -> None:
    """np.real(n) of a Python int crashed on torch (torch.real takes tensors only)."""
    three_modes(parts_of_python_numbers, [], framework)


def floor_of_a_python_float(x, w):
    return (math.floor(np.mean(np.arctan2(w, w))) + np.ceil(w)) * 1.0 + np.sum(x ** 2)


def test_floor_of_a_python_float(framework: str) -> None:
    """math.floor of a Python float crashed on torch (float32 on TensorFlow)."""
    three_modes(floor_of_a_python_float, [0.5], framework)


def mask_of_a_number_times_one(x, w):
    return np.ravel(np.less(2.0, w)) * 1.0 + 0.0 * np.sum(x)


def test_tensorflow_bool_times_float_of_one_element_output() -> None:
    """A one-element array output: the retry with a shaped seed met TF's bool * 1.0 again, and
    its TypeError came out as it was (a crash); then it was refused at the user's line. Now
    ``np.ravel`` of a mask is known to be a mask, so its ``* 1.0`` gets its cast: the answer."""
    require("tensorflow")
    x, w = to_framework(X3, "tensorflow"), to_framework(np.array(0.5), "tensorflow")
    dx, dw = gradlab.grad(mask_of_a_number_times_one, (0, 1))(x, w)
    np.testing.assert_array_equal(to_numpy(dx), np.zeros(3))
    assert float(to_numpy(dw)) == 0.0
    hx, hw = gradlab.hvp(mask_of_a_number_times_one, (0, 1))(x, w, (x, w))
    np.testing.assert_array_equal(to_numpy(hx), np.zeros(3))
    assert float(to_numpy(hw)) == 0.0

def sorted_over_its_length(x, b):
    part = np.negative(b)
    return np.sum(x * x) + np.sum(part[np.argsort(part)] / part[np.argsort(part)].shape[0])


def test_the_shape_of_an_indexed_expression(framework: str) -> None:
    """``v[np.argsort(v)].shape[0]`` was kept as written: TensorFlow's ``[]`` takes no array
    index (a crash in its jvp and hvp, people fuzzer seed 202); the indexed value now gets a line
    of its own (``gl.getitem``), whose shape is read."""
    three_modes(sorted_over_its_length, [np.array([0.3, -0.2, 0.9])], framework)


def argmax_of_a_mask(x, w):
    return np.sum(x ** 2) + np.argmax(np.greater(w, 0.5), axis=0) * 1.0


def test_argmax_of_a_mask(framework: str) -> None:
    """torch's argmax refuses bools (NumPy orders False before True): a crash there.
    (TensorFlow refuses the int times 1.0 at the line, as everywhere.)"""
    three_modes(argmax_of_a_mask, [np.array([0.3, 0.7, 0.9])], framework,
                refusable=("tensorflow",))


def length_of_frompyfunc(x):
    sines = np.frompyfunc(math.sin, 1, 1)(x).astype(float)
    return np.sum(x ** 2) * len(sines)


def test_an_object_array_from_numpy_kept_as_written(framework: str) -> None:
    """``np.frompyfunc``'s object array, kept as written (only its length is read), became a
    tensor of nothing on torch, TensorFlow and JAX (a crash, people fuzzer seed 202): its
    numbers come back in NumPy's dtype."""
    three_modes(length_of_frompyfunc, [], framework)


def argmax_of_a_kept_scipy_call(x, w):
    picked = np.broadcast_to(scipy.special.log_softmax(w), (2, 3)).argmax()
    return np.sum(x ** 2) + picked * 1.0


def floor_of_a_broadcast_sum(x):
    return math.floor(np.broadcast_to(np.nansum(x), (2,))[0]) * 1.0 + np.sum(x ** 2)


def test_values_kept_as_numpy_computes_them(framework: str) -> None:
    """``scipy.special.log_softmax(w)`` of a value only an argmax reads is kept as written (no
    gradient flows): on torch it gave a NumPy array, which torch's broadcast_to refused, as it
    refused ``np.nansum``'s Python float (crashes, people fuzzer seeds 303/404). Kept calls of
    SciPy run through ``gl.numpy_call`` as NumPy's do; torch's broadcast_to takes both."""
    three_modes(argmax_of_a_kept_scipy_call, [np.array([0.3, -0.2, 0.9])], framework,
                refusable=("tensorflow",))     # (an int times 1.0: refused at the line there)
    three_modes(floor_of_a_broadcast_sum, [], framework, refusable=("tensorflow",))


TORCH = None      # torch, once a test below has required it (gradlab reads module globals)


def solve_with_a_float64_eye(x):
    a = x @ x.T + TORCH.eye(2, dtype=TORCH.float64)
    return TORCH.linalg.solve(a, TORCH.ones(2, dtype=TORCH.float64)).logsumexp(-1) + x.sum()


def test_specialised_code_that_fails_runs_the_generic_code() -> None:
    """float32 ``x`` meets a float64 ``eye``: the code specialised for the shapes writes
    ``dxxT @ xT.T``, and torch's ``@`` mixes no dtypes (a crash, people fuzzer seed 404); the
    generic code's helpers promote as NumPy does, so the call falls back to it."""
    require("torch")
    import torch
    global TORCH
    TORCH = torch
    x = torch.tensor([[0.3, -0.2, 0.9], [0.5, 0.1, -0.4]], dtype=torch.float32)
    df = gradlab.grad(solve_with_a_float64_eye)
    for _ in range(2):
        g = df(x)
        leaf = x.clone().requires_grad_(True)
        (want,) = torch.autograd.grad(solve_with_a_float64_eye(leaf), leaf)
        assert g.dtype == torch.float32
        torch.testing.assert_close(g, want, rtol=1e-5, atol=1e-6)


def sum_of_a_tensor_of_a_list(x, w):
    return TORCH.tensor(w.tolist()).sum() + (x * x).sum()


def test_a_tensor_made_of_a_list_is_a_new_tensor() -> None:
    """``torch.tensor(w.tolist())`` is a new tensor, cut from ``w`` (torch's autograd gives
    ``w`` no gradient through it, and gradlab follows): it crashed as a list summed."""
    require("torch")
    import torch
    global TORCH
    TORCH = torch
    x, w = torch.tensor([0.5, -1.0]), torch.tensor([[1.0, 2.0], [3.0, 4.0]])
    dx, dw = gradlab.grad(sum_of_a_tensor_of_a_list, (0, 1))(x, w)
    torch.testing.assert_close(dx, 2 * x)
    torch.testing.assert_close(dw, torch.zeros_like(w))


def rank_of_a_number(x, w):
    v = np.tanh(x * 2.0 + 0.1)
    return v * (v.ndim + 1) + np.sum(w ** 2)


def test_the_rank_of_a_value_held_as_a_python_number(framework: str) -> None:
    """``np.tanh`` of a Python float is a NumPy scalar, whose ``.ndim`` is 0; gradlab holds it as
    a Python float on torch and TensorFlow (no ``.ndim``: a crash, people fuzzer seed 606):
    ``gl.ndim(v)``."""
    require(framework)
    w = np.array([0.5, -1.0])
    dx, dw = gradlab.grad(rank_of_a_number, (0, 1))(0.3, to_framework(w, framework))
    assert float(to_numpy(dx)) == pytest.approx(2.0 * (1.0 - np.tanh(0.7) ** 2), rel=1e-12)
    np.testing.assert_allclose(to_numpy(dw), 2 * w)


def mean_of_a_product_of_masks(x, w):
    mask = np.less_equal(np.tile(w, 2), 0.5)
    both = mask * np.ones_like(mask)          # bool * bool: a bool, as NumPy has it
    return np.mean(both * 1.0) + np.sum(x ** 2)


def solve_of_masks(x):
    m = np.less_equal(x[:1, None] * 0.0, 1.0)
    return np.sum(x ** 2) + np.linalg.solve(m, m).mean()


def ones_like_a_number(x, w):
    return np.sum(x * (w - np.ones_like(w)))


def test_masks_and_numbers_meet_torch(framework: str) -> None:
    """``mask * np.ones_like(mask)`` is a mask (its ``* 1.0`` was float32 on torch: a wrong
    value), ``np.linalg.solve`` of masks computes in float64, ``np.ones_like`` of a Python
    float is a number (torch crashed on both; people fuzzer seeds 505/606)."""
    three_modes(mean_of_a_product_of_masks, [np.array([0.3, 0.7, 0.1])], framework)
    three_modes(solve_of_masks, [], framework, refusable=("tensorflow",))
    three_modes(ones_like_a_number, [0.5], framework, refusable=("tensorflow",))


def tensor_of_entries(x, w):
    v = TORCH.tensor([w[1], w[0] * 2.0])
    return TORCH.expm1(v).sum() + (x * x).sum()


def test_a_tensor_made_of_entries_is_cut_from_them() -> None:
    """``torch.tensor([w[1], w[0] * 2.0])`` copies the values into a new leaf: torch's autograd
    gives ``w`` nothing through it. gradlab stacked them with a gradient (jvp and grad
    differed from torch's, people fuzzer seed 707); now a stop_gradient of the stack."""
    require("torch")
    import torch
    global TORCH
    TORCH = torch
    x, w = torch.tensor([0.5, -1.0]), torch.tensor([0.1, 0.2, 0.3])
    dx, dw = gradlab.grad(tensor_of_entries, (0, 1))(x, w)
    torch.testing.assert_close(dx, 2 * x)
    torch.testing.assert_close(dw, torch.zeros_like(w))
    _, tangent = gradlab.jvp(tensor_of_entries, 1)(x, w, torch.ones_like(w))
    assert float(tangent) == 0.0


def reductions_of_a_number(x, w):
    """``np.any``/``np.cumsum``/``np.flip`` of a Python float and float functions of a truth
    value: NumPy takes numbers and bools; torch and TensorFlow take tensors only."""
    hit = np.any(w)
    return np.sum(np.minimum(x, hit) ** 2) + np.sum(np.cumsum(w) * x) \
        + np.exp(w > 0) * np.sum(np.flip(w) * x) + np.round(w < 0) * x[0]


def test_reductions_and_bools_of_a_python_number(framework: str) -> None:
    """``np.any(w)`` of a Python float crashed on torch (people fuzzer seed 909); ``np.exp`` of
    a Python bool crashed on torch and TensorFlow. A number now becomes the framework's tensor
    first, or is answered as NumPy answers it (``np.exp(True)`` in float16, as NumPy)."""
    three_modes(reductions_of_a_number, [0.5], framework, refusable=("tensorflow",))


def numpy_of_a_comparison(x):
    v1 = TF.math.greater(x, x)
    v2 = TF.constant(v1.numpy())
    return TF.cast(v2, TF.float64) + TF.math.square(x)


def through_numpy(x):
    return TF.reduce_sum(TF.constant(x.numpy()) * x)


def test_numpy_method_of_a_value_held_as_a_number() -> None:
    """``tf.greater(x, x).numpy()`` of a Python float ``x``: gradlab holds the comparison as a
    NumPy bool, which has no ``.numpy()`` (crashed; people fuzzer seed 909). ``.numpy()`` of a
    kept value is now ``gl.to_numpy``; of a value carrying a gradient it stays refused."""
    require("tensorflow")
    import tensorflow as tf
    global TF
    TF = tf
    value, g = gradlab.value_and_grad(numpy_of_a_comparison)(0.75)
    assert float(value) == pytest.approx(0.5625) and float(g) == pytest.approx(1.5)
    with pytest.raises(GradlabError, match="numpy"):
        gradlab.grad(through_numpy)(tf.constant([1.0, 2.0], dtype=tf.float64))


def reductions_of_0d_values_over_an_axis(x, w):
    """NumPy reduces a 0-d value over axis 0 or -1 as over all its axes (none); ``np.tile`` and
    ``np.clip`` take a number (here a Python float on every backend)."""
    v = np.ones((), dtype=np.float64) * np.sum(x)
    t = np.tile(w, (2, 1))
    return v.min(-1) + np.sum(v, axis=0) ** 2 + np.sum(t * x[:2]) + np.clip(w, -1.0, 0.3) * x[0] \
        + np.max(v, 0) * np.prod(v, axis=0) + np.sum(np.any(v, -1) * x)


def test_reductions_of_0d_values_over_an_axis(framework: str) -> None:
    """``v.min(-1)`` of a 0-d ``v`` crashed on TensorFlow and JAX, ``np.tile`` of a Python float
    on torch (people fuzzer seeds 808/909)."""
    three_modes(reductions_of_0d_values_over_an_axis, [0.5], framework)


def smallest_square_from_infinity(x):
    best = float('inf')
    for v in x:
        best = min(best, v * v)
    return best + np.sum(x) + float("1.5") * x[0]


def test_a_number_read_from_text(framework: str) -> None:
    """``float('inf')`` was read as a copy of the string 'inf' (a crash: ``min('inf', ...)``);
    it is a number, kept as written."""
    three_modes(smallest_square_from_infinity, [], framework)


def atan2_of_jax_truth_values(x):
    v3 = JNP.isfinite(x)
    return JNP.atan2(v3, v3) * math.exp(math.cosh(JNP.log10(x ** 2 + 0.5)))


def test_a_value_less_precise_than_the_functions_own_is_refused() -> None:
    """A JAX program given a Python float: JAX computes ``jnp.atan2`` of its bools in float32,
    gradlab (on Python numbers, NumPy's rules) in float16. The two agreed at float32's loose
    tolerance, so a value 1e-4 off came back (people fuzzer seed 1001). JAX's spelling now
    casts the mask to float32 first, as JAX does; and a value in a narrower float than the
    function's own is refused by the guard, naming both dtypes."""
    require("jax")
    import jax.numpy as jnp
    from gradlab import guard
    global JNP
    JNP = jnp
    value, _ = gradlab.value_and_grad(atan2_of_jax_truth_values)(-0.284119)
    assert float(value) == pytest.approx(float(atan2_of_jax_truth_values(-0.284119)), rel=1e-6)
    assert guard._narrower(np.float16(2.195), jnp.float32(2.1955))
    assert not guard._narrower(np.float64(2.195), jnp.float32(2.1955))
    assert not guard._narrower(2.195, jnp.float32(2.1955))
    assert "in float16, where your function computes in float32" in guard._precision_lost(
        jnp.float32(2.1955), np.float16(2.195))


def float_functions_of_a_torch_mask(x):
    m = TORCH.isfinite(x)
    return TORCH.sum(TORCH.tanh(m)) + TORCH.sum(TORCH.exp(m)) + TORCH.sum(x ** 2)


def test_float_functions_of_a_mask_in_torch_code_compute_in_float32() -> None:
    """``torch.tanh(m)`` of a mask is float32 in torch, float16 in NumPy, whose rule gradlab's
    backends follow: a torch program's value came back 6e-5 off (people fuzzer seed 2222). A
    float function of a mask spelled with torch's (or JAX's) function casts it to float32
    first, on its own line."""
    require("torch")
    import torch
    global TORCH
    TORCH = torch
    x = torch.tensor([[0.5, -1.0, 2.0]], dtype=torch.float64)
    value, g = gradlab.value_and_grad(float_functions_of_a_torch_mask)(x)
    assert float(value) == pytest.approx(float(float_functions_of_a_torch_mask(x)), rel=1e-7)
    torch.testing.assert_close(g, 2 * x)
    assert "gl.astype(m, 'float32')" in gradlab.grad(float_functions_of_a_torch_mask).source


def isfinite_of_an_argmax(x, w):
    v5 = np.min(w).argmax()
    return np.isfinite(v5) * 1.0 + np.sum(x ** 2) + np.isnan(v5) * x[0]


def test_isfinite_of_whole_numbers(framework: str) -> None:
    """``np.isfinite`` of an int (an argmax) crashed on TensorFlow, whose is_finite takes
    floats only (people fuzzer seed 2222); whole numbers are finite, never nan or inf."""
    three_modes(isfinite_of_an_argmax, [np.array([0.5, -0.2])], framework)


def softmax_of_counts(x, w):
    m = np.greater_equal(x, w)
    return np.sum(scipy.special.softmax(m * np.size(m)) * x)


def test_softmax_of_counts(framework: str) -> None:
    """``scipy.special.softmax`` of ints crashed on TensorFlow (its exp takes floats; people
    fuzzer seed 2222): computed in float64, as SciPy does."""
    three_modes(softmax_of_counts, [0.1], framework)


def determinant_of_a_mask(x):
    m = np.equal(0.1, np.linalg.inv(x[:2, None] * x[None, :2] + np.eye(2)))
    return np.linalg.det(m) * np.sum(x) + np.linalg.inv(m + np.eye(2))[0, 0] * x[0]


def test_linear_algebra_of_a_mask(framework: str) -> None:
    """``np.linalg.det`` of a mask crashed on torch and TensorFlow (they take floats only;
    people fuzzer seed 3333): inv, det and slogdet of ints and bools compute in float64."""
    three_modes(determinant_of_a_mask, [], framework)


def flip_of_a_number(x, w):
    v = TORCH.as_tensor(math.exp(w), dtype=TORCH.float64)
    return TORCH.flip(v, dims=(0,)) * 2.0 + TORCH.sum(x ** 2)


def test_flip_of_a_0d_value() -> None:
    """``torch.flip(v, dims=(0,))`` of a 0-d ``v`` is ``v`` in torch; gradlab, given Python
    numbers, ran NumPy's flip, which refuses the axis (a crash; people fuzzer seed 4444)."""
    require("torch")
    import torch
    global TORCH
    TORCH = torch
    x = torch.tensor([0.5, -1.0], dtype=torch.float64)
    dx, dw = gradlab.grad(flip_of_a_number, (0, 1))(x, 0.3)
    torch.testing.assert_close(dx, 2 * x)
    assert float(dw) == pytest.approx(2.0 * math.exp(0.3))


def mean_of_counts(x, w):
    counts = np.sum(np.less_equal(np.greater(w, 0.5), w), -1, keepdims=True)
    return np.mean(counts * 1.0) * np.sum(x) + np.transpose(np.log10(np.sum(w > 0) + 1.0), ())


def test_counts_times_a_float_in_numpy_code(framework: str) -> None:
    """``np.sum(mask) * 1.0`` is float64 in NumPy, float32 in torch (an int64 tensor times a
    Python float): a NumPy program on torch got 2/3 rounded to float32 (people fuzzer seed
    4444). A count times a float is cast to the float's dtype first in code written for
    NumPy; ``np.transpose`` of a NumPy number crashed on torch."""
    w = np.array([[0.3, 0.7, 1.5], [0.2, -0.1, 0.9], [1.2, 0.4, 0.6]])
    three_modes(mean_of_counts, [w], framework, refusable=("tensorflow",))


def dtype_of_a_number(x, n=2):
    r = np.abs(np.subtract(n, x))
    return r + np.zeros_like(r, dtype=r.dtype)


def test_the_dtype_of_a_value_held_as_a_python_number(framework: str) -> None:
    """``r.dtype`` of ``jnp.abs(n - x)`` with ``x`` a Python float: gradlab holds ``r`` as a
    Python float, which has no ``.dtype`` (a crash; people fuzzer seed 5555); it reads
    ``gl.dtype(r)``, as ``.ndim`` reads ``gl.ndim(r)``."""
    require(framework)
    assert gradlab.grad(dtype_of_a_number)(0.3) == pytest.approx(-1.0)
    assert "gl.dtype(r)" in gradlab.grad(dtype_of_a_number).source


def rows_of_a_dict_of_arrays(x, w):
    parts = {"a": w, "b": w}
    total = 0.0
    for k in parts:
        total = total + np.sum(parts[k] ** 2)
    return total + np.sum(x * x)


def test_mixed_precision_gradients_accumulated_in_the_inputs_dtype() -> None:
    """float32 ``x`` beside float64 ``w``: torch's index_add refused a float32 source into a
    float64 buffer (a crash; people fuzzer seed 5555). Values are added in the buffer's
    dtype, as ``np.add.at`` adds them."""
    require("torch")
    import torch
    x = torch.tensor([0.5, -1.0], dtype=torch.float32)
    w = torch.tensor([[0.1, 0.2], [0.3, 0.4]], dtype=torch.float64)
    dx, dw = gradlab.grad(rows_of_a_dict_of_arrays, (0, 1))(x, w)
    torch.testing.assert_close(dw, 4 * w)
    assert dx.dtype == torch.float32 and dw.dtype == torch.float64


def cumsum_of_a_0d_tensor(x):
    v = TORCH.div(3.0, abs(x))
    return v.cumsum(0) + 3.0 // v


def test_an_output_of_another_shape_is_refused() -> None:
    """torch's ``v.cumsum(0)`` of a 0-d tensor is 0-d; gradlab, given a Python float, computed
    NumPy's cumsum of a number, shape (1,), and the guard took the two values as equal (one
    element each): grad crashed, jvp gave an array (people fuzzer seed 6666). A returned value
    of another shape than the function's is now a mismatch."""
    require("torch")
    import torch
    global TORCH
    TORCH = torch
    with pytest.raises(GradlabError, match="different forward value"):
        gradlab.grad(cumsum_of_a_0d_tensor)(0.7)
    with pytest.raises(GradlabError, match="different forward value"):
        gradlab.jvp(cumsum_of_a_0d_tensor)(0.7, 1.0)


def parts_of_a_real_input(w, b):
    return np.sum(np.imag(b) * w) + np.sum(np.angle(b) * b * w) + np.sum(b ** 2 * w)


def test_hvp_through_imag_and_angle_of_a_real_input() -> None:
    """hvp of ``np.imag(b)``/``np.angle(b)`` of a real ``b`` was refused at a line of
    gradlab's own code (``gl.imag_adjoint: its dy argument carries a gradient``; people fuzzer
    seed 5555): the helpers' ``dy`` is a value forward mode goes through (their tangent rules
    say how)."""
    w, b = np.array([0.5, -1.0, 2.0]), np.array([0.3, -0.7, 1.1])
    v = np.array([1.0, 0.5, -0.2])
    np.testing.assert_allclose(gradlab.hvp(parts_of_a_real_input, 1)(w, b, v), 2 * w * v)


def torch_methods_without_a_rule(x):
    v1 = x.div(2.0)
    v3 = v1.lgamma()
    return TORCH.sum(v3)


def test_a_chain_of_calls_kept_as_written_is_refused() -> None:
    """``x.div(2.0)`` then ``.lgamma()`` (first ``.diagonal()``, a definition's method since
    stop 33), torch methods gradlab had no rule for: the reads of
    a method call left out its receiver, so neither line was seen to carry a gradient, and the
    gradient came back as zeros (people fuzzer seed 7777: a silently wrong gradient). The
    receiver is read now, and the line without a rule is refused (``x.div`` has one since
    stop 29)."""
    require("torch")
    import torch
    global TORCH
    TORCH = torch
    with pytest.raises(GradlabError, match="v1.lgamma"):
        gradlab.grad(torch_methods_without_a_rule)(torch.ones(2, 2, 3, dtype=torch.float64))


def share_of_a_mask(x):
    m = np.less_equal(x, 0.4).T
    return sum(m) / len(m) + np.min(x)


def test_a_count_divided_in_numpy_code(framework: str) -> None:
    """``sum(mask) / len(mask)``: an int64 tensor divided on torch is float32, NumPy's float64
    (a value 1e-8 off, seen as run-order dependent in people fuzzer seed 7777, where the guard
    had checked these argument types before); a count divided is cast to float64 first."""
    three_modes(share_of_a_mask, [], framework, refusable=("tensorflow",))


def floor_of_a_truth_value(x):
    v1 = math.floor(np.any(np.reshape(x, (3, 1)) > 0.1, axis=-1)[1])
    return scipy.special.softmax(np.subtract(v1, v1)) + np.sum(x ** 2)


def test_math_floor_of_a_truth_value_is_an_int(framework: str) -> None:
    """``math.floor(True)`` is 1, NumPy's ``floor`` of a bool is the bool: gradlab read both
    as the latter, and ``np.subtract(v1, v1)`` of two bools crashed on every backend (people
    fuzzer seed 9999). ``math.floor`` and ``math.ceil`` of a mask cast it to int64 first."""
    three_modes(floor_of_a_truth_value, [], framework)


def angle_of_an_index(x):
    i = np.argmin(x)
    return np.arctan2(i, i + 1) * np.sum(x) + np.mean(np.stack([1, 2, 3])) * x[0]


def test_arctan2_of_ints_and_the_mean_of_numbers_stacked(framework: str) -> None:
    """``np.arctan2`` of two ints (an argmin) crashed on TensorFlow, whose atan2 takes floats
    (people fuzzer seed 1212); the mean of ``np.stack`` of Python numbers on torch."""
    three_modes(angle_of_an_index, [], framework)


def centred_stack_of_counts(x):
    parts = []
    for i in range(3):
        parts.append(2 * i)
    counts = np.stack(parts)
    centred = (counts - counts.mean()) / (counts.std() + 1e-3)
    return np.sum(x ** 2) * centred.mean() + np.sum(np.tile(1.5, 2)) * x[0]


def test_numpy_arrays_made_of_numbers_meet_the_backends_values(framework: str) -> None:
    """``np.stack`` of a list of ints is a NumPy array on every backend, and ``counts -
    counts.mean()`` then met a torch tensor (the mean, routed through ``gl``): TypeError
    (people fuzzer seed 1212). A NumPy call that makes an array of numbers is now computed by
    NumPy and given to the backend as its own array (``gl.numpy_call``)."""
    three_modes(centred_stack_of_counts, [], framework, refusable=("tensorflow",))


def logit_of_a_tensor_made_of_a_float(x):
    v = TORCH.tensor(x)
    u = TORCH.any(v > 0.0).tanh()
    return TORCH.logit(TORCH.sigmoid(v)) + v * 2.0 + float(TORCH.nn.functional.gelu(u)) * 0.0


def test_a_kept_torch_call_of_a_value_held_as_a_number() -> None:
    """``torch.tensor(x)`` of a Python float is held as the float (no gradient flows through
    torch.tensor); ``torch.logit`` of it, a torch function with no rule, then got a float and
    raised (people fuzzer seed 1212); ``F.gelu`` of ``torch.tanh`` of a truth value, held as a
    NumPy float32 (seed 5151), the same. A kept torch function's input is made a tensor first."""
    require("torch")
    import torch
    global TORCH
    TORCH = torch
    value, g = gradlab.value_and_grad(logit_of_a_tensor_made_of_a_float)(0.25)
    assert float(value) == pytest.approx(0.75)
    assert float(g) == 0.0          # torch.tensor of a number: a new leaf, as torch has it
    x = torch.tensor(0.25, dtype=torch.float64)
    assert float(gradlab.grad(logit_of_a_tensor_made_of_a_float)(x)) == 0.0


def dtype_of_an_inline_comparison(x):
    s = float(np.sum(x))
    flags = np.less_equal(s, s) + np.zeros_like(np.less_equal(s, s),
                                               dtype=np.less_equal(s, s).dtype)
    return np.sum(x ** 2) * (flags * 1.0)


def test_dtype_of_an_inline_comparison_of_numbers(framework: str) -> None:
    """``np.less_equal(s, s).dtype`` of a Python float ``s``: gradlab holds the comparison as
    a Python bool, which has no ``dtype`` (people fuzzer seed 3434); ``gl.dtype`` now reads
    it, as it does a name's."""
    three_modes(dtype_of_an_inline_comparison, [], framework, refusable=("tensorflow",))


def remainder_of_masks(x):
    m = np.greater(x, 0.0)
    n = np.less(x, 0.4)
    r = np.remainder(m, n) + np.floor_divide(m, n) + np.floor_divide(np.argmax(x), m)
    return np.sum(x ** 2 * r)


def test_remainder_and_floor_division_of_masks(framework: str) -> None:
    """``np.remainder`` of two masks is int8 in NumPy; torch and TensorFlow refuse it of bools
    (people fuzzer seed 3434), and of ints they raise where NumPy gives 0 for a zero divisor
    (JAX gives -1). Both are now NumPy's on every backend."""
    with np.errstate(divide="ignore"):
        three_modes(remainder_of_masks, [], framework, refusable=("tensorflow",))


def kink_tips(x):
    v = x - x
    r = x[0] * 0.0
    return (np.mean(np.arctan2(v, v)) + np.sum(np.arctan2(x, 2.0 * x + 3.0))
            + np.sum(np.hypot(v, v)) + np.sum(np.hypot(x, 2.0 * x))
            + np.sum(r ** (x * x + 1.0)) + np.sum(2.0 ** x))


def test_derivatives_at_a_tip_where_the_function_is_constant(framework: str) -> None:
    """``arctan2(v, v)`` and ``hypot(v, v)`` of a ``v`` that is 0, and ``0 ** y``: their rules
    divided 0 by 0 (or took 0 * log 0), a NaN derivative where the function is constant
    (people fuzzer seeds 2222, 7777, 5151; reverse mode hid it behind ``angle``'s zero adjoint
    where forward mode did not). There the derivative is now 0, as the norm's at 0
    (``gl.or_one`` of the denominator); elsewhere unchanged."""
    three_modes(kink_tips, [], framework)


def test_or_one_keeps_numbers_numbers(framework: str) -> None:
    """``gl.or_one`` of a Python number is a number of its type on every backend (a tensor made
    of it would be float32 on TensorFlow), and of a tensor, a tensor of its dtype."""
    require(framework)
    from gradlab.tensor import registry
    gl = registry.backend(framework)
    assert gl.or_one(0.0) == 1.0 and type(gl.or_one(0.0)) is float
    assert gl.or_one(2.5) == 2.5 and type(gl.or_one(np.float32(0))) is np.float32
    v = gl.or_one(to_framework(np.array([0.0, 3.0], dtype=np.float32), framework))
    np.testing.assert_array_equal(to_numpy(v), [1.0, 3.0])
    assert to_numpy(v).dtype == np.float32


def angle_and_length_of_numbers(x, y):
    return math.atan2(x, y) + math.hypot(x, y) + x ** y


def test_angle_and_length_of_python_numbers() -> None:
    """The rules with ``gl.or_one`` on Python numbers: the derivatives stay Python floats."""
    g = gradlab.grad(angle_and_length_of_numbers, wrt=(0, 1))(0.5, 1.5)
    want = central_difference(lambda v: angle_and_length_of_numbers(v[0], v[1]),
                              np.array([0.5, 1.5]))
    assert all(type(d) is float for d in g)
    np.testing.assert_allclose(g, want, rtol=1e-6)


def length_beside_a_truth_value(x):
    m = np.less_equal(x, x)
    return math.hypot(x[-1], m[0]) + np.sum(np.hypot(x, m)) + np.sum(np.hypot(m, m)) * x[0]


def test_hypot_of_a_number_and_a_truth_value(framework: str) -> None:
    """``math.hypot(x[-1], m[0])`` of a NumPy float and a NumPy bool: the float, read as a
    Python number, was made the bool's dtype, and hypot(True, True) came out (people fuzzer
    seed 6161: a silently wrong hvp on NumPy, which the guard did not check, and a crash on
    torch, which takes no abs of a bool). Truth values and ints compute in float64 now."""
    three_modes(length_beside_a_truth_value, [], framework, refusable=("tensorflow",))


def from_numpy_of_a_detached_copy(x):
    c = TORCH.from_numpy(x.detach().numpy())
    return TORCH.sum(x * TORCH.floor(TORCH.exp(c * 0.0)))


def test_a_kept_torch_call_of_a_numpy_array_keeps_it() -> None:
    """``torch.from_numpy(x.detach().numpy())``: the kept call's NumPy array was made a tensor
    first, which ``from_numpy`` refuses (people fuzzer seed 7171); only numbers are now."""
    require("torch")
    import torch
    global TORCH
    TORCH = torch
    x = torch.tensor([0.5, -1.0, 2.0], dtype=torch.float64)
    np.testing.assert_allclose(gradlab.grad(from_numpy_of_a_detached_copy)(x).numpy(), 1.0)


def dot_with_a_truth_value(x):
    m = np.all(x > -5.0)
    v = np.dot(x, m)
    return np.mean(v[1:] * x[1:]) + np.dot(m, x[0])


def test_the_gradient_of_a_dot_with_a_truth_value(framework: str) -> None:
    """``np.dot(v, np.all(x))``: the adjoint multiplied the gradient by the bool, and
    TensorFlow's float64 * bool is a bool tensor, all False for small values: a silently
    zero gradient (people fuzzer seed 7171). The truth value is cast to the gradient's dtype."""
    three_modes(dot_with_a_truth_value, [], framework, refusable=("tensorflow",))


def size_of_an_absolute_truth_value(x):
    for i in range(2):
        pass
    m = np.less_equal(i, i)
    a = abs(m)
    return np.sum(x ** 2) * float(a * a.size * 1.0) + a.ndim * x[0]


def test_size_of_a_value_held_as_a_number(framework: str) -> None:
    """``abs(np.less_equal(i, i)).size``: NumPy's ``abs`` of a NumPy bool is a NumPy bool, which
    has a size; gradlab's, on torch and TensorFlow, a Python number, which has none (people
    fuzzer seed 2468). ``.size`` and ``.shape`` of a value a primitive computed are read by
    ``gl``, as ``.ndim`` and ``.dtype`` are."""
    three_modes(size_of_an_absolute_truth_value, [], framework, refusable=("tensorflow",))


def method_of_a_numpy_call_on_numbers(x):
    c = np.float64(3)
    r = np.arcsin(c * 0.1).round(2)
    return np.sum(x ** 2) * r + np.cos(c * 0.2).round() * x[0]


def test_a_method_of_a_numpy_call_on_numbers(framework: str) -> None:
    """``np.arcsin(c * 0.1).round()`` of a number: the method's label,
    ``np.arcsin(c * 0.1).round``, was read as a NumPy function's dotted name and the call
    written ``np.arcsin(...).round(arcsin_c)``, the operand passed as the number of decimals
    (people fuzzer seed 4680: a crash on all four backends). Only a dotted name of
    identifiers is a module's function."""
    three_modes(method_of_a_numpy_call_on_numbers, [], framework)


def smallest_by_magnitude_beside_a_truth_value(x):
    m = np.less_equal(x, x)
    c = min(m[0], -2.0, key=abs)
    return np.sum(x ** 2) + c * 1.0 + max([m[1], 0.5], key=abs) * x[0]


def test_a_builtin_passed_as_a_key_to_a_kept_call(framework: str) -> None:
    """``min(m[0], b, key=abs)`` with ``m`` a truth array: the builtin ``abs`` met torch's
    bool tensor, which has no ``abs`` (NumPy's bool has; people fuzzer seed 4680). A builtin
    passed as a function to a kept call is ``gl``'s version."""
    three_modes(smallest_by_magnitude_beside_a_truth_value, [], framework, refusable=("tensorflow",))


def angle_of_a_half_precision_value(x):
    h = np.arctan(np.less_equal(x, x))          # NumPy: float16, pi/4
    return np.sum(np.arctan2(h, x * x)) + np.sum(np.arctan2(x, h[0]))


def test_arctan2_beside_a_half_precision_operand(framework: str) -> None:
    """``np.arctan2(np.arctan(mask), w.prod())``: the rule squared the float16 operand in
    float16 and the derivative was off by 4e-4 (people fuzzer seed 4680). The rules divide by
    ``hypot(x, y) ** 2``, which computes in the wider dtype of the two."""
    three_modes(angle_of_a_half_precision_value, [], framework, refusable=("tensorflow",))


def zero_dimensional_indices_of_numbers(x, w):
    m = np.less_equal(w, w)
    s = np.sin(w)
    return np.sum(x) * m[None].squeeze() + s[None][0] * 2.0 + np.cos(w * 2.0)[...] + s[()] * w


def tangent_of_a_numpy_scalar_at_none(x, w):
    v = np.zeros(()) - w + 0.1
    return np.squeeze(v[None], axis=0) * w + np.sum(x)


def test_the_tangent_of_a_numpy_scalar_indexed_at_none(framework: str) -> None:
    """``(np.zeros(()) - w)[None]`` of a float ``w``: NumPy's value is a NumPy scalar, but its
    tangent is a Python float, which NumPy's ``getitem`` (``operator.getitem``) did not index
    (people fuzzer seed 9797, jvp on NumPy). The NumPy backend's getitem takes a number."""
    require(framework)
    f = tangent_of_a_numpy_scalar_at_none
    fx = to_framework(np.array([0.5, 1.0]), framework)
    _, t = gradlab.jvp(f, wrt=1)(fx, 0.3, 1.0)
    assert float(to_numpy(t)) == pytest.approx(0.1 - 2 * 0.3, rel=1e-12)
    assert float(to_numpy(gradlab.grad(f, wrt=1)(fx, 0.3))) == pytest.approx(-0.5, rel=1e-12)


def test_zero_dimensional_indices_of_values_held_as_numbers(framework: str) -> None:
    """``np.less_equal(w, w)[None]`` of a Python float ``w``: NumPy's result is a NumPy bool,
    which takes ``[None]``; gradlab's, on torch, TensorFlow and JAX, a Python bool, which does
    not (people fuzzer seed 1122). Such an index (None, ``...``, ``()``) of a computed value
    goes through ``gl.getitem``, and so do its tangent and its gradient."""
    require(framework)
    x, w = np.array([0.5, 1.0]), 0.3
    f = zero_dimensional_indices_of_numbers
    dw = central(lambda v: float(f(x, float(v[0]))), np.array([w]))[0]
    ddw = central(lambda v: float(central(lambda u: float(f(x, float(u[0]))), v, 1e-4)[0]),
                  np.array([w]), 1e-4)[0]
    fx = to_framework(x, framework)
    gx, gw = gradlab.grad(f, wrt=(0, 1))(fx, w)
    np.testing.assert_allclose(to_numpy(gx), np.ones(2))
    assert float(to_numpy(gw)) == pytest.approx(dw, rel=1e-6)
    _, t = gradlab.jvp(f, wrt=1)(fx, w, 1.0)
    assert float(to_numpy(t)) == pytest.approx(dw, rel=1e-6)
    assert float(to_numpy(gradlab.hvp(f, wrt=1)(fx, w, 1.0))) == pytest.approx(ddw, rel=1e-4)


def complex_and_flipped_numbers(x, w):
    s = np.floor(w * 3.0)
    a = complex(s).real
    b = np.fliplr(np.atleast_2d(s))[0, 0]
    return np.sum(x * x) * a + b * w + np.sin(w)


def test_kept_calls_on_a_number_without_a_gradient(framework: str) -> None:
    """Two calls on ``s = np.floor(3 w)`` of a Python float, which gradlab holds as a number:
    ``complex(s).real`` gave torch's ``real`` a Python complex, which it refuses, and
    ``np.fliplr`` a NumPy view with a negative stride, which ``torch.as_tensor`` refuses
    (found by probing the methods of such values after people fuzzer seed 1122)."""
    require(framework)
    x, w = np.array([0.3, -0.7]), 0.4
    gx, gw = gradlab.grad(complex_and_flipped_numbers, wrt=(0, 1))(to_framework(x, framework), w)
    np.testing.assert_allclose(to_numpy(gx), 2 * x * 1.0)
    assert float(to_numpy(gw)) == pytest.approx(1.0 + np.cos(w), rel=1e-12)


def axes_of_a_number(w, x):
    t = TORCH.divide(2, math.expm1(w * 0.5))
    return (TORCH.moveaxis(t, -1, 0) + TORCH.swapaxes(t, 0, -1)) * x.sum()


def test_torch_axes_functions_of_a_value_held_as_a_number() -> None:
    """``torch.moveaxis(torch.divide(2, v), -1, 0)`` of a float ``v``: torch moves the axes of
    a 0-d tensor, but gradlab holds the quotient as a Python number, which torch's moveaxis,
    swapaxes, sort, topk, pad and take refused (people fuzzer seed 5566). They take numbers
    now, as tensors of NumPy's dtype."""
    require("torch")
    import torch
    global TORCH
    TORCH = torch
    w, x = 0.3, torch.tensor([0.5, -0.2], dtype=torch.float64)
    # (torch's quotient of two numbers is float32: the guard, on, refuses the float64 value)
    gw, gx = gradlab.grad(axes_of_a_number, wrt=(0, 1), check=False)(w, x)
    t = 2.0 / math.expm1(w / 2)
    dt = -math.exp(w / 2) / math.expm1(w / 2) ** 2
    assert float(gw) == pytest.approx(2 * dt * float(x.sum()), rel=1e-12)
    np.testing.assert_allclose(gx.numpy(), [2 * t, 2 * t], rtol=1e-12)
    gl = backend("torch")          # the others, on a number as on a 0-d tensor
    assert float(gl.sort(t)) == t and float(gl.take(t, 0)) == t
    assert float(gl.pad(t, 1)) == t         # (NumPy pads no axis of a 0-d value)


def max_with_a_variable_second_argument(x, b):
    return TORCH.max(TORCH.ge(x, b), b).mean()


def max_over_a_dimension(x):
    return TORCH.max(x, 1).values.sum() + x.min(-1)[0].sum() + TORCH.max(x, dim=0).values.sum()


def test_torch_max_with_a_second_argument_that_is_not_an_int_literal() -> None:
    """``torch.max(x, b)`` is the elementwise maximum when ``b`` is a tensor and the reduction
    over dimension ``b`` when it is an int; gradlab read it as the reduction, and crashed on a
    tensor axis (people fuzzer seed 7788). The code does not say which: refused, naming both
    spellings. An int literal, or ``dim=``, is the reduction."""
    require("torch")
    import torch
    global TORCH
    TORCH = torch
    x = torch.tensor([[0.5, -1.0, 2.0], [1.5, 0.2, -0.3]], dtype=torch.float64)
    for mode in (gradlab.grad, gradlab.jvp, gradlab.hvp):
        with pytest.raises(GradlabError, match=r"torch.maximum\(x, other\).*dim=") as info:
            mode(max_with_a_variable_second_argument)
        assert "TORCH.max(TORCH.ge(x, b), b)" in str(info.value)      # the line
    leaf = x.clone().requires_grad_(True)
    want, = torch.autograd.grad(max_over_a_dimension(leaf), leaf)
    np.testing.assert_allclose(gradlab.grad(max_over_a_dimension)(x).numpy(), want.numpy())


def length_of_a_truth_value_and_a_number(x):
    m = np.less_equal(x, 0.1)
    return math.hypot(m[0], 1.5) * np.sum(x ** 2) + np.sum(np.hypot(m, 2)) * x[1]


def test_hypot_of_a_truth_value_and_a_python_number(framework: str) -> None:
    """``math.hypot(mask[0], 1.5)``: the truth value was cast to float64 and the Python float
    left a number, whose ``abs`` torch refuses (people fuzzer seed 7788). The number is made
    an array like the other operand."""
    three_modes(length_of_a_truth_value_and_a_number, [], framework, refusable=("tensorflow",))


def diagonal_by_fancy_indexing(x):
    M = np.outer(x, x) + np.sin(x)
    n = M.shape[0]
    return np.sum(M[np.arange(n), np.arange(n)] * x) + M[np.arange(n), n - 1 - np.arange(n)][0]


def test_an_index_of_arrays_made_in_the_index(framework: str) -> None:
    """``M[np.arange(n), np.arange(n)]``: the index's arrays are made in the index itself, so
    the code wrote a plain ``[]``, which TensorFlow's tensors refuse for arrays (found by
    probing realistic programs, stop 28). An index with a call of a module's function goes
    through ``gl.getitem``."""
    three_modes(diagonal_by_fancy_indexing, [], framework)


def layers_from_a_list_of_pairs(params, x):
    h = x
    for i in range(len(params)):
        W, b = params[i]
        h = np.tanh(h @ W + b)
    return np.sum(h)


def layers_unpacked_in_the_loop(params, x):
    h = x
    for W, b in params:
        h = np.tanh(h @ W + b)
    return np.sum(h)


def layers_enumerated(params, x):
    h = x
    for i, (W, b) in enumerate(params):
        h = np.tanh(h @ W + b) * (1.0 + 0.5 * i)
    return np.sum(h)


def layers_zipped(params, x):
    h = x
    for (W, b), k in zip(params, [1.0, 0.5]):
        h = np.tanh(h @ W + b) * k
    return np.sum(h)


@pytest.mark.parametrize("f", [layers_from_a_list_of_pairs, layers_unpacked_in_the_loop,
                               layers_enumerated, layers_zipped], ids=lambda f: f.__name__)
def test_a_list_of_weight_pairs_indexed_in_a_loop(framework: str, f) -> None:
    """``W, b = params[i]`` over a list of (W, b) tuples: the gradient, a list, is set item by
    item (``dparams[i] = dparams_i``), which JAX's and TensorFlow's code and hvp wrote as an
    array update and crashed (found probing realistic programs, stop 28). Lists are updated as
    lists; the gradient is a list of tuples, as the input. The loops people write over such a
    list (``for W, b in params``, ``for i, (W, b) in enumerate(params)``, ``zip``), refused
    before, unpack the row as that line would."""
    require(framework)
    rng = np.random.default_rng(0)
    pairs = [(rng.normal(size=(2, 2)), rng.normal(size=2)) for _ in range(2)]
    v = [(rng.normal(size=(2, 2)), rng.normal(size=2)) for _ in range(2)]
    x = np.array([0.3, -0.2])

    def flat(ps):
        return np.concatenate([np.ravel(to_numpy(a)) for pair in ps for a in pair])

    def unflat(z):
        return [(z[6 * k:6 * k + 4].reshape(2, 2), z[6 * k + 4:6 * k + 6]) for k in range(2)]

    z0 = flat(pairs)
    g_fd = central(lambda z: float(f(unflat(z), x)), z0)
    h_fd = central(lambda z: central(lambda u: float(f(unflat(u), x)),
                                     z, 1e-4) @ flat(v), z0, 1e-4)

    def fw(ps):
        return [(to_framework(W, framework), to_framework(b, framework)) for W, b in ps]
    g = gradlab.grad(f)(fw(pairs), to_framework(x, framework))
    hv = gradlab.hvp(f)(fw(pairs), to_framework(x, framework), fw(v))
    assert type(g) is list and all(type(pair) is tuple for pair in g)
    rtol = 1e-4 if framework == "jax" else 1e-6
    np.testing.assert_allclose(flat(g), g_fd, rtol=rtol, atol=1e-7)
    np.testing.assert_allclose(flat(hv), h_fd, rtol=1e-3, atol=1e-4)


def clipped_by_one_bound(x):
    return np.sum(x.clip(min=-0.25) ** 2) + np.sum(x.clip(max=0.1) * x)


def test_clip_with_one_bound_alone(framework: str) -> None:
    """``x.clip(min=...)``/``x.clamp(min=...)``, one bound alone, were refused for want of the
    other (found probing realistic programs, stop 28)."""
    three_modes(clipped_by_one_bound, [], framework)


def max_of_a_list_of_counts(x):
    sizes = [len(x) - 1, 2]
    n = max(sizes)
    acc = [0.0] * n
    return np.sum(x[:n] ** 2) + len(acc) * x[0]


def test_max_of_a_list_of_counts_stays_a_count(framework: str) -> None:
    """``max(sizes)`` of a list of ints, no gradient through it: Python's int, kept as written
    (stacking the list and reducing it, tried this stop for lists that carry a gradient, made it
    a JAX array, which ``[0.0] * n`` refuses)."""
    three_modes(max_of_a_list_of_counts, [], framework)


def largest_of_a_generator(x):
    return max(x[i] ** 2 for i in range(3)) + min([v * v for v in x]) * 2.0


def largest_of_a_built_list(x):
    vals = []
    for i in range(3):
        vals.append(x[i] * np.sin(x[i]))
    return max(vals) * min(vals) + max((x[0], x[1] * 3.0)) + max(x) - min(x * x)


def rows_largest_squared(x):
    s = 0.0
    for r in [x, x * 2.0, -x]:
        s = s + max(r) ** 2
    return s


@pytest.mark.parametrize("f", [largest_of_a_generator, largest_of_a_built_list,
                               rows_largest_squared])
def test_builtin_max_of_one_iterable(f, framework: str) -> None:
    """``max(values)``/``min(values)`` of a list, a generator, a tuple or an array that carries
    a gradient was refused, though the README lists it. It is the item the builtin picks,
    ``values[gl.index_of_max(values)]``, on every backend and in every mode (a probe of
    realistic programs, stop 28)."""
    three_modes(f, [], framework)


def count_from_a_max_of_ints(x):
    n = max([len(x) - 2, 1])
    return np.sum(x[:n] ** 2) * len([0.0] * n)


def test_max_of_two_counts_stays_a_count(framework: str) -> None:
    """``n = max([len(x) - 2, 1])`` is ``max(len(x) - 2, 1)``, ``gl.maximum`` of two ints:
    JAX's made it an array, which ``[0.0] * n`` refuses (noted at stop 28)."""
    three_modes(count_from_a_max_of_ints, [], framework)


def negated_float_of_a_truth(x):
    m = np.logical_or(x > 0.4, x < -0.1)
    v = float(m[1]) + float(x[0] > 0)
    return -v * np.sum(x ** 2) - float(m[2])


def test_float_of_a_truth_value_is_a_number(framework: str) -> None:
    """``float(m[0])`` of a truth value is 1.0 or 0.0: gradlab kept the bool itself, and torch
    refused to negate it (people fuzzer seed 6767). The cast is written out."""
    three_modes(negated_float_of_a_truth, [], framework)


try:
    import jax.numpy as _jnp
except ImportError:        # the test below then fails under make test, skips elsewhere
    _jnp = None


def jax_updates_in_a_loop(x):
    acc = _jnp.zeros(2)
    for i in range(3):
        acc = acc.at[i % 2].add(x[i] ** 2)
    y = x.at[0].set(x[1] * 3.0)
    z = y.at[1:].add(_jnp.sin(x[:2]))
    rows = _jnp.stack([x, x * 2.0]).at[0, 1].set(x[2] ** 2).at[:, 0].add(1.0)
    repeated = (x * 2.0).at[_jnp.array([0, 0, 2])].add(x)
    return _jnp.sum(acc * _jnp.array([1.0, 2.0])) + _jnp.sum(z ** 2) + _jnp.sum(rows * rows) \
        + _jnp.sum(_jnp.tanh(repeated)) + x.at[-1].set(0.0).sum() * x[0]


def _set_first(x, v):
    return x.at[0].set(v)


def jax_update_in_a_helper(x):
    return _jnp.sum(_set_first(x, x[2] * 2.0) ** 2) + _jnp.sum(x ** 3)


@pytest.mark.parametrize("f", [jax_updates_in_a_loop, jax_update_in_a_helper])
def test_jax_indexed_updates(f) -> None:
    """JAX's ``x.at[i].set(v)`` and ``.add(v)`` (repeated positions adding up) were refused
    for want of a rule: every idiomatic update in JAX code (a probe of framework-native
    programs, stop 28). They are ``index_update``/``index_add`` of a new array; a helper that
    returns one changes nothing in place. Checked against jax.grad, jax.jvp and jax's hvp."""
    require("jax")
    import jax
    x, v = _jnp.array([0.3, -0.2, 0.5]), _jnp.array([0.7, -0.4, 0.2])
    np.testing.assert_allclose(gradlab.grad(f)(x), jax.grad(f)(x), rtol=1e-6)
    value, t = gradlab.jvp(f)(x, v)
    want_value, want_t = jax.jvp(f, (x,), (v,))
    np.testing.assert_allclose([value, t], [want_value, want_t], rtol=1e-6)
    np.testing.assert_allclose(gradlab.hvp(f)(x, v), jax.jvp(jax.grad(f), (x,), (v,))[1],
                               rtol=1e-6)


def jax_update_with_a_mode(x):
    return _jnp.sum(x.at[1].set(5.0, mode="drop")) + _jnp.sum(x.at[0].multiply(2.0))


def test_jax_updates_gradlab_cannot_read_are_refused() -> None:
    require("jax")
    with pytest.raises(gradlab.GradlabError, match="mode= and indices_are_sorted="):
        gradlab.grad(jax_update_with_a_mode)(_jnp.array([0.3, -0.2, 0.5]))


def torch_methods_of_functions(x):
    y = x.mul(2.0).add(0.3).sub(x.neg().div(4.0))
    z = y.clamp_min(0.1) + y.clamp_max(0.2) + x.maximum(y).atan2(y.reciprocal())
    return z.contiguous().outer(x).sum() + x.tile(2).pow(2).sum()


def test_torch_methods_of_its_functions() -> None:
    """``x.mul(y)``, ``x.neg()``, ``x.clamp_min(a)``... : torch's functions of a tensor as its
    methods were refused for want of a rule (a probe of framework-native programs, stop 28).
    Checked against torch's autograd in every mode."""
    require("torch")
    import torch
    from torch.func import grad as tgrad, jvp as tjvp
    x = torch.tensor([0.3, -0.2, 0.5], dtype=torch.float64)
    v = torch.tensor([0.7, -0.4, 0.2], dtype=torch.float64)
    f = torch_methods_of_functions
    np.testing.assert_allclose(gradlab.grad(f)(x), tgrad(f)(x), rtol=1e-10)
    np.testing.assert_allclose(gradlab.jvp(f)(x, v)[1], tjvp(f, (x,), (v,))[1], rtol=1e-10)
    np.testing.assert_allclose(gradlab.hvp(f)(x, v), tjvp(tgrad(f), (x,), (v,))[1],
                               rtol=1e-10)


def items_read_in_two_loops(x, xs):
    acc = np.zeros(3)
    for v in xs:
        acc = acc + x * v
    for v in xs:
        acc = acc + v
    return np.sum(acc ** 2)


def biases_summed_after_the_layers(Ws, bs, x):
    h = x
    for W, b in zip(Ws, bs):
        h = np.tanh(h @ W + b)
    offset = np.zeros(3)
    for b in bs:
        offset = offset + b
    return np.sum((h + offset) ** 2)


def test_a_list_read_in_two_loops(framework: str) -> None:
    """The gradient of a list read in two loops was silently wrong on NumPy and torch (a
    probe of realistic programs, stop 29): the later loop stored each item's gradient in the
    list as the very array ``dacc`` (``dxs[i] = dv``, where ``unbroadcast`` of a same-shaped
    value is the value), and the earlier loop's ``dxs[i] += dv`` then changed that one array
    in place, in every entry. A store into a buffer that another statement adds into in place
    is an addition now."""
    require(framework)
    rng = np.random.default_rng(3)
    x, xs = np.array([0.5, 1.0, 2.0]), [np.array([1.0, 2.0, 3.0]), np.array([0.5, 0.5, 1.0])]
    Ws, bs = [rng.standard_normal((3, 3)) * 0.5 for _ in range(2)], \
        [rng.standard_normal(3) for _ in range(2)]
    h = rng.standard_normal(3)
    for f, args in ((items_read_in_two_loops, (x, xs)), (biases_summed_after_the_layers,
                                                         (Ws, bs, h))):
        flat = np.concatenate(args[1])

        def on(z, f=f, args=args):
            items = [z[3 * i:3 * i + 3] for i in range(len(args[1]))]
            return float(f(args[0], items, *args[2:]))
        want = central(on, flat)
        fw = [to_framework(a, framework) if isinstance(a, np.ndarray) else
              [to_framework(e, framework) for e in a] for a in args]
        got = gradlab.grad(f, wrt=1)(*fw)
        np.testing.assert_allclose(np.concatenate([to_numpy(g) for g in got]), want,
                                   rtol=1e-6, atol=1e-8)


def sum_of_squares_of_a_sum(a, b):
    return np.sum((a + b) ** 2)


def test_gradients_come_back_as_separate_arrays(framework: str) -> None:
    """``d(a + b)`` is one array in the generated code; returned as both ``da`` and ``db`` it
    was one object, so ``da *= 0.5`` changed ``db`` too (NumPy, torch)."""
    require(framework)
    x = to_framework(np.array([0.5, 1.0, 2.0]), framework)
    da, db = gradlab.grad(sum_of_squares_of_a_sum, wrt=(0, 1))(x, x)
    if framework in ("numpy", "torch"):    # (TensorFlow's and JAX's arrays never change)
        assert da is not db
    np.testing.assert_allclose(to_numpy(da), to_numpy(db))


def distance_of_unpacked_points(x):
    a, b, c = x
    return np.sqrt((a - c) ** 2 + (b - a * b) ** 2) + np.sum(x[:2] ** 2)


def unpacked_argument(p, q):
    x1, y1 = p
    x2, y2 = q
    return np.sqrt((x2 - x1) ** 2 + (y2 - y1) ** 2)


def test_an_array_unpacked_into_names(framework: str) -> None:
    """``x1, y1 = p`` of an array argument: its gradient was built as a Python list, which
    torch, TensorFlow and JAX could not make the argument's type, and hvp crashed on every
    backend (a probe of realistic programs, stop 29). It is zeros like the argument now: an
    array for an array, a list for a list."""
    three_modes(distance_of_unpacked_points, [], framework)
    p, q = np.array([0.3, 0.1]), np.array([1.0, -0.5])
    want = (p - q) / np.linalg.norm(p - q)
    got = gradlab.grad(unpacked_argument)(to_framework(p, framework), to_framework(q, framework))
    np.testing.assert_allclose(to_numpy(got), want, rtol=1e-10)
    assert type(got) is type(to_framework(p, framework))
    np.testing.assert_allclose(gradlab.grad(unpacked_argument)([0.3, 0.1], [1.0, -0.5]), want)


def numbers_written_as_arrays(x):
    z = np.concatenate([x, x ** 2, [1.0]])
    w = np.concatenate((x, (0.5, 0.25)))
    m = np.maximum(x, [0.1, 0.2, 0.3]) + np.where(x > 0, x, [1.0, 2.0, 3.0])
    return np.sum(z * z) + np.sum(w ** 3) + np.sum(np.stack([x, [1.0, 2.0, 3.0]]) ** 2) + \
        np.sum(m * x) + \
        np.dot(x, [1.0, -2.0, 0.5]) ** 2


def test_lists_of_numbers_where_arrays_go(framework: str) -> None:
    """``np.concatenate([x, [1.0]])``, ``np.maximum(x, [0.1, 0.2, 0.3])``, ``np.dot(x, [1.0,
    -2.0, 0.5])``: the list reached torch's, TensorFlow's and JAX's functions, and forward
    mode gave it a 0-d tangent (crashes on every backend; a probe of realistic programs, stop
    29). It is the constant array NumPy makes of it."""
    three_modes(numbers_written_as_arrays, [], framework)


_CALLS = [0]
_BUFFER = np.zeros(3)


def counts_its_calls(x):
    _CALLS[0] += 1
    return np.sum(x ** 2)


def writes_into_a_module_array(x):
    _BUFFER[0] = 1.0
    return np.sum(x ** 2)


@pytest.mark.parametrize("f", [counts_its_calls, writes_into_a_module_array])
def test_a_value_from_outside_changed_in_place_is_refused(f) -> None:
    """``_CALLS[0] += 1`` of a module's list crashed with UnboundLocalError in the generated
    code (a probe of realistic programs, stop 29): refused at the line now, as ``global`` is."""
    for transform in (gradlab.grad, gradlab.jvp, gradlab.hvp):
        with pytest.raises(gradlab.GradlabSyntaxError, match="from outside the function"):
            transform(f)


def cross_entropy_by_rows(P, labels):
    return -np.sum(np.log(P[range(len(labels)), labels]))


def test_a_range_as_an_index(framework: str) -> None:
    """``P[range(n), labels]``, the textbook cross-entropy: JAX refused the range as an index
    (a probe of realistic programs, stop 29). The backends read it as NumPy does."""
    require(framework)
    P, labels = np.array([[0.2, 0.5, 0.3], [0.6, 0.3, 0.1]]), np.array([1, 0])
    want = np.zeros_like(P)
    want[[0, 1], [1, 0]] = [-1 / 0.5, -1 / 0.6]
    got = gradlab.grad(cross_entropy_by_rows)(to_framework(P, framework),
                                              to_framework(labels, framework))
    np.testing.assert_allclose(to_numpy(got), want, rtol=1e-10)


def positions_by_where(x):
    idx = np.where(x > 0)[0]
    return np.sum(x[idx] ** 2) + np.sum(np.where(x > 0, x, 0.0)) * x[0]


def test_where_with_a_condition_alone_is_nonzero(framework: str) -> None:
    """``np.where(x > 0)[0]``: NumPy's ``np.nonzero``, indices; gradlab read it as the
    three-argument ``where`` and refused for want of ``x`` (found probing realistic programs,
    stop 28)."""
    three_modes(positions_by_where, [], framework)


def log_of_summed_exponentials(x):
    return np.sum(np.logaddexp(x, 2.0 * x[::-1]) * x) + np.logaddexp(x[0] * 800.0, 0.5)


def test_logaddexp_is_a_primitive(framework: str) -> None:
    """``np.logaddexp`` was refused for want of a rule (found probing realistic programs, stop
    28). It is the table's, shifted by the larger operand as NumPy's is (no overflow at 800 x),
    with its rules in both modes."""
    three_modes(log_of_summed_exponentials, [], framework)
    gl = backend(framework)
    assert float(to_numpy(gl.logaddexp(to_framework(np.array([-np.inf]), framework),
                                       to_framework(np.array([-np.inf]), framework)))[0]) \
        == -np.inf


def determinants_of_singular_matrices(x):
    M = np.stack([x[:2], 2.0 * x[:2]])            # rank 1: its determinant is 0 for every x
    Z = np.minimum(x[:1, None], -10.0) * 0.0      # the 1x1 zero matrix
    A = np.outer(x, x) + np.eye(3)                # invertible
    return np.linalg.det(M) + np.linalg.det(Z) * x[2] + np.linalg.det(A) * 0.5


def test_the_derivative_of_det_at_a_singular_matrix(framework: str) -> None:
    """``det``'s rule was ``det * inv(x).T``: 0 * inf = NaN at a singular matrix, where the
    derivative is the adjugate, which is finite (people fuzzer seed 4343: ``jnp.linalg.det`` of
    a 1x1 zero matrix). The rules use ``gl.adjugate``, from the SVD. (hvp at a singular matrix
    still divides by the determinant.)"""
    require(framework)
    x = X3
    want = central(lambda v: float(determinants_of_singular_matrices(v)), x)
    g = gradlab.grad(determinants_of_singular_matrices)(to_framework(x, framework))
    np.testing.assert_allclose(to_numpy(g), want, rtol=1e-6, atol=1e-8)
    v = np.array([0.7, -0.4, 0.2])
    _, t = gradlab.jvp(determinants_of_singular_matrices)(to_framework(x, framework),
                                                         to_framework(v, framework))
    assert float(to_numpy(t)) == pytest.approx(float(want @ v), rel=1e-6, abs=1e-8)


def spread_in_torch_s_reading(x):
    return x.std(unbiased=False) * x.var(correction=0) + (x.max(dim=1).values ** 2).sum()


def test_hvp_reads_code_that_names_no_framework_as_grad_does() -> None:
    """``x.std(unbiased=False)`` in a function that names no framework: NumPy's reading refuses
    it, so grad reads it as torch's; hvp showed its code in NumPy's reading and refused (found
    probing framework-native programs, stop 28). hvp is shown in the gradient's reading."""
    require("torch")
    import torch
    rng = np.random.default_rng(0)
    x = torch.tensor(rng.normal(size=(4, 3)))
    v = torch.tensor(rng.normal(size=(4, 3)))
    want = torch.func.jvp(torch.func.grad(spread_in_torch_s_reading), (x,), (v,))[1]
    got = gradlab.hvp(spread_in_torch_s_reading)(x, v)
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-10, atol=1e-12)


def trace_of_a_product(A):
    return (A.t() @ A).trace()


def lgamma_of_a_product(A):
    return (A.t() @ A + 3.0).lgamma().sum()


def test_no_rule_for_a_method_of_an_expression_says_so_in_python() -> None:
    """A method without a rule on an expression: the refusal suggested
    ``@gradlab.adjoint((A.t() @ A).trace)``, which is no Python (found probing
    framework-native programs, stop 28). It names the method and what to do instead.
    (``.trace()`` itself is read as np.trace's definition since stop 33.)"""
    require("torch")
    import torch
    with pytest.raises(GradlabError, match=r"the method \.lgamma\(\)") as info:
        gradlab.grad(lgamma_of_a_product)(torch.eye(2, dtype=torch.float64))
    assert "adjoint((" not in str(info.value)
    A = torch.tensor([[1.0, 2.0], [0.5, -1.0]], dtype=torch.float64)
    np.testing.assert_allclose(to_numpy(gradlab.grad(trace_of_a_product)(A)),
                               to_numpy(torch.func.grad(trace_of_a_product)(A)))


def cosine_of_a_zero_residual(x, w):
    r = np.mean((x - abs(x)) ** 2)
    return np.sum(r * 0.5) / (np.sqrt(np.sum(r ** 2)) + 1e-6) + abs(x) + np.sum(w)


def test_hvp_of_python_numbers_divided_by_zero_is_no_crash() -> None:
    """hvp's code divided a Python number by zero (sqrt(0) of a float ``x``): a
    ZeroDivisionError from inside (people fuzzer seed 1313), where jvp and grad retry with
    NumPy's numbers, whose arithmetic gives inf or nan as the user's NumPy code would. hvp now
    does too: NaN here, as every framework's autodiff gives (0 * inf); beside a torch tensor,
    the refusal jvp gives."""
    hv = gradlab.hvp(cosine_of_a_zero_residual)(0.7, np.ones(3), 1.0)
    assert np.isnan(hv)
    _, t = gradlab.jvp(cosine_of_a_zero_residual)(0.7, np.ones(3), 1.0)
    assert np.isnan(t)
    require("torch")
    import torch
    w = torch.ones(3, dtype=torch.float64)
    for mode in (gradlab.jvp, gradlab.hvp):   # NumPy's numbers beside a tensor: refused
        with pytest.raises(GradlabError, match="two frameworks"):
            mode(cosine_of_a_zero_residual)(0.7, w, 1.0)


# --- gradients of lists added as lists (stop 30) -------------------------------------------------
def _layer(p, x):
    W, b = p
    return np.tanh(x @ W + b)


def _forward(params, x):
    h = x
    for W, b in params:
        h = np.tanh(h @ W + b)
    return h


def _penalty(params):
    s = 0.0
    for W, b in params:
        s = s + np.sum(W ** 2)
    return s


def pairs_to_two_functions(params, x):
    return np.sum(_forward(params, x) ** 2) + 0.1 * _penalty(params)


def _forward_flat(ws, x):
    h = x
    for W in ws:
        h = np.tanh(h @ W)
    return h


def weights_to_two_functions(ws, x):
    return np.sum(_forward_flat(ws, x) ** 2) + 0.1 * sum(np.sum(W ** 2) for W in ws)


def pair_by_item(params, x):
    W, b = params[0]
    h = np.tanh(x @ W + b)
    W2, b2 = params[1]
    return np.sum((h @ W2 + b2) ** 2)


def pair_entries_by_index(params, x):
    h = np.tanh(x @ params[0][0] + params[0][1])
    return np.sum((h @ params[1][0] + params[1][1]) ** 2)


def pair_to_a_subroutine_twice(params, x):
    h = _layer(params[1], _layer(params[0], x))
    return np.sum(h ** 2) + np.sum(_layer(params[0], x))


def pairs_in_two_index_loops(params, x):
    h = x
    for i in range(len(params)):
        W, b = params[i]
        h = np.tanh(h @ W + b)
    s = 0.0
    for i in range(len(params)):
        s = s + np.sum(params[i][0] ** 2)
    return np.sum(h ** 2) + s


def pairs_built_inside(W1, b1, W2, b2, x):
    pairs = [(W1, b1), (W2, b2)]
    W, b = pairs[0]
    h = np.tanh(x @ W + b)
    W, b = pairs[1]
    return np.sum((h @ W + b) ** 2) + np.sum(pairs[0][1] ** 2)


def _leaves(tree):
    if isinstance(tree, (list, tuple)):
        return [leaf for item in tree for leaf in _leaves(item)]
    return [np.asarray(tree, dtype=np.float64)]


def _rebuilt(tree, flat, at=0):
    """``tree`` with its leaves read from ``flat`` (and where the next leaf starts)."""
    if isinstance(tree, (list, tuple)):
        items = []
        for item in tree:
            value, at = _rebuilt(item, flat, at)
            items.append(value)
        return type(tree)(items), at
    n = np.size(tree)
    return flat[at:at + n].reshape(np.shape(tree)), at + n


def _in(tree, framework):
    if isinstance(tree, (list, tuple)):
        return type(tree)(_in(item, framework) for item in tree)
    return to_framework(tree, framework)


def _flat(tree) -> np.ndarray:
    return np.concatenate([to_numpy(leaf).ravel() for leaf in _leaves_of_any(tree)])


def _leaves_of_any(tree):
    if isinstance(tree, (list, tuple)):
        return [leaf for item in tree for leaf in _leaves_of_any(item)]
    return [tree]


_RNG = np.random.default_rng(30)
_PAIRS = [(_RNG.standard_normal((3, 4)), _RNG.standard_normal(4)),
          (_RNG.standard_normal((4, 2)), _RNG.standard_normal(2))]
_BATCH = _RNG.standard_normal((5, 3))


@pytest.mark.parametrize("f, tree", [
    (pairs_to_two_functions, [_PAIRS[0], (_RNG.standard_normal((4, 4)), _PAIRS[0][1])]),
    (weights_to_two_functions, [_PAIRS[0][0], _RNG.standard_normal((4, 4))]),
    (pair_by_item, _PAIRS), (pair_by_item, [list(p) for p in _PAIRS]),
    (pair_entries_by_index, _PAIRS), (pair_to_a_subroutine_twice, [_PAIRS[0], (
        _RNG.standard_normal((4, 4)), _PAIRS[0][1])]),
    (pairs_in_two_index_loops, _PAIRS)], ids=lambda v: getattr(v, "__name__", ""))
@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_gradients_of_lists_add_item_by_item(f, tree, framework: str) -> None:
    """The gradient of a list is a list: adding two of them (the list passed to a loss and to
    its regularizer; a (W, b) pair read twice) joined them with Python's ``+``, and ``+=``
    extended them. The gradient came back with twice its items on every backend, or with
    one pair's gradient spread over the wrong entries (a probe of realistic programs, stop
    30). Gradients of lists are ``GradList`` now, whose ``+`` adds item by item. Checked for
    grad, jvp and hvp against central differences."""
    require(framework)
    flat = np.concatenate([leaf.ravel() for leaf in _leaves(tree)])

    def on(z):
        return float(f(_rebuilt(tree, z)[0], _BATCH))
    want = central(on, flat)
    v = np.linspace(-1.0, 1.0, flat.size)
    hv = central(lambda z: central(on, z, 1e-5) @ v, flat, 1e-4)
    args = (_in(tree, framework), to_framework(_BATCH, framework))
    tangent = _in(_rebuilt(tree, v)[0], framework)
    got = gradlab.grad(f)(*args)
    assert type(got) is type(tree) and len(got) == len(tree)
    np.testing.assert_allclose(_flat(got), want, rtol=1e-6, atol=1e-8)
    _, t = gradlab.jvp(f)(*args, tangent)
    assert float(to_numpy(t)) == pytest.approx(float(want @ v), rel=1e-6, abs=1e-8)
    np.testing.assert_allclose(_flat(gradlab.hvp(f)(*args, tangent)), hv, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_a_list_of_pairs_built_inside_the_function(framework: str) -> None:
    """``pairs = [(W1, b1), (W2, b2)]`` and ``W, b = pairs[0]``: the pair's gradient was
    added into the list's entry with ``+``, which joined the two pairs, and ``dW1`` came back
    as zeros on every backend (stop 30)."""
    require(framework)
    W1, b1 = _PAIRS[0]
    W2, b2 = _PAIRS[1]
    want = central(lambda w: float(pairs_built_inside(w.reshape(3, 4), b1, W2, b2, _BATCH)),
                   W1.ravel()).reshape(3, 4)
    got = gradlab.grad(pairs_built_inside)(*[to_framework(a, framework) for a in (
        W1, b1, W2, b2, _BATCH)])
    np.testing.assert_allclose(to_numpy(got), want, rtol=1e-6, atol=1e-8)


def rows_of_a_slice(x, c):
    a, b = x[:2]
    return np.sum(a * b * c)


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_rows_of_a_slice_unpacked_into_names(framework: str) -> None:
    """``a, b = x[:2]`` of an array: the rows' gradients, a list, were added into the
    array's with torch's ``index_add`` (``Tensor + list``: a TypeError from inside, stop 29).
    They are stacked first."""
    require(framework)
    x, c = _RNG.standard_normal((3, 4)), _RNG.standard_normal(4)
    want = central(lambda z: float(rows_of_a_slice(z.reshape(3, 4), c)), x.ravel())
    got = gradlab.grad(rows_of_a_slice)(to_framework(x, framework), to_framework(c, framework))
    np.testing.assert_allclose(to_numpy(got).ravel(), want, rtol=1e-6, atol=1e-8)


def jax_at_multiply(x):
    return np.sum(x.at[-1].multiply(2.0))


def test_jax_at_updates_other_than_set_and_add_are_refused() -> None:
    """``x.at[-1].multiply(2.0)`` was read as an index, then a TypeError from inside
    (``_IndexUpdateRef * float``, people fuzzer seed 5353). It is refused at its line, with
    the ``.set`` spelling to use instead."""
    require("jax")
    import jax.numpy as jnp
    with pytest.raises(GradlabError, match=r"at\[i\]\.set\(x\[i\] \* v\)"):
        gradlab.grad(jax_at_multiply)(jnp.array([1.0, 2.0]))


def solve_against_float64_ones(b):
    return np.sum(np.linalg.solve(b, np.ones(3, dtype=np.float64)))


def test_solve_of_float32_against_a_float64_side_on_torch() -> None:
    """``np.linalg.solve(b, np.ones(3, dtype=np.float64))`` of a float32 ``b``: NumPy solves
    in float64, torch refused the two dtypes (a RuntimeError from inside, people fuzzer seed
    6464). Solved in their common dtype."""
    require("torch")
    import torch
    b = np.eye(3, dtype=np.float32) * 2.0 + 0.1
    want = gradlab.grad(solve_against_float64_ones)(b)
    got = gradlab.grad(solve_against_float64_ones)(torch.tensor(b))
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-5)


def rows_summed(ws, x):
    return np.sum(np.sum(ws, axis=0) * x) + np.mean(ws) + np.sum(sum(ws) * x)


def rows_minus_x(ws, x):
    return np.sum((ws - x) ** 2)


@pytest.mark.parametrize("f", [rows_summed, rows_minus_x], ids=lambda f: f.__name__)
@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_a_list_argument_read_as_an_array(f, framework: str) -> None:
    """``np.sum(ws, axis=0)``, ``np.mean(ws)`` and ``ws - x`` of a list ``ws`` read it as the
    array NumPy makes of it; gradlab's code read ``ws`` as an array and gave NumPy a gradient
    of the wrong structure (one array for three), the other backends a TypeError (stop 30).
    A call that gives a parameter a list gets code that knows it (``ws:list``): the list is
    stacked where it is read as an array."""
    require(framework)
    ws = [_RNG.standard_normal(3) for _ in range(3)]
    x = _RNG.standard_normal(3)
    want = central(lambda z: float(f(list(z.reshape(3, 3)), x)), np.concatenate(ws))
    got = gradlab.grad(f)([to_framework(w, framework) for w in ws], to_framework(x, framework))
    assert type(got) is list and len(got) == 3
    np.testing.assert_allclose(_flat(got), want, rtol=1e-6, atol=1e-8)


def joined_with_itself(ws, x):
    zs = ws + ws
    return np.sum(zs[0] * zs[3]) + np.sum(x)


def joined_with_an_item(ws, x):
    zs = ws + [x]
    return np.sum(zs[0] * zs[-1])


def repeated(ws, x):
    zs = ws * 2
    return np.sum(zs[0] * zs[3]) + np.sum(x)


def _doubled(vs):
    return vs + vs


def _summed(vs):
    return sum(vs)


def joined_in_a_helper(a, b):
    zs = _doubled([a, b])
    return np.sum(zs[0] * zs[3])


def summed_in_a_helper(ws, x):
    return np.sum(_summed(ws) * x)


@pytest.mark.parametrize("f, message", [
    (joined_with_itself, r"\+ with a Python list joins lists"),
    (joined_with_an_item, r"\+ with a Python list joins lists"),
    (repeated, r"\* with a Python list repeats a list"),
    (joined_in_a_helper, r"\+ with a Python list joins lists"),
    (summed_in_a_helper, r"vs is given a Python list, and this line means something else")],
    ids=lambda v: getattr(v, "__name__", ""))
def test_joining_or_repeating_a_list_is_refused(f, message: str) -> None:
    """``ws + ws``, ``ws + [x]`` and ``ws * 2`` join or repeat a list; gradlab read them as
    arithmetic, and the gradient came back with twice (four times) the items, on every
    backend (stop 30). They are refused at the line, in a helper given a list too, as is a
    helper's ``sum(vs)`` of a list it is given (its code sums over an array's first axis)."""
    ws = [_RNG.standard_normal(3) for _ in range(3)]
    args = (ws[0], ws[1]) if f is joined_in_a_helper else (ws, ws[2])
    with pytest.raises(GradlabError, match=message) as info:
        gradlab.grad(f)(*args)
    assert "line" in str(info.value)


def pairs_unpacked_nested(params, x):
    (W, b), (W2, b2) = params
    h = np.tanh(x @ W + b)
    return np.sum((h @ W2 + b2) ** 2)


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_nested_unpacking_of_pairs(framework: str) -> None:
    """``(W, b), (W2, b2) = params`` was refused ("tuple unpacking must assign plain names");
    it is unpacked level by level. grad, jvp and hvp against central differences."""
    require(framework)
    tree = _PAIRS
    flat = np.concatenate([leaf.ravel() for leaf in _leaves(tree)])

    def on(z):
        return float(pairs_unpacked_nested(_rebuilt(tree, z)[0], _BATCH))
    want = central(on, flat)
    v = np.linspace(-1.0, 1.0, flat.size)
    args = (_in(tree, framework), to_framework(_BATCH, framework))
    tangent = _in(_rebuilt(tree, v)[0], framework)
    np.testing.assert_allclose(_flat(gradlab.grad(pairs_unpacked_nested)(*args)), want,
                               rtol=1e-6, atol=1e-8)
    _, t = gradlab.jvp(pairs_unpacked_nested)(*args, tangent)
    assert float(to_numpy(t)) == pytest.approx(float(want @ v), rel=1e-6)
    hv = central(lambda z: central(on, z, 1e-5) @ v, flat, 1e-4)
    np.testing.assert_allclose(_flat(gradlab.hvp(pairs_unpacked_nested)(*args, tangent)), hv,
                               rtol=1e-4, atol=1e-5)


def _squares(vs):
    s = 0.0
    for u in vs:
        s = s + np.sum(u ** 2)
    return s


def a_mask_in_a_list_to_a_helper(x):
    pair = [np.where(x > 0.0, 1, 0), np.sin(x)]
    return _squares(pair) + 0.5 * _squares(pair[::-1])


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_a_list_holding_a_mask_passed_to_a_helper(framework: str) -> None:
    """``[mask, np.sin(x)]`` passed to a helper: the list's gradient held bool (int) zeros
    for the mask, and the helper's ``dvs[i] += du`` could not add floats into them in place
    (a casting error from inside, people fuzzer seed 7373). A list item of bools or ints gets
    float zeros."""
    require(framework)
    x = np.array([0.3, -0.2, 0.5])
    want = central(lambda z: float(a_mask_in_a_list_to_a_helper(z)), x)
    if framework == "tensorflow":     # (its int32 sum beside 0.0: TensorFlow's refusal)
        with pytest.raises(GradlabError, match="TensorFlow does not mix int32"):
            gradlab.grad(a_mask_in_a_list_to_a_helper)(to_framework(x, framework))
        return
    got = gradlab.grad(a_mask_in_a_list_to_a_helper)(to_framework(x, framework))
    np.testing.assert_allclose(to_numpy(got), want, rtol=1e-6, atol=1e-8)


def where_of_numbers_beside_a_tensor(x):
    k = 2
    w = np.where(np.exp(k - 1.0) > 0.2, 1.0, 0.5)
    return np.sum(w + np.mean(x * x))


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_where_of_numbers_meets_a_tensor(framework: str) -> None:
    """``np.where`` of Python numbers is a 0-d NumPy array (kept as NumPy computes it), and
    torch adds no NumPy array on its left to a tensor (a TypeError from inside, people fuzzer
    seed 7373). The backend gets it as its own array, as np.stack of numbers."""
    require(framework)
    x = np.array([0.3, -0.2, 0.5])
    want = central(lambda z: float(where_of_numbers_beside_a_tensor(z)), x)
    got = gradlab.grad(where_of_numbers_beside_a_tensor)(to_framework(x, framework))
    np.testing.assert_allclose(to_numpy(got), want, rtol=1e-6, atol=1e-8)


def stack_of_a_slice_of_a_list(x):
    hs = [x, 2.0 * x, 3.0 * x]
    return np.sum(np.stack(hs[1:]) ** 2) + np.sum(sum(hs[:2]) * x)


def squares_listed_then_iterated(x):
    a = [x[i] * x[i] for i in range(3)]
    s = 0.0
    for v in a:
        s = s + v * v
    return s


@pytest.mark.parametrize("f", [stack_of_a_slice_of_a_list, squares_listed_then_iterated],
                         ids=lambda f: f.__name__)
@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_slices_of_lists_and_lists_read_again_by_hvp(f, framework: str) -> None:
    """A probe of realistic programs (stop 30): ``np.stack(hs[1:])`` got the gradient of
    the other items (``dhs[1:] + dhs_part`` joined two lists: 0 where 2 is right, on every
    backend); ``sum(hs[:2])`` summed the slice as an array on torch and JAX (a TypeError);
    hvp of a list built by a comprehension and then iterated stacked the list's gradient
    (``.pop`` of an array). A slice of a list is a list, a slice of its gradient a GradList,
    and gradient code hands its lists to the helpers as lists."""
    three_modes(f, (), framework)


def clipped_by_arithmetic_bounds(x):
    p = np.clip(x + 0.5, 1e-3, 1 - 1e-3)
    return np.sum(np.log(p) * x) + np.sum(np.power(np.abs(x) + 1.0, 1 / 3))


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_bounds_written_as_arithmetic_on_numbers(framework: str) -> None:
    """``np.clip(p, 1e-7, 1 - 1e-7)``, as cross-entropy code writes it, was refused: clip's
    rule asks ``a_max is None``, and ``1 - 1e-7`` was no literal (a probe of realistic
    programs, stop 30). Arithmetic on number literals in a call's arguments is the number."""
    three_modes(clipped_by_arithmetic_bounds, (), framework)


def _logsumexp(a, axis=None):
    m = np.max(a, axis=axis, keepdims=True)
    return np.squeeze(m, axis=axis) + np.log(np.sum(np.exp(a - m), axis=axis))


def _spread(x, axis=None):
    return np.sum(np.var(x, axis=axis)) + np.sum(np.mean(x, axis=axis) ** 2)


def helpers_with_an_axis_that_may_be_none(x):
    rows = np.reshape(x, (1, 3)) * np.array([[1.0], [2.0]])
    return np.sum(_logsumexp(rows, axis=1)) + _logsumexp(rows) + _spread(rows, 0) + _spread(x)


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_a_helper_s_axis_that_may_be_none(framework: str) -> None:
    """``def logsumexp(a, axis=None)`` passing ``axis=axis`` on to ``np.sum``: its rule asks
    ``axis is None``, which no literal settled, and the function was refused (a probe of
    realistic programs, stop 30). The code branches on ``axis is None`` at run time."""
    three_modes(helpers_with_an_axis_that_may_be_none, (), framework)


def rows_written_by_a_list_index(x):
    A = np.zeros((3, 3))
    A[[0, 2]] = np.reshape(x, (1, 3)) * np.array([[1.0], [2.0]])
    B = np.zeros(5)
    B[np.array([0, 1, 3])] = x
    C = np.zeros((3, 3))
    rows, cols = np.triu_indices(3, 1)
    C[rows, cols] += x
    return np.sum(A ** 2 * np.arange(9.0).reshape(3, 3)) + np.sum(B ** 3) + np.sum(
        (C + C.T) ** 2 * np.arange(9.0).reshape(3, 3))


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_rows_written_by_a_list_or_an_array_of_indices(framework: str) -> None:
    """``A[[0, 2]] = V``: the backward pass read ``dA[[0, 2]]``, which TensorFlow's ``[]``
    reads as ``dA[0, 2]`` (one number, broadcast: a silently wrong gradient) and JAX's
    refuses; ``B[np.array([0, 1, 3])] = x`` and ``C[rows, cols] += x`` (rows and cols from
    ``np.triu_indices``) crashed TensorFlow (a probe of framework-native and scientific
    programs, stop 30). An index other than ints, slices and loop counters is read with the
    layer's getitem."""
    three_modes(rows_written_by_a_list_index, (), framework)


def round_of_an_index(x):
    return round(np.argmin(x), 2) * 1.0 + np.sum(x ** 2)


def logaddexp_of_masks(x):
    return np.sum(np.logaddexp(x > 0.0, x > 0.4) * x) + np.sum(np.logaddexp(x, x > 0.0))


@pytest.mark.parametrize("f", [round_of_an_index, logaddexp_of_masks], ids=lambda f: f.__name__)
@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_rounded_ints_and_logaddexp_of_truth_values(f, framework: str) -> None:
    """``round(np.argmin(x), 2)``: torch rounds no int tensor (NotImplementedError from
    inside); ``np.logaddexp`` of two masks subtracted bools on every backend (people fuzzer
    seed 9393). An int rounds to itself; logaddexp computes truth values in NumPy's float.
    TensorFlow refuses to mix the float16 (int) result with float64, as it says."""
    three_modes(f, (), framework, refusable=("tensorflow",))


def an_argument_unpacked_and_added(p, q):
    x1, y1 = p
    return np.sum((p + q) ** 2) + x1 * y1 + np.sum((p - q) * p)


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_an_array_argument_unpacked_then_added(framework: str) -> None:
    """``x1, y1 = p`` of an array, then ``p + q``: ``p`` may be a list for all the code
    knew, and ``p + q`` was refused as joining lists (stop 30, before release); its rows'
    gradients were stored with ``dp[1] = dp[1] + dy1``, which JAX's and TensorFlow's arrays
    refuse (a TypeError from inside, since stop 29). Only a name sure to hold a list is
    refused, and on those backends the store is ``dp = gl.index_add(dp, 1, dy1)``."""
    require(framework)
    p, q = np.array([0.3, 0.5]), np.array([1.0, -0.5])
    want = central(lambda z: float(an_argument_unpacked_and_added(z, q)), p)
    args = (to_framework(p, framework), to_framework(q, framework))
    np.testing.assert_allclose(to_numpy(gradlab.grad(an_argument_unpacked_and_added)(*args)),
                               want, rtol=1e-6, atol=1e-8)
    v = to_framework(np.array([0.7, -0.4]), framework)
    _, t = gradlab.jvp(an_argument_unpacked_and_added)(*args, v)
    assert float(to_numpy(t)) == pytest.approx(float(want @ np.array([0.7, -0.4])), rel=1e-6)


def a_mask_read_back_from_a_list(x):
    m = np.less_equal(x, 0.4)
    pair = [x, m]
    v = pair[0] * pair[-1]
    return np.sum(v * x) + float(v[-1])


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_a_mask_read_back_from_a_list(framework: str) -> None:
    """``pair = [x, m]`` with a mask ``m``, then ``pair[0] * pair[-1]``: the item read back
    was not known to be a truth value, so TensorFlow multiplied a float by a bool unconverted
    and its backward pass scattered into bools (a NotFoundError from inside, people fuzzer
    seed 2525). An item of a list written out is known by its index; TensorFlow then refuses
    to add the float gradient to the mask's, as it says. (torch refuses float(v[-1]) of a
    value carrying a gradient: its autodiff reads a constant there.)"""
    three_modes(a_mask_read_back_from_a_list, (), framework, refusable=("tensorflow", "torch"))


# --- np.maximum / np.minimum at a tie (fuzz seed 8282) -------------------------------------------
# At x == y gradlab gave x the whole gradient; the symmetric difference quotient, torch and JAX
# give each operand half (np.max already shared its gradient among equal entries).
def ties_of_maximum_and_minimum(x, y):
    return np.sum(np.maximum(x, y) ** 2) + np.sum(np.minimum(x, 2.0 * y) * x)


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_maximum_and_minimum_share_a_tie_in_halves(framework) -> None:
    require(framework)
    x, y = np.array([1.0, 2.0, 3.0]), np.array([1.0, 1.0, 4.0])     # ties: max at 0, min at 1
    fx = lambda a: ties_of_maximum_and_minimum(a, y)  # noqa: E731
    fy = lambda b: ties_of_maximum_and_minimum(x, b)  # noqa: E731
    want = (central_difference(fx, x), central_difference(fy, y))
    assert want[0][0] == pytest.approx(1.0 + 2.0, rel=1e-5)     # half of 2 * max, and 2 * x: not 4
    X, Y = to_framework(x, framework), to_framework(y, framework)
    got = gradlab.grad(ties_of_maximum_and_minimum, wrt=(0, 1))(X, Y)
    for g, w in zip(got, want):
        np.testing.assert_allclose(to_numpy(g), w, rtol=1e-6, atol=1e-6)
    tx, ty = np.array([0.3, -0.7, 0.5]), np.array([0.9, 0.2, -0.4])
    _, t = gradlab.jvp(ties_of_maximum_and_minimum, wrt=(0, 1))(
        X, Y, (to_framework(tx, framework), to_framework(ty, framework)))
    assert float(to_numpy(t)) == pytest.approx(float(want[0] @ tx + want[1] @ ty), rel=1e-6)
    if framework == "torch":            # torch's own autograd agrees
        import torch
        a = torch.tensor(x, requires_grad=True)
        b = torch.tensor(y, requires_grad=True)
        (torch.sum(torch.maximum(a, b) ** 2) + torch.sum(torch.minimum(a, 2.0 * b) * a)).backward()
        np.testing.assert_allclose(to_numpy(got[0]), a.grad.numpy(), rtol=1e-12)
        np.testing.assert_allclose(to_numpy(got[1]), b.grad.numpy(), rtol=1e-12)


# --- hvp on JAX and TensorFlow of an array argument unpacked into names, then used whole ----------
# The gradient's code adds into dp item by item (dp[1] = dp[1] + dy1); JAX and TensorFlow run its
# functional twin, but hvp's forward mode read the text shown, and assigned into their arrays.
def unpacked_and_used_whole(p, q):
    x1, y1 = p
    return np.sum((p + q) ** 2) * x1 + y1 * np.sum(p)


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_hvp_of_an_array_argument_unpacked_and_used_whole(framework) -> None:
    require(framework)
    p, q, v = np.array([0.4, -0.7]), np.array([0.1, 0.2]), np.array([0.3, -1.1])
    want = central_difference(lambda u: central_difference(unpacked_and_used_whole, u, q) @ v,
                              p, eps=1e-4)
    got = gradlab.hvp(unpacked_and_used_whole)(to_framework(p, framework),
                                               to_framework(q, framework),
                                               to_framework(v, framework))
    np.testing.assert_allclose(to_numpy(got), want, rtol=1e-5, atol=1e-6)


# --- functools.partial made inside the function (a probe: crashed torch and JAX) -----------------
def _tanh_total(x, a):
    return np.sum(np.tanh(a * x))


def _weighted_power(w, x, power=2.0):
    return np.sum(w * x ** power)


def partial_of_a_helper(x):
    g = functools.partial(_tanh_total, a=2.0)
    return g(x) + np.sum(x ** 2)


def partial_binding_a_value_that_changes_later(x):
    w = x * 1.5
    g = functools.partial(_weighted_power, w)      # binds w as it is now
    w = w * 3.0
    return g(x) + g(x, power=3.0) + np.sum(w)


def partial_of_a_primitive(x):
    total = functools.partial(np.sum, axis=0)
    return np.sum(total(np.outer(x, x)) ** 2)


@pytest.mark.parametrize("framework", FRAMEWORKS)
@pytest.mark.parametrize("f", [partial_of_a_helper, partial_binding_a_value_that_changes_later,
                               partial_of_a_primitive])
def test_functools_partial_made_inside_is_read_as_its_function(f, framework) -> None:
    three_modes(f, (), framework)


def partial_used_as_a_value(x):
    g = functools.partial(_tanh_total, a=2.0)
    fs = [g]
    return fs[0](x)


def partial_assigned_in_two_branches(x):
    if np.sum(x) > 0:
        g = functools.partial(_tanh_total, a=2.0)
    else:
        g = functools.partial(_tanh_total, a=3.0)
    return g(x)


@pytest.mark.parametrize("f, says", [
    (partial_used_as_a_value, "is used here as a value"),
    (partial_assigned_in_two_branches, "is assigned elsewhere too")])
def test_a_partial_gradlab_cannot_follow_is_refused_at_its_line(f, says) -> None:
    with pytest.raises(GradlabError, match=says) as e:
        gradlab.grad(f)(X3)
    assert "line" in str(e.value)


# A callable gradlab cannot read, passed as an argument, runs under the framework's autodiff; NumPy
# code there failed inside torch ("Can't call numpy() on Tensor that requires grad") and JAX
# (TracerArrayConversionError): refused, naming the call and what it raised.
def calls_what_it_is_given(x, fn):
    return fn(x) + np.sum(x)


@pytest.mark.parametrize("framework", ["torch", "jax"])
def test_numpy_code_behind_an_opaque_call_is_refused_not_crashed(framework) -> None:
    require(framework)
    numpy_helper = functools.partial(_tanh_total, a=2.0)
    x = to_framework(X3, framework)
    with pytest.raises(GradlabError, match="call gradlab cannot read .* raised"):
        gradlab.grad(calls_what_it_is_given)(x, numpy_helper)
    with pytest.raises(GradlabError, match="call gradlab cannot read .* raised"):
        gradlab.jvp(calls_what_it_is_given)(x, numpy_helper, x)


# --- a NumPy array from the module or a closure beside torch tensors (a probe: a TypeError from
# inside the generated code; the function itself fails on torch tensors too) ---------------------
_MODULE_WEIGHTS = np.array([[0.5, -0.2], [0.1, 0.3], [0.7, 0.2]])


def reads_module_weights(x):
    return np.sum(np.tanh(x @ _MODULE_WEIGHTS))


def _closure_over_an_array():
    m = np.array([0.5, 2.0, -1.0])

    def reads_closure_array(x):
        return np.sum(x * m) + np.sum(m * x ** 2)
    return reads_closure_array


@pytest.mark.parametrize("f, name", [(reads_module_weights, "_MODULE_WEIGHTS"),
                                     (_closure_over_an_array(), "m")])
@pytest.mark.parametrize("mode", ["grad", "jvp", "hvp"])
def test_a_numpy_array_from_outside_beside_torch_tensors_is_refused(f, name, mode) -> None:
    require("torch")
    import torch
    x = torch.tensor(X3)
    with pytest.raises(GradlabError, match=f"NumPy array {name} from outside") as e:
        if mode == "grad":
            gradlab.grad(f)(x)
        else:
            getattr(gradlab, mode)(f)(x, x)
    assert f"torch.as_tensor({name})" in str(e.value) and "your line" in str(e.value)


# --- a loop over a list of records or dicts, reading each one's fields (refused: "gradlab does not
# know the attribute .W of an array"; the README says containers of records work) ---------------
import collections  # noqa: E402

DenseLayer = collections.namedtuple("DenseLayer", ["W", "b"])


def mlp_over_records(layers, x):
    h = x
    for layer in layers:
        h = np.tanh(h @ layer.W + layer.b)
    return np.sum(h ** 2)


def mlp_over_dicts(layers, x):
    h = x
    for i, layer in enumerate(layers):
        h = np.tanh(h @ layer["W"] + layer["b"]) * (i + 1)
    return np.sum(h ** 2)


def mlp_over_records_by_index(layers, x):
    h = x
    for i in range(len(layers)):
        h = np.tanh(h @ layers[i].W + layers[i].b)
    return np.sum(h ** 2)


@pytest.mark.parametrize("framework", FRAMEWORKS)
@pytest.mark.parametrize("f, make", [(mlp_over_records, DenseLayer),
                                     (mlp_over_dicts, lambda W, b: {"W": W, "b": b}),
                                     (mlp_over_records_by_index, DenseLayer)])
def test_a_loop_over_a_list_of_records_reads_their_fields(f, make, framework) -> None:
    require(framework)
    rng = np.random.default_rng(5)
    shapes = [((3, 4), (4,)), ((4, 2), (2,))]
    arrays = [(rng.normal(size=a), rng.normal(size=b)) for a, b in shapes]
    x = rng.normal(size=(5, 3))
    layers = [make(to_framework(W, framework), to_framework(b, framework)) for W, b in arrays]
    grads = gradlab.grad(f)(layers, to_framework(x, framework))
    assert type(grads) is list and len(grads) == 2
    for k, (W, b) in enumerate(arrays):
        def at(W_new, k=k):
            given = [make(*pair) for pair in arrays]
            given[k] = make(W_new, arrays[k][1])
            return f(given, x)
        got = grads[k]["W"] if isinstance(grads[k], dict) else grads[k].W
        np.testing.assert_allclose(to_numpy(got), central_difference(at, W), rtol=1e-5,
                                   atol=1e-7)


# --- a lambda assigned to a name and called (refused: "lambda is not supported") ----------------
def losses_as_lambdas(w):
    loss = lambda p: np.mean((np.outer(p, p) @ p - 0.5) ** 2)  # noqa: E731
    reg = lambda p, lam=0.1: lam * np.sum(p ** 2)  # noqa: E731
    return loss(w) + reg(w) + reg(w, lam=0.5)


def lambda_reads_a_name_changed_later(x):
    scale = 2.0
    g = lambda u: np.sum(np.tanh(scale * u))  # noqa: E731
    scale = x[0]            # a lambda reads its outer names when it is called
    return g(x)


def lambda_parameter_shadows_a_name(x):
    u = x * 3.0
    g = lambda u: np.sum(u ** 2)  # noqa: E731
    return g(x) + np.sum(np.sin(u))


@pytest.mark.parametrize("framework", FRAMEWORKS)
@pytest.mark.parametrize("f", [losses_as_lambdas, lambda_reads_a_name_changed_later,
                               lambda_parameter_shadows_a_name])
def test_a_lambda_assigned_to_a_name_is_read_where_it_is_called(f, framework) -> None:
    three_modes(f, (), framework)


def lambda_used_as_a_value(x):
    g = lambda u: np.sum(u ** 2)  # noqa: E731
    fs = [g, g]
    return fs[0](x)


def test_a_lambda_used_as_a_value_is_refused_at_its_line() -> None:
    with pytest.raises(GradlabError, match="lambda ... is used here as a value") as e:
        gradlab.grad(lambda_used_as_a_value)(X3)
    assert "fs = [g, g]" in str(e.value)


# --- an index inside an index (x[np.arange(n)[:, None], order]): the rule's dy[index], read with
# the layer's getitem, kept the inner index's slice as written and the code did not compile ---
def rows_taken_in_sorted_order(x):
    order = np.argsort(x, axis=1)
    picked = x[np.arange(x.shape[0])[:, None], order]
    return np.sum(picked * np.arange(1.0, 4.0) ** 2)


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_an_index_array_built_with_a_slice_inside_an_index(framework) -> None:
    require(framework)
    x = np.array([[0.3, -0.2, 0.5], [1.1, 0.4, -0.7]])
    want = central_difference(rows_taken_in_sorted_order, x)
    got = gradlab.grad(rows_taken_in_sorted_order)(to_framework(x, framework))
    np.testing.assert_allclose(to_numpy(got), want, rtol=1e-6, atol=1e-8)


# --- a list argument's framework is not part of the call's key (people fuzzer, seed 9191) ------
# ``guard.layout`` keys a call by each argument's type, and for an array its shape and dtype: a
# list argument is keyed as ``list`` alone. A transform called with a list of NumPy arrays, then
# with a list of another framework's arrays (no other array argument to tell them apart), runs
# the NumPy code again: torch crashed (``ndarray * Tensor``), TensorFlow and JAX got NumPy arrays
# back, or a list mixing both. The people oracle calls one transform on every backend in turn.
# Fixed: a variant is looked up by a list's item types too (api.types_of, guard.layout).
def mean_of_stacked_items(ws):
    return np.sum(np.mean(np.stack(ws), 0) ** 2)


def product_of_two_items(ws):
    return np.sum(ws[0] * ws[1] - ws[-1])


@pytest.mark.parametrize("f", [mean_of_stacked_items, product_of_two_items],
                         ids=lambda f: f.__name__)
@pytest.mark.parametrize("framework", ["torch", "tensorflow", "jax"])
def test_a_list_argument_of_another_framework_after_numpy(framework: str, f) -> None:
    require(framework)
    items = [np.array([0.5, 1.0, -0.3]), np.array([-0.3, 0.2, 0.4]), np.array([0.2, 0.1, 0.9])]
    grad = gradlab.grad(f)
    want = grad([a.copy() for a in items])
    got = grad([to_framework(a, framework) for a in items])
    assert type(got) is list and len(got) == len(items)
    kind = type(to_framework(items[0], framework))
    assert all(type(g) is kind for g in got), [type(g).__name__ for g in got]
    for g, w in zip(got, want):
        np.testing.assert_allclose(to_numpy(g), w, rtol=1e-12)


# --- x.conj() of a real array is x itself (people fuzzer, seed 9191): v = x.conj(), then x += 0.1
# changed v too in NumPy; JAX's code, whose arrays do not change, did not (a wrong gradient) ----
def conj_then_changed_in_place(x):
    v = x.conj()
    x += 0.1
    return np.sum(x * v) / np.sum(v ** 2) + np.mean(v)


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_a_view_by_conj_changed_in_place_is_right_or_refused(framework) -> None:
    require(framework)
    x = np.array([0.3, -0.2, 0.5])
    want = central_difference(lambda u: conj_then_changed_in_place(u.copy()), x)
    answered, g = answers_or_refuses(
        lambda: gradlab.grad(conj_then_changed_in_place)(to_framework(x, framework)))
    if answered:
        np.testing.assert_allclose(to_numpy(g), want, rtol=1e-6, atol=1e-8)


# --- first, *rest = ws (people fuzzer with list arguments: "*-unpacking is not supported") ------
def layers_first_and_rest(ws, x):
    first, *rest = ws
    h = np.tanh(x @ first)
    for w in rest:
        h = np.tanh(h @ w)
    return np.sum(h ** 2)


def init_and_last(x):
    *init, last = x
    return np.sum(last ** 2) * len(init) + np.sum(np.stack(init) * 2.0) + sum(init) ** 3


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_starred_unpacking_of_a_list_argument(framework) -> None:
    require(framework)
    rng = np.random.default_rng(3)
    ws = [rng.normal(size=(3, 3)) for _ in range(3)]
    x = rng.normal(size=(2, 3))
    got = gradlab.grad(layers_first_and_rest)([to_framework(w, framework) for w in ws],
                                              to_framework(x, framework))
    assert type(got) is list and len(got) == 3
    for k in range(3):
        def at(W, k=k):
            given = list(ws)
            given[k] = W
            return layers_first_and_rest(given, x)
        np.testing.assert_allclose(to_numpy(got[k]), central_difference(at, ws[k]), rtol=1e-6,
                                   atol=1e-8)


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_starred_unpacking_of_an_array(framework) -> None:
    three_modes(init_and_last, (), framework)


# --- math.floor of a Python float is an int, an index (it was NumPy's float64: IndexError) ------
def picked_at_a_floored_position(x, q):
    i = math.floor(q * (x.shape[0] - 1))
    return x[i] * 2.0 + np.sum(x ** 2) + math.ceil(q)


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_math_floor_of_a_number_indexes(framework) -> None:
    require(framework)
    x = np.array([1.0, 2.0, 3.0])
    got = gradlab.grad(picked_at_a_floored_position)(to_framework(x, framework), 0.6)
    np.testing.assert_allclose(to_numpy(got), 2 * x + np.array([0.0, 2.0, 0.0]))


# --- list(x) of an argument and list(generator) (refused: "no derivative rule for list") --------
def rows_of_a_list_call(x):
    rows = list(x)
    squares = list(np.sum(r ** 2) for r in rows)
    return np.sum(rows[0] * rows[1]) + sum(squares) + np.sum(tuple(v * 2.0 for v in x[0]))


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_list_of_an_argument_and_of_a_generator(framework) -> None:
    require(framework)
    x = np.array([[0.3, -0.2], [0.5, 1.1], [0.7, -0.4]])
    want = central_difference(rows_of_a_list_call, x)
    got = gradlab.grad(rows_of_a_list_call)(to_framework(x, framework))
    np.testing.assert_allclose(to_numpy(got), want, rtol=1e-6, atol=1e-8)
    v = np.cos(np.arange(6.0)).reshape(3, 2)
    _, t = gradlab.jvp(rows_of_a_list_call)(to_framework(x, framework), to_framework(v, framework))
    assert float(to_numpy(t)) == pytest.approx(float(np.sum(want * v)), rel=1e-6)


# --- a helper's tuple passed to an array function (np.prod(pair(x))): NumPy stacks it; gradlab
# crashed on NumPy, torch and JAX and gave a wrong gradient on TensorFlow ------------------------
def _sum_and_sum_of_squares(a):
    return np.sum(a), np.sum(a ** 2)


def array_function_of_a_helpers_tuple(x):
    return np.prod(_sum_and_sum_of_squares(x)) + np.sum(_sum_and_sum_of_squares(x * 2.0))


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_a_helpers_tuple_given_to_an_array_function_is_stacked(framework) -> None:
    three_modes(array_function_of_a_helpers_tuple, (), framework)


# --- framework probe (stop 32): .item() / float() of a value carrying a gradient was
# differentiated through on torch and TensorFlow, whose autodiff reads a constant there (a
# gradient unlike the framework's); x.size(0) inside a view's sizes crashed; torch.zeros(3, 4)
# read 4 as a dtype; np.triu of a mask made int64 (torch's where refused it) -----------------
def scaled_by_a_number(x):
    return np.sum(x ** 2) / float(np.sum(x)) + np.sum(x).item()


def test_a_number_made_of_a_value_with_a_gradient_is_refused_on_torch_and_tf() -> None:
    """Differentiated through on NumPy and JAX (as differences are); on torch's and
    TensorFlow's tensors, whose autodiff reads a constant there, refused at the line."""
    x = np.array([0.3, 1.2, 0.5])
    want = central(scaled_by_a_number, x)
    np.testing.assert_allclose(gradlab.grad(scaled_by_a_number)(x), want, rtol=1e-6)
    for framework in ("torch", "tensorflow"):
        if not is_installed(framework):
            continue
        X = to_framework(x, framework)
        for call in (lambda: gradlab.grad(scaled_by_a_number)(X),
                     lambda: gradlab.jvp(scaled_by_a_number)(X, X),
                     lambda: gradlab.hvp(scaled_by_a_number)(X, X)):
            with pytest.raises(GradlabError, match="makes a Python number of a value") as e:
                call()
            assert "float(np.sum(x))" in str(e.value)
            assert "s.detach()" in str(e.value) or "tf.stop_gradient(s)" in str(e.value)


def torch_view_by_sizes(x):
    return x.view(x.size(0), -1).pow(2).sum() / x.size(1) + (x * (torch.zeros(3, 2) + 1.0)).sum()


def torch_upper_mask(q):
    mask = torch.triu(torch.ones((3, 3), dtype=torch.bool), diagonal=1)
    return torch.where(mask, -1e9, q @ q.T).softmax(-1)[:, 0].sum() + torch.diff(q, dim=0).sum()


@pytest.mark.parametrize("f", [torch_view_by_sizes, torch_upper_mask])
def test_torch_sizes_and_masks_from_the_framework_probe(f) -> None:
    require("torch")
    x = torch.tensor([[0.3, -1.2], [0.5, 0.8], [1.1, -0.4]], dtype=torch.float64)
    v = torch.tensor([[0.2, 0.1], [-0.3, 0.5], [0.7, -0.6]], dtype=torch.float64)
    want = torch.func.grad(f)(x)
    np.testing.assert_allclose(to_numpy(gradlab.grad(f)(x)), to_numpy(want), rtol=1e-10)
    _, t = gradlab.jvp(f)(x, v)
    assert float(t) == pytest.approx(float(torch.func.jvp(f, (x,), (v,))[1]), rel=1e-10)
    hv = torch.func.jvp(torch.func.grad(f), (x,), (v,))[1]
    np.testing.assert_allclose(to_numpy(gradlab.hvp(f)(x, v)), to_numpy(hv), rtol=1e-8,
                               atol=1e-12)


def tf_activations(x):
    return tf.reduce_sum(tf.nn.leaky_relu(x, alpha=0.1) * tf.nn.gelu(x)
                         + tf.nn.gelu(x, approximate=True) + tf.nn.leaky_relu(x))


def test_tensorflows_float32_constants_in_float64_are_no_mismatch() -> None:
    """TensorFlow computes leaky_relu's alpha, and gelu's 1/sqrt(2), in float32 on float64
    tensors: gradlab's definitions with the exact constants differed by 1e-9, which the
    semantic guard read as another meaning (and fuzz seed 90909 as a wrong value). The
    definitions use TensorFlow's constants."""
    require("tensorflow")
    x = tf.constant(np.linspace(-1.5, 1.2, 12).reshape(3, 4))
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf_activations(x)
    np.testing.assert_allclose(to_numpy(gradlab.grad(tf_activations)(x)),
                               to_numpy(tape.gradient(y, x)), rtol=1e-12, atol=1e-14)
    value = gradlab.value_and_grad(tf_activations)(x)[0]
    assert float(value) == float(y)


def jax_one_bound(x):
    return jnp.sum(jnp.clip(x, min=-0.5) ** 2)


def torch_counts(x):
    return (x * torch.arange(x.numel()).reshape(x.shape)).sum() * x.dim()


def tf_one_hot_depth(x):
    return tf.reduce_sum(tf.one_hot(tf.constant([0, 2, 1]), depth=3, dtype=tf.float64) * x ** 2)


@pytest.mark.parametrize("f, framework", [(jax_one_bound, "jax"), (torch_counts, "torch"),
                                          (tf_one_hot_depth, "tensorflow")])
def test_framework_spellings_from_the_probe_are_read(f, framework) -> None:
    """jnp.clip(x, min=...), torch's x.numel() (an integer: no gradient) and tf.one_hot's
    depth were refused."""
    require(framework)
    x = np.array([[0.3, -1.2, 0.5], [0.8, 1.1, -0.4], [0.2, 0.6, -0.9]])
    want = central_difference(lambda u: float(to_numpy(f(to_framework(u, framework)))), x)
    np.testing.assert_allclose(to_numpy(gradlab.grad(f)(to_framework(x, framework))), want,
                               rtol=1e-6, atol=1e-8)


# --- fuzz seed 80808: np.where of numbers is computed by NumPy and given to the backend as its
# own array, but the next NumPy call on it was kept as written (np.sum of a torch tensor
# crashed); torch.as_tensor of a list of tensors is cut from the graph, as torch.tensor's ------
def where_of_numbers(x):
    v = np.reciprocal(2.0)
    kept = np.logical_not(np.isnan(v))
    return np.sum(np.where(kept, v, 0.0)) * np.sum(x ** 2) + np.nanmean(v) * x[0]


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_where_of_numbers_then_numpy(framework) -> None:
    three_modes(where_of_numbers, (), framework)


def torch_as_tensor_of_items(w):
    return torch.sum(torch.as_tensor([w[1], w[0] * 2.0]) ** 2) + torch.sum(w ** 2)


def test_torch_as_tensor_of_a_list_is_cut_from_the_graph() -> None:
    require("torch")
    w = torch.tensor([0.3, 0.2, -0.5], dtype=torch.float64)
    v = torch.tensor([1.0, -2.0, 0.5], dtype=torch.float64)
    np.testing.assert_allclose(to_numpy(gradlab.grad(torch_as_tensor_of_items)(w)),
                               to_numpy(2 * w), rtol=1e-12)
    _, t = gradlab.jvp(torch_as_tensor_of_items)(w, v)
    assert float(t) == pytest.approx(float(torch.sum(2 * w * v)))


# --- fuzz seed 11111: torch's x.type(torch.float64), a cast, was read as the builtin type (no
# gradient: a zero gradient); tf.math.reduce_euclidean_norm of zeros had a NaN tangent -----------
def torch_cast_by_type(x):
    return (x.type(torch.float64) ** 2).sum()


def test_torch_type_is_a_cast() -> None:
    require("torch")
    x = torch.tensor([0.3, -1.2, 0.5], dtype=torch.float64)
    np.testing.assert_allclose(to_numpy(gradlab.grad(torch_cast_by_type)(x)), to_numpy(2 * x))


def tf_norm_of_angles(x):
    return tf.math.reduce_euclidean_norm(tf.math.angle(tf.math.cosh(x))) + tf.reduce_sum(x)


def test_tf_euclidean_norm_of_zeros_has_a_zero_tangent() -> None:
    require("tensorflow")
    x = tf.constant([0.3, -0.2, 0.5], tf.float64)
    _, t = gradlab.jvp(tf_norm_of_angles)(x, tf.ones(3, tf.float64))
    assert float(t) == pytest.approx(3.0)
    np.testing.assert_allclose(to_numpy(gradlab.grad(tf_norm_of_angles)(x)), np.ones(3))


# --- probe of realistic programs (stop 33): an assignment through an index that names an entry
# twice gave every write a gradient (NumPy keeps the last write); enumerate's start was ignored;
# a layout run with check=False was taken as checked by later functions that check; jvp of a
# functools.partial crashed ----------------------------------------------------------------
def written_twice(x):
    y = np.zeros(4) + x[2]
    y[[0, 0, 2]] = x ** 2
    return np.sum(y ** 2) + np.sum(np.sin(y))


def scalar_written_twice(x):
    y = x * 1.0
    y[[1, 1]] = x[0] ** 3
    return np.sum(y ** 2)


@pytest.mark.parametrize("framework", FRAMEWORKS)
@pytest.mark.parametrize("f", [written_twice, scalar_written_twice])
def test_an_entry_written_twice_keeps_the_last_writes_gradient(f, framework) -> None:
    three_modes(f, (), framework)


def counted_from_one(x):
    return sum(k * xi for k, xi in enumerate(x, start=1))


def test_enumerate_with_a_start_is_refused() -> None:
    with pytest.raises(GradlabError, match="enumerate with a start"):
        gradlab.grad(counted_from_one)(X3)


def added_twice_in_place(x):
    y = x.copy()
    y[[0, 0]] += x[1]
    return np.sum(y)


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_adding_twice_through_an_index_adds_once_as_numpy_does(framework) -> None:
    """y[[0, 0]] += v was read as np.add.at (v added twice); the guard caught it, but with
    check=False the value and gradient were wrong."""
    require(framework)
    for check in (False, True):
        value, g = gradlab.value_and_grad(added_twice_in_place, check=check)(
            to_framework(X3, framework))
        assert float(to_numpy(value)) == pytest.approx(float(added_twice_in_place(X3)))
        np.testing.assert_allclose(to_numpy(g), [1.0, 2.0, 1.0])
    three_modes(added_twice_in_place, (), framework)


def scaled_sum_of_squares(x):
    return np.sum(3.0 * x ** 2)


def test_a_layout_run_unchecked_is_still_checked_by_a_function_that_checks(monkeypatch) -> None:
    """A check=False call remembered its layout as checked in the shared transform: a later
    function that checks skipped the guard (and gave a wrong gradient silently)."""
    from gradlab import guard
    calls = []
    original = guard.run_original
    monkeypatch.setattr(guard, "run_original", lambda *a, **k: calls.append(1) or original(
        *a, **k))
    x = np.array([0.25, -0.5, 1.5, 2.0, -3.0])       # a layout no other test used
    gradlab.grad(scaled_sum_of_squares, check=False)(x)
    assert not calls
    gradlab.grad(scaled_sum_of_squares)(x)
    assert calls


def scaled_square(w, a=1.0):
    return np.sum(a * w ** 2)


def test_jvp_of_a_partial_is_refused_as_grad_refuses_it() -> None:
    import functools
    for transform in (gradlab.grad, gradlab.jvp, gradlab.hvp):
        with pytest.raises(GradlabError, match="partial"):
            transform(functools.partial(scaled_square, a=2.0))


def method_of_a_transpose(x):
    return np.sum(x.T.clip(-1.0, 1.0) ** 2) + x.T.sum() * 0.5


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_a_method_of_an_attribute_is_read(framework) -> None:
    """``x.T.clip(-1, 1)`` was a call without a rule (only ``x.clip`` was read)."""
    three_modes(method_of_a_transpose, (), framework)


# --- probe of edge values (stop 33): np.prod's gradient divided the whole product by each
# entry, so an underflowing or overflowing product, an inf or a NaN entry spoiled every entry
# (a silently finite wrong gradient in the underflow case); a failure under jax.jit was hidden
# by a TracerArrayConversionError from gradlab's look at the original function ---------------
def product_of_entries(x):
    return np.prod(x)


@pytest.mark.parametrize("x", [[1e-200, 1e-200, 1e200], [1e200, 1e200, 1e-200], [np.inf, 2.0, 3.0],
                               [np.nan, 2.0], [3.0, 0.0, 5.0, 2.0], [3.0, 0.0, 0.0, 2.0]])
def test_products_of_the_others_divide_by_no_entry(x) -> None:
    require("jax")
    import jax
    import jax.numpy as jnp
    x = np.array(x)
    v = np.linspace(0.5, 1.25, len(x))
    jx, jv = jnp.asarray(x, jnp.float64), jnp.asarray(v, jnp.float64)   # (x64: conftest)
    want_g = np.asarray(jax.grad(jnp.prod)(jx))
    want_t = float(jax.jvp(jnp.prod, (jx,), (jv,))[1])
    want_h = np.asarray(jax.jvp(jax.grad(jnp.prod), (jx,), (jv,))[1])
    np.testing.assert_array_equal(gradlab.grad(product_of_entries)(x), want_g)
    t = gradlab.jvp(product_of_entries)(x, v)[1]
    assert t == want_t or (np.isnan(t) and np.isnan(want_t))
    got_h = gradlab.hvp(product_of_entries)(x, v)
    finite = np.isfinite(want_h)           # (jax's 0 * inf is NaN where the sum is inf)
    np.testing.assert_allclose(got_h[finite], want_h[finite], rtol=1e-12)


def masked_squares(x):
    return np.sum(x[x > 0] ** 2)


def test_jax_s_own_error_under_jit_is_the_one_raised() -> None:
    require("jax")
    import jax
    import jax.numpy as jnp
    with pytest.raises(jax.errors.NonConcreteBooleanIndexError):
        jax.jit(gradlab.grad(masked_squares))(jnp.asarray([1.0, -2.0, 3.0]))


# --- fuzz seed 18181: a helper's result held as a Python number (tanh of a float on torch and
# TensorFlow) was indexed as an array (v[None]): TypeError from the generated code -------------
def helper_tanh(v):
    return np.tanh(v)


def number_from_a_helper_indexed(w):
    v1 = helper_tanh(w)
    return v1 * np.squeeze(v1[None], axis=0)


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_a_helpers_number_result_indexed_with_none(framework) -> None:
    require(framework)
    g = gradlab.grad(number_from_a_helper_indexed)(0.5)
    assert float(to_numpy(g)) == pytest.approx(2 * np.tanh(0.5) * (1 - np.tanh(0.5) ** 2))
    if framework != "numpy":   # a Python number next to another framework's tensor
        g = gradlab.grad(lambda_free_with_tensor, 1)(to_framework(np.ones(2), framework), 0.5)
        assert float(to_numpy(g)) == pytest.approx(2 * 2 * np.tanh(0.5) * (1 - np.tanh(0.5) ** 2))


def lambda_free_with_tensor(b, w):
    v1 = helper_tanh(w)
    return v1 * np.squeeze(v1[None], axis=0) * np.sum(b ** 0)


# --- fuzz seed 19191: torch.sign of a truth value gradlab holds as a Python bool (from a
# Python float input) went to np.sign, which has no loop for bools: a crash ------------------
def sign_of_a_comparison(x):
    v = TORCH.tensor(x).amin()
    return TORCH.sign(v.less_equal(v)) * 1.0 + x * x


def test_torch_sign_of_a_bool_held_as_a_number() -> None:
    require("torch")
    import torch
    global TORCH
    TORCH = torch
    assert gradlab.grad(sign_of_a_comparison)(0.75) == pytest.approx(1.5)
    assert gradlab.jvp(sign_of_a_comparison)(0.75, 1.0)[1] == pytest.approx(1.5)


# --- probe of tutorial programs (stop 33): np.clip with bounds given as variables that carry no
# gradient was refused ("depends on `a_min is None`") --------------------------------------------
def clipped_squares(x, lo, hi):
    return np.sum(np.clip(x, lo, hi) ** 2)


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_clip_bounds_given_as_variables(framework) -> None:
    three_modes(clipped_squares, (-0.5, 1.0), framework)
