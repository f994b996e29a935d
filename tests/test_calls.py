"""What a call of a gradient must satisfy, refused before computing (gradlab.calls): arguments
that have a gradient, a seed or tangent of the right shape, the arguments the function takes,
and the user's line named when the generated code fails inside."""
from __future__ import annotations

import numpy as np
import pytest

import gradlab
from tests.conftest import to_framework

RNG = np.random.default_rng(0)
W0 = RNG.normal(size=(3, 2))
X0 = RNG.normal(size=(4, 3))


def loss(W, x):
    h = np.tanh(x @ W)
    return np.mean(h ** 2)


def test_the_seed_is_keyword_only():
    df = gradlab.grad(loss)
    assert "*, seed=1.0)" in df.source.splitlines()[0]
    with pytest.raises(TypeError, match="seed="):
        df(W0, X0, 2.0)          # an extra positional argument is not taken as the seed


def scaled_sum(x):
    return np.sum(x * 1.5)


def times_three(x):
    return x * 3


@pytest.mark.parametrize("x", [np.arange(3), np.array([True, False]), True],
                         ids=["int array", "bool array", "bool"])
def test_integer_and_bool_inputs_are_refused_with_the_cast_to_write(x):
    with pytest.raises(gradlab.GradlabError, match="Cast it first"):
        gradlab.grad(scaled_sum if not isinstance(x, bool) else times_three)(x)


def test_an_integer_array_after_a_float_one_is_refused_too():
    df = gradlab.grad(scaled_sum)
    df(np.ones(3))
    with pytest.raises(gradlab.GradlabError, match="int64"):
        df(np.arange(3))


def test_integer_tensors_are_refused(framework):
    x = to_framework(np.arange(3), framework)
    with pytest.raises(gradlab.GradlabError, match="Cast it first"):
        gradlab.grad(scaled_sum)(x)


def mean_of_tail(x):
    return np.mean(x[5:])


def test_a_division_by_zero_inside_names_the_users_line():
    with pytest.warns(RuntimeWarning), pytest.raises(gradlab.GradlabError,
                                                     match=r"your line \d+: `return np.mean"):
        gradlab.grad(mean_of_tail)(np.ones(3))


def elementwise_double(x):
    return x * 2.0


@pytest.mark.parametrize("check", [True, False])
def test_a_seed_of_the_wrong_shape_says_which_shapes(check):
    df = gradlab.grad(elementwise_double, check=check)
    x = np.arange(3.0)
    with pytest.raises(gradlab.GradlabError, match=r"seed= has shape \(2,\).*shape \(3,\)"):
        df(x, seed=np.ones(2))
    np.testing.assert_allclose(df(x, seed=np.ones(3)), [2.0, 2.0, 2.0])
    with pytest.raises(gradlab.GradlabError, match=r"seed= has shape \(3,\).*shape \(3, 1\)"):
        df(x.reshape(3, 1), seed=np.ones(3))      # would broadcast into another gradient


def test_a_tangent_or_vector_of_the_wrong_shape_says_which_shapes():
    with pytest.raises(gradlab.GradlabError, match=r"tangent for W has shape \(2,\).*\(3, 2\)"):
        gradlab.jvp(loss)(W0, X0, np.ones(2))
    with pytest.raises(gradlab.GradlabError, match=r"v for W has shape \(3,\)"):
        gradlab.hvp(loss)(W0, X0, np.ones(3))


def saxpy_of_dict(val):
    return val["a"] * val["b"] + val["c"]


def test_a_dict_argument_differentiated_gets_a_dict_gradient():
    # (once refused; now differentiated entry by entry: see tests/test_pytrees.py)
    g = gradlab.grad(saxpy_of_dict)({"a": 1.0, "b": 2.0, "c": 3.0})
    assert g == {"a": 2.0, "b": 1.0, "c": 1.0} and type(g["a"]) is float


def test_a_python_int_is_promoted_and_its_gradient_is_a_float():
    g = gradlab.grad(times_three)(2)
    assert type(g) is float and g == 3.0


def with_mode(x, mode):
    return np.sum(x ** 2) if mode == "sq" else np.sum(x)


@pytest.mark.parametrize("value", ["sq", None, np.array([1.0, 2.0], dtype=object)])
def test_text_none_and_object_arrays_have_nothing_to_differentiate(value):
    """A str argument named in wrt gave back an empty string as its 'gradient'."""
    x = np.array([0.5, -1.0])
    with pytest.raises(gradlab.GradlabError, match="nothing to differentiate"):
        gradlab.grad(with_mode, wrt=1)(x, value)
    with pytest.raises(gradlab.GradlabError, match="nothing to differentiate"):
        gradlab.jvp(with_mode, wrt=1)(x, value, 1.0)


@pytest.mark.parametrize("seed", [np.ones(1), np.ones((1, 1))])
def test_a_seed_with_more_axes_than_a_scalar_output_is_refused(seed):
    """Its axes broadcast into the gradient: a (3,) input got a (1, 3) gradient."""
    for check in (True, False):
        with pytest.raises(gradlab.GradlabError, match="seed= has shape"):
            gradlab.grad(scaled_sum, check=check)(np.ones(3), seed=seed)
    np.testing.assert_allclose(gradlab.grad(scaled_sum)(np.ones(3), seed=np.float64(2.0)),
                               gradlab.grad(scaled_sum)(np.ones(3)) * 2.0)


def test_a_call_with_the_wrong_arguments_is_a_gradlab_error_and_a_type_error():
    df = gradlab.grad(loss)
    for args in [(np.eye(2),), (np.eye(2), np.ones((3, 2)), 1.0)]:
        with pytest.raises(gradlab.GradlabError, match="takes the arguments of loss") as info:
            df(*args)
        assert isinstance(info.value, TypeError)


def test_a_tangent_by_keyword_and_a_class_are_refused_with_what_to_write():
    x = np.array([0.5, -1.0])
    with pytest.raises(gradlab.GradlabError, match="goes last, by position"):
        gradlab.jvp(scaled_sum)(x, tangent=x)
    with pytest.raises(gradlab.GradlabError, match="goes last, by position"):
        gradlab.hvp(scaled_sum)(x, v=x)

    class Model:
        def __init__(self, w):
            self.w = w
    with pytest.raises(gradlab.GradlabError, match="is a class"):
        gradlab.grad(Model)
