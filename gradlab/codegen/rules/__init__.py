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
"""
from __future__ import annotations

import inspect
import textwrap
from dataclasses import dataclass, field
from typing import Any, Callable

import gast

from ...errors import GradlabError
from ...tensor.primitive import BROADCASTING
from ...tensor.spec import NONDIFFERENTIABLE as BY_NATURE
from ...tensor.spec import PRIMITIVES, TABLE
from .. import trees


@dataclass
class Rule:
    """A parsed template. ``params[0]`` is the result; the rest are the primitive's arguments."""

    prim: str
    kind: str                       # 'adjoint' or 'tangent'
    params: list[str]
    defaults: dict[str, Any]
    body: list[gast.stmt]
    source: str
    reads: set[str] = field(default_factory=set)   # parameters whose values the rule uses

    def reads_result(self) -> bool:
        return self.params[0] in self.reads


ADJOINTS: dict[str, Rule] = {}
TANGENTS: dict[str, Rule] = {}
#: Primitives through which no gradient flows: the table's (each with its reason) and the
#: user's own functions marked with ``gradlab.nondifferentiable``.
NONDIFFERENTIABLE: set[str] = set(BY_NATURE)
_custom: dict[int, str] = {}        # id(user function) -> primitive name
_custom_functions: dict[str, Any] = {}


def _parse_template(fn: Callable[..., Any], prim: str, kind: str) -> Rule:
    source = textwrap.dedent(inspect.getsource(fn))
    tree = gast.parse(source).body[0]
    assert isinstance(tree, gast.FunctionDef)
    args = tree.args
    if args.vararg is not None or args.kwarg is not None:
        raise GradlabError(f"rule for {prim!r}: *args/**kwargs are not allowed in a template")
    names = [a.id for a in args.posonlyargs + args.args + args.kwonlyargs]
    sig = inspect.signature(fn)
    defaults = {n: p.default for n, p in sig.parameters.items()
                if p.default is not inspect.Parameter.empty}
    body = [s for s in tree.body if not (isinstance(s, gast.Expr) and
                                         isinstance(s.value, gast.Constant) and
                                         isinstance(s.value.value, str))]
    suffix = "_dot" if kind == "tangent" else ""
    adjoint_names = {_dname(n, kind) for n in names}
    reads = set()
    for node in trees.walk(gast.Module(body=body, type_ignores=[])):
        if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Load) and node.id in names:
            reads.add(node.id)
    _check_template(prim, kind, names, body, adjoint_names, suffix)
    return Rule(prim, kind, names, defaults, body, source, reads)


def _dname(name: str, kind: str) -> str:
    return f"{name}_dot" if kind == "tangent" else f"d{name}"


def _check_template(prim: str, kind: str, names: list[str], body: list[gast.stmt],
                    adjoint_names: set[str], suffix: str) -> None:
    if not names:
        raise GradlabError(f"rule for {prim!r} needs at least the result parameter")
    result_adjoint = _dname(names[0], kind)
    for node in trees.walk(gast.Module(body=body, type_ignores=[])):
        if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Store):
            if kind == "adjoint" and node.id == result_adjoint:
                raise GradlabError(f"rule for {prim!r} assigns {node.id}, the result's adjoint; "
                                   f"a rule only reads it and assigns d<argument>")
            if kind == "tangent" and node.id in adjoint_names and node.id != result_adjoint:
                raise GradlabError(f"tangent rule for {prim!r} assigns {node.id}; it should "
                                   f"assign only {result_adjoint}")


def _register(table: dict[str, Rule], kind: str, prim: str) -> Callable[[Callable[..., Any]], Any]:
    def decorate(fn: Callable[..., Any]) -> Callable[..., Any]:
        table[prim] = _parse_template(fn, prim, kind)
        return fn
    return decorate


def adjoint(prim: str) -> Callable[[Callable[..., Any]], Any]:
    """Register the reverse-mode template of built-in primitive ``prim``."""
    return _register(ADJOINTS, "adjoint", prim)


def tangent(prim: str) -> Callable[[Callable[..., Any]], Any]:
    """Register the forward-mode template of built-in primitive ``prim``."""
    return _register(TANGENTS, "tangent", prim)


# --- user-defined primitives (gradlab.adjoint / gradlab.tangent_rule) --------------------------
def register_custom(fn: Any, template: Callable[..., Any], kind: str) -> None:
    """Make the user's function ``fn`` a primitive with the given template (checked here)."""
    if not callable(fn):
        raise GradlabError(f"@gradlab.{'adjoint' if kind == 'adjoint' else 'tangent_rule'} "
                           f"expects the function the rule is for, got {fn!r}")
    prim = _custom.get(id(fn)) or f"{getattr(fn, '__name__', 'fn')}"
    while prim in _custom_functions and _custom_functions[prim] is not fn:
        prim += "_"
    try:
        parameters = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        raise GradlabError(f"cannot read the signature of {fn!r}") from None
    fn_params = list(parameters)
    required = [n for n, p in parameters.items() if p.default is p.empty and p.kind in (
        p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    rule = _parse_template(template, prim, kind)
    expected = ["<result>"] + (required or fn_params)
    if rule.params[1:] not in (fn_params, required):
        raise GradlabError(
            f"the {kind} rule {template.__name__}{inspect.signature(template)} does not match "
            f"{getattr(fn, '__name__', fn)}{inspect.signature(fn)}: its parameters must be the "
            f"result followed by {', '.join(required or fn_params)} (expected "
            f"{', '.join(expected)})")
    _custom[id(fn)] = prim
    _custom_functions[prim] = fn
    (ADJOINTS if kind == "adjoint" else TANGENTS)[prim] = rule


def register_nondifferentiable(fn: Any) -> None:
    prim = getattr(fn, "__name__", "fn")
    while prim in _custom_functions and _custom_functions[prim] is not fn:
        prim += "_"
    _custom[id(fn)] = prim
    _custom_functions[prim] = fn
    NONDIFFERENTIABLE.add(prim)


def custom_rule_for(obj: Any) -> str | None:
    if obj is None:
        return None
    return _custom.get(id(obj))


def custom_function(prim: str) -> Any:
    return _custom_functions.get(prim)


def custom_signature(prim: str) -> inspect.Signature:
    """The signature calls of a user primitive are bound with: the function's own, or just
    the parameters its rules name (for ufuncs and other functions with many options)."""
    sig = inspect.signature(_custom_functions[prim])
    rule = ADJOINTS.get(prim) or TANGENTS.get(prim)
    if rule is not None and rule.params[1:] != list(sig.parameters):
        sig = sig.replace(parameters=[p for p in sig.parameters.values()
                                      if p.name in rule.params[1:]])
    return sig


def is_custom(prim: str) -> bool:
    return prim in _custom_functions


# --- instantiation -------------------------------------------------------------------------------
@dataclass
class Contribution:
    """``d[target] += expr``: how the generator emits it depends on what is already known."""

    target: str
    expr: gast.expr


@dataclass
class Instance:
    """A rule applied to one statement: temporaries to compute, then contributions."""

    steps: list[Any]            # gast.Assign for temporaries, Contribution for gradients


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
            if func.attr == "unbroadcast" and self.result_shaped and target is not None and (
                    target == self.result_class):
                return node.args[0]
            if func.attr == "broadcast_like" and target == "()":
                return node.args[0]
        return node


def instantiate(rule: Rule, bindings: dict[str, Any], adjoint_of: Callable[[str], str],
                fresh: Callable[[str], str], active: Callable[[Any], bool],
                shape_of: Callable[[gast.expr], Any] | None = None, label: str = ""
                ) -> Instance:
    """Fill ``rule`` with the user's names.

    ``bindings`` maps each template parameter to a gast expression (a Name, a Constant or an
    inline expression). ``adjoint_of(name)`` names the adjoint (or tangent) variable of a user
    variable; ``active(expr)`` tells whether an argument carries a gradient, so contributions
    to inactive arguments are dropped. ``fresh(hint)`` names temporaries. ``shape_of(expr)``
    gives a shape class (see :func:`analyze.shape_classes`): ``unbroadcast`` to an argument of
    the result's class and ``broadcast_like`` to a scalar are dropped.

    A gradient that the rule gives no line for, for an argument that carries one, would be
    a silent zero: that raises :class:`RuleGap` (``label`` names the call in the message).
    """
    params = rule.params
    result = params[0]
    values = {p: bindings.get(p, _const(rule.defaults.get(p))) for p in params}
    literal = {p: v for p, v in values.items() if isinstance(v, gast.Constant)}
    literal.update({p: _const(_literal(v)) for p, v in values.items()
                    if not isinstance(v, gast.Constant) and _literal(v) is not None})
    # an argument that carries a gradient is a value, so ``a_min is None`` is settled
    not_none = {p for p, v in values.items() if p != result and active(v)}
    temps: dict[str, str] = {}
    steps: list[Any] = []
    covered: set[str] = set()

    result_class = shape_of(values[result]) if shape_of is not None else None

    def substitute(expr: gast.expr) -> gast.expr:
        expr = trees.clone(expr)
        expr = _Substituter(values, temps, rule.kind, params, adjoint_of, result,
                            active).visit(expr)
        if shape_of is not None:
            expr = _ShapeSimplifier(shape_of, result_class,
                                    rule.prim in ELEMENTWISE | {"broadcast_to"}).visit(expr)
        return expr

    def run(body: list[gast.stmt]) -> None:
        for stmt in body:
            if isinstance(stmt, gast.Pass):
                continue
            if isinstance(stmt, gast.If):
                try:
                    taken = _static_truth(stmt.test, literal, params, not_none)
                except StaticUnknown:
                    taken = None
                if taken is not None:
                    run(stmt.body if taken else stmt.orelse)
                    continue
                raise RuleGap(
                    f"gradlab's rule for {label or rule.prim} depends on "
                    f"`{_unparse(stmt.test)}`, which is not a literal in this call: write "
                    f"those arguments as literals")
            if not isinstance(stmt, gast.Assign) or len(stmt.targets) != 1 or not isinstance(
                    stmt.targets[0], gast.Name):
                raise GradlabError(f"rule {rule.prim!r}: only simple assignments and ifs on "
                                   f"literal arguments may appear in a template")
            target = stmt.targets[0].id
            param = _param_of(target, params, rule.kind)
            if param is not None:
                actual = values[param]
                covered.add(param)
                if not active(actual):
                    continue
                expr = stmt.value
                if rule.prim in ELEMENTWISE and all(
                        p in literal for p in params[1:] if p != param):
                    expr = _strip_unbroadcast(expr, param)
                steps.append(Contribution(actual.id, _fold(substitute(expr))))
            else:
                temps[target] = fresh(target)
                steps.append(gast.Assign(targets=[gast.Name(temps[target], gast.Store(), None, None)],
                                         value=_fold(substitute(stmt.value)), type_comment=None))

    run(rule.body)
    _require_coverage(rule, values, active, covered, label)
    return Instance(steps)


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
        if target == _dname(p, kind):
            return p
    return None


def _mentioned(expr: gast.expr) -> set[str]:
    return {n.id for n in trees.walk(expr) if isinstance(n, gast.Name)}


def _strip_unbroadcast(expr: gast.expr, param: str) -> gast.expr:
    if (isinstance(expr, gast.Call) and isinstance(expr.func, gast.Attribute)
            and expr.func.attr == "unbroadcast" and len(expr.args) == 2
            and isinstance(expr.args[1], gast.Name) and expr.args[1].id == param):
        return expr.args[0]
    return expr


def _const(value: Any) -> gast.expr:
    return gast.Constant(value=value, kind=None)


def _unparse(node: gast.AST) -> str:
    import ast
    return ast.unparse(gast.gast_to_ast(node))


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
    if not names <= set(literal) | {"None", "True", "False"}:
        raise StaticUnknown
    env = {k: v.value for k, v in literal.items()}
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
            if name == _dname(p, self.kind):
                actual = self.values[p]
                if self.kind == "tangent" and (not isinstance(actual, gast.Name) or (
                        self.active is not None and not self.active(actual))):
                    return _const(0.0)   # the tangent of a constant
                if isinstance(actual, gast.Name):
                    return gast.Name(self.adjoint_of(actual.id), gast.Load(), None, None)
                raise GradlabError(f"a rule reads the adjoint of a literal ({name})")
        return node


def _fold(expr: gast.expr) -> gast.expr:
    """Light algebra on instantiated templates: ``x ** 1`` -> ``x``, ``1.0 * e`` -> ``e``,
    ``2 - 1`` -> ``1``; keeps generated lines as short as the maths."""
    return _Folder().visit(expr)


def _literal(node: gast.AST) -> Any:
    """A number, or a tuple of numbers (``axes`` written ``(1, 0)``), written literally."""
    if isinstance(node, (gast.Tuple, gast.List)):
        items = [_literal(e) for e in node.elts]
        return tuple(items) if all(i is not None for i in items) else None
    return _num(node)


def _num(node: gast.AST) -> Any:
    if isinstance(node, gast.Constant) and isinstance(node.value, (int, float)) and not isinstance(
            node.value, bool):
        return node.value
    if (isinstance(node, gast.UnaryOp) and isinstance(node.op, gast.USub)
            and isinstance(node.operand, gast.Constant)
            and isinstance(node.operand.value, (int, float))):
        return -node.operand.value
    return None


import math as _m

#: Functions linear in the arguments at these positions: a zero there makes the result zero.
LINEAR: dict[str, tuple[int, ...]] = {p.name: p.linear for p in TABLE if p.linear}

_MATH: dict[str, Callable[[Any], Any]] = {"log": _m.log, "exp": _m.exp, "sqrt": _m.sqrt, "sin": _m.sin, "cos": _m.cos,
         "tan": _m.tan, "tanh": _m.tanh, "log1p": _m.log1p, "expm1": _m.expm1,
         "log2": _m.log2, "log10": _m.log10, "sinh": _m.sinh, "cosh": _m.cosh, "abs": abs}

_ARITH = {gast.Add: lambda a, b: a + b, gast.Sub: lambda a, b: a - b,
          gast.Mult: lambda a, b: a * b, gast.Div: lambda a, b: a / b,
          gast.Pow: lambda a, b: a ** b}


class _Folder(gast.NodeTransformer):
    def visit_BinOp(self, node: gast.BinOp) -> gast.expr:
        self.generic_visit(node)
        a, b = _num(node.left), _num(node.right)
        op = node.op
        if a is not None and b is not None and type(op) in _ARITH:
            try:
                value = _ARITH[type(op)](a, b)
            except Exception:
                return node
            if isinstance(value, complex):
                return node
            return _const(value) if value >= 0 else gast.UnaryOp(gast.USub(), _const(-value))
        if isinstance(op, gast.Mult) and (a == 0 or b == 0):
            return _const(0.0)
        if isinstance(op, gast.Div) and a == 0:
            return _const(0.0)
        if isinstance(op, gast.Sub) and a == 0 and b is None:
            return gast.UnaryOp(gast.USub(), node.right)
        if isinstance(op, gast.Pow) and b == 1:
            return node.left
        if isinstance(op, gast.Mult):
            if a == 1:
                return node.right
            if b == 1:
                return node.left
        if isinstance(op, gast.Div) and b == 1:
            return node.left
        if isinstance(op, gast.Add):
            if a == 0:
                return node.right
            if b == 0:
                return node.left
        if isinstance(op, gast.Sub) and b == 0:
            return node.left
        return node

    def visit_Call(self, node: gast.Call) -> gast.expr:
        """``gl.log(2.0)`` -> ``0.693...``: a framework function cannot take a bare number;
        ``gl.sum(0.0)`` -> ``0.0``: a linear function of a zero tangent is zero."""
        self.generic_visit(node)
        _drop_default_keywords(node)
        if isinstance(node.func, gast.Attribute) and node.func.attr in LINEAR:
            slots = LINEAR[node.func.attr]
            if any(i < len(node.args) and _num(node.args[i]) == 0 for i in slots):
                return _const(0.0)
        if (isinstance(node.func, gast.Attribute) and node.func.attr in _MATH
                and len(node.args) == 1 and not node.keywords and _num(node.args[0]) is not None):
            fold = _MATH[node.func.attr]
            try:
                value = fold(_num(node.args[0]))
            except (ValueError, OverflowError):
                return node
            return _const(value) if value >= 0 else gast.UnaryOp(gast.USub(), _const(-value))
        return node

    def visit_UnaryOp(self, node: gast.UnaryOp) -> gast.expr:
        self.generic_visit(node)
        if (isinstance(node.op, gast.USub) and isinstance(node.operand, gast.UnaryOp)
                and isinstance(node.operand.op, gast.USub)):
            return node.operand.operand
        return node


def _drop_default_keywords(node: gast.Call) -> None:
    """``gl.sum(x, axis=None, keepdims=False)`` reads better as ``gl.sum(x)``."""
    if not (isinstance(node.func, gast.Attribute) and isinstance(node.func.value, gast.Name)
            and node.func.value.id == "gl" and node.keywords):
        return
    from ..resolve import signature
    params = signature(node.func.attr).parameters
    kept = []
    for kw in node.keywords:
        param = params.get(kw.arg or "")
        if (param is not None and isinstance(kw.value, gast.Constant)
                and param.default is not param.empty and type(kw.value.value) is type(
                    param.default) and kw.value.value == param.default):
            continue
        kept.append(kw)
    node.keywords = kept


def _load_builtin_rules() -> None:
    from . import forward, reverse  # noqa: F401  (registers templates)


_load_builtin_rules()
