"""Calls gradlab cannot read, differentiated by the framework's own autodiff.

A ``torch.nn.Module``, a Flax or Equinox module, a Keras layer, a jitted or compiled function,
or a callable passed as an argument: gradlab has no source to transform, but torch, JAX and
TensorFlow can differentiate the call themselves. Such a call stays one visible line of the
generated code:

    pred, pred_vjp = gl.vjp_of(model, x)     # forward: the framework records the call
    ...
    dx = pred_vjp(dpred)                       # backward: its vector-Jacobian product

``pred_vjp`` is a value of the forward pass like any other: a loop saves one per step. In
forward mode the tangent is ``gl.jvp_of(model, (x,), (dx,))``. NumPy has no autodiff, so there
the call is refused when it runs (see the backends' ``vjp_of``).

Which callables: see :func:`is_opaque_callable`, and, decided when the code runs, any callable
held in one of the function's own variables. The backends refuse a callable of another
framework than the arrays' (a TensorFlow function given torch tensors).
"""
from __future__ import annotations

import types
from typing import Any

from ..tensor.detect import callable_framework


def is_opaque_callable(obj: Any) -> bool:
    """A framework object gradlab cannot read: a module or layer instance, a jitted or compiled
    function (not a class, which builds one). A plain framework function without a rule
    (``tf.nn.max_pool``) is not: it is a primitive, which gradlab writes out as readable code
    once it has a rule of its own, and stays refused until then. A callable passed as an
    argument is the user's choice and runs opaque (see resolve)."""
    if obj is None or isinstance(obj, (type, types.ModuleType, types.FunctionType,
                                       types.BuiltinFunctionType, types.MethodType)):
        return False
    return callable(obj) and callable_framework(obj) is not None


#: Modules whose functions without a rule of gradlab's run opaque, through the framework's own
#: autodiff: torch's layers (``F.layer_norm``, ``F.conv2d``...), as a ``torch.nn.Module`` of
#: them would. Elsewhere such a function is refused (TensorFlow's ``tf.nn.max_pool`` through a
#: tape gave a gradient the peer suite's finite differences do not: refused, not guessed).
OPAQUE_FUNCTION_MODULES = ("torch.nn.functional.",)


def framework_function_without_rule(path: str, target: Any) -> bool:
    """A function of :data:`OPAQUE_FUNCTION_MODULES` (``path``: its dotted name, as resolved)
    that gradlab has no rule for."""
    return callable(target) and not isinstance(target, type) and path.startswith(
        OPAQUE_FUNCTION_MODULES)


def model_framework(values: Any) -> str | None:
    """The framework of the first model (a module or layer instance) among ``values``, or
    None: what a run of code that calls it must use."""
    for v in values:
        if is_opaque_callable(v):
            return callable_framework(v)
    return None


__all__ = ["framework_function_without_rule", "is_opaque_callable", "model_framework"]
