"""The inputs of a generated program: what kinds of values people pass, made from a seed.

A program is written in one *dialect*: ``numpy`` (``import numpy as np``), ``autograd``
(``import autograd.numpy as np``), ``jax`` (``jax.numpy as jnp``), ``torch`` or ``tensorflow``.
Its parameters are described by :class:`Param` (a shape and a dtype, or a Python number), made
as NumPy values from the program's seed (:func:`numpy_inputs`) and converted to the dialect's
arrays when the program runs (:func:`to_dialect`), or to a backend's arrays when gradlab's code
runs (:func:`to_backend`).
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

import numpy as np

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

#: The dialects a program may be written in, and the framework whose arrays it takes.
DIALECTS = ("numpy", "autograd", "torch", "jax", "tensorflow")
FRAMEWORK_OF = {"numpy": "numpy", "autograd": "numpy", "torch": "torch", "jax": "jax",
                "tensorflow": "tensorflow"}

#: dtypes a parameter may have; "pyfloat"/"pyint" are Python numbers (a learning rate, ``n``).
DTYPES = ("float64", "float32", "int64", "bool", "complex128", "pyfloat", "pyint")


@dataclass(frozen=True)
class Param:
    name: str
    shape: tuple[int, ...]
    dtype: str
    positive: bool = False      # values in (0.2, 1.5): a variance, a length, a probability

    @property
    def is_python(self) -> bool:
        return self.dtype in ("pyfloat", "pyint")

    @property
    def is_float(self) -> bool:
        return self.dtype in ("float64", "float32", "pyfloat")

    def describe(self) -> str:
        if self.is_python:
            return f"{self.name}: {self.dtype[2:]}"
        return f"{self.name}: {self.dtype}{list(self.shape)}"


def numpy_inputs(params: tuple[Param, ...], seed: int) -> list[Any]:
    """The parameters' values as NumPy arrays and Python numbers (float64 in (-1.2, 1.2) unless
    positive; ints in -3..3; complex with both parts so)."""
    rng = np.random.default_rng(seed)
    out: list[Any] = []
    for p in params:
        lo, hi = (0.2, 1.5) if p.positive else (-1.2, 1.2)
        if p.dtype == "pyfloat":
            out.append(float(round(rng.uniform(lo, hi), 6)))
        elif p.dtype == "pyint":
            out.append(int(rng.integers(1, 4)))
        elif p.dtype == "int64":
            low = 1 if p.positive else -3
            out.append(np.asarray(rng.integers(low, 4, size=p.shape), dtype=np.int64))
        elif p.dtype == "bool":
            out.append(np.asarray(rng.integers(0, 2, size=p.shape), dtype=bool))
        elif p.dtype == "complex128":
            z = rng.uniform(lo, hi, size=p.shape) + 1j * rng.uniform(-1.2, 1.2, size=p.shape)
            out.append(np.asarray(z, dtype=np.complex128))
        else:
            out.append(np.asarray(rng.uniform(lo, hi, size=p.shape), dtype=p.dtype))
    return out


def setup(framework: str) -> None:
    """What every use of a framework needs first (JAX: 64-bit floats)."""
    if framework == "jax":
        import jax
        jax.config.update("jax_enable_x64", True)
    elif framework == "tensorflow":
        import tensorflow as tf
        tf.get_logger().setLevel("ERROR")


def to_backend(value: Any, framework: str) -> Any:
    """A NumPy value as ``framework``'s array, same dtype; Python numbers stay Python numbers."""
    if not isinstance(value, np.ndarray):
        return value
    if framework == "numpy":
        return value.copy()
    if framework == "torch":
        import torch
        return torch.as_tensor(value.copy())
    if framework == "tensorflow":
        import tensorflow as tf
        return tf.constant(value)
    if framework == "jax":
        import jax.numpy as jnp
        return jnp.asarray(value)
    raise ValueError(framework)


def to_dialect(value: Any, dialect: str) -> Any:
    return to_backend(value, FRAMEWORK_OF[dialect])


def to_numpy(value: Any) -> Any:
    """Any framework's value (or a tuple/list of them) as NumPy; Python numbers as 0-d arrays."""
    if isinstance(value, (list, tuple)):
        return type(value)(to_numpy(v) for v in value)
    if hasattr(value, "detach") and hasattr(value, "cpu"):
        return value.detach().cpu().resolve_conj().numpy()
    if hasattr(value, "numpy") and not isinstance(value, np.ndarray):
        return np.asarray(value.numpy())
    return np.asarray(value)


def framework_of_value(value: Any) -> str:
    """``numpy``, ``torch``, ``tensorflow``, ``jax`` or ``python`` (a Python number)."""
    if isinstance(value, np.generic):
        return "numpy"
    if isinstance(value, (bool, int, float, complex)):
        return "python"
    module = type(value).__module__.split(".")[0]
    return {"numpy": "numpy", "torch": "torch", "tensorflow": "tensorflow", "jax": "jax",
            "jaxlib": "jax"}.get(module, module)


def fresh(values: list[Any]) -> list[Any]:
    """Copies, so that a program that changes an argument in place starts afresh each call."""
    out = []
    for v in values:
        if isinstance(v, np.ndarray):
            out.append(v.copy())
        elif hasattr(v, "clone") and hasattr(v, "detach"):
            out.append(v.detach().clone())
        else:
            out.append(v)
    return out
