"""The inputs of a generated program: what kinds of values people pass, made from a seed.

A program is written in one *dialect*: ``numpy`` (``import numpy as np``), ``autograd``
(``import autograd.numpy as np``), ``jax`` (``jax.numpy as jnp``), ``torch`` or ``tensorflow``.
Its parameters are described by :class:`Param` (a shape and a dtype, or a Python number, or a
Python list or tuple of such parameters: ``params = [W1, b1, W2, b2]``, ``[(W1, b1), (W2, b2)]``,
or a dict of them: ``params = {"W": W, "b": b}``, ``{"l1": {"W": .., "b": ..}, ...}``),
made as NumPy values from the program's seed (:func:`numpy_inputs`) and converted to the
dialect's arrays when the program runs (:func:`to_dialect`), or to a backend's arrays when
gradlab's code runs (:func:`to_backend`). A list or tuple is converted item by item: its items
are the framework's arrays, the list itself stays a Python list, as people pass it (a dict
stays a dict, its keys in the order its ``Param`` lists them).
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

#: dtypes a parameter may have; "pyfloat"/"pyint" are Python numbers (a learning rate, ``n``);
#: "list"/"tuple"/"dict" are Python containers whose items are parameters themselves
#: (``Param.items``; a dict's items are named by their keys).
DTYPES = ("float64", "float32", "int64", "bool", "complex128", "pyfloat", "pyint")
CONTAINERS = ("list", "tuple", "dict")


@dataclass(frozen=True, repr=False)
class Param:
    """One parameter of ``f``. A container (``dtype`` "list", "tuple" or "dict") has ``items``,
    each a Param (an array, or a tuple of arrays for a list of ``(W, b)`` pairs, or a dict for
    ``{"l1": {"W": .., "b": ..}}``); its own ``shape`` is ``()`` and means nothing. A list's or
    tuple's items' names are only for messages (``params[0][1]``); a dict's items are named by
    their keys (``"W"``), which the value is made with, in that order."""

    name: str
    shape: tuple[int, ...]
    dtype: str
    positive: bool = False      # values in (0.2, 1.5): a variance, a length, a probability
    items: tuple["Param", ...] = ()

    def __repr__(self) -> str:
        """The dataclass's own repr, ``items`` only where there are some: a program's digest
        hashes its parameters' repr, and those of programs without lists must not change."""
        items = f", items={self.items!r}" if self.items else ""
        return (f"Param(name={self.name!r}, shape={self.shape!r}, dtype={self.dtype!r}, "
                f"positive={self.positive!r}{items})")

    @property
    def is_python(self) -> bool:
        return self.dtype in ("pyfloat", "pyint")

    @property
    def is_float(self) -> bool:
        return self.dtype in ("float64", "float32", "pyfloat")

    @property
    def is_container(self) -> bool:
        return self.dtype in CONTAINERS

    @property
    def is_pairs(self) -> bool:
        """A list of tuples (``[(W1, b1), (W2, b2)]``)."""
        return self.dtype in ("list", "tuple") and any(item.is_container for item in self.items)

    @property
    def is_dict(self) -> bool:
        return self.dtype == "dict"

    def leaves(self) -> list["Param"]:
        """The arrays and numbers this parameter is made of, in order (itself for a leaf)."""
        if not self.is_container:
            return [self]
        return [leaf for item in self.items for leaf in item.leaves()]

    def describe(self) -> str:
        return f"{self.name}: {self.describe_type()}"

    def describe_type(self) -> str:
        if self.is_dict:
            return "{" + ", ".join(f"{item.name!r}: {item.describe_type()}"
                                   for item in self.items) + "}"
        if self.is_container:
            inner = ", ".join(item.describe_type() for item in self.items)
            return f"[{inner}]" if self.dtype == "list" else f"({inner})"
        if self.is_python:
            return self.dtype[2:]
        return f"{self.dtype}{list(self.shape)}"

    def to_spec(self) -> list[Any]:
        """A JSON-able description (``run.py``'s rows), read back by :meth:`from_spec`."""
        spec: list[Any] = [self.name, list(self.shape), self.dtype, self.positive]
        if self.is_container:
            spec.append([item.to_spec() for item in self.items])
        return spec

    @staticmethod
    def from_spec(spec: list[Any]) -> "Param":
        name, shape, dtype, positive = spec[:4]
        items = tuple(Param.from_spec(s) for s in spec[4]) if len(spec) > 4 else ()
        return Param(name, tuple(shape), dtype, positive, items)


def leaf_params(params: tuple[Param, ...] | list[Param]) -> list[Param]:
    """Every array or number among ``params``, containers opened, in order."""
    return [leaf for p in params for leaf in p.leaves()]


def value_leaves(value: Any) -> list[Any]:
    """The arrays and numbers of a value, lists, tuples and dicts opened, in order (a dict's in
    its keys' order: the order its ``Param`` made it in)."""
    if isinstance(value, dict):
        return [leaf for item in value.values() for leaf in value_leaves(item)]
    if isinstance(value, (list, tuple)):
        return [leaf for item in value for leaf in value_leaves(item)]
    return [value]


def rebuild(param: Param, leaves: Any) -> Any:
    """``param``'s structure filled with values taken from the iterator ``leaves``."""
    if not param.is_container:
        return next(leaves)
    if param.is_dict:
        return {item.name: rebuild(item, leaves) for item in param.items}
    items = [rebuild(item, leaves) for item in param.items]
    return items if param.dtype == "list" else tuple(items)


def map_leaves(fn: Any, value: Any) -> Any:
    """``fn`` of each array or number of ``value``, the lists, tuples and dicts kept as they
    are."""
    if isinstance(value, dict):
        return {k: map_leaves(fn, item) for k, item in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(map_leaves(fn, item) for item in value)
    return fn(value)


def numpy_inputs(params: tuple[Param, ...], seed: int) -> list[Any]:
    """The parameters' values as NumPy arrays and Python numbers (float64 in (-1.2, 1.2) unless
    positive; ints in -3..3; complex with both parts so)."""
    rng = np.random.default_rng(seed)
    return [_numpy_value(p, rng) for p in params]


def _numpy_value(p: Param, rng: np.random.Generator) -> Any:
    """One parameter's value (a container's items one after the other, from the same draws)."""
    if p.is_dict:
        return {item.name: _numpy_value(item, rng) for item in p.items}
    if p.is_container:
        items = [_numpy_value(item, rng) for item in p.items]
        return items if p.dtype == "list" else tuple(items)
    lo, hi = (0.2, 1.5) if p.positive else (-1.2, 1.2)
    if p.dtype == "pyfloat":
        return float(round(rng.uniform(lo, hi), 6))
    if p.dtype == "pyint":
        return int(rng.integers(1, 4))
    if p.dtype == "int64":
        low = 1 if p.positive else -3
        return np.asarray(rng.integers(low, 4, size=p.shape), dtype=np.int64)
    if p.dtype == "bool":
        return np.asarray(rng.integers(0, 2, size=p.shape), dtype=bool)
    if p.dtype == "complex128":
        z = rng.uniform(lo, hi, size=p.shape) + 1j * rng.uniform(-1.2, 1.2, size=p.shape)
        return np.asarray(z, dtype=np.complex128)
    return np.asarray(rng.uniform(lo, hi, size=p.shape), dtype=p.dtype)


def setup(framework: str) -> None:
    """What every use of a framework needs first (JAX: 64-bit floats)."""
    if framework == "jax":
        import jax
        jax.config.update("jax_enable_x64", True)
    elif framework == "tensorflow":
        import tensorflow as tf
        tf.get_logger().setLevel("ERROR")


def to_backend(value: Any, framework: str) -> Any:
    """A NumPy value as ``framework``'s array, same dtype; Python numbers stay Python numbers; a
    list, tuple or dict stays one, its items converted."""
    if isinstance(value, dict):
        return {k: to_backend(item, framework) for k, item in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(to_backend(item, framework) for item in value)
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
    """Any framework's value (or a tuple/list/dict of them) as NumPy; Python numbers as 0-d
    arrays."""
    if isinstance(value, dict):
        return {k: to_numpy(v) for k, v in value.items()}
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
    """Copies, so that a program that changes an argument in place starts afresh each call (a
    list argument is a new list of copies: ``params.append`` or ``params[0] *= 2`` in one call
    must not reach the next)."""
    return [_copy(v) for v in values]


def _copy(v: Any) -> Any:
    if isinstance(v, dict):      # (``params["W"] = ...`` in one call must not reach the next)
        return {k: _copy(item) for k, item in v.items()}
    if isinstance(v, (list, tuple)):
        return type(v)(_copy(item) for item in v)
    if isinstance(v, np.ndarray):
        return v.copy()
    if hasattr(v, "clone") and hasattr(v, "detach"):
        return v.detach().clone()
    return v
