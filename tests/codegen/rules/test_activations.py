"""Activation functions, losses and other spellings written out as Python
(gradlab/codegen/rules/activations.py and the rest of definitions.py), each in the program's
own framework: the value is the framework's own function's, and grad, jvp and hvp agree with
differences of it."""
from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.special

from tests.conftest import assert_derivatives_are_differences, require, to_framework, to_numpy

try:
    import torch
    import torch.nn.functional as F
except ImportError:
    torch = F = None
try:
    import jax
    import jax.numpy as jnp
except ImportError:
    jax = jnp = None
try:
    import tensorflow as tf
except ImportError:
    tf = None

X = np.array([[0.9, -0.3, 0.4, 0.7], [0.2, 1.1, -0.5, 0.35], [0.3, 0.1, 1.3, -0.8]])


def numpy_spellings(x):
    return (np.nansum(x ** 2) + np.sum(np.nanmean(x, axis=0) ** 2)
            + np.sum(np.heaviside(x, 0.5) * x) + np.sum(np.fabs(x) * np.positive(x))
            + np.sum(np.rint(x * 3.3) * x + np.trunc(x * 3.3) * x ** 2)
            + np.sum(np.fmod(x * 3.3, 0.7) ** 2) + np.sum(np.logaddexp2(x, x ** 2))
            + np.vdot(x, x ** 2) + np.sum(np.tensordot(x, x.T, axes=1) ** 2)
            + np.sum(scipy.special.xlogy(x, x ** 2 + 1)) + np.sum(
                scipy.special.log_softmax(x, axis=1) ** 2)
            + math.erfc(x[0, 0]) + math.radians(x[1, 1]) ** 2)


def torch_activations(x):
    return torch.sum(F.gelu(x) ** 2 + F.gelu(x, approximate="tanh") + F.silu(x) * F.elu(x)
                     + F.celu(x, 0.5) + F.selu(x) + F.leaky_relu(x, 0.1) + F.relu6(x * 4)
                     + F.logsigmoid(x) + F.softsign(x) + F.tanhshrink(x) + F.mish(x)
                     + F.hardtanh(x * 2.1))


def torch_losses(x):
    return (torch.sum(F.softmin(x, dim=1) ** 2) + torch.sum(F.normalize(x) ** 3)
            + F.mse_loss(x, x ** 2) + F.l1_loss(x, torch.sin(x), reduction="sum")
            + F.smooth_l1_loss(x * 3.1, x) + torch.sum(F.cosine_similarity(x, x ** 2 + 1)))


def torch_spellings(x):
    square = x[:, :3] @ x[:, :3].T + 3 * torch.eye(3, dtype=x.dtype)
    return (torch.sum(torch.lerp(x, x ** 2, 0.3) + torch.frac(x * 3.3) * x
                      + torch.clamp_min(x, 0.15) ** 2 + torch.clamp_max(x, 0.25) + torch.sgn(x))
            + torch.logdet(square) + torch.sum(torch.addmm(x[:, :3], x, x.T[:, :3]) ** 2))


def jax_activations(x):
    return (jnp.sum(jax.nn.gelu(x) + jax.nn.gelu(x, approximate=False) ** 2 + jax.nn.silu(x)
                    + jax.nn.swish(x) * jax.nn.elu(x) + jax.nn.celu(x, 0.5) + jax.nn.selu(x)
                    + jax.nn.leaky_relu(x, 0.1) + jax.nn.relu6(x * 4) + jax.nn.log_sigmoid(x))
            + jnp.sum(jax.nn.standardize(x) ** 3))


def tensorflow_activations(x):
    return tf.reduce_sum(tf.nn.gelu(x) + tf.nn.gelu(x, approximate=True) ** 2 + tf.nn.silu(x)
                         + tf.nn.elu(x) + tf.nn.selu(x) + tf.nn.leaky_relu(x)
                         + tf.nn.relu6(x * 4) + tf.math.log_sigmoid(x) + tf.math.softsign(x))


def tensorflow_spellings(x):
    return (tf.reduce_sum(tf.math.divide_no_nan(x, x - x[0:1]) + tf.math.xlogy(x, x ** 2 + 1)
                          + tf.math.erfc(x) + tf.math.reciprocal_no_nan(x + 2.0))
            + tf.reduce_sum(tf.math.cumprod(x, axis=1)) + tf.linalg.trace(x[:, :3]) ** 2
            + tf.reduce_sum(tf.math.polyval([x[0, 0], -2.0 * x[0, 1], x[1, 1]], x))
            + tf.reduce_sum(tf.linalg.diag_part(x) ** 2) + tf.math.reduce_euclidean_norm(x))


CASES = [(numpy_spellings, "numpy"), (torch_activations, "torch"), (torch_losses, "torch"),
         (torch_spellings, "torch"), (jax_activations, "jax"),
         (tensorflow_activations, "tensorflow"), (tensorflow_spellings, "tensorflow")]


@pytest.mark.parametrize("f, framework", CASES, ids=[c[0].__name__ for c in CASES])
def test_a_written_out_function_is_the_frameworks_and_so_are_its_derivatives(f, framework
                                                                             ) -> None:
    require(framework)

    def own(u: np.ndarray) -> float:
        return float(to_numpy(f(to_framework(u, framework))))
    assert_derivatives_are_differences(f, X, framework, own=own, value_rel=1e-9)
