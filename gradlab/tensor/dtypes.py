"""Framework-neutral dtypes: ``gradlab.float32`` means the same thing on every backend.

A :class:`DType` is a name; each backend maps it to its own dtype object on demand, so this module
imports no framework.
"""
from __future__ import annotations

from typing import Any


class DType:
    """A neutral dtype, compared and hashed by name (``gradlab.float32 == "float32"`` is True)."""

    __slots__ = ("name", "is_floating", "itemsize")

    def __init__(self, name: str, is_floating: bool, itemsize: int) -> None:
        self.name = name
        self.is_floating = is_floating
        self.itemsize = itemsize

    def __repr__(self) -> str:
        return f"gradlab.{self.name}"

    def __eq__(self, other: object) -> bool:
        if isinstance(other, DType):
            return self.name == other.name
        if isinstance(other, str):
            return self.name == other
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self.name)


float16 = DType("float16", True, 2)
bfloat16 = DType("bfloat16", True, 2)
float32 = DType("float32", True, 4)
float64 = DType("float64", True, 8)
int8 = DType("int8", False, 1)
int16 = DType("int16", False, 2)
int32 = DType("int32", False, 4)
int64 = DType("int64", False, 8)
uint8 = DType("uint8", False, 1)
bool_ = DType("bool", False, 1)
complex64 = DType("complex64", False, 8)
complex128 = DType("complex128", False, 16)

ALL: dict[str, DType] = {d.name: d for d in (float16, bfloat16, float32, float64, int8, int16,
                                              int32, int64, uint8, bool_, complex64, complex128)}


def neutral(dtype: Any) -> DType:
    """The neutral dtype for any framework's dtype object, a neutral dtype, or a name."""
    if isinstance(dtype, DType):
        return dtype
    if isinstance(dtype, str):
        name = dtype
    elif dtype is float:
        name = "float64"
    elif dtype is int:
        name = "int64"
    elif dtype is bool:
        name = "bool"
    else:
        # numpy dtypes and types have .name or __name__; torch.float32 prints 'torch.float32';
        # tf.float32 has .name; jax uses numpy dtypes.
        name = getattr(dtype, "name", None) or getattr(dtype, "__name__", None) or str(dtype)
        name = str(name).rpartition(".")[2]
    if name == "bool_":
        name = "bool"
    try:
        return ALL[name]
    except KeyError:
        raise TypeError(f"unknown dtype {dtype!r}; gradlab knows {', '.join(ALL)}") from None
