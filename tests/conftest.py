"""Shared fixtures: every backend-parametrized test runs once per framework.

A framework that is not installed is skipped with its reason, except when
``GRADLAB_REQUIRE_ALL_BACKENDS=1`` (set by ``make test``): then a missing framework fails the run,
so CI cannot go green on fewer than four backends.
"""
from __future__ import annotations

import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=1")

import numpy as np
import pytest

from gradlab.tensor import FRAMEWORKS, is_installed

REQUIRE_ALL = os.environ.get("GRADLAB_REQUIRE_ALL_BACKENDS") == "1"


def _setup_framework(name: str) -> None:
    if name == "jax":
        import jax
        jax.config.update("jax_enable_x64", True)
    elif name == "tensorflow":
        import tensorflow as tf
        tf.get_logger().setLevel("ERROR")


def require(name: str) -> None:
    """Skip (or, under make test, fail) when framework ``name`` is missing."""
    if is_installed(name):
        _setup_framework(name)
        return
    message = f"{name} is not installed (the README's `make test` installs all four backends)"
    if REQUIRE_ALL:
        pytest.fail(message)
    pytest.skip(message)


@pytest.fixture(params=FRAMEWORKS)
def framework(request: pytest.FixtureRequest) -> str:
    """Each of 'numpy', 'torch', 'tensorflow', 'jax' in turn."""
    require(request.param)
    return request.param


def to_framework(value, framework: str, dtype=None):
    """A NumPy value (or Python number) as a value of ``framework``, same dtype unless given."""
    arr = np.asarray(value, dtype=dtype)
    if framework == "numpy":
        return arr
    if framework == "torch":
        import torch
        return torch.as_tensor(arr.copy())
    if framework == "tensorflow":
        import tensorflow as tf
        return tf.constant(arr)
    if framework == "jax":
        import jax.numpy as jnp
        return jnp.asarray(arr)
    from gradlab.tensor import convert   # any other registered backend
    return convert(arr, framework)


def to_numpy(value):
    """Any framework's value (or a list/tuple of them) as NumPy."""
    if isinstance(value, (list, tuple)):
        return type(value)(to_numpy(v) for v in value)
    if hasattr(value, "detach"):
        return value.detach().cpu().numpy()
    if hasattr(value, "numpy") and not isinstance(value, np.ndarray):
        return value.numpy()
    return np.asarray(value)


def assert_derivatives_are_differences(f, x: np.ndarray, framework: str, own=None,
                                       value_rel: float = 1e-10) -> None:
    """On ``framework``'s arrays, ``f``'s value is ``own``'s on the NumPy array (default:
    ``f``'s own, for NumPy code; a framework's function passes ``own``, which runs it on
    ``framework``'s copy), and gradlab's grad, jvp and hvp at ``x`` (along a fixed direction)
    agree with central differences of ``own``."""
    import gradlab
    own = own or f
    v = np.cos(np.arange(x.size) * 1.7).reshape(x.shape)
    g_fd = central_difference(own, x)
    h_fd = central_difference(lambda u: central_difference(own, u, eps=1e-4).ravel() @ v.ravel(),
                              x, eps=1e-4)
    X, V = to_framework(x, framework), to_framework(v, framework)
    value, g = gradlab.value_and_grad(f)(X)
    assert float(to_numpy(value)) == pytest.approx(float(own(x)), rel=value_rel)
    np.testing.assert_allclose(to_numpy(g), g_fd, rtol=1e-5, atol=1e-6)
    _, t = gradlab.jvp(f)(X, V)
    assert float(to_numpy(t)) == pytest.approx(float(g_fd.ravel() @ v.ravel()), rel=1e-5,
                                               abs=1e-6)
    np.testing.assert_allclose(to_numpy(gradlab.hvp(f)(X, V)), h_fd, rtol=1e-4, atol=1e-4)


def central_difference(f, x: np.ndarray, *rest, eps: float = 1e-6) -> np.ndarray:
    """The derivative of ``f(x, *rest)`` (a number, or a 0-d value of any framework) with
    respect to the NumPy array ``x``, by central differences entry by entry: the outside
    opinion every gradient test compares with."""
    g = np.zeros_like(x)
    for idx in np.ndindex(x.shape):
        up, down = x.copy(), x.copy()
        up[idx] += eps
        down[idx] -= eps
        g[idx] = (float(to_numpy(f(up, *rest))) - float(to_numpy(f(down, *rest)))) / (2 * eps)
    return g


def import_path(path: str):
    """The object a dotted path names (``numpy.linalg.norm``, ``torch.Tensor.var``): the
    longest importable module prefix, then attributes."""
    import importlib
    parts = path.split(".")
    for i in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:i]))
        except ImportError:
            continue
        for attr in parts[i:]:
            obj = getattr(obj, attr)
        return obj
    raise ImportError(path)
