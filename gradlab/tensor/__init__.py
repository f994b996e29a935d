"""gradlab's unified tensor layer over NumPy, PyTorch, TensorFlow and JAX.

Two ways in:

* ``backend(name)`` — the flat namespace of primitives of one framework, with one signature per
  primitive (``ops.sum(x, axis=None, keepdims=False)``). Generated gradient code calls this.
* ``astensor(x)`` — a chainable, typed ``Tensor`` wrapper (``x.square().sum().sqrt()``) whose
  ``.raw`` is the native value; ``native(t)`` undoes it.

No framework is imported until a value of that framework, or its backend, is asked for.
"""
from __future__ import annotations

from .autodiff import value_and_grad
from .backends import Backend, Registration
from .convert import convert
from .detect import FRAMEWORKS, common_framework, framework_of, require_framework
from .devices import available_devices, device_label, device_of, synchronize
from .dtypes import (DType, bfloat16, bool_, complex64, complex128, float16, float32, float64,
                     int8, int16, int32, int64, uint8)
from .registry import (backend, canonical_name, frameworks, installed_frameworks, is_installed,
                       register, unregister)
from .spec import SIGNATURES
from .tensor import Tensor, astensor, astensors, istensor, native, tensor_class

__all__ = [
    "Backend", "DType", "FRAMEWORKS", "Registration", "SIGNATURES", "Tensor", "astensor",
    "astensors", "available_devices", "backend", "bfloat16", "bool_", "canonical_name",
    "common_framework", "complex128", "complex64", "convert", "device_label", "device_of",
    "float16", "float32", "float64", "framework_of", "frameworks", "installed_frameworks", "int16",
    "int32", "int64", "int8", "is_installed", "istensor", "native", "register",
    "require_framework", "synchronize", "tensor_class", "uint8", "unregister", "value_and_grad",
]
