"""Reference gradients through each framework's own autodiff (gradlab.tensor.autodiff)."""
from __future__ import annotations

from typing import Any, Callable

import numpy as np
import pytest

import gradlab.tensor as gt

from tests.conftest import to_framework, to_numpy
from tests.tensor.test_conformance import assert_conforms

RNG = np.random.default_rng(0)
X34 = RNG.uniform(-2, 2, (3, 4)).astype(np.float32)
Y34 = RNG.uniform(-2, 2, (3, 4)).astype(np.float32)


# --- gradients through the frameworks' own autodiff ----------------------------------------------
def loss_numpy(x: Any, y: Any) -> Any:
    return np.sum(np.tanh(x) * y ** 2)


def framework_loss(fw: str) -> Callable[[Any, Any], Any]:
    """sum(tanh(x) * y**2) written with the framework's own functions."""
    if fw == "numpy":
        return loss_numpy    # autograd swaps this module's ``np`` for autograd.numpy
    if fw == "torch":
        import torch
        return lambda x, y: torch.sum(torch.tanh(x) * y ** 2)
    if fw == "tensorflow":
        import tensorflow as tf
        return lambda x, y: tf.reduce_sum(tf.tanh(x) * y ** 2)
    import jax.numpy as jnp
    return lambda x, y: jnp.sum(jnp.tanh(x) * y ** 2)


def expected_grads(x: Any, y: Any) -> tuple[Any, Any, Any]:
    value = np.sum(np.tanh(x) * y ** 2)
    return value, (1 - np.tanh(x) ** 2) * y ** 2, 2 * np.tanh(x) * y


def test_value_and_grad(framework: str) -> None:
    x, y = X34.astype(np.float64), Y34.astype(np.float64)
    value, dx, dy = expected_grads(x, y)
    f = framework_loss(framework)
    fx, fy = to_framework(x, framework), to_framework(y, framework)
    v, g = gt.value_and_grad(f, fx, fy)                       # wrt=0
    assert float(to_numpy(v)) == pytest.approx(value, rel=1e-10)
    assert_conforms(g, dx, framework, where="d/dx")
    v, g1 = gt.value_and_grad(f, fx, fy, wrt=1)
    assert_conforms(g1, dy, framework, where="d/dy")
    v, grads = gt.value_and_grad(f, fx, fy, wrt=(0, 1))
    assert isinstance(grads, tuple) and len(grads) == 2
    assert_conforms(grads[0], dx, framework, where="d/dx of (0, 1)")
    assert_conforms(grads[1], dy, framework, where="d/dy of (0, 1)")
    v, single = gt.value_and_grad(f, fx, fy, wrt=(1,))
    assert isinstance(single, tuple) and len(single) == 1
    assert_conforms(single[0], dy, framework, where="d/dy of (1,)")


def test_value_and_grad_of_an_unused_input_is_zeros(framework: str) -> None:
    x = X34.astype(np.float64)
    f = framework_loss(framework)
    uses_first_only = _loss_first_only if framework == "numpy" else (lambda a, b: f(a, a))
    fx = to_framework(x, framework)
    _, (dx, db) = gt.value_and_grad(uses_first_only, fx, fx * 1, wrt=(0, 1))
    assert_conforms(dx, expected_grads(x, x)[1] + expected_grads(x, x)[2], framework)
    assert_conforms(db, np.zeros_like(x), framework, where="unused input")


def _loss_first_only(a: Any, b: Any) -> Any:
    return np.sum(np.tanh(a) * a ** 2)


def test_stop_gradient_stops_gradients(framework: str) -> None:
    if framework == "numpy":
        pytest.skip("NumPy has no autodiff of its own: stop_gradient is the identity")
    ops = gt.backend(framework)
    x = to_framework(X34.astype(np.float64), framework)
    _, g = gt.value_and_grad(lambda a: ops.sum(ops.stop_gradient(a) * a), x)
    assert_conforms(g, X34.astype(np.float64), framework)
