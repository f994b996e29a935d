"""Which values carry a gradient, which are arrays, and refusals that need that knowledge.

*Varied*: depends on an input we differentiate with respect to. *Useful*: the result depends on
it. A value is *active* when both hold; only active statements get backward code, so loop
counters, integer indices and constants never do. *Arrays* are values of the inputs' framework;
a call on plain Python numbers (``np.sqrt(n)``) is kept as written instead of routed through the
tensor layer.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import gast

from ..errors import NoRuleError
from . import ir
from .ir import Assign, Op
from .rules import ADJOINTS, NONDIFFERENTIABLE, TANGENTS

#: Results that are never arrays, whatever their inputs.
INSPECTION = {"shape", "size", "ndim", "dtype", "item", "to_numpy"}
#: Primitives that create arrays of the backend from nothing.
CREATION = {"zeros", "ones", "full", "arange", "linspace", "eye", "array", "one_hot", "uniform",
            "normal"}
#: Static calls that are known to give no gradient (their result is an int, a bool, a string).
_NONDIFF_STATIC = {"len", "range", "int", "bool", "str", "isinstance", "type", "round", "print",
                   "repr", "format", "id", "hash", "callable", "hasattr", "divmod"}


@dataclass
class Activity:
    varied: set[str] = field(default_factory=set)
    useful: set[str] = field(default_factory=set)
    arrays: set[str] = field(default_factory=set)

    def active(self, name: object) -> bool:
        return isinstance(name, str) and name in self.varied and name in self.useful


def differentiable_inputs(s: ir.Stmt) -> set[str]:
    """The names a statement's result can carry a gradient from."""
    if isinstance(s, Assign):
        op = s.op
        if op.kind == "prim":
            if op.prim in NONDIFFERENTIABLE:
                return set()
            from .resolve import bindings
            from .normalize import ARRAY_PARAMS
            from .rules import is_custom
            names: set[str] = set()
            for pname, atom in bindings(op).items():
                if pname in ARRAY_PARAMS or is_custom(op.prim):
                    names |= ir.atom_names(atom) if isinstance(atom, str) else set()
            return names
        if op.kind in ("copy", "tuple", "list", "user", "pop"):
            return {a for a in op.args if isinstance(a, str)}
        return set()
    if isinstance(s, ir.Effect) and s.kind in ("append", "list_set") and isinstance(
            s.value, str):
        return {s.value}
    return set()


def _targets(s: ir.Stmt) -> list[str]:
    if isinstance(s, Assign):
        return s.targets
    if isinstance(s, ir.Effect) and s.kind in ("append", "list_set"):
        return [s.target]
    return []


def analyze(fn: ir.Function, wrt: list[str]) -> Activity:
    act = Activity()
    stmts = list(ir.walk(fn.body))
    act.varied = set(wrt)
    changed = True
    while changed:
        changed = False
        for s in stmts:
            if differentiable_inputs(s) & act.varied:
                for t in _targets(s):
                    if t not in act.varied:
                        act.varied.add(t)
                        changed = True
    act.useful = {fn.result}
    changed = True
    while changed:
        changed = False
        for s in reversed(stmts):
            if set(_targets(s)) & act.useful:
                new = differentiable_inputs(s) - act.useful
                if new:
                    act.useful |= new
                    changed = True
    act.arrays = set(fn.params)
    changed = True
    while changed:
        changed = False
        for s in stmts:
            if not isinstance(s, Assign):
                if isinstance(s, ir.Effect) and s.kind == "append" and s.target not in act.arrays \
                        and ir.atom_names(s.value) & act.arrays:
                    act.arrays.add(s.target)
                    changed = True
                continue
            if _makes_array(s.op, act.arrays):
                for t in s.targets:
                    if t not in act.arrays:
                        act.arrays.add(t)
                        changed = True
    return act


def _makes_array(op: Op, arrays: set[str]) -> bool:
    if op.kind == "prim":
        if op.prim in CREATION:
            return True
        if op.prim in INSPECTION:
            return False
        return bool(ir.op_reads(op) & arrays)
    if op.kind == "static":
        node = op.node
        if isinstance(node, gast.Call) and (op.source or "").split(".")[-1] in _NONDIFF_STATIC:
            return False
        if isinstance(node, (gast.Attribute, gast.Subscript)) and _is_shape_access(node):
            return False
        return bool(ir.op_reads(op) & arrays)
    return bool(ir.op_reads(op) & arrays) or op.kind == "user"


def _is_shape_access(node: gast.expr) -> bool:
    while isinstance(node, gast.Subscript):
        node = node.value
    return isinstance(node, gast.Attribute) and node.attr in ("shape", "ndim", "dtype", "size")


def check(fn: ir.Function, act: Activity, parsed_error: object, mode: str = "reverse") -> None:
    """Refuse what would silently lose or corrupt a gradient."""
    error = parsed_error  # a callable (message, origin, construct) -> Exception
    for s in ir.walk(fn.body):
        if mode == "reverse" and (
                isinstance(s, ir.Effect) and s.kind == "list_set" and s.target in act.varied
                or isinstance(s, Assign) and s.op.kind == "pop" and s.op.args[0] in act.varied):
            raise error("changing a list that carries a gradient (pop, item assignment) "  # type: ignore[operator]
                        "cannot be differentiated in reverse mode: build lists with append",
                        s.origin, "list mutation")
        if isinstance(s, Assign) and s.op.kind == "static":
            reads = ir.op_reads(s.op)
            flows = any(t in act.useful for t in s.targets)
            if not (reads & act.varied) or not flows:
                continue
            node = s.op.node
            if "__unknown__" in s.op.kwargs:
                raise NoRuleError(_no_rule_message(s.op.source, s.origin, s.op.callee))
            if isinstance(node, gast.BoolOp):
                raise error("`and`/`or` between values that carry a gradient cannot be "  # type: ignore[operator]
                            "differentiated: use np.logical_and/np.where or an if", s.origin,
                            "and/or")
            if "__attr__" in s.op.kwargs:
                attr = s.op.kwargs["__attr__"].value  # type: ignore[union-attr]
                raise error(f"gradlab does not know the attribute .{attr} of an array that "  # type: ignore[operator]
                            f"carries a gradient", s.origin, f".{attr}")
        rules = ADJOINTS if mode == "reverse" else TANGENTS
        if isinstance(s, Assign) and s.op.kind == "prim" and s.op.prim not in rules and (
                s.op.prim != "list_getitem") and (
                s.op.prim not in NONDIFFERENTIABLE) and set(s.targets) & act.useful and (
                differentiable_inputs(s) & act.varied):
            raise NoRuleError(_no_rule_message(s.op.source or s.op.prim, s.origin))
        if isinstance(s, ir.Effect) and s.kind == "inplace" and s.target in act.varied:
            raise error(f"an in-place update of {s.target}, an array that carries a gradient, "  # type: ignore[operator]
                        f"cannot be followed: write {s.target} = ... with a new value",
                        s.origin, "in-place update")
    _check_aliasing(fn, act, error)


def _check_aliasing(fn: ir.Function, act: Activity, error: object) -> None:
    """``y = x; x[0] = 1`` changes y in NumPy but not in generated code, which copies: refuse.

    A copy matters if it was made before the write, or anywhere in a loop around the write
    (the next iteration writes after it). gradlab's own copies (branch merges) never alias.
    """
    aliases: dict[str, set[str]] = {}

    def note(s: ir.Stmt) -> None:
        if (isinstance(s, Assign) and s.op.kind == "copy" and isinstance(s.op.args[0], str)
                and s.origin is not None):
            a, b = s.targets[0], s.op.args[0]
            aliases.setdefault(a, set()).add(b)
            aliases.setdefault(b, set()).add(a)

    def visit(stmts: list[ir.Stmt]) -> None:
        for s in stmts:
            if isinstance(s, (ir.For, ir.While)):
                for inner in ir.walk(s.body):
                    note(inner)
            note(s)
            if isinstance(s, Assign) and s.op.kind == "prim" and s.op.prim in (
                    "index_update", "index_add"):
                name = s.op.args[0] if isinstance(s.op.args[0], str) else s.targets[0]
                others = aliases.get(name, set()) - {name}
                if others:
                    other = sorted(others)[0]
                    raise error(  # type: ignore[operator]
                        f"{name}[...] is assigned while {other} refers to the same array; "
                        f"gradlab's code copies instead of changing arrays in place, so write "
                        f"{other} = {name}.copy() first", s.origin, "aliased update")
            for block in ir.children(s):
                visit(block)

    visit(fn.body)


def _no_rule_message(label: object, origin: ir.Origin | None, target: object = None) -> str:
    where = f" (line {origin.lineno}: {origin.text})" if origin else ""
    args = "<its arguments>"
    if target is not None:
        import inspect
        try:
            params = inspect.signature(target).parameters  # type: ignore[arg-type]
            required = [n for n, p in params.items() if p.default is p.empty and p.kind in (
                p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
            args = ", ".join(required) or args
        except (TypeError, ValueError):
            pass
    first = args.split(", ")[0] if args != "<its arguments>" else "<argument>"
    return (f"gradlab has no derivative rule for {label}{where}. Add one with\n"
            f"    @gradlab.adjoint({label})\n"
            f"    def {str(label).split('.')[-1]}_adjoint(result, {args}):\n"
            f"        d{first} = ...  # in terms of dresult\n"
            f"or mark it with gradlab.nondifferentiable({label}) if no gradient flows through it")


# --- shapes ------------------------------------------------------------------------------------------
#: The shape class of a value known to be a scalar (shape ()).
SCALAR = "()"

_SAME_SHAPE_UNARY = set("""abs sign sqrt square exp expm1 log log1p log2 log10 sin cos tan arcsin
arccos arctan sinh cosh tanh arcsinh arccosh arctanh sigmoid softplus relu erf floor ceil round
negative reciprocal copy stop_gradient astype""".split())
_BROADCASTING = {"add", "subtract", "multiply", "divide", "power", "maximum", "minimum",
                 "arctan2"}
_REDUCTIONS = {"sum", "mean", "prod", "max", "min", "logsumexp", "var", "std", "norm"}


def shape_classes(fn: ir.Function, scalar_params: set[str]) -> dict[str, Any]:
    """Which values surely have the same shape, without knowing any shape.

    Each value gets a class: ``SCALAR`` for values known to have shape ``()`` (Python numbers,
    full reductions), otherwise an opaque token shared by values that must have equal shapes
    (``tanh(x)`` has ``x``'s class; ``x * 2.0`` too). Rules use it to drop ``unbroadcast`` and
    ``broadcast_like`` where they can do nothing, which also means fewer values to keep.
    """
    classes: dict[str, Any] = {p: SCALAR if p in scalar_params else f"param:{p}"
                               for p in fn.params}
    fresh = iter(range(1 << 30))
    stmts = [s for s in ir.walk(fn.body) if isinstance(s, Assign)]
    counts: dict[str, int] = {}
    for s in stmts:
        for t in s.targets:
            counts[t] = counts.get(t, 0) + 1
    opaque: dict[int, Any] = {id(s): f"v{next(fresh)}" for s in stmts}
    for _ in range(6):
        changed = False
        for s in stmts:
            if len(s.targets) == 1:
                results = [_class_of(s, classes, opaque[id(s)])]
            elif s.op.kind in ("tuple", "list") and len(s.op.args) == len(s.targets):
                results = [_atom_class(a, classes) or f"{opaque[id(s)]}:{i}"
                           for i, a in enumerate(s.op.args)]
            else:
                results = [f"{opaque[id(s)]}:{i}" for i in range(len(s.targets))]
            for t, result in zip(s.targets, results):
                old = classes.get(t)
                if t in fn.params and old is not None and old != result:
                    new = f"mixed:{t}"
                elif counts[t] > 1 and old is not None and old != result:
                    new = f"mixed:{t}"
                else:
                    new = result
                if old != new and not (str(old).startswith("mixed:")):
                    classes[t] = new
                    changed = True
        if not changed:
            break
    return classes


def _atom_class(a: Any, classes: dict[str, Any]) -> Any:
    if isinstance(a, ir.Const):
        return SCALAR if isinstance(a.value, (int, float)) and not isinstance(
            a.value, bool) else None
    if isinstance(a, str):
        return classes.get(a)
    return None


def _class_of(s: Assign, classes: dict[str, Any], opaque: Any) -> Any:
    op = s.op

    def of(a: Any) -> Any:
        if isinstance(a, ir.Const):
            return SCALAR if isinstance(a.value, (int, float)) and not isinstance(
                a.value, bool) else None
        if isinstance(a, str):
            return classes.get(a)
        return None

    if op.kind == "copy":
        return of(op.args[0]) or opaque
    if op.kind != "prim":
        return opaque
    from .resolve import bindings
    args = bindings(op)
    prim = op.prim
    if prim in _SAME_SHAPE_UNARY:
        return of(args.get("x")) or opaque
    if prim in _BROADCASTING:
        cx, cy = of(args.get("x")), of(args.get("y"))
        if cx is not None and cx == cy:
            return cx
        if cx == SCALAR and cy is not None:
            return cy
        if cy == SCALAR and cx is not None:
            return cx
        return opaque
    if prim in _REDUCTIONS:
        axis, keepdims = args.get("axis"), args.get("keepdims")
        none_axis = axis is None or (isinstance(axis, ir.Const) and axis.value is None)
        no_keep = keepdims is None or (isinstance(keepdims, ir.Const) and not keepdims.value)
        if none_axis and no_keep:
            return SCALAR
        if none_axis and of(args.get("x")) == SCALAR:
            return SCALAR
        return opaque
    if prim in ("matmul", "dot") and of(args.get("x")) == SCALAR == of(args.get("y")):
        return SCALAR
    return opaque
