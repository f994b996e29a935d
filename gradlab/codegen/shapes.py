"""Which values surely have the same shape, found without knowing any shape (see
:func:`shape_classes`): the rules drop ``unbroadcast`` and ``broadcast_like`` where they can do
nothing, and the optimizer reorders products, with it.
"""
from __future__ import annotations

from typing import Any

import gast

from ..errors import GradlabError
from ..tensor import primitive as kinds
from ..tensor.spec import names_with
from . import ir
from .ir import Assign, OpKind
from .resolve import bindings

#: The shape class of a value known to be a scalar (shape ()).
SCALAR = "()"

SAME_SHAPE_UNARY = names_with(kinds.SAME_SHAPE)
_SAME_SHAPE_UNARY = SAME_SHAPE_UNARY
#: Elementwise on exactly ``x`` and ``y``: the result has their broadcast shape.
BINARY = names_with(kinds.BINARY)
_REDUCTIONS = names_with(kinds.REDUCTION)
_CREATION = names_with(kinds.CREATION)


#: How a variant's key marks a parameter known to hold a 1-d array (``u:ndim=1``): its
#: entries at an integer index (``u[t]``) have shape ``()``.
VECTOR_MARK = ":ndim=1"


#: How a variant's key marks a parameter given a Python list or tuple (``ws:list``): its
#: code reads it as a list (``ws + ws`` joins it, ``np.sum(ws)`` stacks it), not as an array.
LIST_MARK = ":list"


def vector_facts(scalars: Any) -> tuple[set[str], set[str]]:
    """A variant's key split into (parameters holding Python numbers, parameters holding 1-d
    arrays)."""
    vectors = {s[:-len(VECTOR_MARK)] for s in scalars if s.endswith(VECTOR_MARK)}
    return {s for s in scalars if not s.endswith((VECTOR_MARK, LIST_MARK))}, vectors


def list_params(scalars: Any) -> frozenset[str]:
    """The parameters a variant's key marks as given lists or tuples."""
    return frozenset(s[:-len(LIST_MARK)] for s in scalars if s.endswith(LIST_MARK))


def indexed_parameters(fn: ir.Function) -> set[str]:
    """The parameters read at an integer index (``u[t]`` in a ``range`` loop, ``u[0]``): those
    whose rank a variant may know (see :data:`VECTOR_MARK`)."""
    ints = _integer_counters(fn)
    out = set()
    for s in ir.walk(fn.body):
        if isinstance(s, Assign) and s.op.kind is OpKind.PRIM and s.op.prim == "getitem":
            args = bindings(s.op)
            x = args.get("x")
            if isinstance(x, str) and x in fn.params and _integer_index(args.get("index"), ints):
                out.add(x)
    return out


def _integer_counters(fn: ir.Function) -> set[str]:
    """Names written only as the target of a ``range`` loop (every ``for`` is one): ints."""
    targets = {s.target for s in ir.walk(fn.body) if isinstance(s, ir.For)}
    other = {t for s in ir.walk(fn.body) if not isinstance(s, ir.For)
             for t in ir.stmt_writes(s)}
    return targets - other - set(fn.params)


def _integer_index(index: Any, ints: set[str]) -> bool:
    if isinstance(index, gast.Name):
        return index.id in ints
    if isinstance(index, gast.Constant):
        return type(index.value) is int
    if isinstance(index, ir.Const):
        return type(index.value) is int
    if isinstance(index, str):
        return index in ints
    return False


def _deciding_assignments(stmts: list[Assign]) -> tuple[set[tuple[int, str]], dict[str, int]]:
    """The constant assignments that only seed a name's class, and how many assignments
    decide each name's class. ``s = 0.0`` before ``s = s + x[i]``: the constant's shape may not
    be the sum's, but no gradient flows into a constant, so it only seeds the class: the other
    assignments decide it, and only they can make it mixed (a name assigned only constants is
    decided by them)."""
    constant = {(id(s), t) for s in stmts for t in _constant_targets(s)}
    counts: dict[str, int] = {}
    every: dict[str, int] = {}
    for s in stmts:
        for t in s.targets:
            counts[t] = counts.get(t, 0) + ((id(s), t) not in constant)
            every[t] = every.get(t, 0) + 1
    skipped = {(i, t) for i, t in constant if counts[t]}
    return skipped, {t: counts[t] or every[t] for t in counts}


def shape_classes(fn: ir.Function, scalar_params: set[str],
                  vectors: set[str] = frozenset()) -> dict[str, Any]:  # type: ignore[assignment]
    """Which values surely have the same shape, without knowing any shape.

    Each value gets a class: ``SCALAR`` for values known to have shape ``()`` (Python numbers,
    full reductions), otherwise an opaque token shared by values that must have equal shapes
    (``tanh(x)`` has ``x``'s class; ``x * 2.0`` too). Rules use it to drop ``unbroadcast`` and
    ``broadcast_like`` where they can do nothing, which also means fewer values to keep.
    """
    classes: dict[str, Any] = {p: SCALAR if p in scalar_params else f"param:{p}"
                               for p in fn.params}
    for counter in _integer_counters(fn):   # a loop's index, written by nothing else: an int
        classes.setdefault(counter, SCALAR)
    # ``vectors``: parameters holding 1-d arrays (the variant's key says so), never reassigned;
    # an entry of one at an integer index is a scalar
    written = ir.writes_in(fn.body)
    entries = {"vectors": {p for p in vectors if p in fn.params and p not in written},
               "ints": _integer_counters(fn)}
    fresh = iter(range(1 << 30))
    stmts = [s for s in ir.walk(fn.body) if isinstance(s, Assign)]
    skipped, counts = _deciding_assignments(stmts)
    opaque: dict[int, Any] = {id(s): f"v{next(fresh)}" for s in stmts}
    # Each pass follows every statement in order; a value read before the statement that makes
    # it (a loop's next iteration) gets its class a pass later. A chain of such reads is at
    # most as long as the statements, so more passes than that would mean the classes cycle.
    for _ in range(len(stmts) + 2):
        changed = False
        for s in stmts:
            for t, result in zip(s.targets, _target_classes(s, classes, opaque[id(s)],
                                                            entries)):
                if (id(s), t) in skipped:    # a constant seeds the class, never mixes it
                    if t not in classes:
                        classes[t] = result
                        changed = True
                    continue
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
            return classes
    raise GradlabError(f"gradlab could not settle which values of {fn.name} share a shape: "
                       f"please report this function (shape classes did not converge)")


def _constant_targets(s: Assign) -> list[str]:
    """The targets ``s`` gives a value no gradient flows into: ``s = 0.0``, ``h = np.zeros(3)``,
    ``x`` and ``v`` of ``x, v = 1.0, 0.0``."""
    op = s.op
    if op.kind is OpKind.COPY:
        return list(s.targets) if isinstance(op.args[0], ir.Const) else []
    if op.kind is OpKind.TUPLE and len(op.args) == len(s.targets):
        return [t for t, a in zip(s.targets, op.args) if isinstance(a, ir.Const)]
    if op.kind is OpKind.PRIM and op.prim in _CREATION and not any(
            isinstance(a, str) for a in list(op.args) + list(op.kwargs.values())):
        return list(s.targets)
    return []


def _target_classes(s: Assign, classes: dict[str, Any], opaque: Any,
                    entries: dict[str, set[str]]) -> list[Any]:
    """The class each target of ``s`` gets from its operands (``opaque``: the statement's own
    token, for a result whose shape nothing tells)."""
    if len(s.targets) == 1:
        if s.op.kind is OpKind.PRIM and s.op.prim == "getitem":
            args = bindings(s.op)
            x = args.get("x")
            if isinstance(x, str) and x in entries["vectors"] and _integer_index(
                    args.get("index"), entries["ints"]):
                return [SCALAR]    # ``u[t]`` of a 1-d array
        return [_class_of(s, classes, opaque)]
    if s.op.kind in (OpKind.TUPLE, OpKind.LIST) and len(s.op.args) == len(s.targets):
        return [_atom_class(a, classes) or f"{opaque}:{i}" for i, a in enumerate(s.op.args)]
    return [f"{opaque}:{i}" for i in range(len(s.targets))]


def _atom_class(a: Any, classes: dict[str, Any]) -> Any:
    if isinstance(a, ir.Const):
        return SCALAR if isinstance(a.value, (int, float)) and not isinstance(
            a.value, bool) else None
    if isinstance(a, str):
        return classes.get(a)
    if isinstance(a, gast.expr) and _is_shape_number(a):
        return SCALAR
    return None


def _class_of(s: Assign, classes: dict[str, Any], opaque: Any) -> Any:
    op = s.op

    def of(a: Any) -> Any:
        if isinstance(a, ir.Const):
            return SCALAR if isinstance(a.value, (int, float)) and not isinstance(
                a.value, bool) else None
        if isinstance(a, str):
            return classes.get(a)
        if isinstance(a, gast.expr) and _is_shape_number(a):
            return SCALAR      # ``x.shape[0]`` written inline
        return None

    if op.kind is OpKind.COPY:
        return of(op.args[0]) or opaque
    if op.kind is OpKind.STATIC and is_count(op):
        return SCALAR
    if op.kind is not OpKind.PRIM:
        return opaque
    args = bindings(op)
    prim = op.prim
    if prim in _SAME_SHAPE_UNARY:
        return of(args.get("x")) or opaque
    if prim in BINARY:
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


def is_count(op: ir.Op) -> bool:
    """A value kept as written that is a Python int by nature: ``len(x)``, ``x.shape[0]``,
    ``x.ndim`` (dividing by it keeps the other operand's shape: ``np.sum(x) / len(x)`` is a
    scalar)."""
    node = op.node
    if isinstance(node, gast.Call):   # the builtin, as the resolver found it
        return op.source == "len" and isinstance(node.func, gast.Name) and node.func.id == "len"
    return node is not None and _is_shape_number(node)


def _is_shape_number(node: gast.expr) -> bool:
    """``x.ndim`` or ``x.shape[i]`` for a literal ``i``."""
    if isinstance(node, gast.Attribute):
        return node.attr == "ndim"
    return (isinstance(node, gast.Subscript) and isinstance(node.value, gast.Attribute)
            and node.value.attr == "shape" and isinstance(node.slice, gast.Constant)
            and type(node.slice.value) is int)
