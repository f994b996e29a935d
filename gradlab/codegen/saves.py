"""What the backward pass reads of what the forward pass saved (the to-be-recorded analysis).

The adjoint generator (:mod:`.reverse`) decides what to save by name: a value written in a
loop is pushed on a stack when some backward code reads a value of that name. That misses
where the read was written and which value it sees: the backward code of ``return
np.sum(h)`` reads the *last* ``h``, before the loop's backward pass restores any older one,
and a rule's ``unbroadcast`` that shape classes later proved useless reads nothing at all.

This module answers the exact question on the finished adjoint function: a liveness analysis
over its code (loops to a fixed point) finds, for each ``v = v_stack.pop()``, whether any
later statement can read that ``v`` before it is written again. A stack none of whose pops is
read is dropped with its pushes, so the forward pass saves only what the backward pass reads
(the optimizer then drops the values that were computed only to be pushed).

A stack whose popped value is read only for its shape (``gl.unbroadcast(g, v)``, where shape
classes could not prove it the identity) saves the shape instead: :func:`shape_only_stacks`
finds those, :func:`save_shapes` rewrites them.
"""
from __future__ import annotations

from typing import Iterable

import gast

from . import trees
from .build import attr, call, is_comment, name


class _Unknown(Exception):
    """Code the analysis does not model (it then assumes every pop is read)."""


def unread_stacks(fn: gast.FunctionDef, stacks: Iterable[str], live_at_exit: set[str]
                  ) -> set[str]:
    """The stacks of ``stacks`` whose every pop gives a value no later code reads.

    ``live_at_exit``: names read after the function's code (the value the caller is handed
    beside the gradients). A stack used in any other way than ``s = []``, ``s.append(v)``
    and ``v = s.pop()`` is kept."""
    candidates = only_pushed_and_popped(fn, set(stacks))
    if not candidates:
        return set()
    pops: dict[str, list[gast.Assign]] = {}
    for node in trees.walk(fn):
        popped = popped_stack(node)
        if popped is not None and popped[0] in candidates:
            pops.setdefault(popped[0], []).append(node)
    try:
        read = _Liveness(live_at_exit).popped_and_read(fn.body)
    except _Unknown:
        return set()
    return {s for s in candidates if not any(id(p) in read for p in pops.get(s, []))}


def shape_only_stacks(fn: gast.FunctionDef, stacks: Iterable[str], live_at_exit: set[str],
                      gl: str = "gl") -> dict[str, str]:
    """The stacks of ``stacks`` whose popped value the backward pass reads only for its shape
    (``gl.unbroadcast(g, v)``: the sum back to ``v``'s shape), each with the name it pops.

    Found on one trial copy for all of them, where every such read of ``v`` reads a new name
    and the pops assign it instead of ``v``: a stack qualifies where ``v`` is never live after
    one of its pops (nothing else reads the popped value) and the new name is not live at the
    function's entry (every read renamed sees a popped value, not an older ``v`` of the forward
    pass). Each name is followed on its own: one liveness pass answers for all."""
    shaped: set[str] = set()
    popped: dict[str, set[str]] = {}
    for node in trees.walk(fn):
        read = _shape_read(node, gl)
        if read is not None:
            shaped.add(read)
        pop = popped_stack(node)
        if pop is not None:
            popped.setdefault(pop[0], set()).add(pop[1])
    values = {s: next(iter(v)) for s, v in popped.items() if len(v) == 1 and v <= shaped}
    once = [v for v in values.values()]
    values = {s: v for s, v in values.items() if once.count(v) == 1}
    candidates = only_pushed_and_popped(fn, set(stacks) & set(values))
    if not candidates:
        return {}
    trial = trees.clone(fn)
    taken = _names(trial)
    shapes = {s: _fresh(taken, values[s] + "_shape") for s in sorted(candidates)}
    _rename_shape_reads(trial, {values[s]: shapes[s] for s in candidates}, gl)
    for node in trees.walk(trial):
        pop = popped_stack(node)
        if pop is not None and pop[0] in candidates:
            node.targets[0].id = shapes[pop[0]]
    liveness = _Liveness(live_at_exit, {s: values[s] for s in candidates})
    try:
        live = liveness.block(trial.body, set(live_at_exit), None)
    except _Unknown:
        return {}
    return {s: values[s] for s in sorted(candidates)
            if s not in liveness.needed and shapes[s] not in live}


def save_shapes(fn: gast.FunctionDef, stacks: dict[str, str], gl: str = "gl") -> None:
    """Rewrite the stacks of :func:`shape_only_stacks`: ``v_shape_stack.append(gl.shape(v))``
    where ``v_stack.append(v)`` was, ``v_shape = v_shape_stack.pop()`` and
    ``gl.unbroadcast_to(g, v_shape)`` for ``gl.unbroadcast(g, v)``: a tuple a step, not an
    array."""
    if not stacks:
        return
    taken = _names(fn)
    shapes = {s: _fresh(taken, v + "_shape") for s, v in sorted(stacks.items())}
    renamed = {s: _fresh(taken, shapes[s] + "_stack") for s in sorted(stacks)}
    _rename_shape_reads(fn, {v: shapes[s] for s, v in stacks.items()}, gl)
    for node in trees.walk(fn):
        pop = popped_stack(node)
        if pop is not None and pop[0] in stacks:
            node.targets[0].id = shapes[pop[0]]
        pushed = pushed_stack(node)
        if pushed is not None and pushed in stacks:
            node.value.args[0] = call(attr(gl, "shape"), [node.value.args[0]])
        if isinstance(node, gast.Name) and node.id in stacks:
            node.id = renamed[node.id]


def _shape_read(node: gast.AST, gl: str) -> str | None:
    """``v`` for ``gl.unbroadcast(g, v)``: a read of ``v``'s shape only."""
    if (isinstance(node, gast.Call) and isinstance(node.func, gast.Attribute)
            and node.func.attr == "unbroadcast" and isinstance(node.func.value, gast.Name)
            and node.func.value.id == gl and len(node.args) == 2 and not node.keywords
            and isinstance(node.args[1], gast.Name)):
        return node.args[1].id
    return None


def _rename_shape_reads(fn: gast.FunctionDef, shapes: dict[str, str], gl: str) -> None:
    """Each ``gl.unbroadcast(g, v)`` of a ``v`` in ``shapes`` made
    ``gl.unbroadcast_to(g, shapes[v])``."""
    for node in trees.walk(fn):
        v = _shape_read(node, gl)
        if v is not None and v in shapes:
            node.func.attr = "unbroadcast_to"
            node.args[1] = name(shapes[v])


def _names(fn: gast.FunctionDef) -> set[str]:
    return {n.id for n in trees.walk(fn) if isinstance(n, gast.Name)}


def _fresh(taken: set[str], wanted: str) -> str:
    """``wanted``, or ``wanted2``... if taken; taken from then on."""
    out, n = wanted, 1
    while out in taken:
        n += 1
        out = f"{wanted}{n}"
    taken.add(out)
    return out


def drop_stacks(fn: gast.FunctionDef, dropped: set[str]) -> None:
    """Remove every ``s = []``, ``s.append(v)`` and ``v = s.pop()`` of the stacks ``dropped``."""
    def keep(s: gast.stmt) -> bool:
        if isinstance(s, gast.Assign) and len(s.targets) == 1 and isinstance(
                s.targets[0], gast.Name) and s.targets[0].id in dropped and isinstance(
                s.value, gast.List):
            return False
        pushed = pushed_stack(s)
        if pushed is not None and pushed in dropped:
            return False
        popped = popped_stack(s)
        return not (popped is not None and popped[0] in dropped)

    def clean(block: list[gast.stmt]) -> list[gast.stmt]:
        out = []
        for s in block:
            if not keep(s):
                continue
            for field in ("body", "orelse"):
                inner = getattr(s, field, None)
                if isinstance(inner, list) and inner and isinstance(inner[0], gast.stmt):
                    setattr(s, field, clean(inner))
            out.append(s)
        return out

    fn.body = clean(fn.body)


def list_names(fn: gast.FunctionDef) -> set[str]:
    """The names ``fn`` creates as an empty list (``s = []``): the candidates in code whose
    stacks the generator did not name itself (forward mode over gradient code)."""
    return {s.targets[0].id for s in trees.walk(fn)
            if isinstance(s, gast.Assign) and len(s.targets) == 1
            and isinstance(s.targets[0], gast.Name) and isinstance(s.value, gast.List)
            and not s.value.elts}


# --- the shapes of the statements involved ----------------------------------------------------
def pushed_stack(s: gast.AST) -> str | None:
    """``s`` for ``s.append(v)`` written as a statement."""
    if (isinstance(s, gast.Expr) and isinstance(s.value, gast.Call)
            and isinstance(s.value.func, gast.Attribute) and s.value.func.attr == "append"
            and isinstance(s.value.func.value, gast.Name) and len(s.value.args) == 1
            and not s.value.keywords):
        return s.value.func.value.id
    return None


def popped_stack(s: gast.AST) -> tuple[str, str] | None:
    """``(s, v)`` for ``v = s.pop()``."""
    if (isinstance(s, gast.Assign) and len(s.targets) == 1
            and isinstance(s.targets[0], gast.Name) and isinstance(s.value, gast.Call)
            and isinstance(s.value.func, gast.Attribute) and s.value.func.attr == "pop"
            and isinstance(s.value.func.value, gast.Name) and not s.value.args
            and not s.value.keywords):
        return s.value.func.value.id, s.targets[0].id
    return None


def only_pushed_and_popped(fn: gast.FunctionDef, stacks: set[str]) -> set[str]:
    """The stacks of ``stacks`` every mention of which is its one creation (``s = []``), a push
    or a pop (one walk of the function for all of them)."""
    allowed: set[int] = set()
    creations: dict[str, int] = {}
    spoiled: set[str] = set()
    mentions: list[gast.Name] = []
    for node in trees.walk(fn):
        if isinstance(node, gast.Name):
            if node.id in stacks:
                mentions.append(node)
            continue
        if isinstance(node, gast.Assign) and len(node.targets) == 1 and isinstance(
                node.targets[0], gast.Name) and node.targets[0].id in stacks:
            stack = node.targets[0].id
            if popped_stack(node) is None:
                if isinstance(node.value, gast.List) and not node.value.elts:
                    creations[stack] = creations.get(stack, 0) + 1
                else:
                    spoiled.add(stack)
            allowed.add(id(node.targets[0]))
        pushed = pushed_stack(node)
        if pushed is not None and pushed in stacks:
            allowed.add(id(node.value.func.value))   # type: ignore[attr-defined]
        popped = popped_stack(node)
        if popped is not None and popped[0] in stacks:
            allowed.add(id(node.value.func.value))   # type: ignore[attr-defined]
    spoiled |= {n.id for n in mentions if id(n) not in allowed}
    return {s for s in stacks if creations.get(s) == 1 and s not in spoiled}


# --- liveness ------------------------------------------------------------------------------
def _reads(node: gast.AST | None) -> set[str]:
    if node is None:
        return set()
    return {n.id for n in trees.walk(node) if isinstance(n, gast.Name) and isinstance(
        n.ctx, gast.Load)}


def _target_effect(target: gast.expr) -> tuple[set[str], set[str]]:
    """(names a store to ``target`` overwrites, names it reads): ``a, b = ...`` overwrites
    both; ``d[i] = ...`` reads ``d`` and ``i`` and overwrites nothing."""
    if isinstance(target, gast.Name):
        return {target.id}, set()
    if isinstance(target, (gast.Tuple, gast.List)):
        kills: set[str] = set()
        reads: set[str] = set()
        for e in target.elts:
            k, r = _target_effect(e)
            kills |= k
            reads |= r
        return kills, reads
    if isinstance(target, gast.Starred):
        return _target_effect(target.value)
    return set(), _reads(target) | {n.id for n in trees.walk(target) if isinstance(n, gast.Name)}


class _Liveness:
    """Backward liveness over structured code: which names may be read before being written
    again. Loops are followed to a fixed point (the sets only grow, within the function's
    names, so it ends); ``popped_and_read`` collects the pops whose value is live after them."""

    def __init__(self, live_at_exit: set[str], watch: dict[str, str] | None = None) -> None:
        self.exit = set(live_at_exit)
        self.read_pops: set[int] = set()
        #: stack -> a name: the stacks after one of whose pops that name is live (its pops
        #: assign another name; see shape_only_stacks)
        self.watch = watch or {}
        self.needed: set[str] = set()

    def popped_and_read(self, body: list[gast.stmt]) -> set[int]:
        self.block(body, set(self.exit), None)
        return self.read_pops

    def block(self, stmts: list[gast.stmt], live: set[str], loop: tuple[set[str], set[str]] | None
              ) -> set[str]:
        """Live before ``stmts`` given ``live`` after them; ``loop``: (live after the
        enclosing loop, live at its head), for ``break`` and ``continue``."""
        for s in reversed(stmts):
            live = self.stmt(s, live, loop)
        return live

    def stmt(self, s: gast.stmt, live: set[str], loop: tuple[set[str], set[str]] | None
             ) -> set[str]:
        if isinstance(s, gast.Assign):
            popped = popped_stack(s)
            if popped is not None and popped[1] in live:
                self.read_pops.add(id(s))
            if popped is not None and self.watch.get(popped[0], "") in live:
                self.needed.add(popped[0])
            kills: set[str] = set()
            reads = _reads(s.value)
            for t in s.targets:
                k, r = _target_effect(t)
                kills |= k
                reads |= r
            return (live - kills) | reads
        if isinstance(s, gast.AugAssign):
            return live | _reads(s.value) | {n.id for n in trees.walk(s.target)
                                             if isinstance(n, gast.Name)}
        if isinstance(s, gast.AnnAssign):
            return live | _reads(s.value) | _reads(s.target)
        if isinstance(s, gast.Expr):
            return live if is_comment(s) else live | _reads(s.value)
        if isinstance(s, gast.Pass):
            return live
        if isinstance(s, gast.Return):
            return _reads(s.value) | self.exit
        if isinstance(s, gast.Raise):
            return _reads(s.exc) | _reads(s.cause)
        if isinstance(s, gast.Assert):
            return live | _reads(s.test) | _reads(s.msg)
        if isinstance(s, gast.If):
            return _reads(s.test) | self.block(s.body, set(live), loop) | self.block(
                s.orelse, set(live), loop)
        if isinstance(s, (gast.For, gast.While)):
            return self.loop(s, live)
        if isinstance(s, gast.Break):
            if loop is None:
                raise _Unknown
            return set(loop[0])
        if isinstance(s, gast.Continue):
            if loop is None:
                raise _Unknown
            return set(loop[1])
        raise _Unknown   # try, with, nested definitions, global...: not modelled

    def loop(self, s: gast.For | gast.While, after: set[str]) -> set[str]:
        """Live before the loop: its head is reached from before it and from the end of each
        iteration (and ``continue``); the loop may run its body no time at all."""
        if s.orelse:
            raise _Unknown
        if isinstance(s, gast.For):
            kills, target_reads = _target_effect(s.target)
            head_extra = _reads(s.iter)
        else:
            kills, target_reads = set(), set()
            head_extra = _reads(s.test)
        head = set(after)
        while True:
            start = self.block(s.body, set(head), (after, head))
            # entering an iteration assigns the target
            new_head = after | ((start - kills) | target_reads) | (
                head_extra if isinstance(s, gast.While) else set())
            if new_head <= head:
                break
            head |= new_head
        if isinstance(s, gast.For):
            return head | head_extra
        return head
