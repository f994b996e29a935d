"""Which values carry a gradient, which are arrays, and refusals that need that knowledge.

*Varied*: depends on an input we differentiate with respect to. *Useful*: the result depends on
it. A value is *active* when both hold; only active statements get backward code, so loop
counters, integer indices and constants never do. *Arrays* are values of the inputs' framework;
a call on plain Python numbers (``np.sqrt(n)``) is kept as written instead of routed through the
tensor layer.
"""
from __future__ import annotations

import ast
import inspect
from dataclasses import dataclass, field
from typing import Any, Callable

import gast

from ..errors import NoRuleError
from ..tensor import primitive as kinds
from ..tensor.spec import FROM_CONSTANTS, PRIMITIVES, STATIC_CALLS, names_with
from ..tensor.spec import NONDIFFERENTIABLE as SPEC_NONDIFFERENTIABLE
from . import ir, trees
from .ir import Assign, EffectKind, Op, OpKind
from .resolve import bindings
from .rules import ADJOINTS, NONDIFFERENTIABLE, TANGENTS, is_custom

#: Results that are never arrays, whatever their inputs.
INSPECTION = names_with(kinds.INSPECTION)
#: Primitives that create arrays of the backend from nothing.
CREATION = names_with(kinds.CREATION)
#: Calls kept as written that give no gradient (an int, a bool, a string), by the name the user
#: called them with (``len``, ``math.floor``...).
_NONDIFF_STATIC = {path.rpartition(".")[2] for path in STATIC_CALLS}


#: Which arguments' memory the result of a call of a user function may share (their positions),
#: given which of its arguments are arrays: ``def first(x): return x[0]`` shares its argument's.
UserAliases = Callable[[Any, tuple[bool, ...]], frozenset[int]]


@dataclass
class Activity:
    varied: set[str] = field(default_factory=set)
    useful: set[str] = field(default_factory=set)
    arrays: set[str] = field(default_factory=set)
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
    act = Activity(user_aliases=user_aliases)
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
    act.arrays = set(fn.params) if arrays is None else set(arrays)
    changed = True
    while changed:
        changed = False
        for s in stmts:
            if not isinstance(s, Assign):
                if isinstance(s, ir.Effect) and s.kind is EffectKind.APPEND and s.target not in act.arrays \
                        and ir.atom_names(s.value) & act.arrays:
                    act.arrays.add(s.target)
                    changed = True
                continue
            if _makes_array(s.op, act.arrays, user_result):
                for t in s.targets:
                    if t not in act.arrays:
                        act.arrays.add(t)
                        changed = True
    return act


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
        if op.prim in CREATION:
            return True
        if op.prim in INSPECTION:
            return False
        return bool(ir.op_reads(op) & arrays)
    if op.kind is OpKind.STATIC:
        node = op.node
        if isinstance(node, gast.Call) and (op.source or "").split(".")[-1] in _NONDIFF_STATIC:
            return False
        if isinstance(node, (gast.Attribute, gast.Subscript)) and _is_shape_access(node):
            return False
        return bool(ir.op_reads(op) & arrays)
    return bool(ir.op_reads(op) & arrays) or op.kind is OpKind.USER


def _is_shape_access(node: gast.expr) -> bool:
    while isinstance(node, gast.Subscript):
        node = node.value
    return isinstance(node, gast.Attribute) and node.attr in ("shape", "ndim", "dtype", "size")


def check(fn: ir.Function, act: Activity, mode: str = "reverse",
          helper: bool = False, generated: bool = False) -> None:
    """Refuse what would silently lose or corrupt a gradient. ``helper``: ``fn`` is called by
    the user's other code, which may read its arguments after the call. ``generated``: ``fn``
    is gradlab's own gradient code (``hvp`` differentiates it): it changes no array in place
    (``gl.index_update`` returns a new array, its stacks hold values no one writes into), so
    the aliasing check, which guards against NumPy's in-place semantics in the user's code
    (checked when that gradient was generated), has nothing to find there."""
    error = ir.refusal
    for s in ir.walk(fn.body):
        if mode == "reverse" and (
                isinstance(s, ir.Effect) and s.kind is EffectKind.LIST_SET and s.target in act.varied
                or isinstance(s, Assign) and s.op.kind is OpKind.POP and s.op.args[0] in act.varied
                or ir.popped_list(s) in act.varied):
            raise error("changing a list that carries a gradient (pop, item assignment) "  # type: ignore[operator]
                        "cannot be differentiated in reverse mode: build lists with append",
                        s.origin, "list mutation")
        if isinstance(s, Assign) and s.op.kind is OpKind.STATIC:
            reads = ir.op_reads(s.op)
            flows = any(t in act.useful for t in s.targets)
            if not (reads & act.varied) or not flows:
                continue
            node = s.op.node
            if s.op.unknown:
                raise NoRuleError(_no_rule_message(s.op.source, s.origin, s.op.callee))
            if isinstance(node, gast.BoolOp):
                raise error("`and`/`or` between values that carry a gradient cannot be "  # type: ignore[operator]
                            "differentiated: use np.logical_and/np.where or an if", s.origin,
                            "and/or")
            if s.op.attribute:
                attr = s.op.attribute
                raise error(f"gradlab does not know the attribute .{attr} of an array that "  # type: ignore[operator]
                            f"carries a gradient", s.origin, f".{attr}")
            flowing = sorted(value_reads(node) & act.varied)
            if flowing and not _gives_no_gradient(s.op):
                what = _describe(node)
                raise error(f"{what} is built from {flowing[0]}, which carries a gradient, but "  # type: ignore[operator]
                            f"gradlab cannot differentiate through {what}: "
                            f"{_ADVICE.get(type(node), 'compute it with NumPy functions')}",
                            s.origin, what)
        if isinstance(s, Assign) and s.op.kind is OpKind.PRIM and set(s.targets) & act.useful:
            _check_options(s, act, error)
        rules = ADJOINTS if mode == "reverse" else TANGENTS
        if isinstance(s, Assign) and s.op.kind is OpKind.PRIM and s.op.prim not in rules and (
                s.op.prim != "list_getitem") and (
                s.op.prim not in NONDIFFERENTIABLE) and set(s.targets) & act.useful and (
                differentiable_inputs(s) & act.varied):
            raise NoRuleError(_no_rule_message(s.op.source or s.op.prim, s.origin))
        if isinstance(s, ir.Effect) and s.call and s.node is not None and (
                ir.atom_names(s.node) & (act.varied | act.arrays)):
            raise error(f"{s.call}(...) on a line of its own can only matter by changing its "  # type: ignore[operator]
                        f"arguments in place, which gradlab cannot follow (its code makes new "
                        f"arrays instead of changing old ones): assign a result instead",
                        s.origin, "in-place update")
        if isinstance(s, ir.Effect) and s.kind is EffectKind.INPLACE and s.target in act.varied:
            raise error(f"an in-place update of {s.target}, an array that carries a gradient, "  # type: ignore[operator]
                        f"cannot be followed: write {s.target} = ... with a new value",
                        s.origin, "in-place update")
    if not generated:
        _check_aliasing(fn, act, error, helper)


#: Primitives no gradient flows through whatever their arguments (``gl.shape(x)``, ``np.sign``).
_BY_NATURE = {name for name, why in SPEC_NONDIFFERENTIABLE.items() if why not in FROM_CONSTANTS}
#: Attributes that tell about an array without reading its values.
_SHAPE_ATTRIBUTES = {"shape", "ndim", "dtype", "size"}


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
        if callee in _NONDIFF_STATIC or callee in _BY_NATURE:
            return set()
        out: set[str] = set()
        for arg in list(node.args) + [k.value for k in node.keywords]:
            out |= value_reads(arg)
        return out
    out = set()
    for child in gast.iter_child_nodes(node):
        if isinstance(child, gast.expr):
            out |= value_reads(child)
    return out


def _gives_no_gradient(op: Op) -> bool:
    """A kept-as-written computation that is integer-, boolean- or text-valued by nature."""
    node = op.node
    if isinstance(node, gast.Call):
        return (op.source or "").rpartition(".")[2] in _NONDIFF_STATIC
    return isinstance(node, (gast.Compare, gast.JoinedStr)) or (
        isinstance(node, gast.UnaryOp) and isinstance(node.op, gast.Not)) or (
        isinstance(node, (gast.Attribute, gast.Subscript)) and _is_shape_access(node))


def _describe(node: Any) -> str:
    if isinstance(node, gast.Dict):
        return "a dict"
    try:
        text = ast.unparse(gast.gast_to_ast(node))
    except Exception:  # pragma: no cover - best effort for messages
        text = type(node).__name__
    return f"`{text}`" if len(text) <= 40 else f"`{text[:37]}...`"


_ADVICE: dict[type, str] = {
    gast.Dict: "keep the arrays in variables of their own (or pass them as separate "
               "arguments)",
    gast.BinOp: "this operator has no derivative rule; write it with NumPy functions",
    gast.UnaryOp: "this operator has no derivative rule; write it with NumPy functions",
}


def _check_options(s: Assign, act: Activity, error: Any) -> None:
    """A value that carries a gradient may only reach a primitive through a parameter the
    gradient flows back through: ``np.full((3,), x)``'s fill value does, ``np.linspace(0, x)``'s
    end does not (gradlab would treat it as a constant), nor does an inline expression gradlab
    kept as written (``np.exp(a & b)``)."""
    op = s.op
    record = PRIMITIVES.get(op.prim)
    constants_only = record is not None and record.nondifferentiable in FROM_CONSTANTS
    if op.prim in NONDIFFERENTIABLE and not constants_only:
        return
    through = set(record.gradient_params) if record is not None and not is_custom(op.prim) \
        else None
    for pname, atom in bindings(op).items():
        if isinstance(atom, (str, ir.Const)) and (through is None or pname in through or
                                                  not isinstance(atom, str)):
            continue
        if record is not None and pname in record.no_gradient:
            continue     # only its shape, dtype or truth value matters
        names = {atom} if isinstance(atom, str) else value_reads(atom)
        flowing = sorted(names & act.varied - set(s.frozen))
        if not flowing:
            continue
        label = op.source or op.prim
        if constants_only:
            raise error(f"{label}: its {pname} argument carries a gradient (from "  # type: ignore[operator]
                        f"{flowing[0]}), but {label} makes arrays from constants in gradlab's "
                        f"eyes ({record.nondifferentiable}): compute {pname} from constants, "  # type: ignore[union-attr]
                        f"or build the array from {flowing[0]} with arithmetic", s.origin,
                        f"{label}({pname}=...)")
        if isinstance(atom, str) or through is not None and pname not in through:
            raise error(f"{label}: its {pname} argument carries a gradient (from "  # type: ignore[operator]
                        f"{flowing[0]}), but gradlab differentiates {label} only through "
                        f"{', '.join(sorted(through or ())) or 'none of its arguments'}: "
                        f"compute {pname} from constants", s.origin, f"{label}({pname}=...)")
        raise error(f"{label}: its argument {_describe(atom)} is computed from {flowing[0]}, "  # type: ignore[operator]
                    f"which carries a gradient, in a way gradlab cannot differentiate: "
                    f"compute it on a line of its own with NumPy functions", s.origin,
                    _describe(atom))


#: Primitives whose NumPy result may be a view sharing memory with their first operand
#: (``getitem`` is one only for basic indices: see :func:`_makes_view`).
_VIEWS = names_with(kinds.VIEW) - {"getitem"}


def _makes_view(op: Op, arrays: set[str]) -> bool:
    """``y[1:]``, ``y[i]``, ``y.T``, ``y.reshape(...)``: in NumPy the result may share y's memory.
    Any index without an array in it is basic indexing, which gives a view: ``y[i]`` is a row of
    a matrix, or a scalar of a vector (a copy, but gradlab does not know ranks, so it assumes
    the view). Only an array of indices (``y[idx]``) always copies."""
    if op.kind is not OpKind.PRIM or not op.args or not isinstance(op.args[0], str):
        return False
    if op.prim == "getitem":
        index = op.args[1] if len(op.args) > 1 else None
        return not (ir.atom_names(index) & arrays) if index is not None else False
    return op.prim in _VIEWS


def memory_links(fn: ir.Function, act: Activity) -> list[tuple[str, str, ir.Stmt, str]]:
    """Every place where, in NumPy, two names may come to refer to the same memory:
    ``(made, source, statement, how)``. Copies (``z = y``), views (``z = y[1:]``), tuples
    and lists and what is taken out of them (``a, b = y, x``; ``xs.append(y)``; ``xs[0]``), and
    results of the user's functions that may return (a view of) an argument. gradlab's own
    copies (branch merges) never alias. The last field says how (:data:`_HOW`)."""
    out: list[tuple[str, str, ir.Stmt, str]] = []
    for s in ir.walk(fn.body):
        if s.origin is None:
            continue
        if isinstance(s, ir.Effect):
            if s.kind is EffectKind.APPEND and isinstance(s.value, str):
                out.append((s.target, s.value, s, "holds"))
            continue
        if not isinstance(s, Assign):
            continue
        op = s.op
        names = [a for a in op.args if isinstance(a, str)]
        if op.kind in (OpKind.TUPLE, OpKind.LIST):
            if len(s.targets) == len(op.args) > 1:   # a, b = y, x
                out += [(t, a, s, "copy") for t, a in zip(s.targets, op.args)
                        if isinstance(a, str)]
            else:
                out += [(t, a, s, "holds") for t in s.targets for a in names]
        elif op.kind is OpKind.POP or (op.kind is OpKind.PRIM and op.prim == "list_getitem"):
            out += [(t, names[0], s, "item") for t in s.targets if names]
        elif op.kind is OpKind.COPY:
            out += [(t, names[0], s, "copy") for t in s.targets if names]
        elif op.kind is OpKind.PRIM and _makes_view(op, act.arrays):
            how = "row" if op.prim == "getitem" and _int_index(op.args[1]) else "view"
            out += [(t, str(op.args[0]), s, how) for t in s.targets]
        elif op.kind is OpKind.USER:
            mask = array_arguments(op, act.arrays)
            shared = (act.user_aliases(op.callee, mask) if act.user_aliases is not None
                      else frozenset(i for i, is_array in enumerate(mask) if is_array))
            out += [(t, a, s, "call") for t in s.targets for i, a in enumerate(op.args)
                    if i in shared and isinstance(a, str)]
    return out


def _int_index(index: Any) -> bool:
    """``y[i]``, ``y[0, j]``: no slice, None or Ellipsis, so a row only if y has more axes."""
    return not any(isinstance(n, gast.Slice) or isinstance(n, gast.Constant) and (
        n.value is None or n.value is Ellipsis) for n in trees.walk(index)) if isinstance(
        index, gast.AST) else True


#: How a name comes to share memory with another, as the refusal explains it ({n}: the name
#: changed in place, {o}: the other).
_HOW = {
    "copy": "{o} refers to the same array",
    "holds": "{o} holds the same array",
    "view": "{o} refers to the same array ({n} is a view of it)",
    "row": "{n} may be a view of {o} (a row of it, when {o} has more axes than the index has "
           "numbers)",
    "call": "{o} may refer to the same array (the function that made {n} can return its "
            "argument, or a view of it)",
}


def result_aliases(fn: ir.Function, act: Activity) -> frozenset[int]:
    """The parameters (positions) whose memory ``fn``'s result may share."""
    reach: dict[str, set[str]] = {}
    for a, b, _, _ in memory_links(fn, act):
        reach.setdefault(a, set()).add(b)
        reach.setdefault(b, set()).add(a)
    seen, todo = {fn.result}, [fn.result]
    while todo:
        for other in reach.get(todo.pop(), ()):
            if other not in seen:
                seen.add(other)
                todo.append(other)
    return frozenset(i for i, p in enumerate(fn.params) if p in seen)


def _in_place_write(s: ir.Stmt, act: Activity) -> str | None:
    """The array a statement changes in place: ``y[i] = v`` and ``y += v`` on an array."""
    if not isinstance(s, Assign) or s.op.kind is not OpKind.PRIM:
        return None
    if s.op.prim in ("index_update", "index_add"):
        return s.op.args[0] if isinstance(s.op.args[0], str) else s.targets[0]
    if s.augmented and s.op.args and isinstance(s.op.args[0], str) and (
            s.op.args[0] in act.arrays):
        return s.op.args[0]
    return None


def _check_aliasing(fn: ir.Function, act: Activity, error: object, helper: bool = False) -> None:
    """``y = x; x[0] = 1`` (or ``z = y[1:]; y += 1``) changes the other name in NumPy but not
    in generated code, which makes new arrays instead of changing old ones: refuse.

    A copy or view made before the write matters if it is read after the write (or, not being
    made anew in a loop around the write, anywhere in that loop: the next iteration). One made
    later in a loop around the write matters if the loop reads it before making it again.
    Temporaries (parts of one expression) link names but never matter themselves: no user code
    reads them, so ``v = (x * 2.0)[0, :]; v -= 1.0`` changes nothing anyone reads. In a
    helper, a parameter always matters: the caller may read its array after the call.
    """
    stmts = list(ir.walk(fn.body))
    order = {id(s): i for i, s in enumerate(stmts)}
    reads_at = [ir.stmt_reads(s) for s in stmts]
    # name -> (the other name, where linked, whether the other is what name was made from)
    links: dict[str, list[tuple[str, int, bool]]] = {}
    kinds: dict[frozenset[str], str] = {}
    containers: set[str] = set()   # lists and tuples, which hold arrays rather than being one
    for made, source, s, how in memory_links(fn, act):
        links.setdefault(made, []).append((source, order[id(s)], True))
        links.setdefault(source, []).append((made, order[id(s)], False))
        kinds.setdefault(frozenset((made, source)), how)
        if how in ("holds", "item"):
            containers.add(made if how == "holds" else source)

    def read_between(name: str, start: int, stop: int) -> bool:
        return any(name in r for r in reads_at[start:stop])

    def matters(other: str, linked: int, write: int, loops: list[Any]) -> bool:
        if helper and other in fn.params:
            return True
        if linked < write:
            if read_between(other, write + 1, len(stmts)):
                return True
            return any(other in ir.reads_in(loop.body) and other not in ir.writes_in(loop.body)
                       for loop in loops)
        around = [loop for loop in loops if order[id(loop)] < linked <= _end(loop, order)]
        return bool(around) and read_between(other, order[id(around[-1])] + 1, linked)

    def sharing(name: str, write: int, loops: list[Any], of_list: bool = False
                ) -> list[tuple[str, str]]:
        """The names that matter sharing memory with ``name``, each with how the chain of
        links from ``name`` begins. ``of_list``: ``name`` is a list, changed by ``append``,
        which changes only the names of that very list (``ys = xs``), not its items."""
        # A temporary reached from one of its uses leads only to what it was made from: two
        # uses of one temporary (``a * b`` twice on a line, computed once) are two arrays in
        # NumPy. Reached from what it was made from, it leads to every use.
        seen, todo, found = {(name, False)}, [(name, -1, "", False)], []
        while todo:
            current, latest, how, from_a_use = todo.pop()
            for other, linked, upstream in links.get(current, ()):
                if from_a_use and current in fn.temporaries and not upstream:
                    continue
                if of_list and kinds[frozenset((current, other))] != "copy":
                    continue
                key = (other, upstream and other in fn.temporaries)
                if key in seen:
                    continue
                seen.add(key)
                when = max(latest, linked)
                first = how or kinds[frozenset((current, other))]
                todo.append((other, when, first, upstream))
                if other not in fn.temporaries and other != name and matters(
                        other, when, write, loops):
                    found.append((other, first))
        return sorted(set(found))

    def visit(block: list[ir.Stmt], loops: list[Any]) -> None:
        for s in block:
            if isinstance(s, ir.Effect) and s.kind is EffectKind.APPEND:
                lists = sharing(s.target, order[id(s)], loops, of_list=True)
                if lists:
                    raise error(  # type: ignore[operator]
                        f"{s.target} is appended to while {lists[0][0]} is the same list, so "
                        f"{lists[0][0]} grows too, which gradlab's gradient code does not "
                        f"follow: build the list under one name", s.origin,
                        "aliased in-place update")
            name = _in_place_write(s, act)
            others = sharing(name, order[id(s)], loops) if name else []
            if name and others:
                other, how = others[0]
                if how in ("holds", "item"):   # a name taken out of a list is the item itself
                    how = "holds" if other in containers else "copy"
                assert isinstance(s, Assign)
                if s.augmented:
                    fix = (f"write {name} = {name} {_OPERATOR_TEXT.get(s.op.prim, '+')} ... "
                           f"(or, to change {other} as well, change {other} itself)")
                else:
                    fix = (f"write {name} = {name}.copy() first (or, to change {other} as well, "
                           f"write into {other} itself)")
                changes = "may change" if how in ("row", "call") else "changes"
                caller = helper and other in fn.params
                whose = f"{other}, the caller's array, {changes}" if caller else (
                    f"{other} {changes}")
                raise error(  # type: ignore[operator]
                    f"{name} is changed in place while {_HOW[how].format(n=name, o=other)}, "
                    f"so in NumPy {whose} too; gradlab's code makes a new array instead, so "
                    f"{fix}", s.origin, "aliased in-place update")
            inner = loops + [s] if isinstance(s, (ir.For, ir.While)) else loops
            for child in ir.children(s):
                visit(child, inner)

    visit(fn.body, [])


def _end(loop: Any, order: dict[int, int]) -> int:
    """The walk index of a loop's last statement."""
    inner = list(ir.walk(loop.body))
    return order[id(inner[-1])] if inner else order[id(loop)]


_OPERATOR_TEXT = {"add": "+", "subtract": "-", "multiply": "*", "divide": "/", "power": "**",
                  "floor_divide": "//", "mod": "%", "matmul": "@"}


def _no_rule_message(label: object, origin: ir.Origin | None, target: object = None) -> str:
    where = f" (line {origin.lineno}: {origin.text})" if origin else ""
    args = "<its arguments>"
    if target is not None:
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

_SAME_SHAPE_UNARY = names_with(kinds.SAME_SHAPE)
#: Elementwise on exactly ``x`` and ``y``: the result has their broadcast shape.
BINARY = names_with(kinds.BINARY)
_REDUCTIONS = names_with(kinds.REDUCTION)


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
            elif s.op.kind in (OpKind.TUPLE, OpKind.LIST) and len(s.op.args) == len(s.targets):
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

    if op.kind is OpKind.COPY:
        return of(op.args[0]) or opaque
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
