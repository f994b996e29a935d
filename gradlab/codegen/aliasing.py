"""What shares memory in NumPy, and the refusal of in-place changes that would be seen through
another name.

``y = x; x[0] = 1`` (or ``z = y[1:]; y += 1``) changes the other name in NumPy but not in
generated code, which makes new arrays instead of changing old ones: such code is refused,
naming both names and how they came to share memory. :func:`memory_links` lists every place
two names may come to share memory; :func:`result_aliases` tells which arguments a user
function's result may share (its callers' check needs it).
"""
from __future__ import annotations

from typing import Any

import gast

from ..tensor import primitive as kinds
from ..tensor.spec import names_with
from . import ir, trees
from .analyze import Activity, array_arguments
from .ir import Assign, EffectKind, Op, OpKind


#: Primitives whose NumPy result may be a view sharing memory with their first operand
#: (``getitem`` is one only for basic indices: see :func:`_makes_view`). Of a real array,
#: ``x.conj()`` and ``x.real`` are x itself (people fuzzer, seed 9191: ``v = x.conj()`` then
#: ``x += 0.1`` changed v too, and JAX's code, whose arrays do not change, did not see it).
_VIEWS = names_with(kinds.VIEW) - {"getitem"} | {"conj", "real"}


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
        elif op.kind is OpKind.PRIM and op.style == "may_alias" and names:
            out += [(t, names[0], s, "conversion") for t in s.targets]
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
    "conversion": "{o} may refer to the same array (one was converted from the other to a "
                  "dtype, and a conversion to the dtype an array already has returns it "
                  "itself)",
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
        if s.op.style == "new_array":
            return None     # JAX's y = x.at[i].set(v): a new array
        return s.op.args[0] if isinstance(s.op.args[0], str) else s.targets[0]
    if s.augmented and s.op.args and isinstance(s.op.args[0], str) and (
            s.op.args[0] in act.arrays):
        return s.op.args[0]
    return None


class _AliasCheck:
    """The aliasing refusal over one function (see :func:`check_aliasing`): the memory links
    found once, then each in-place change checked against the names linked to it."""

    def __init__(self, fn: ir.Function, act: Activity, helper: bool) -> None:
        self.fn = fn
        self.act = act
        self.helper = helper
        self.stmts = list(ir.walk(fn.body))
        self.order = {id(s): i for i, s in enumerate(self.stmts)}
        self.reads_at = [ir.stmt_reads(s) for s in self.stmts]
        # name -> (the other name, where linked, whether the other is what name was made from)
        self.links: dict[str, list[tuple[str, int, bool]]] = {}
        self.kinds: dict[frozenset[str], str] = {}
        self.containers: set[str] = set()   # lists and tuples: they hold arrays, are not one
        for made, source, s, how in memory_links(fn, act):
            self.links.setdefault(made, []).append((source, self.order[id(s)], True))
            self.links.setdefault(source, []).append((made, self.order[id(s)], False))
            self.kinds.setdefault(frozenset((made, source)), how)
            if how in ("holds", "item"):
                self.containers.add(made if how == "holds" else source)

    def _callers_array(self, name: str, write: int) -> bool:
        """Whether ``name``, changed in place at statement ``write`` of a helper, still holds
        the array its caller passed: a parameter not assigned anew before."""
        if not self.helper or name not in self.fn.params:
            return False
        return not any(name in ir.stmt_writes(s) and _in_place_write(s, self.act) != name
                       for s in self.stmts[:write])

    def read_between(self, name: str, start: int, stop: int) -> bool:
        return any(name in r for r in self.reads_at[start:stop])

    def matters(self, other: str, linked: int, write: int, loops: list[Any]) -> bool:
        """Whether ``other``, linked at statement ``linked`` to what statement ``write``
        changes, is read where the change shows."""
        if self.helper and other in self.fn.params:
            return True
        if linked < write:
            if self.read_between(other, write + 1, len(self.stmts)):
                return True
            return any(other in ir.reads_in(loop.body) and other not in ir.writes_in(loop.body)
                       for loop in loops)
        around = [loop for loop in loops
                  if self.order[id(loop)] < linked <= _end(loop, self.order)]
        return bool(around) and self.read_between(other, self.order[id(around[-1])] + 1, linked)

    def sharing(self, name: str, write: int, loops: list[Any], of_list: bool = False
                ) -> list[tuple[str, str]]:
        """The names that matter sharing memory with ``name``, each with how the chain of
        links from ``name`` begins. ``of_list``: ``name`` is a list, changed by ``append``,
        which changes only the names of that very list (``ys = xs``), not its items."""
        # A temporary reached from one of its uses leads only to what it was made from: two
        # uses of one temporary (``a * b`` twice on a line, computed once) are two arrays in
        # NumPy. Reached from what it was made from, it leads to every use.
        temporaries = self.fn.temporaries
        seen, todo, found = {(name, False)}, [(name, -1, "", False)], []
        while todo:
            current, latest, how, from_a_use = todo.pop()
            for other, linked, upstream in self.links.get(current, ()):
                if from_a_use and current in temporaries and not upstream:
                    continue
                if of_list and self.kinds[frozenset((current, other))] != "copy":
                    continue
                key = (other, upstream and other in temporaries)
                if key in seen:
                    continue
                seen.add(key)
                when = max(latest, linked)
                first = how or self.kinds[frozenset((current, other))]
                todo.append((other, when, first, upstream))
                if other not in temporaries and other != name and self.matters(
                        other, when, write, loops):
                    found.append((other, first))
        return sorted(set(found))

    def visit(self, block: list[ir.Stmt], loops: list[Any]) -> None:
        for s in block:
            if isinstance(s, ir.Effect) and s.kind is EffectKind.APPEND:
                self._refuse_shared_append(s, loops)
            self._refuse_shared_write(s, loops)
            inner = loops + [s] if isinstance(s, (ir.For, ir.While)) else loops
            for child in ir.children(s):
                self.visit(child, inner)

    def _refuse_shared_append(self, s: ir.Effect, loops: list[Any]) -> None:
        lists = self.sharing(s.target, self.order[id(s)], loops, of_list=True)
        if lists:
            raise ir.refusal(
                f"{s.target} is appended to while {lists[0][0]} is the same list, so "
                f"{lists[0][0]} grows too, which gradlab's gradient code does not "
                f"follow: build the list under one name", s.origin, "aliased in-place update")

    def _refuse_shared_write(self, s: ir.Stmt, loops: list[Any]) -> None:
        name = _in_place_write(s, self.act)
        if name and self._callers_array(name, self.order[id(s)]):
            if isinstance(s, Assign) and s.augmented:
                fix = f"write {name} = {name} {_OPERATOR_TEXT.get(s.op.prim, '+')} ..."
            else:
                fix = f"write {name} = {name}.copy() first"
            raise ir.refusal(
                f"{name} is changed in place, and it is the array the caller passed to "
                f"{self.fn.name}, so in NumPy the caller's array changes too; gradlab's code "
                f"makes a new array instead, so {fix} (and return it, if the caller needs "
                f"the change)", s.origin, "aliased in-place update")
        others = self.sharing(name, self.order[id(s)], loops) if name else []
        if not name or not others:
            return
        other, how = others[0]
        if how in ("holds", "item"):   # a name taken out of a list is the item itself
            how = "holds" if other in self.containers else "copy"
        assert isinstance(s, Assign)
        if s.augmented:
            fix = (f"write {name} = {name} {_OPERATOR_TEXT.get(s.op.prim, '+')} ... "
                   f"(or, to change {other} as well, change {other} itself)")
        else:
            fix = (f"write {name} = {name}.copy() first (or, to change {other} as well, "
                   f"write into {other} itself)")
        changes = "may change" if how in ("row", "call") else "changes"
        caller = self.helper and other in self.fn.params
        whose = f"{other}, the caller's array, {changes}" if caller else f"{other} {changes}"
        raise ir.refusal(
            f"{name} is changed in place while {_HOW[how].format(n=name, o=other)}, "
            f"so in NumPy {whose} too; gradlab's code makes a new array instead, so "
            f"{fix}", s.origin, "aliased in-place update")


def check_aliasing(fn: ir.Function, act: Activity, helper: bool = False) -> None:
    """Refuse an in-place change that NumPy would show through another name.

    A copy or view made before the write matters if it is read after the write (or, not being
    made anew in a loop around the write, anywhere in that loop: the next iteration). One made
    later in a loop around the write matters if the loop reads it before making it again.
    Temporaries (parts of one expression) link names but never matter themselves: no user code
    reads them, so ``v = (x * 2.0)[0, :]; v -= 1.0`` changes nothing anyone reads. In a
    helper, a parameter always matters: the caller may read its array after the call.
    """
    _AliasCheck(fn, act, helper).visit(fn.body, [])


def _end(loop: Any, order: dict[int, int]) -> int:
    """The walk index of a loop's last statement."""
    inner = list(ir.walk(loop.body))
    return order[id(inner[-1])] if inner else order[id(loop)]


_OPERATOR_TEXT = {"add": "+", "subtract": "-", "multiply": "*", "divide": "/", "power": "**",
                  "floor_divide": "//", "mod": "%", "matmul": "@"}
