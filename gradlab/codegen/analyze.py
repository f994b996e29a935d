"""Which values carry a gradient and which are arrays (the activity analysis).

*Varied*: depends on an input we differentiate with respect to. *Useful*: the result depends on
it. A value is *active* when both hold; only active statements get backward code, so loop
counters, integer indices and constants never do. *Arrays* are values of the inputs' framework;
a call on plain Python numbers (``np.sqrt(n)``) is kept as written instead of routed through the
tensor layer.

What needs this knowledge lives beside it: the refusals (:mod:`.check`), what shares memory in
NumPy (:mod:`.aliasing`) and which values share a shape (:mod:`.shapes`).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

import gast

from ..tensor import primitive as kinds
from ..tensor.spec import FROM_CONSTANTS, PRIMITIVES, STATIC_CALLS, names_with
from ..tensor.spec import NONDIFFERENTIABLE as SPEC_NONDIFFERENTIABLE
from . import ir
from .ir import Assign, EffectKind, Op, OpKind
from .resolve import bindings
from .rules import NONDIFFERENTIABLE, is_custom

#: Results that are never arrays, whatever their inputs.
INSPECTION = names_with(kinds.INSPECTION)
#: Primitives that create arrays of the backend from nothing.
CREATION = names_with(kinds.CREATION)
#: Results that are arrays of the backend whatever their inputs: creations, and casts
#: (``np.asarray(n, np.float64)`` of a Python number is a 0-d array, which must be the
#: backend's own to meet its other arrays).
ARRAY_RESULTS = CREATION | {"astype"}
#: Primitives whose result is an array even where every argument is a number or a list of
#: numbers (``np.stack([1, 2])``, ``np.tile(1.5, 2)``): neither elementwise, nor a reduction,
#: nor an inspection. Spelled with NumPy they are computed by NumPy (see ``primal.py``), then
#: given to the backend as its own array.
ARRAYS_FROM_NUMBERS = frozenset(
    n for n, r in PRIMITIVES.items()
    if not r.kinds & {kinds.UNARY, kinds.BINARY, kinds.BROADCASTING, kinds.REDUCTION,
                      kinds.CREATION, kinds.INSPECTION, kinds.CODEGEN, kinds.HELPER,
                      kinds.GRADIENT_CODE}) - {"getitem", "stop_gradient", "astype"}
#: Calls kept as written that give no gradient (an int, a bool, a string), by the name the user
#: called them with (``len``, ``math.floor``...).
NONDIFF_STATIC = {path.rpartition(".")[2] for path in STATIC_CALLS}


#: Which arguments' memory the result of a call of a user function may share (their positions),
#: given which of its arguments are arrays: ``def first(x): return x[0]`` shares its argument's.
UserAliases = Callable[[Any, tuple[bool, ...]], frozenset[int]]


@dataclass
class Activity:
    """What :func:`analyze` found (see the module's docstring)."""

    varied: set[str] = field(default_factory=set)
    useful: set[str] = field(default_factory=set)
    arrays: set[str] = field(default_factory=set)
    #: names assigned by a primitive or a helper's call, which gradlab may hold as a Python
    #: number where NumPy has a NumPy scalar (``abs`` of a truth value): their ``.size`` and
    #: ``.dtype`` are read by ``gl``
    computed: set[str] = field(default_factory=set)
    #: the loops' counters: ints, which every framework's ``[]`` takes as NumPy's does (an
    #: index naming anything else may be an array of indices: ``rows, cols = np.triu_indices``)
    counters: set[str] = field(default_factory=set)
    #: for calls of user functions (default: the result may share every array argument's memory)
    user_aliases: UserAliases | None = None

    def active(self, name: object) -> bool:
        return isinstance(name, str) and name in self.varied and name in self.useful


def differentiable_inputs(s: ir.Stmt) -> set[str]:
    """The names a statement's result can carry a gradient from."""
    if isinstance(s, Assign):
        op = s.op
        if op.kind is OpKind.PRIM:
            if op.prim in NONDIFFERENTIABLE:
                return set()
            record = PRIMITIVES.get(op.prim)
            names: set[str] = set()
            for pname, atom in bindings(op).items():
                if record is None or is_custom(op.prim) or pname in record.gradient_params:
                    names |= ir.atom_names(atom) if isinstance(atom, str) else set()
            return names - s.frozen.keys()
        if op.kind in (OpKind.COPY, OpKind.TUPLE, OpKind.LIST, OpKind.USER, OpKind.POP):
            return {a for a in op.args if isinstance(a, str)}
        if op.kind is OpKind.OPAQUE:   # its arguments, and the callable (check.py refuses that)
            return ir.op_reads(op) - s.frozen.keys()
        if op.kind is OpKind.STATIC and not static_gives_no_gradient(op):
            # kept as written (a call without a rule, a dict, ``a & b``): whatever its inputs
            # carry is assumed to flow on, so that check() refuses it where it matters
            return value_reads(op.node) - s.frozen.keys()
        return set()
    if isinstance(s, ir.Effect) and s.kind in (EffectKind.APPEND, EffectKind.LIST_SET) and isinstance(
            s.value, str):
        return {s.value}
    return set()


def _targets(s: ir.Stmt) -> list[str]:
    if isinstance(s, Assign):
        return s.targets
    if isinstance(s, ir.Effect) and s.kind in (EffectKind.APPEND, EffectKind.LIST_SET):
        return [s.target]
    return []


#: Whether a call of a user function returns an array, given which of its arguments are arrays.
UserResult = Callable[[Any, tuple[bool, ...]], bool]


def analyze(fn: ir.Function, wrt: list[str], arrays: set[str] | None = None,
            user_result: UserResult | None = None,
            user_aliases: UserAliases | None = None) -> Activity:
    """``arrays``: the parameters that hold arrays (default: all; a helper called with Python
    numbers gets a copy of its own where they stay numbers). ``user_result`` tells whether a
    call of a user function gives an array (default: always); ``user_aliases`` whose memory it
    may share (default: every array argument's)."""
    stmts = list(ir.walk(fn.body))
    start = set(fn.params) if arrays is None else set(arrays)
    # (a helper of the user's returns what its primitives computed: a number too)
    computed = {t for s in stmts if isinstance(s, Assign) and s.op.kind in (
        OpKind.PRIM, OpKind.USER) for t in _targets(s)}
    return Activity(_varied(stmts, set(wrt)), _useful(stmts, fn.result),
                    _arrays(stmts, start, user_result), computed=computed,
                    user_aliases=user_aliases,
                    counters={s.target for s in stmts if isinstance(s, ir.For)})


# Each of the three grows a set of names until it stops growing (a set of the function's
# names: this ends).
def _varied(stmts: list[ir.Stmt], varied: set[str]) -> set[str]:
    """What depends on ``varied``, following the program forward."""
    changed = True
    while changed:
        changed = False
        for s in stmts:
            if differentiable_inputs(s) & varied:
                for t in _targets(s):
                    if t not in varied:
                        varied.add(t)
                        changed = True
    return varied


def _useful(stmts: list[ir.Stmt], result: str) -> set[str]:
    """What ``result`` depends on, following the program backward."""
    useful = {result}
    changed = True
    while changed:
        changed = False
        for s in reversed(stmts):
            if set(_targets(s)) & useful:
                new = differentiable_inputs(s) - useful
                if new:
                    useful |= new
                    changed = True
    return useful


def _arrays(stmts: list[ir.Stmt], arrays: set[str], user_result: UserResult | None) -> set[str]:
    """What holds an array of the backend, starting from the parameters ``arrays``."""
    changed = True
    while changed:
        changed = False
        for s in stmts:
            if not isinstance(s, Assign):
                if isinstance(s, ir.Effect) and s.kind is EffectKind.APPEND and (
                        s.target not in arrays) and ir.atom_names(s.value) & arrays:
                    arrays.add(s.target)
                    changed = True
                continue
            if _makes_array(s.op, arrays, user_result):
                for t in s.targets:
                    if t not in arrays:
                        arrays.add(t)
                        changed = True
    return arrays


def number_params(params: list[str], arrays: set[str] | None) -> set[str]:
    """The parameters of a variant that hold Python numbers (shape ``()``)."""
    return set() if arrays is None else set(params) - arrays


def array_arguments(op: Op, arrays: set[str]) -> tuple[bool, ...]:
    """For a call of a user function: which of its arguments are arrays."""
    return tuple(bool(ir.atom_names(a) & arrays) for a in op.args)


def _makes_array(op: Op, arrays: set[str], user_result: UserResult | None = None) -> bool:
    if op.kind is OpKind.USER and user_result is not None:
        return user_result(op.callee, array_arguments(op, arrays))
    if op.kind is OpKind.PRIM:
        # (np.where of numbers too: NumPy computes it, the backend gets it as its own array,
        # see primal.Emitter._as_written)
        if op.prim in ARRAY_RESULTS or op.prim in ARRAYS_FROM_NUMBERS or op.prim == "where":
            return True
        if op.prim in INSPECTION:
            return False
        return bool(ir.op_reads(op) & arrays)
    if op.kind is OpKind.STATIC:
        node = op.node
        if isinstance(node, gast.Call) and (op.source or "").split(".")[-1] in NONDIFF_STATIC:
            return False
        if isinstance(node, (gast.Attribute, gast.Subscript)) and is_shape_access(node):
            return False
        return bool(ir.op_reads(op) & arrays)
    return bool(ir.op_reads(op) & arrays) or op.kind in (OpKind.USER, OpKind.OPAQUE)


def is_shape_access(node: gast.expr) -> bool:
    while isinstance(node, gast.Subscript):
        node = node.value
    return isinstance(node, gast.Attribute) and node.attr in ("shape", "ndim", "dtype", "size")


#: Primitives no gradient flows through whatever their arguments (``gl.shape(x)``, ``np.sign``).
_BY_NATURE = {name for name, why in SPEC_NONDIFFERENTIABLE.items() if why not in FROM_CONSTANTS}
#: Attributes that tell about an array without reading its values.
_SHAPE_ATTRIBUTES = {"shape", "ndim", "dtype", "size"}
#: torch's methods that count or measure (``x.numel()``, ``x.size(0)``, ``x.dim()``).
_SHAPE_METHODS = {"numel", "nelement", "dim", "ndimension", "size"}
#: Methods whose result carries no gradient by design: what is computed from it reads none.
_STOPPING_METHODS = {"detach"}
#: Methods named as a builtin that gives no gradient, which cast a tensor instead: torch's
#: ``x.type(torch.float64)`` is a float64 copy of ``x``, not the builtin ``type``.
_CASTING_METHODS = {"type"}


def value_reads(node: Any) -> set[str]:
    """The names whose *values* an inline expression computes with: not those it only asks
    for a shape, a length, a truth value or a comparison (``x.shape[0]``, ``len(xs)``,
    ``x > 0``), through which no gradient flows."""
    if isinstance(node, gast.Name):
        return {node.id} if isinstance(node.ctx, gast.Load) else set()
    if isinstance(node, (gast.Constant, gast.Compare, gast.JoinedStr)):
        return set()
    if isinstance(node, gast.UnaryOp) and isinstance(node.op, gast.Not):
        return set()
    if isinstance(node, gast.Attribute):
        return set() if node.attr in _SHAPE_ATTRIBUTES else value_reads(node.value)
    if isinstance(node, gast.Subscript):
        return value_reads(node.value)
    if isinstance(node, gast.IfExp):
        return value_reads(node.body) | value_reads(node.orelse)
    if isinstance(node, gast.Call):
        func = node.func
        callee = func.id if isinstance(func, gast.Name) else (
            func.attr if isinstance(func, gast.Attribute) else "")
        method = isinstance(func, gast.Attribute)
        if callee in NONDIFF_STATIC and not (method and callee in _CASTING_METHODS) or \
                callee in _BY_NATURE or method and callee in _SHAPE_METHODS | _STOPPING_METHODS:
            return set()
        # a method computes with its receiver too (``x.div(2.0)``, a method without a rule:
        # missed, a chain of two such calls passed a gradient through as a constant)
        out: set[str] = value_reads(func.value) if isinstance(func, gast.Attribute) else set()
        for arg in list(node.args) + [k.value for k in node.keywords]:
            out |= value_reads(arg)
        return out
    out = set()
    for child in gast.iter_child_nodes(node):
        if isinstance(child, gast.expr):
            out |= value_reads(child)
    return out


def static_gives_no_gradient(op: Op) -> bool:
    """A kept-as-written computation that is integer-, boolean- or text-valued by nature."""
    node = op.node
    if isinstance(node, gast.Call):
        return (op.source or "").rpartition(".")[2] in NONDIFF_STATIC
    return isinstance(node, (gast.Compare, gast.JoinedStr)) or (
        isinstance(node, gast.UnaryOp) and isinstance(node.op, gast.Not)) or (
        isinstance(node, (gast.Attribute, gast.Subscript)) and is_shape_access(node))
