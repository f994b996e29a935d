"""Calls gradlab cannot read, differentiated by the framework's own autodiff.

A ``torch.nn.Module``, a ``torch.nn.functional`` function without a rule in the primitive
table, a Flax or Equinox module, a Keras layer, a compiled function, or a callable passed as an
argument: gradlab has no source to transform, but torch, JAX and TensorFlow can differentiate
the call themselves. Such a call stays one visible line of the generated code:

    pred, pred_vjp = gl.vjp_of(model, x)     # forward: the framework records the call
    ...
    dx = pred_vjp(dpred)                       # backward: its vector-Jacobian product

``pred_vjp`` is a value of the forward pass like any other: a loop saves one per step. In
forward mode the tangent is ``gl.jvp_of(model, (x,), (dx,))``. NumPy has no autodiff, so there
the call is refused when it runs (see the backends' ``vjp_of``).

Which callables: an instance or function whose type or module comes from one of the
frameworks whose autodiff gradlab can call (classes are not: ``torch.nn.Linear(3, 2)`` builds a
module), and, decided when the code runs, any callable held in one of the function's own
variables.
"""
from __future__ import annotations

import types
from typing import Any

#: The packages whose callables a framework's autodiff differentiates, and the framework.
_AUTODIFF_ROOTS = {"torch": "torch", "jax": "jax", "jaxlib": "jax", "flax": "jax",
                   "equinox": "jax", "tensorflow": "tensorflow", "keras": "tensorflow",
                   "tf_keras": "tensorflow"}


def _root(module: Any) -> str:
    return (module or "").split(".")[0] if isinstance(module, str) else ""


def is_opaque_callable(obj: Any) -> bool:
    """A framework callable without a rule: a module/layer instance or a framework function
    (not a class, and not NumPy's: NumPy has no autodiff to call)."""
    if obj is None or isinstance(obj, (type, types.ModuleType)) or not callable(obj):
        return False
    if isinstance(obj, (types.FunctionType, types.BuiltinFunctionType, types.MethodType)):
        return _root(getattr(obj, "__module__", None)) in _AUTODIFF_ROOTS
    for cls in type(obj).__mro__:     # a module instance, a jitted or compiled function
        if _root(cls.__module__) in _AUTODIFF_ROOTS:
            return True
    return False


def model_framework(values: Any) -> str | None:
    """The framework of the first model (a module or layer instance: a callable that is no
    plain function) among ``values``, or None: what a run of code that calls it must use."""
    for v in values:
        if callable(v) and not isinstance(v, (type, types.FunctionType,
                                              types.BuiltinFunctionType)):
            for cls in type(v).__mro__:
                name = _AUTODIFF_ROOTS.get(_root(cls.__module__))
                if name is not None:
                    return name
    return None


__all__ = ["is_opaque_callable", "model_framework"]
