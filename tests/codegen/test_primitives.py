"""Spellings read with their framework's own meaning, checked against the framework.

Each case here was once a silently wrong gradient (a conversion read as a constant, ``%`` with
no rule, a torch method read as NumPy's, a TensorFlow flag dropped): the gradient is compared
with central finite differences and, where the function is written for torch, with
``torch.autograd``; the value with the function's own.
"""
from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.special

import gradlab
from tests.conftest import require, to_framework, to_numpy


def finite_differences(f, x: np.ndarray, eps: float = 1e-6) -> np.ndarray:
    x = np.asarray(x, dtype=np.float64)
    grad = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        plus, minus = x.copy(), x.copy()
        plus[i] += eps
        minus[i] -= eps
        grad[i] = (float(f(plus)) - float(f(minus))) / (2 * eps)
    return grad


def check(f, x: np.ndarray, tol: float = 1e-6) -> None:
    """grad and jvp of ``f`` at ``x`` against finite differences, and the value against f."""
    value, grad = gradlab.value_and_grad(f)(x)
    np.testing.assert_allclose(value, f(x), rtol=1e-12, atol=1e-12)
    expected = finite_differences(f, x)
    np.testing.assert_allclose(grad, expected, rtol=tol, atol=tol)
    direction = np.random.default_rng(7).normal(size=np.shape(x))
    _, tangent = gradlab.jvp(f)(x, direction)
    np.testing.assert_allclose(tangent, np.sum(expected * direction), rtol=tol, atol=tol)


RNG = np.random.default_rng(0)
V = RNG.normal(size=5)
M = RNG.normal(size=(3, 4))


# --- conversions of one array are the array itself -----------------------------------------------
def asarray_rebinds(x):
    x = np.asarray(x)
    return np.sum(x ** 2)


def array_of_array(x):
    return np.sum(np.array(x) * x)


def array_with_dtype(x):
    return np.sum(np.array(x, dtype=np.float64) ** 3)


def sum_of_array_of_list(x):
    return np.sum(np.array([x[0] * x[1], 2.0, x[2]]))


def sum_of_list(x):
    b = [1.0, x[0] * x[1], 2.0]
    return np.sum(b)


@pytest.mark.parametrize("f", [asarray_rebinds, array_of_array, array_with_dtype,
                               sum_of_array_of_list, sum_of_list])
def test_conversions_carry_the_gradient(f) -> None:
    check(f, V)


def test_np_asarray_shares_memory_and_np_array_does_not() -> None:
    """In NumPy ``np.asarray(x)`` is ``x`` itself: changing it in place changes ``x``."""
    with pytest.raises(gradlab.GradlabSyntaxError, match="changed in place"):
        gradlab.grad(_asarray_then_update)


def _asarray_then_update(x):
    y = np.asarray(x)
    y += 1.0
    return np.sum(x * y)


# --- remainders, maxima of several values -------------------------------------------------------
def percent(x):
    return np.sum(x % 1.5 * x)


def np_mod(x):
    return np.sum(np.mod(x, 0.7) + np.remainder(2.0 * x, 1.1))


def divmod_pair(x):
    q, r = divmod(x, 1.5)
    return np.sum(r * r + q)


def builtin_max_of_three(x):
    return max(np.sum(x), np.sum(x * x), np.sum(np.sin(x)))


def builtin_min_of_four(x):
    return min(np.sum(x), np.sum(x * x), np.sum(np.cos(x)), 10.0)


@pytest.mark.parametrize("f", [percent, np_mod, divmod_pair, builtin_max_of_three,
                               builtin_min_of_four])
def test_remainders_and_maxima(f) -> None:
    check(f, 3.0 * V)


def max_of_a_list(x):
    return max([np.sum(x), np.sum(x * x)]) + min((x[0], x[2], x[1]))


def test_max_of_items_written_out_is_a_chain() -> None:
    """max([a, b]) and min((a, b, c)) name their items: they are max(a, b), min(a, b, c)."""
    check(max_of_a_list, 3.0 * V)


def max_of_a_variable(x):
    values = [np.sum(x), np.sum(x * x)]
    return max(values) + min(x)


def test_max_of_an_iterable_is_the_item_it_picks() -> None:
    """max(values) of a list, and min(x) of an array: the item the builtin picks, shown as
    such, its gradient flowing to that item alone."""
    check(max_of_a_variable, 3.0 * V)
    source = gradlab.grad(max_of_a_variable).source
    assert "i_max_values = gl.index_of_max(values)" in source
    assert "values[i_max_values]" in source


def max_by_a_key(x):
    values = [np.sum(x), -np.sum(x * x)]
    return max(values, key=abs)


def test_max_of_an_iterable_with_a_key_is_refused() -> None:
    with pytest.raises(gradlab.GradlabError, match="max of an iterable.*write the items out"):
        gradlab.grad(max_by_a_key)


# --- norms and products -------------------------------------------------------------------------
def frobenius(m):
    return np.linalg.norm(m, "fro") + np.linalg.norm(m)


def p_norms(m):
    return np.sum(np.linalg.norm(m, 3, axis=1)) + np.linalg.norm(m[0], 1) + \
        np.linalg.norm(m[1], 0.5)


def spectral(m):
    return np.linalg.norm(m, 2)


def test_norms() -> None:
    check(frobenius, M)
    check(p_norms, M, tol=1e-5)


def test_a_matrix_norm_is_refused_when_it_runs() -> None:
    """np.linalg.norm(M, 2) of a matrix is its largest singular value, not a vector norm."""
    with pytest.raises(gradlab.GradlabError, match="matrix norm"):
        gradlab.grad(spectral)(M)


def product(x):
    return np.prod(x) + np.sum(np.prod(x.reshape(2, 3), axis=1))


@pytest.mark.parametrize("x", [np.array([1.5, -2.0, 0.5, 3.0, 1.2, -0.7]),
                               np.array([1.5, 0.0, 0.5, 3.0, 1.2, -0.7]),
                               np.array([0.0, 0.0, 0.5, 3.0, 0.0, -0.7])],
                         ids=["no zero", "one zero", "two zeros"])
def test_prod_with_zeros(x) -> None:
    """The product rule with a zero entry: no 0/0 (the gradient of a zero entry is the
    product of the others), in reverse and forward mode and for the Hessian."""
    check(product, x)
    direction = np.linspace(-1.0, 1.0, 6)
    eps = 1e-5
    g = gradlab.grad(product)
    expected = (g(x + eps * direction) - g(x - eps * direction)) / (2 * eps)
    np.testing.assert_allclose(gradlab.hvp(product)(x, direction), expected, atol=1e-6)


# --- arrays made from values, bounds that carry gradients ----------------------------------------
def filled(x):
    s = np.sum(x)
    return np.sum(np.full((3,), s) * x[:3]) + np.sum(np.full_like(x, s * 2.0))


def clipped_by_its_own_minimum(x):
    low = np.min(x) * 0.5
    high = np.max(x) * 0.5
    return np.sum(np.clip(x, low, high) ** 2)


def at_least(x):
    return np.sum(np.atleast_2d(x) ** 2) + np.sum(np.atleast_3d(x[0]) * x[1])


@pytest.mark.parametrize("f", [filled, clipped_by_its_own_minimum, at_least])
def test_values_made_into_arrays(f) -> None:
    check(f, V)


def softmax_of_everything(m):
    return np.sum(scipy.special.softmax(m) * m)


def test_scipy_softmax_defaults_to_every_axis() -> None:
    """scipy.special.softmax normalises over all entries unless told an axis."""
    check(softmax_of_everything, M)


# --- torch spellings and methods, on torch tensors, against torch.autograd ---------------------
def torch_methods(x):
    return x.var() + x.std() * 2.0 + (x.transpose(0, 1)[0] * x[:, 1]).sum()


def torch_values_and_indices(x):
    v, i = torch.max(x, dim=1)
    m = torch.min(x, 0)
    return torch.sum(v * v) + torch.sum(m.values) + x.max(1)[0].sum()


def torch_repeat_and_view(x):
    return (x.repeat(2, 1) * 2.0).sum() + (x.view(4, 3).permute(1, 0)[0] ** 2).sum()


def torch_reductions_positional(x):
    return torch.sum(torch.sum(x, 1, True) * x) + torch.var(x, 0, False).sum()


try:
    import torch
except ImportError:  # pragma: no cover - make test installs torch
    torch = None


@pytest.mark.parametrize("f", [torch_methods, torch_values_and_indices, torch_repeat_and_view,
                               torch_reductions_positional])
def test_torch_spellings_mean_what_torch_means(f) -> None:
    require("torch")
    x = torch.tensor(M, dtype=torch.float64, requires_grad=True)
    value = f(x)
    value.backward()
    got_value, got = gradlab.value_and_grad(f)(torch.tensor(M, dtype=torch.float64))
    np.testing.assert_allclose(to_numpy(got_value), value.detach().numpy(), rtol=1e-12)
    np.testing.assert_allclose(to_numpy(got), x.grad.numpy(), rtol=1e-10, atol=1e-12)


def numpy_methods(x):
    return x.var() + x.std() * 2.0 + (x.transpose(1, 0)[0] * x.T[0]).sum() + x.max(1).sum()


def test_numpy_methods_keep_numpy_meanings() -> None:
    """The same method names on NumPy arrays: biased variance, a permutation, a reduction."""
    check(numpy_methods, M)


def numpy_repeat(x):
    return np.sum(x.repeat(2))


def repeat_alone(x):
    return (x.repeat(2, 1) * 2.0).sum()


def test_numpy_code_keeps_numpy_meanings(framework: str) -> None:
    """Code written with NumPy means NumPy's methods on every backend: its x.repeat(2)
    repeats each element (not torch's tile)."""
    value, g = gradlab.value_and_grad(numpy_repeat)(to_framework(M, framework))
    assert float(to_numpy(value)) == pytest.approx(2 * np.sum(M))
    np.testing.assert_allclose(to_numpy(g), np.full((3, 4), 2.0))


def test_code_that_names_no_framework_means_what_its_inputs_mean() -> None:
    """Methods alone: a torch tensor's x.repeat(2, 1) is a tile; a NumPy array's is NumPy's
    repeat, whose count is one int (2, with the axis 1)."""
    df = gradlab.grad(repeat_alone)
    np.testing.assert_allclose(df(M), np.full((3, 4), 4.0))
    value, _ = gradlab.value_and_grad(repeat_alone)(M)
    assert value == pytest.approx(repeat_alone(M))
    require("torch")
    np.testing.assert_allclose(to_numpy(df(torch.tensor(M))), np.full((3, 4), 4.0))
    assert float(gradlab.value_and_grad(repeat_alone)(torch.tensor(M))[0]) == pytest.approx(
        float(repeat_alone(torch.tensor(M))))


def methods_alone(x):
    return x.var() + x.std()


def test_methods_alone_follow_the_inputs(framework: str) -> None:
    """x.var() is unbiased on a torch tensor and biased on the others, as each framework
    computes it."""
    value, _ = gradlab.value_and_grad(methods_alone)(to_framework(M, framework))
    ddof = 1 if framework == "torch" else 0
    np.testing.assert_allclose(float(to_numpy(value)), M.var(ddof=ddof) + M.std(ddof=ddof),
                               rtol=1e-12)


# --- TensorFlow's argument orders and flags ------------------------------------------------------
def tf_reductions_positional(x):
    return tf.reduce_sum(tf.reduce_mean(x, 1, True) * x) + tf.reduce_max(x, [0, 1])


def tf_matmul_flags(x):
    return tf.reduce_sum(tf.matmul(x, x, transpose_a=True)) + tf.reduce_sum(
        tf.matmul(x, x, transpose_b=True) ** 2)


try:
    import tensorflow as tf
except ImportError:  # pragma: no cover
    tf = None


@pytest.mark.parametrize("f", [tf_reductions_positional, tf_matmul_flags])
def test_tensorflow_spellings(f) -> None:
    require("tensorflow")
    x = tf.constant(M)
    with tf.GradientTape() as tape:
        tape.watch(x)
        value = f(x)
    expected = tape.gradient(value, x)
    got_value, got = gradlab.value_and_grad(f)(x)
    np.testing.assert_allclose(to_numpy(got_value), value.numpy(), rtol=1e-12)
    np.testing.assert_allclose(to_numpy(got), expected.numpy(), rtol=1e-10)


def math_functions(x):
    return math.sin(x) * math.exp(x) + math.log1p(x * x) % 0.3


def test_math_on_python_numbers() -> None:
    g = gradlab.grad(math_functions)(0.7)
    np.testing.assert_allclose(g, finite_differences(lambda v: math_functions(float(v)),
                                                     np.array(0.7)), rtol=1e-6)


def test_a_list_of_numbers_and_tensors_stacks_on_every_backend(framework: str) -> None:
    x = to_framework(V, framework)
    got = gradlab.grad(sum_of_list)(x)
    np.testing.assert_allclose(to_numpy(got), finite_differences(sum_of_list, V), rtol=1e-6,
                               atol=1e-8)


# --- found by the fuzzer of what people write --------------------------------------------------
def two_calls_without_rules(x):
    v = np.i0(x)
    return np.sum(np.sinc(v))


def test_a_call_without_a_rule_is_refused_even_before_another() -> None:
    """The first unknown call's result carries x's gradient into the second: refused at the
    first, not treated as a constant because the second has no rule either."""
    with pytest.raises(gradlab.NoRuleError, match="np.i0"):
        gradlab.grad(two_calls_without_rules)


def transposed_expressions(w):
    v = (w * 2.0).T
    return np.sum(v ** 2) + np.sum(w[0].T * w)


def rows_added_up(m):
    return np.sum(sum(m) * np.arange(4.0))


def reversed_and_picked(x):
    return np.sum(x[::-1] * np.arange(4.0)) + np.sum(x[[0, 2]] ** 2) + np.sum(x[::-2])


@pytest.mark.parametrize("f", [transposed_expressions, rows_added_up, reversed_and_picked])
def test_people_s_indexing_on_every_backend(f, framework: str) -> None:
    """``.T`` of an expression, builtin ``sum`` of a matrix (its rows added), negative steps
    and lists of indices (which torch's, JAX's or TensorFlow's ``[]`` take otherwise)."""
    x = np.random.default_rng(5).normal(size=(3, 4) if f is rows_added_up else (4,))
    if f is transposed_expressions:
        x = x[:3] if x.ndim == 1 else x
    got = gradlab.grad(f)(to_framework(x, framework))
    np.testing.assert_allclose(to_numpy(got), finite_differences(f, x), rtol=1e-6, atol=1e-8)
    direction = np.ones_like(x)
    _, tangent = gradlab.jvp(f)(to_framework(x, framework), to_framework(direction, framework))
    np.testing.assert_allclose(float(to_numpy(tangent)), np.sum(finite_differences(f, x)),
                               rtol=1e-6, atol=1e-8)


def doubled_method(x):
    return (x.double() * 2.0).sum() + (x.float() * 1.0).sum()


def test_torch_conversions_by_method() -> None:
    require("torch")
    got = gradlab.grad(doubled_method)(torch.tensor(V))
    np.testing.assert_allclose(to_numpy(got), np.full(5, 3.0), rtol=1e-6)


def real_part(z):
    return np.sum(z.real ** 2)


def test_complex_inputs_are_refused() -> None:
    with pytest.raises(gradlab.GradlabError, match="complex"):
        gradlab.grad(real_part)(np.array([1 + 2j, 3j]))


def masks_as_numbers(x):
    m = np.isfinite(x)
    return np.sum(m * x + (x > 0) * x ** 2 - 0.5 * (x < 0))


def test_a_boolean_in_arithmetic_is_a_number_on_every_backend(framework: str) -> None:
    """NumPy computes with a boolean as 0 and 1 (a hand-written relu, ``(x > 0) * x``);
    TensorFlow's arithmetic refuses booleans, so the generated code writes the cast."""
    got = gradlab.grad(masks_as_numbers)(to_framework(V, framework))
    np.testing.assert_allclose(to_numpy(got), finite_differences(masks_as_numbers, V),
                               rtol=1e-6, atol=1e-8)
    assert "gl.astype(m, gl.dtype(x))" in gradlab.grad(masks_as_numbers).source


def tf_cast(x):
    return tf.reduce_sum(tf.cast(x, tf.float64) ** 2)


def test_tf_cast_is_astype() -> None:
    require("tensorflow")
    got = gradlab.grad(tf_cast)(tf.constant(V))
    np.testing.assert_allclose(to_numpy(got), 2 * V, rtol=1e-12)
