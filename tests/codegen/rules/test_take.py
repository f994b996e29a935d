"""take, take_along_axis and torch's gather (rules: the adjoint adds the result's gradient back
where each entry was taken from, an entry taken twice getting both): on every backend grad, jvp
and hvp agree with differences; torch's spellings (index_select, take_along_dim, gather and
their methods) agree with torch's own autodiff."""
from __future__ import annotations

import numpy as np
import pytest

import gradlab
from gradlab.errors import GradlabError
from gradlab.tensor import FRAMEWORKS
from tests.conftest import assert_derivatives_are_differences, require, to_framework, to_numpy

try:
    import torch
except ImportError:         # the torch spellings' tests are skipped
    torch = None
try:
    import tensorflow as tf
except ImportError:
    tf = None
try:
    import jax.numpy as jnp
except ImportError:
    jnp = None

S = np.array([[0.9, -0.3, 0.4, 0.7], [0.2, 1.1, -0.5, 0.35], [0.3, 0.1, 1.3, -0.8]])


def columns_twice(x): return np.sum(np.take(x, [2, 0, 2], axis=1) ** 2)            # noqa: E704
def flattened(x): return np.sum(np.sin(np.take(x, [1, 3, 3, -1])))                   # noqa: E704
def one_entry(x): return np.take(x, 5) ** 3                                          # noqa: E704
def negative_axis(x): return np.sum(np.take(x ** 2, np.array([[0, 1], [1, 1]]), axis=-2))  # noqa: E704,E501
def as_method(x): return np.sum(x.take([0, 2], axis=0) * x[1])                       # noqa: E704
def sorted_rows(x): return np.sum(np.take_along_axis(x, np.argsort(x, axis=1), axis=1)[:, :2] ** 3)  # noqa: E704,E501
def picked(x): return np.sum(np.take_along_axis(x, np.array([[1], [0], [3]]), axis=1) ** 2)  # noqa: E704,E501
def broadcast_rows(x): return np.sum(np.take_along_axis(x[:1], np.array([[1, 1], [0, 2], [3, 0]]), axis=1) ** 2)  # noqa: E704,E501
def diagonal_methods(x): return x[:, :3].trace() * np.sum(x.diagonal(1) ** 2) + np.sum(x.cumprod(axis=1))  # noqa: E704,E501


CASES = [columns_twice, flattened, one_entry, negative_axis, as_method, sorted_rows, picked,
         broadcast_rows, diagonal_methods]


@pytest.mark.parametrize("framework", FRAMEWORKS)
@pytest.mark.parametrize("f", CASES, ids=[f.__name__ for f in CASES])
def test_take_and_its_derivatives(f, framework) -> None:
    require(framework)
    if framework in ("torch", "tensorflow") and f in (as_method, diagonal_methods):
        pytest.skip("a NumPy array's methods: torch's and TensorFlow's tensors differ")
    assert_derivatives_are_differences(f, S, framework)


def cross_entropy(x, y):
    logp = torch.log_softmax(x, dim=1)
    return -logp.gather(1, y.unsqueeze(1)).mean()


def gathered(x, y): return torch.sum(torch.gather(x, 0, y[None, :3] % 3) ** 2)       # noqa: E704
def selected(x, y): return (torch.index_select(x, 0, y % 3) ** 2).sum() + x.index_select(1, y).prod()  # noqa: E704,E501
def flat_take(x, y): return (torch.take(x, y) * x.take(y + 4)).sum()                 # noqa: E704
def along_dim(x, y): return (torch.take_along_dim(x, y[:, None], dim=1) ** 3).sum()  # noqa: E704
def tensor_methods(x, y):                                                           # noqa: E302
    return (x.triu(1) ** 2).sum() + x.tril().sum() * x.diff(dim=0).sum() + \
        x.roll(1, 0)[0].sum() + x.cumprod(1).sum() + x[:, :3].trace()


TORCH_CASES = [cross_entropy, gathered, selected, flat_take, along_dim, tensor_methods]


@pytest.mark.parametrize("f", TORCH_CASES, ids=[f.__name__ for f in TORCH_CASES])
def test_torch_spellings_agree_with_torch(f) -> None:
    require("torch")
    x, y = torch.tensor(S), torch.tensor([1, 0, 3])
    v = torch.tensor(np.cos(np.arange(S.size) * 1.7).reshape(S.shape))
    want = torch.func.grad(f)(x, y)
    np.testing.assert_allclose(to_numpy(gradlab.grad(f)(x, y)), to_numpy(want), rtol=1e-10,
                               atol=1e-12)
    _, t = gradlab.jvp(f)(x, y, v)
    assert float(t) == pytest.approx(float((want * v).sum()), rel=1e-10, abs=1e-12)
    h = torch.func.jvp(lambda u: torch.func.grad(f)(u, y), (x,), (v,))[1]
    np.testing.assert_allclose(to_numpy(gradlab.hvp(f)(x, y, v)), to_numpy(h), rtol=1e-9,
                               atol=1e-12)


def gather_longer_index(x, y): return x.gather(1, torch.zeros((4, 1), dtype=torch.int64)).sum()  # noqa: E704,E501


def test_a_gather_index_longer_than_the_input_is_refused() -> None:
    require("torch")
    with pytest.raises(GradlabError, match="longer than the input"):
        gradlab.grad(gather_longer_index)(torch.tensor(S), torch.tensor([1, 0, 3]))


def numpy_tril_method(x): return np.sum(x.tril())                                    # noqa: E704


def test_a_torch_method_is_not_read_on_numpy_arrays() -> None:
    with pytest.raises(GradlabError, match="tril"):
        gradlab.grad(numpy_tril_method)(S)


def tf_gathered(x):
    return tf.reduce_sum(tf.gather(x, [2, 0, 2]) ** 2) + tf.reduce_sum(
        tf.gather(x, [1, 3], axis=1)[:2] * tf.gather(x, [0, 1], axis=0)[:, :2])


def jnp_taken(x):
    return jnp.sum(jnp.take(x, jnp.array([2, 0, 2]), axis=1) ** 2) + jnp.sum(
        jnp.take_along_axis(x, jnp.argsort(x, axis=0), axis=0)[0] ** 3)


@pytest.mark.parametrize("framework", ["tensorflow", "jax"])
def test_tensorflow_and_jax_spellings_agree_with_differences(framework) -> None:
    require(framework)
    f = tf_gathered if framework == "tensorflow" else jnp_taken
    assert_derivatives_are_differences(f, S, framework,
                                       own=lambda u: to_numpy(f(to_framework(u, framework))))


def gather_of_a_number(x):
    s = x.sum()
    return torch.gather(s, 0, torch.zeros((), dtype=torch.int64)) ** 2 + x.gather(
        0, torch.tensor([1, 1])).sum()


def test_gather_of_a_0_d_tensor_is_its_one_entry() -> None:
    """torch reads a 0-d tensor as one entry (NumPy's take_along_axis raises): fuzz 21212."""
    require("torch")
    x = torch.tensor([0.5, -1.0, 2.0], dtype=torch.float64)
    np.testing.assert_allclose(to_numpy(gradlab.grad(gather_of_a_number)(x)),
                               to_numpy(torch.func.grad(gather_of_a_number)(x)))
