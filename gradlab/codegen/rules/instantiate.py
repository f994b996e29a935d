"""A rule applied to one statement: the template filled with the user's names.

Template parameters become the call's arguments, ``dx``/``x_dot`` the names of their adjoints or
tangents, temporaries get fresh names; an ``if`` on a literal option is decided here, so the
generated code shows only the branch that applies; contributions to arguments that carry no
gradient are dropped; a rule that gives no gradient where one flows is refused (:class:`RuleGap`).
"""
from __future__ import annotations

import ast
import math
from dataclasses import dataclass
from typing import Any, Callable, Union

import gast

from ...errors import GradlabError
from ...tensor.primitive import BROADCASTING
from ...tensor.spec import PRIMITIVES, TABLE
from .. import trees
from ..build import index_value
from .fold import constant, fold, literal_value
from .templates import Rule, derivative_name


@dataclass
class Contribution:
    """``d[target] += expr``: how the generator emits it depends on what is already known."""

    target: str
    expr: gast.expr


@dataclass
class Temporary:
    """``t = expr``: a value a rule computes once and reads in its contributions."""

    stmt: gast.Assign


#: What a rule applied to a statement computes, in the template's order.
Step = Union[Temporary, Contribution]


@dataclass
class Instance:
    """A rule applied to one statement: temporaries to compute, then contributions."""

    steps: list[Step]


#: Elementwise primitives that broadcast their operands: when every other operand is a
#: literal number, an argument's gradient needs no ``unbroadcast`` (a scalar literal cannot
#: have broadcast it).
ELEMENTWISE = {p.name for p in TABLE if BROADCASTING in p.kinds and p.differentiable}


class StaticUnknown(Exception):
    pass


class _ShapeSimplifier(gast.NodeTransformer):
    """Drops ``gl.unbroadcast(g, a)`` when ``a`` has the result's shape (only for rules whose
    ``g`` has the result's shape) and ``gl.broadcast_like(g, x)`` when ``x`` is a scalar."""

    def __init__(self, shape_of: Callable[[gast.expr], Any], result_class: Any,
                 result_shaped: bool) -> None:
        self.shape_of = shape_of
        self.result_class = result_class
        self.result_shaped = result_shaped

    def visit_Call(self, node: gast.Call) -> gast.expr:
        self.generic_visit(node)
        func = node.func
        if isinstance(func, gast.Attribute) and len(node.args) == 2:
            target = self.shape_of(node.args[1])
            # a name assigned values of different shapes (``h = h * v`` in a loop, growing
            # from x's shape) has no one shape: its class equals nothing, itself included
            if func.attr == "unbroadcast" and self.result_shaped and target is not None and (
                    target == self.result_class) and not str(target).startswith("mixed:"):
                return node.args[0]
            if func.attr == "broadcast_like" and target == "()":
                return node.args[0]
        return node


class _IndexByCall(gast.NodeTransformer):
    """``dy[index]`` as ``gl.getitem(dy, index)``: TensorFlow's ``[]`` reads ``[[0, 2]]`` as
    ``[0, 2]`` and takes no array of indices, JAX's no list; the layer's getitem indexes as
    NumPy does on every backend."""

    def visit_Subscript(self, node: gast.Subscript) -> gast.expr:
        self.generic_visit(node)
        func = gast.Attribute(value=gast.Name("gl", gast.Load(), None, None), attr="getitem",
                              ctx=gast.Load())
        # (an index inside the index, arange(n)[:, None], is a value there: slice(None))
        return gast.Call(func=func, args=[node.value, index_value(node.slice)], keywords=[])


class _WrittenOnce(gast.NodeTransformer):
    """``gl.index_written(dy, index)`` as ``dy[index]`` where the index holds no array of
    indices (ints, slices, a loop's counter): it cannot name an entry twice."""

    def visit_Call(self, node: gast.Call) -> gast.expr:
        self.generic_visit(node)
        func = node.func
        if isinstance(func, gast.Attribute) and func.attr == "index_written" and isinstance(
                func.value, gast.Name) and func.value.id == "gl" and len(node.args) == 2:
            return gast.Subscript(value=node.args[0], slice=node.args[1], ctx=gast.Load())
        return node


def instantiate(rule: Rule, bindings: dict[str, Any], adjoint_of: Callable[[str], str],
                fresh: Callable[[str], str], active: Callable[[Any], bool],
                shape_of: Callable[[gast.expr], Any] | None = None, label: str = "",
                not_none: frozenset[str] = frozenset(), index_by_call: bool = False
                ) -> Instance:
    """Fill ``rule`` with the user's names.

    ``bindings`` maps each template parameter to a gast expression (a Name, a Constant or an
    inline expression). ``adjoint_of(name)`` names the adjoint (or tangent) variable of a user
    variable; ``active(expr)`` tells whether an argument carries a gradient, so contributions
    to inactive arguments are dropped. ``fresh(hint)`` names temporaries. ``shape_of(expr)``
    gives a shape class (see :func:`..shapes.shape_classes`): ``unbroadcast`` to an argument of
    the result's class and ``broadcast_like`` to a scalar are dropped.

    A gradient that the rule gives no line for, for an argument that carries one, would be
    a silent zero: that raises :class:`RuleGap` (``label`` names the call in the message).
    ``not_none``: parameters given variables that the call knows are not None;
    ``index_by_call``: the call's index is one that some framework's ``[]`` reads otherwise
    than NumPy (a list, an array of indices): the rule's ``dy[index]`` is ``gl.getitem``.
    """
    filled = _Filling(rule, bindings, adjoint_of, fresh, active, shape_of, label)
    filled.not_none |= not_none
    filled.index_by_call = index_by_call
    filled.run(rule.body)
    _require_coverage(rule, filled.values, active, filled.covered, label)
    return Instance(filled.steps)


class _Filling:
    """One rule being filled in for one call (see :func:`instantiate`)."""

    def __init__(self, rule: Rule, bindings: dict[str, Any], adjoint_of: Callable[[str], str],
                 fresh: Callable[[str], str], active: Callable[[Any], bool],
                 shape_of: Callable[[gast.expr], Any] | None, label: str) -> None:
        self.rule = rule
        self.adjoint_of = adjoint_of
        self.fresh = fresh
        self.active = active
        self.shape_of = shape_of
        self.label = label
        params = rule.params
        self.result = params[0]
        self.values = {p: bindings.get(p, constant(rule.defaults.get(p))) for p in params}
        self.literal = {p: v for p, v in self.values.items() if isinstance(v, gast.Constant)}
        self.literal.update({p: constant(literal_value(v)) for p, v in self.values.items()
                             if not isinstance(v, gast.Constant) and literal_value(v) is not None})
        # an argument that carries a gradient is a value, so ``a_min is None`` is settled; so
        # is a variable given for a value parameter (np.clip(x, lo, hi): a bound left open is
        # written None, literally)
        record = PRIMITIVES.get(rule.prim)
        values_given = {p for p, v in self.values.items() if record is not None and p in
                        record.arrays and isinstance(v, gast.Name)}
        self.not_none = {p for p, v in self.values.items() if p != self.result and active(v)} | (
            values_given - {self.result})
        self.temps: dict[str, str] = {}
        self.steps: list[Step] = []
        self.covered: set[str] = set()
        self.result_class = shape_of(self.values[self.result]) if shape_of is not None else None
        self.index_by_call = False

    def substitute(self, expr: gast.expr) -> gast.expr:
        rule = self.rule
        expr = trees.clone(expr)
        expr = _Substituter(self.values, self.temps, rule.kind, rule.params, self.adjoint_of,
                            self.result, self.active).visit(expr)
        if self.shape_of is not None:
            expr = _ShapeSimplifier(self.shape_of, self.result_class,
                                    rule.prim in ELEMENTWISE | {"broadcast_to"}).visit(expr)
        if self.index_by_call:
            expr = _IndexByCall().visit(expr)
        else:
            expr = _WrittenOnce().visit(expr)
        return expr

    def run(self, body: list[gast.stmt]) -> None:
        for stmt in body:
            if isinstance(stmt, gast.Pass):
                continue
            if isinstance(stmt, gast.If):
                self.run(self._branch_taken(stmt))
                continue
            if not isinstance(stmt, gast.Assign) or len(stmt.targets) != 1 or not isinstance(
                    stmt.targets[0], gast.Name):
                raise GradlabError(f"rule {self.rule.prim!r}: only simple assignments and ifs "
                                   f"on literal arguments may appear in a template")
            self._assignment(stmt.targets[0].id, stmt.value)

    def _branch_taken(self, stmt: gast.If) -> list[gast.stmt]:
        """The branch of a template's ``if`` that this call's literal options take."""
        try:
            taken = _static_truth(stmt.test, self.literal, self.rule.params, self.not_none)
        except StaticUnknown:
            raise RuleGap(
                f"gradlab's rule for {self.label or self.rule.prim} depends on "
                f"`{_unparse(stmt.test)}`, which is not a literal in this call: write "
                f"those arguments as literals") from None
        return stmt.body if taken else stmt.orelse

    def _assignment(self, target: str, value: gast.expr) -> None:
        """``dx = ...`` (a contribution, kept if ``x`` carries a gradient) or ``t = ...`` (a
        temporary, under a fresh name). A temporary named after the result (``y_or_1``) takes
        the result's own name (``std_x_or_1``), which a reader of the generated code knows."""
        rule = self.rule
        param = _param_of(target, rule.params, rule.kind)
        if param is None:
            result = self.values[self.result]
            hint = target
            if target.startswith(self.result + "_") and isinstance(result, gast.Name):
                hint = result.id + target[len(self.result):]
            self.temps[target] = self.fresh(hint)
            self.steps.append(Temporary(gast.Assign(
                targets=[gast.Name(self.temps[target], gast.Store(), None, None)],
                value=fold(self.substitute(value)), type_comment=None)))
            return
        actual = self.values[param]
        self.covered.add(param)
        if not self.active(actual):
            return
        if rule.prim in ELEMENTWISE and all(
                p in self.literal for p in rule.params[1:] if p != param):
            value = _strip_unbroadcast(value, param)
        self.steps.append(Contribution(actual.id, fold(self.substitute(value))))


class RuleGap(GradlabError):
    """A rule that gives no gradient for an argument that carries one, for this call's
    options (``np.linalg.norm(x, 3)``): refused instead of a silent zero."""


def _require_coverage(rule: Rule, values: dict[str, Any], active: Callable[[Any], bool],
                      covered: set[str], label: str) -> None:
    record = PRIMITIVES.get(rule.prim)
    carrying = [p for p in rule.params[1:]
                if (record is None or p in record.gradient_params) and active(values[p])]
    if rule.kind == "adjoint":
        missing = [p for p in carrying if p not in covered]
    else:
        missing = carrying if carrying and rule.params[0] not in covered else []
    if not missing:
        return
    options = ", ".join(f"{p}={_unparse(v)}" for p, v in values.items()
                        if p not in rule.params[:1] and isinstance(v, gast.Constant))
    what = label or rule.prim
    mode = "reverse" if rule.kind == "adjoint" else "forward"
    raise RuleGap(f"gradlab's {mode}-mode rule for {what} gives no gradient for "
                  f"{', '.join(missing)} {'with ' + options if options else 'here'}: "
                  f"this case is not supported")


def _param_of(target: str, params: list[str], kind: str) -> str | None:
    for p in params[1:] if kind == "adjoint" else params[:1]:
        if target == derivative_name(p, kind):
            return p
    return None


def _strip_unbroadcast(expr: gast.expr, param: str) -> gast.expr:
    if (isinstance(expr, gast.Call) and isinstance(expr.func, gast.Attribute)
            and expr.func.attr == "unbroadcast" and len(expr.args) == 2
            and isinstance(expr.args[1], gast.Name) and expr.args[1].id == param):
        return expr.args[0]
    return expr


def _unparse(node: gast.AST) -> str:
    return ast.unparse(gast.gast_to_ast(node))


def tested_for_none(rule: Rule) -> set[str]:
    """The parameters a template's ``if`` compares with None (``axis is None``)."""
    return {n.left.id for stmt in rule.body for n in trees.walk(stmt)
            if isinstance(n, gast.Compare) and isinstance(n.left, gast.Name)
            and len(n.ops) == 1 and isinstance(n.ops[0], (gast.Is, gast.IsNot))
            and isinstance(n.comparators[0], gast.Constant) and n.comparators[0].value is None}


def _static_truth(test: gast.expr, literal: dict[str, gast.Constant], params: list[str],
                  not_none: set[str] = frozenset()) -> bool:  # type: ignore[assignment]
    """Evaluate a template condition over literal arguments, or raise StaticUnknown.
    ``or``/``and`` are decided by one literal operand when it settles them (``axis is None or
    keepdims`` with no axis, whatever ``keepdims`` is)."""
    if (isinstance(test, gast.Compare) and isinstance(test.left, gast.Name)
            and test.left.id in not_none and len(test.ops) == 1
            and isinstance(test.ops[0], (gast.Is, gast.IsNot))
            and isinstance(test.comparators[0], gast.Constant)
            and test.comparators[0].value is None):
        return isinstance(test.ops[0], gast.IsNot)
    if isinstance(test, gast.BoolOp):
        settles = isinstance(test.op, gast.Or)
        unknown = False
        for operand in test.values:
            try:
                if _static_truth(operand, literal, params, not_none) == settles:
                    return settles
            except StaticUnknown:
                unknown = True
        if unknown:
            raise StaticUnknown
        return not settles
    names = {n.id for n in trees.walk(test) if isinstance(n, gast.Name)}
    if not names <= set(literal) | {"None", "True", "False", "inf"}:
        raise StaticUnknown
    env = {"inf": math.inf, **{k: v.value for k, v in literal.items()}}
    code = compile(gast.gast_to_ast(gast.Expression(body=test)), "<rule>", "eval")
    return bool(eval(code, {"__builtins__": {}}, env))


class _Substituter(gast.NodeTransformer):
    def __init__(self, values: dict[str, Any], temps: dict[str, str], kind: str,
                 params: list[str], adjoint_of: Callable[[str], str], result: str,
                 active: Callable[[Any], bool] | None = None) -> None:
        self.active = active
        self.values = values
        self.temps = temps
        self.kind = kind
        self.params = params
        self.adjoint_of = adjoint_of
        self.result = result

    def visit_Name(self, node: gast.Name) -> gast.expr:
        name = node.id
        if name in self.temps:
            return gast.Name(self.temps[name], node.ctx, None, None)
        if name in self.values:
            return trees.clone(self.values[name])
        for p in self.params:
            if name == derivative_name(p, self.kind):
                actual = self.values[p]
                if self.kind == "tangent" and (not isinstance(actual, gast.Name) or (
                        self.active is not None and not self.active(actual))):
                    return constant(0.0)   # the tangent of a constant
                if isinstance(actual, gast.Name):
                    return gast.Name(self.adjoint_of(actual.id), gast.Load(), None, None)
                raise GradlabError(f"a rule reads the adjoint of a literal ({name})")
        return node
