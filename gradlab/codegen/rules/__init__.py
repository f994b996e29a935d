"""Differentiation rules as data: one readable template per primitive.

A template is an ordinary Python function whose parameters are the primitive's result followed
by its arguments, and whose body says, in the tensor layer's words, how gradients flow:

    @adjoint("tanh")
    def tanh(y, x):
        dx = (1.0 - y * y) * dy

``dx`` is the adjoint of argument ``x``, ``dy`` the adjoint of the result. Templates are never
called: their source is parsed once and instantiated into generated code with the user's names.
Inside a template, an ``if`` on an argument that the call fixes as a literal (``axis is None``)
is decided while instantiating, so generated code only shows the branch that applies.

Forward-mode (tangent) templates use the same style with ``_dot`` for tangents:
``y_dot = (1.0 - y * y) * x_dot``.

The rules live in :mod:`.reverse` (adjoints) and :mod:`.forward` (tangents), written with the
decorators of :mod:`.templates`; :mod:`.custom` registers the user's own primitives;
:mod:`.instantiate` applies a rule to one statement, and :mod:`.fold` simplifies the result.
Functions with no rule of their own that are written out as Python in terms of primitives
(``np.trace``, ``F.gelu``) are in :mod:`.definitions` and :mod:`.activations`.
"""
from __future__ import annotations

from . import forward, reverse  # noqa: F401  (importing them registers the built-in templates)
from . import activations, definitions  # noqa: F401  (... and the functions written out)
from .custom import (custom_function, custom_rule_for, custom_signature, is_custom,
                     register_custom, register_nondifferentiable)
from .fold import LINEAR
from .instantiate import ELEMENTWISE, Contribution, Instance, RuleGap, Step, Temporary, instantiate
from .templates import ADJOINTS, NONDIFFERENTIABLE, TANGENTS, Rule, adjoint, tangent

__all__ = ["ADJOINTS", "TANGENTS", "NONDIFFERENTIABLE", "ELEMENTWISE", "LINEAR", "Rule",
           "Contribution", "Temporary", "Step", "Instance", "RuleGap", "instantiate", "adjoint",
           "tangent", "custom_function", "custom_rule_for", "custom_signature", "is_custom",
           "register_custom", "register_nondifferentiable"]
