"""The optimize stage (``optimized=True``): generated functions made shorter and faster, never
different in what they compute.

- In a gradient, two rewrites of products that know which values share a shape (the shape
  classes of :func:`.shapes.shape_classes`): a ``gl.broadcast_like`` that the product around it
  does anyway is skipped, and the numbers of a product are multiplied first.
- ``p + -q`` written ``p - q``. Dead code and copies removed. Both passes are deliberately conservative: a statement is dead
  only if nothing anywhere in the function reads what it assigns and it has no effect (stack
  pushes and pops are effects), or, once that finds nothing, if a liveness pass that follows
  the loops finds that nothing needs it (a loop's accumulator that only reads itself); a copy ``a = b`` is propagated only when ``a`` is a generated
  name assigned once and ``b`` is never reassigned, so the user's own names always stay visible.
  They run until nothing changes: a round that changes something deletes a statement, so the
  rounds are at most as many as the statements.
"""
from __future__ import annotations

from typing import Any, Callable

import gast

from . import trees
from .build import is_comment, quotes_line
from .naming import users_value_or_gradient
from .shapes import SCALAR

_EFFECT_METHODS = {"append", "pop"}


def optimize(fn: gast.FunctionDef, keep: set[str], user_names: set[str],
             shapes: dict[str, Any] | None = None) -> gast.FunctionDef:
    """Optimize ``fn`` in place, keeping the names in ``keep`` and the user's names.
    ``shapes``: the shape classes of a gradient's values, for its product rewrites."""
    if shapes is not None:
        skip_broadcasts(fn.body, shapes)
        scalars_first(fn.body, shapes)
    subtract_negations(fn)
    while True:
        names = _Names(fn)
        # the names in ``keep`` (the value the caller reads back) are never renamed away
        fixed = user_names | keep
        changed = _drop_where(names, lambda b, i: _propagate_copy(b[i], names, fixed))
        changed |= _drop_where(names, lambda b, i: _propagate_local_copy(b, i, names, fixed))
        changed |= _drop_where(names, lambda b, i: _propagate_block_copy(b, i, names, fixed))
        changed |= _drop_where(names, lambda b, i: _is_self_copy(b[i]))
        changed |= _drop_where(names, lambda b, i: _fold_local_negation(b, i, names,
                                                                        user_names))
        changed |= _drop_where(names, lambda b, i: _is_dead(b[i], names, keep))
        if not changed:      # the liveness pass, once the cheap passes have nothing left
            faint = _faint_assignments(names, keep)
            if not faint or not _drop_where(names, lambda b, i: id(b[i]) in faint):
                break
    _drop_dangling_comments(fn.body)
    _fix_empty_blocks(fn.body)
    return fn


class _Names:
    """Every ``Name`` node of a function by identifier, found in one walk and kept up to date by
    the passes (a walk per copy made the optimizer most of a transform's time)."""

    def __init__(self, fn: gast.AST) -> None:
        self.loads: dict[str, list[gast.Name]] = {}
        self.stores: dict[str, int] = {}
        self.blocks: list[list[gast.stmt]] = []
        self.function = fn
        for n in trees.walk(fn):
            if isinstance(n, gast.Name):
                if isinstance(n.ctx, gast.Load):
                    self.loads.setdefault(n.id, []).append(n)
                elif isinstance(n.ctx, (gast.Store, gast.Param)):
                    self.stores[n.id] = self.stores.get(n.id, 0) + 1
            for field in ("body", "orelse"):
                block = getattr(n, field, None)
                if isinstance(block, list) and block and isinstance(block[0], gast.stmt):
                    self.blocks.append(block)

    def load_count(self, name: str) -> int:
        return len(self.loads.get(name, ()))

    def rename_loads(self, old: str, new: str) -> None:
        for n in self.loads.pop(old, []):
            n.id = new
            self.loads.setdefault(new, []).append(n)

    def forget(self, s: gast.stmt) -> None:
        """``s`` was deleted: its names no longer count."""
        for n in trees.walk(s):
            if isinstance(n, gast.Name):
                if isinstance(n.ctx, gast.Load):
                    nodes = self.loads.get(n.id, [])
                    for i, m in enumerate(nodes):
                        if m is n:
                            del nodes[i]
                            break
                elif isinstance(n.ctx, (gast.Store, gast.Param)):
                    self.stores[n.id] -= 1


def _fix_empty_blocks(block: list[gast.stmt]) -> None:
    """Removing dead statements can empty a branch: ``if c: <nothing> else: B`` becomes
    ``if not c: B``; an if with nothing left goes; an empty loop body gets ``pass``."""
    i = 0
    while i < len(block):
        s = block[i]
        for name in ("body", "orelse"):
            inner = getattr(s, name, None)
            if isinstance(inner, list):
                _fix_empty_blocks(inner)
        if isinstance(s, gast.If):
            body = [t for t in s.body if not is_comment(t)]
            orelse = [t for t in s.orelse if not is_comment(t)]
            if not body and not orelse:
                if _has_effect(s.test):   # keep the call the condition makes, drop the if
                    block[i] = gast.Expr(value=s.test)
                    i += 1
                    continue
                del block[i]
                continue
            if not body:
                s.test = gast.UnaryOp(op=gast.Not(), operand=s.test)
                s.body, s.orelse = s.orelse, []
            elif not orelse:
                s.orelse = []
        elif isinstance(s, (gast.For, gast.While)) and not [
                t for t in s.body if not is_comment(t)]:
            s.body = s.body + [gast.Pass()]
        i += 1


def _has_effect(value: gast.expr) -> bool:
    for n in trees.walk(value):
        if isinstance(n, gast.Call):
            f = n.func
            if isinstance(f, gast.Attribute) and f.attr in _EFFECT_METHODS:
                return True
            if isinstance(f, gast.Name) and not f.id.startswith(("gl", "__")) and f.id not in (
                    "range", "len", "reversed", "min", "max", "sum", "abs", "float", "int"):
                return True   # a user function or a vjp: keep, it may print or raise
    return False


def _drop_where(names: _Names, drop: Callable[[list[gast.stmt], int], bool]) -> bool:
    """Delete each statement ``i`` of each block for which ``drop(block, i)`` holds (``drop``
    makes whatever renaming that takes); the index forgets the deleted statement's names."""
    changed = False
    for block in names.blocks:
        i = 0
        while i < len(block):
            if drop(block, i):
                names.forget(block.pop(i))
                changed = True
                continue
            i += 1
    return changed


def _is_dead(s: gast.stmt, names: _Names, keep: set[str]) -> bool:
    if not (isinstance(s, gast.Assign) and len(s.targets) == 1):
        return False
    targets = _target_names(s.targets[0])
    if not targets or targets & keep or any(names.load_count(n) for n in targets):
        return False
    return not _has_effect(s.value)


class _Unanalysed(Exception):
    """A statement the liveness pass does not follow (``break``, ``try``, a nested ``def``...):
    then it removes nothing."""


#: the statements the liveness pass follows (a function with any other loses nothing)
_FOLLOWED = (gast.Assign, gast.AugAssign, gast.Expr, gast.Pass, gast.Return, gast.If, gast.For,
             gast.While)
_READS: dict[int, frozenset[str]] = {}    # a pass's memo of each node's reads (by id)


def _reads(node: Any) -> frozenset[str]:
    key = id(node)
    found = _READS.get(key)
    if found is None:
        parts = node if isinstance(node, list) else [node]
        found = frozenset(n.id for part in parts if isinstance(part, gast.AST)
                          for n in trees.walk(part)
                          if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load))
        if not isinstance(node, list):
            _READS[key] = found
    return found


def _faint_assignments(names: _Names, keep: set[str]) -> set[int]:
    """The assignments (by ``id``) whose values nothing needs, by a liveness pass that follows
    the control flow: ``c = c + u_t * u_t`` in a loop whose ``c`` is never returned (a
    loop's accumulator reads itself, so its name is never unread), or a forward-pass value
    whose name the backward pass assigns again before reading it. What is read by a return, a
    push, a condition, an update in place or a call that may have an effect is needed, and so
    is what ``keep`` names at the end. Code with ``break``, ``try`` or a nested ``def`` loses
    nothing."""
    statements = [s for block in names.blocks for s in block]
    if not any(isinstance(s, (gast.For, gast.While)) for s in statements) or not all(
            isinstance(s, _FOLLOWED) for s in statements):
        return set()        # no loop (the simple rule finds it all), or a statement not followed
    fn = names.function
    dead: set[int] = set()
    try:
        _live_before(fn.body, set(keep), dead, record=True)
    except _Unanalysed:
        return set()
    finally:
        _READS.clear()      # (ids are reused once the nodes are gone)
    return dead


def _live_before(block: list[gast.stmt], live: set[str], dead: set[int], record: bool
                 ) -> set[str]:
    for s in reversed(block):
        live = _live_before_one(s, live, dead, record)
    return live


def _live_before_one(s: gast.stmt, live: set[str], dead: set[int], record: bool) -> set[str]:
    if isinstance(s, gast.Assign):
        targets = _target_names(s.targets[0]) if len(s.targets) == 1 else None
        if targets is not None and not _has_effect(s.value):
            if not targets & live:
                if record:
                    dead.add(id(s))
                return live
            return (live - targets) | _reads(s.value)
        return live | _reads(s)
    if isinstance(s, gast.AugAssign):       # ``x += v`` reads ``x`` too
        return live | _reads(s) | (_target_names(s.target) or set())
    if isinstance(s, (gast.Expr, gast.Pass, gast.Return)):   # (what ``keep`` names stays)
        return live | _reads(s)
    if isinstance(s, gast.If):
        return set(_reads(s.test)) | _live_before(s.body, live, dead, record) | _live_before(
            s.orelse, live, dead, record)
    if isinstance(s, (gast.For, gast.While)) and not s.orelse:
        target = _target_names(s.target) or set() if isinstance(s, gast.For) else set()
        header = _reads(s.iter) if isinstance(s, gast.For) else _reads(s.test)
        head = set(live) | (header if isinstance(s, gast.While) else set())
        while True:           # live at the loop's head: after the loop, or before the body
            body = _live_before(s.body, head, dead, False) - target
            grown = head | body | (header if isinstance(s, gast.While) else set())
            if grown == head:
                break
            head = grown
        _live_before(s.body, head, dead, record)
        return head | header
    raise _Unanalysed(type(s).__name__)


def _target_names(target: gast.expr) -> set[str] | None:
    if isinstance(target, gast.Name):
        return {target.id}
    if isinstance(target, gast.Tuple) and all(isinstance(e, gast.Name) for e in target.elts):
        return {e.id for e in target.elts}  # type: ignore[attr-defined]
    return None


def _copy(s: gast.stmt) -> tuple[str, str] | None:
    """(a, b) for ``a = b`` between two plain names."""
    if (isinstance(s, gast.Assign) and len(s.targets) == 1
            and isinstance(s.targets[0], gast.Name) and isinstance(s.value, gast.Name)):
        return s.targets[0].id, s.value.id
    return None


def _propagate_copy(s: gast.stmt, names: _Names, user_names: set[str]) -> bool:
    """``a = b`` where ``a`` is a generated name assigned once and ``b`` is never reassigned:
    every read of ``a`` reads ``b`` instead, and the copy can go."""
    pair = _copy(s)
    if pair is None:
        return False
    a, b = pair
    if a in user_names or a == b or names.stores.get(a, 0) != 1 or names.stores.get(b, 0) > 1:
        return False
    names.rename_loads(a, b)
    return True


def _propagate_local_copy(block: list[gast.stmt], i: int, names: _Names,
                          user_names: set[str]) -> bool:
    """``a = b`` followed, in the same block, by the only use of ``a`` with ``b`` unchanged in
    between (``ddt = dx`` then ``dv = dv + dt * ddt``): use ``b`` there and drop the copy.
    The gradient code's own temporaries only; loops make this the common case."""
    pair = _copy(block[i])
    if pair is None:
        return False
    a, b = pair
    later = _only_later_use(block, i, a, b, names, user_names)
    if not isinstance(later, gast.Assign):
        return False
    names.rename_loads(a, b)
    return True


def _propagate_block_copy(block: list[gast.stmt], i: int, names: _Names,
                          user_names: set[str]) -> bool:
    """``a = b`` (``a`` a generated name assigned once) whose every read is later in the same
    block, with ``b`` written before the last of them only by copies back ``b = a``: the
    reads read ``b`` and the copies back become ``b = b``, which go. A gradient passed through
    unchanged makes this: ``dc_plus_product = dc`` ... ``dc = dc_plus_product``."""
    pair = _copy(block[i])
    if pair is None:
        return False
    a, b = pair
    if users_value_or_gradient(a, user_names) or a == b or names.stores.get(a, 0) != 1 or \
            not names.load_count(a):
        return False   # (dlogits = dlogits_minus_m: the user's variable's gradient stays)
    uses = {id(n) for n in names.loads[a]}
    found = 0
    for later in block[i + 1:]:
        if found == len(uses):
            break
        walked = list(trees.walk(later))
        found += sum(1 for n in walked if id(n) in uses)
        if _copy(later) == (b, a):
            continue
        if any(isinstance(n, gast.Name) and n.id == b and isinstance(n.ctx, gast.Store)
               for n in walked):
            return False
    if found != len(uses):
        return False
    names.rename_loads(a, b)
    return True


def _is_self_copy(s: gast.stmt) -> bool:
    """``x = x``: nothing to do (what a copy propagated back to its source leaves)."""
    pair = _copy(s)
    return pair is not None and pair[0] == pair[1]


def _only_later_use(block: list[gast.stmt], i: int, a: str, b: str, names: _Names,
                    user_names: set[str]) -> gast.stmt | None:
    """The statement after ``block[i]``, in the same block, holding the only read of ``a`` (a
    generated name assigned once), when nothing before it writes ``b`` or is other than a plain
    statement; None otherwise."""
    if a in user_names or a == b or names.stores.get(a, 0) != 1 or names.load_count(a) != 1:
        return None
    use = names.loads[a][0]
    for later in block[i + 1:]:
        walked = list(trees.walk(later))
        if any(n is use for n in walked):
            return later
        if any(isinstance(n, gast.Name) and n.id == b and isinstance(n.ctx, gast.Store)
               for n in walked) or not isinstance(later, (gast.Assign, gast.Expr)):
            return None
    return None


def _fold_local_negation(block: list[gast.stmt], i: int, names: _Names,
                         user_names: set[str]) -> bool:
    """``a = -b`` whose only use, later in the same block with ``b`` unchanged, is a term added
    to something: ``dc_times_v = -da`` then ``dv = dv + c * dc_times_v`` reads, and runs, as
    ``dv = dv - c * da``. The gradient code's own temporaries only (a subtraction's rule makes
    them); any other use keeps the line."""
    s = block[i]
    if not (isinstance(s, gast.Assign) and len(s.targets) == 1
            and isinstance(s.targets[0], gast.Name) and isinstance(s.value, gast.UnaryOp)
            and isinstance(s.value.op, gast.USub) and isinstance(s.value.operand, gast.Name)):
        return False
    a, b = s.targets[0].id, s.value.operand.id
    later = _only_later_use(block, i, a, b, names, user_names)
    term = _added_term(later, names.loads[a][0]) if later is not None else None
    if term is None:
        return False
    term.op = gast.Sub()
    names.rename_loads(a, b)
    return True


def _added_term(s: gast.stmt, use: gast.Name) -> gast.BinOp | None:
    """The ``+`` of ``s``'s value ``p + use`` or ``p + q * use`` (``use`` either factor)."""
    value = s.value if isinstance(s, gast.Assign) else None
    if not (isinstance(value, gast.BinOp) and isinstance(value.op, gast.Add)):
        return None
    right = value.right
    if right is use:
        return value
    if isinstance(right, gast.BinOp) and isinstance(right.op, gast.Mult) and (
            right.left is use or right.right is use):
        return value
    return None


def subtract_negations(fn: gast.AST) -> None:
    """``p + -q`` written ``p - q``: the same number (a subtraction adds the negation), one
    operation fewer, and how a person writes it."""
    for node in trees.walk(fn):
        if (isinstance(node, gast.BinOp) and isinstance(node.op, gast.Add)
                and isinstance(node.right, gast.UnaryOp) and isinstance(node.right.op, gast.USub)):
            node.op = gast.Sub()
            node.right = node.right.operand


def _drop_dangling_comments(block: list[gast.stmt]) -> None:
    """A quoted line with nothing left under it is noise."""
    i = 0
    while i < len(block):
        s = block[i]
        for name in ("body", "orelse"):
            inner = getattr(s, name, None)
            if isinstance(inner, list):
                _drop_dangling_comments(inner)
        nxt = block[i + 1] if i + 1 < len(block) else None
        if is_comment(s) and quotes_line(s) and (nxt is None or (
                is_comment(nxt) and quotes_line(nxt))):
            del block[i]
            continue
        i += 1


# --- products in gradients -------------------------------------------------------------------
def skip_broadcasts(body: list[gast.stmt], classes: dict[str, Any]) -> None:
    """``d = gl.broadcast_like(g, X)`` used once, as a factor of a product that already has a
    factor shaped like ``X``: the product broadcasts ``g`` by itself, so skip the copy.
    (``dh = 2 * h * gl.broadcast_like(dloss, h_pow2)`` becomes ``dh = 2 * h * dloss``.)"""
    blocks = [body] + [b for n in trees.walk(gast.Module(body=body, type_ignores=[]))
                       for b in (getattr(n, "body", None), getattr(n, "orelse", None))
                       if isinstance(b, list) and n is not None]
    loads: dict[str, int] = {}
    for n in trees.walk(gast.Module(body=body, type_ignores=[])):
        if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load):
            loads[n.id] = loads.get(n.id, 0) + 1
    for block in blocks:
        i = 0
        while i < len(block) - 1:
            s, nxt = block[i], block[i + 1]
            if (isinstance(s, gast.Assign) and len(s.targets) == 1
                    and isinstance(s.targets[0], gast.Name)
                    and isinstance(s.value, gast.Call)
                    and isinstance(s.value.func, gast.Attribute)
                    and s.value.func.attr == "broadcast_like" and len(s.value.args) == 2
                    and isinstance(s.value.args[1], gast.Name)
                    and loads.get(s.targets[0].id) == 1
                    and isinstance(nxt, gast.Assign)):
                d, g, like = s.targets[0].id, s.value.args[0], s.value.args[1].id
                if _replace_factor(nxt.value, d, g, classes.get(like), classes):
                    del block[i]
                    continue
            i += 1


def scalars_first(body: list[gast.stmt], classes: dict[str, Any]) -> None:
    """In a product, multiply the numbers first: ``2 * dloss * h`` costs one pass over ``h``,
    ``2 * h * dloss`` two."""
    def scalar(f: gast.expr) -> bool:
        if isinstance(f, gast.BinOp):
            return scalar(f.left) and scalar(f.right)
        if isinstance(f, gast.Call) and isinstance(f.func, gast.Attribute):
            return f.func.attr in ("size", "ndim")   # gl.size(x): a count
        return (isinstance(f, gast.Constant) and isinstance(f.value, (int, float))) or (
            isinstance(f, gast.Name) and classes.get(f.id) == SCALAR)

    for node in trees.walk(gast.Module(body=body, type_ignores=[])):
        for attribute in ("value", "left", "right", "operand"):
            child = getattr(node, attribute, None)
            if isinstance(child, gast.BinOp) and isinstance(child.op, gast.Mult):
                factors = _factors(child)
                numbers = [f for f in factors if scalar(f)]
                if not numbers or len(numbers) == len(factors) or all(
                        scalar(f) for f in factors[:len(numbers)]):
                    continue
                ordered = numbers + [f for f in factors if not scalar(f)]
                product = ordered[0]
                for f in ordered[1:]:
                    product = gast.BinOp(left=product, op=gast.Mult(), right=f)
                setattr(node, attribute, product)


def _factors(node: gast.expr) -> list[gast.expr]:
    if isinstance(node, gast.BinOp) and isinstance(node.op, gast.Mult):
        return _factors(node.left) + _factors(node.right)
    return [node]


def _replace_factor(expr: gast.expr, d: str, g: gast.expr, like_class: Any,
                    classes: dict[str, Any]) -> bool:
    if like_class is None:
        return False
    for node in trees.walk(expr):
        if not (isinstance(node, gast.BinOp) and isinstance(node.op, gast.Mult)):
            continue
        factors = _factors(node)
        if not any(isinstance(f, gast.Name) and f.id == d for f in factors):
            continue
        if not any(isinstance(f, gast.Name) and f.id != d and classes.get(f.id) == like_class
                   for f in factors):
            continue
        for parent in trees.walk(node):
            for attribute in ("left", "right"):
                child = getattr(parent, attribute, None)
                if isinstance(child, gast.Name) and child.id == d:
                    setattr(parent, attribute, trees.clone(g))
                    return True
    return False
