"""One dispatch for what a differentiation mode makes of a statement, by the kind of statement
and of operation: reverse mode plans gradient contributions with it, forward mode writes tangent
lines with it. A new kind of operation is one more method here, and the two modes show at a
glance which of them handle it.

The rule of a primitive is applied the same way in both modes (:func:`apply_rule`): its template
parameters bound to the statement's atoms, its gradient or tangent names given by the mode.
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Callable, Generic, TypeVar

import gast

from ..errors import NoRuleError
from . import ir
from .build import index_value, indexes_by_array, name, not_plain_index
from .ir import Assign, EffectKind, OpKind
from .primal import Emitter
from .resolve import bindings
from .rules import NONDIFFERENTIABLE, Instance, Rule, RuleGap, instantiate

R = TypeVar("R")


class StatementRules(Generic[R]):
    """What a mode makes of one statement: :meth:`rules_for` picks the method for the statement's
    kind (for an assignment, its operation's kind). Each method returns :meth:`nothing` unless
    the mode defines it."""

    def rules_for(self, s: ir.Stmt) -> R:
        if isinstance(s, Assign):
            return self.assignment(s)
        if isinstance(s, ir.Effect):
            if s.kind is EffectKind.APPEND:
                return self.append(s)
            if s.kind is EffectKind.LIST_SET:
                return self.list_set(s)
            return self.kept_effect(s)
        return self.nothing(s)

    def assignment(self, s: Assign) -> R:
        """An assignment, by the kind of its operation."""
        return self.operation(s)

    def operation(self, s: Assign) -> R:
        kind = s.op.kind
        if kind is OpKind.PRIM:
            return self.list_item(s) if s.op.prim == "list_getitem" else self.primitive(s)
        if kind is OpKind.COPY:
            return self.copy(s)
        if kind in (OpKind.TUPLE, OpKind.LIST):
            return self.sequence(s)
        if kind is OpKind.USER:
            return self.user_call(s)
        if kind is OpKind.OPAQUE:
            return self.opaque_call(s)
        if kind is OpKind.POP:
            return self.pop(s)
        return self.nothing(s)          # OpKind.STATIC: kept as written, no gradient

    # --- what a mode defines ------------------------------------------------------------------
    def nothing(self, s: ir.Stmt) -> R:
        raise NotImplementedError

    def primitive(self, s: Assign) -> R:
        """``y = prim(...)``: the primitive's rule."""
        return self.nothing(s)

    def list_item(self, s: Assign) -> R:
        """``y = xs[i]`` on a Python list."""
        return self.nothing(s)

    def copy(self, s: Assign) -> R:
        """``y = x`` (or ``y = 2.0``)."""
        return self.nothing(s)

    def sequence(self, s: Assign) -> R:
        """``y = (a, b)``, ``ys = [a, b]``, ``a, b = b, a``."""
        return self.nothing(s)

    def user_call(self, s: Assign) -> R:
        """``y = helper(...)``: the derivative of the user's function, generated too."""
        return self.nothing(s)

    def opaque_call(self, s: Assign) -> R:
        """``y = model(x)``: a call gradlab cannot read, through the framework's autodiff."""
        return self.nothing(s)

    def pop(self, s: Assign) -> R:
        """``y = xs.pop()``."""
        return self.nothing(s)

    def append(self, s: ir.Effect) -> R:
        """``xs.append(v)``."""
        return self.nothing(s)

    def list_set(self, s: ir.Effect) -> R:
        """``xs[i] = v`` on a Python list."""
        return self.nothing(s)

    def kept_effect(self, s: ir.Effect) -> R:
        """A statement kept for its effect (``print``, ``xs.pop()`` alone...)."""
        return self.nothing(s)


def rule_for(table: Mapping[str, Rule], op: ir.Op, missing: str) -> Rule | None:
    """The rule of a primitive operation in ``table``; None for a primitive no gradient flows
    through. ``missing``: the message for a primitive with neither (the name follows it)."""
    rule = table.get(op.prim)
    if rule is None and op.prim not in NONDIFFERENTIABLE:
        raise NoRuleError(missing.format(op.source or op.prim))
    return rule


def apply_rule(rule: Rule, s: Assign, emitter: Emitter, derivative_of: Callable[[str], str],
               fresh: Callable[[str], str], carries: Callable[[str], bool],
               shape_of: Callable[[gast.expr], Any] | None = None,
               counters: set[str] | frozenset[str] = frozenset(),
               arrays: set[str] | frozenset[str] = frozenset()) -> Instance:
    """``rule`` filled in for statement ``s``: its parameters bound to the statement's atoms (an
    index as a value, ``slice(1, None)``), ``derivative_of`` naming adjoints or tangents, and
    contributions only for operands that ``carries`` a gradient and that no invariance froze.
    ``counters`` (the loops', ints) and ``arrays``: what tells an index that may hold an
    array of indices (see :func:`.build.indexes_by_array`), read with ``gl.getitem``."""
    op = s.op
    binding = {rule.params[0]: name(s.targets[0])}
    by_call = False
    for pname, atom in bindings(op).items():
        binding[pname] = emitter.atom(atom)
        if pname == "index":
            binding[pname] = index_value(binding[pname])
            by_call = not_plain_index(binding[pname]) or indexes_by_array(atom, counters,
                                                                          arrays)
    try:
        return instantiate(rule, binding, derivative_of, fresh,
                           lambda e: isinstance(e, gast.Name) and carries(e.id)
                           and e.id not in s.frozen, shape_of,
                           label=str(op.source or op.prim), not_none=op.not_none,
                           index_by_call=by_call)
    except RuleGap as e:
        raise ir.refusal(str(e), s.origin, str(op.source or op.prim)) from None
