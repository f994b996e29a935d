"""Minimal reproductions of the gradlab bugs the hardening tests found, one test each.

Each test states the correct behaviour; ``bug=`` says what gradlab did when it was found. An
open bug is marked ``xfail(strict=True)`` on the backends where gradlab is wrong (``on("torch",
bug=...)``): when it is fixed the test XPASSes, which fails the run until the mark is removed
(and the matching switch in ``generator.py`` turned back on, so the fuzzer covers the construct
again). Bugs whose tests carry no xfail were fixed (in 393225c); their tests stay as regression
tests.
"""
from __future__ import annotations

import numpy as np
import pytest

import gradlab
from gradlab.tensor import FRAMEWORKS
from tests.conftest import require, to_framework, to_numpy


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
    bug="grad(f, wrt=(1,)) returns "
                                         "the bare gradient, and api._conform iterates over it: "
                                         "(array([0., 0., 0.]),) instead of (x,)"))
def test_wrt_one_element_tuple(framework: str) -> None:
    require(framework)
    x, y = to_framework(X3, framework), to_framework(np.ones(3), framework)
    (dy,) = gradlab.grad(product, (1,))(x, y)
    np.testing.assert_allclose(to_numpy(dy), X3)


@pytest.mark.parametrize("framework", on(
    bug="grad(f, wrt=(0,)) of a 0-d "
                                         "parameter raises TypeError: 'numpy.float64' object is "
                                         "not iterable (api._conform)"))
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
    bug="gradlab bug: the else branch makes the operand the Python float 0.5 at run time and "
    "gl.sin(0.5) follows: torch raises TypeError (sin(): argument 'input' must be Tensor, not "
    "float), TensorFlow computes in float32 and adding it to float64 raises "
    "InvalidArgumentError"))
def test_primitive_of_python_float_from_conditional(framework: str) -> None:
    require(framework)
    x = np.array([0.3, 0.2, 0.5])
    g = gradlab.grad(sin_of_conditional_constant)(to_framework(x, framework))
    np.testing.assert_allclose(to_numpy(g), np.ones(3))


@pytest.mark.parametrize("framework", on(
    bug="gradlab bug: the generated copy of _shifted computes gl.abs(scale) on the default "
    "argument 1.5: torch raises TypeError (abs(): argument 'input' must be Tensor, not float), "
    "TensorFlow computes in float32 and adding it to float64 raises InvalidArgumentError"))
def test_primitive_of_python_float_default_argument(framework: str) -> None:
    require(framework)
    g = gradlab.grad(abs_of_default_argument)(to_framework(X3, framework))
    np.testing.assert_allclose(to_numpy(g), np.ones(3))


@pytest.mark.parametrize("framework", on(
    bug="gl.sin(0.5) on a Python float: torch raises "
    "TypeError (sin(): argument 'input' must be Tensor, not float); TensorFlow makes a float32 "
    "tensor and adding it to float64 raises InvalidArgumentError"))
def test_primitive_of_python_float(framework: str) -> None:
    require(framework)
    g = gradlab.grad(sin_of_constant)(to_framework(X4, framework))
    np.testing.assert_allclose(to_numpy(g), np.ones(4))


def sum_axis0(x):
    return np.sum(x, axis=0)


def max_axis0(x):
    return np.max(x, axis=0)


@pytest.mark.parametrize("framework", on(
    bug="the gradient of np.sum(x, axis=0) (x 1-D) is "
    "gl.expand_dims(<seed 1.0>, 0), and torch's expand_dims rejects the Python float"))
def test_axis_reduction_to_scalar(framework: str) -> None:
    require(framework)
    g = gradlab.grad(sum_axis0)(to_framework(X4, framework))
    np.testing.assert_allclose(to_numpy(g), np.ones(4))


@pytest.mark.parametrize("framework", on(
    bug="the gradient of np.max(x, axis=0) (x 1-D): torch "
    "rejects the Python-float seed in expand_dims, TensorFlow raises `x` and `y` must have the "
    "same dtype (float32 != float64)"))
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
    bug="the normalizer memoizes `x * i` across the branches of the "
    "conditional expression; in the loop the else branch reuses iteration 0's value: NumPy/JAX "
    "give value 0.0 and gradient 0 (silently wrong), torch/TensorFlow crash on a None"))
def test_conditional_expression_in_loop(framework: str) -> None:
    require(framework)
    value, g = gradlab.value_and_grad(ifexp_in_loop)(to_framework(X4, framework))
    np.testing.assert_allclose(float(to_numpy(value)), ifexp_in_loop(X4))
    np.testing.assert_allclose(to_numpy(g), 2.0 * np.cos(X4))


@pytest.mark.parametrize("framework", on(
    bug="np.ones(4) is computed in the if branch only and reused in the "
    "else branch: UnboundLocalError"))
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
    bug="tf.cast(<Python float>, float64) goes through float32: "
    "the gradient is 1.2000000476837158"))
def test_index_add_with_python_float(framework: str) -> None:
    require(framework)
    g = gradlab.grad(read_last)(to_framework(X4, framework))
    np.testing.assert_allclose(to_numpy(g), [0.0, 0.0, 0.0, 1.2], rtol=1e-12, atol=0)


@pytest.mark.parametrize("framework", on(
    bug="out[1] = 0.3 stores 0.30000001192092896 on TensorFlow "
    "(the forward value is off by 1.2e-8)"))
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
    bug="the condition becomes np.sum(gl.ones(4)) > 0.0: NumPy's sum of "
    "a torch tensor raises TypeError: sum() got an unexpected keyword argument 'axis'"))
def test_condition_on_created_array(framework: str) -> None:
    require(framework)
    g = gradlab.grad(condition_on_created_array)(to_framework(X4, framework))
    np.testing.assert_allclose(to_numpy(g), np.ones(4))


@pytest.mark.parametrize("framework", on(
    bug="`v @ m` stays an operator in the condition; TensorFlow's "
    "@ of a vector and a matrix raises InvalidArgumentError (In[0] and In[1] has different "
    "ndims)"))
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
    bug="analyze.shape_classes gives every target of a tuple assignment "
    "the same class, so unbroadcast is dropped: the gradient wrt w (4,) comes back (3, 4)"))
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
    bug="two `if: if: return` blocks in a row: the generated code reads "
    "the result variable before assigning it (UnboundLocalError)"))
def test_two_nested_early_returns(framework: str) -> None:
    require(framework)
    g = gradlab.grad(two_nested_returns)(to_framework(X4, framework))
    np.testing.assert_allclose(to_numpy(g), np.ones(4))


@pytest.mark.parametrize("framework", on(
    bug="the adjoint of a tuple-valued call inside a branch starts as 0.0 "
    "and is indexed: TypeError: 'float' object is not subscriptable"))
def test_tuple_call_in_branch(framework: str) -> None:
    require(framework)
    g = gradlab.grad(tuple_call_in_branch)(to_framework(X3, framework))
    np.testing.assert_allclose(to_numpy(g), 3.0 * np.ones(3))


@pytest.mark.parametrize("framework", on(
    bug="a return inside a loop inside an if is dropped: value 1.0 and "
    "gradient [1, 1, 1] instead of 2.0 and [2, 2, 2] (silently wrong)"))
def test_return_in_loop_in_branch(framework: str) -> None:
    require(framework)
    value, g = gradlab.value_and_grad(return_in_loop_in_branch)(to_framework(X3, framework))
    np.testing.assert_allclose(float(to_numpy(value)), return_in_loop_in_branch(X3))
    np.testing.assert_allclose(to_numpy(g), 2.0 * np.ones(3))


@pytest.mark.parametrize("framework", on(
    bug="the adjoint of `a` is 0.0 on the path that returns np.mean(x), "
    "and gl.unbroadcast(0.0, a) fails (NumPy: cannot reshape array of size 1 into shape (4,))"))
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
    bug="after an early return, the adjoint of `out` is 0.0 on the path "
    "that returns np.mean(x) and the adjoint of out[1] += ... indexes it: TypeError: 'float' "
    "object is not subscriptable"))
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
    bug="after an early return the adjoint of v is 0.0 on one path and "
    "gl.index_add(0.0, 1, ...) fails (NumPy: IndexError: too many indices for array: array is "
    "0-dimensional)"))
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
    bug="gradlab bug: forward mode starts the tangent of s (the Python float 0.25) as "
    "gl.zeros_like(s): torch raises TypeError (zeros_like(): argument 'input' must be Tensor, "
    "not float), TensorFlow makes it float32 and adding float64 raises InvalidArgumentError"))
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
    bug="gradlab bug: the adjoint of the returned tuple is gl.zeros_like_list(out), whose "
    "element 1 is the Python float 1.5: torch raises TypeError (zeros_like(): argument 'input' "
    "must be Tensor, not float); TensorFlow makes it float32 and adding the float64 seed raises "
    "InvalidArgumentError"))
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
    bug="gradlab bug: the generated copy of _sin_helper computes gl.sin(0.5) on the Python "
    "float: torch raises TypeError (sin(): argument 'input' must be Tensor, not float), "
    "TensorFlow computes in float32 and adding it to float64 raises InvalidArgumentError"))
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
    bug="forward mode updates y = y * y before computing its tangent "
    "from y (the jvp is 2.19 instead of 3.49; silently wrong)"))
def test_jvp_of_loop_carried_update(framework: str) -> None:
    require(framework)
    _, derivative = gradlab.jvp(square_in_loop)(to_framework(X4, framework),
                                               to_framework(np.ones(4), framework))
    expected = float(np.sum(central(square_in_loop, X4)))
    np.testing.assert_allclose(float(to_numpy(derivative)), expected, rtol=1e-6)


@pytest.mark.parametrize("fn", [divide_in_loop, tanh_in_loop, exp_in_while],
                         ids=lambda f: f.__name__)
@pytest.mark.parametrize("framework", on(
    bug="reverse mode: a rule that uses its result (divide, tanh, exp, "
    "sqrt) overwriting its operand in a loop reads the restored operand as the result "
    "(silently wrong gradient)"))
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
    bug="the branch body is dead code and removed, but the if stays (its "
    "condition calls a user function): the generated code does not compile (IndentationError: "
    "expected an indented block after 'if' statement)"))
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
