"""Values the backward pass reads again instead of saving them (``optimized=True``, reverse
mode): ``u_t = u[t]`` where ``u_t = u_t_stack.pop()`` was, and no stack.

A loop's forward pass pushes a value its backward pass reads; some of those values are as
easy to compute again as to store: an entry of an array nothing changes, read at the loop's
own index (``u[t]``), or a scalar operation of such values and constants (``0.3 * u_t``). The
backward pass then computes the value where it popped it, and the forward pass neither pushes
it nor keeps a list of one entry a step.

The proof is from the finished adjoint's code alone, and deliberately narrow. A stack qualifies
when it is pushed once and popped once, into the name it was pushed from, and the value pushed
is ``v = E`` of the same block, nothing between the two writing a name ``E`` reads, where ``E``
is at most two operations (``+ - *`` and ``/``, negation) of:

- constants;
- parameters the function never assigns;
- a name assigned once, by a statement of the function's top level before the loop;
- the variable of a ``for`` loop around the push, when the pop sits in a loop over
  ``reversed`` of the same range with the same variable, and nothing else assigns it (each
  backward step then sees the index of the forward step whose value it pops);
- an entry ``x[i]`` of such a name at such an index, when nothing in the function changes
  anything in place (no item, attribute or augmented assignment, no call but ``gl.*``,
  ``range``, ``reversed``, ``len`` and the stacks' own pushes and pops);
- another value this pass recomputes, defined earlier in the same forward block and popped in
  the same backward block, with only pops between the two pops (its computation is then moved
  after the one it reads).

When in doubt the value stays saved.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable

import gast

from . import trees
from .build import is_comment
from .saves import (drop_stacks, list_names, only_pushed_and_popped, popped_stack,
                    pushed_stack)

#: The most operations a recomputed value may cost.
MAX_OPERATIONS = 2
_CHEAP = (gast.Add, gast.Sub, gast.Mult, gast.Div)
_PURE_BUILTINS = {"range", "reversed", "len", "__comment__"}


@dataclass
class _Site:
    """Where a statement is: its block, index, and the ``for`` loops around it (outermost
    first), and the index of the top-level statement holding it."""
    block: list[gast.stmt]
    index: int
    loops: list[gast.For]
    top: int


@dataclass
class _Facts:
    """What the whole function tells about its names."""
    stores: dict[str, int]
    loop_stores: dict[str, int]
    sites: dict[int, _Site]
    lists: set[str]    # the lists the function makes (its stacks among them)
    changes_in_place: bool
    top_assigned: dict[str, int] = field(default_factory=dict)
    recomputed: set[int] = field(default_factory=set)   # the statements that were pops


def recompute_saved(fn: gast.FunctionDef, stacks: Iterable[str], gl: str = "gl") -> set[str]:
    """Replace the pops of the stacks whose value is cheap to compute again by that computation
    (see the module's docstring); the stacks so replaced, dropped, are returned."""
    candidates = only_pushed_and_popped(fn, set(stacks))
    if not candidates:
        return set()
    facts = _facts(fn, list_names(fn), gl)
    if facts.changes_in_place:
        return set()
    pushes: dict[str, list[gast.stmt]] = {}
    pops: dict[str, list[gast.stmt]] = {}
    for node in trees.walk(fn):
        if isinstance(node, gast.stmt):
            s = pushed_stack(node)
            if s is not None and s in candidates:
                pushes.setdefault(s, []).append(node)
            popped = popped_stack(node)
            if popped is not None and popped[0] in candidates:
                pops.setdefault(popped[0], []).append(node)
    order = sorted((s for s in candidates if len(pushes.get(s, ())) == 1 and len(
        pops.get(s, ())) == 1), key=lambda s: _position(facts.sites[id(pushes[s][0])]))
    done: dict[str, tuple[gast.Assign, gast.Assign, _Site]] = {}   # value -> (def, pop, ...)
    for s in order:
        push, pop = pushes[s][0], pops[s][0]
        value = push.value.args[0]   # type: ignore[attr-defined]
        if not (isinstance(value, gast.Name) and popped_stack(pop) == (s, value.id)):
            continue
        definition = _definition(facts, push, value.id)
        if definition is None:
            continue
        deps = _recomputable(definition.value, facts, push, pop, definition, done)
        if deps is None or not _place_after(facts, pop, [done[d][1] for d in deps]):
            continue
        pop.value = trees.clone(definition.value)   # type: ignore[attr-defined]
        facts.recomputed.add(id(pop))
        done[value.id] = (definition, pop, facts.sites[id(definition)])
    replaced = {s for s in order if popped_stack(pops[s][0]) is None}
    if replaced:
        drop_stacks(fn, replaced)
    return replaced


def _position(site: _Site) -> tuple[int, int]:
    return site.top, site.index


def _facts(fn: gast.FunctionDef, lists: set[str], gl: str) -> _Facts:
    stores: dict[str, int] = {}
    loop_stores: dict[str, int] = {}
    changes = False
    for n in trees.walk(fn):
        if isinstance(n, gast.Name) and isinstance(n.ctx, (gast.Store, gast.Del)):
            stores[n.id] = stores.get(n.id, 0) + 1
        elif isinstance(n, (gast.Subscript, gast.Attribute, gast.Starred)) and isinstance(
                n.ctx, (gast.Store, gast.Del)):
            changes = True
        elif isinstance(n, (gast.AugAssign, gast.Global, gast.Nonlocal, gast.Lambda,
                            gast.FunctionDef, gast.ClassDef)) and n is not fn:
            changes = True
        elif isinstance(n, gast.Call) and not _pure_call(n, lists, gl):
            changes = True
        if isinstance(n, gast.For) and isinstance(n.target, gast.Name):
            loop_stores[n.target.id] = loop_stores.get(n.target.id, 0) + 1
    facts = _Facts(stores, loop_stores, {}, lists, changes)
    _sites(fn.body, [], None, facts)
    for top, s in enumerate(fn.body):
        if isinstance(s, gast.Assign) and len(s.targets) == 1 and isinstance(
                s.targets[0], gast.Name) and stores.get(s.targets[0].id) == 1:
            facts.top_assigned[s.targets[0].id] = top
    return facts


def _pure_call(call: gast.Call, lists: set[str], gl: str) -> bool:
    """A call that changes nothing a recomputed value reads: ``gl.*``, a few builtins, and
    pushes and pops of the function's own lists (which no recomputed value reads)."""
    f = call.func
    if isinstance(f, gast.Attribute) and isinstance(f.value, gast.Name):
        return f.value.id == gl or (f.value.id in lists and f.attr in ("append", "pop"))
    return isinstance(f, gast.Name) and f.id in _PURE_BUILTINS


def _sites(block: list[gast.stmt], loops: list[gast.For], top: int | None, facts: _Facts
           ) -> None:
    for i, s in enumerate(block):
        here = i if top is None else top
        facts.sites[id(s)] = _Site(block, i, loops, here)
        inner = loops + [s] if isinstance(s, gast.For) else loops
        for name in ("body", "orelse"):
            sub = getattr(s, name, None)
            if isinstance(sub, list) and sub and isinstance(sub[0], gast.stmt):
                _sites(sub, inner, here, facts)


def _definition(facts: _Facts, push: gast.stmt, v: str) -> gast.Assign | None:
    """``v = E`` before ``push`` in its block, with nothing between writing ``v`` or a name
    ``E`` reads; None otherwise."""
    site = facts.sites[id(push)]
    for j in range(site.index - 1, -1, -1):
        s = site.block[j]
        if v not in _written(s):
            continue
        if not (isinstance(s, gast.Assign) and len(s.targets) == 1
                and isinstance(s.targets[0], gast.Name)):
            return None
        reads = {n.id for n in trees.walk(s.value) if isinstance(n, gast.Name)}
        if any(_written(t) & reads for t in site.block[j + 1:site.index]):
            return None
        return s
    return None


def _written(s: gast.stmt) -> set[str]:
    return {n.id for n in trees.walk(s) if isinstance(n, gast.Name)
            and isinstance(n.ctx, (gast.Store, gast.Del))}


def _recomputable(expr: gast.expr, facts: _Facts, push: gast.stmt, pop: gast.stmt,
                  definition: gast.Assign,
                  done: dict[str, tuple[gast.Assign, gast.Assign, _Site]]) -> list[str] | None:
    """The recomputed values ``expr`` reads (it reads them in the forward block of
    ``definition``, before it), or None where ``expr`` is not cheap and sure to give, where
    ``pop`` is, the value it gave where ``push`` is."""
    deps: list[str] = []
    operations = 0

    def ok(e: gast.expr, index: bool = False) -> bool:
        nonlocal operations
        if isinstance(e, gast.Constant):
            return isinstance(e.value, (int, float, complex)) or e.value is None and index
        if isinstance(e, gast.Name):
            if _fixed(e.id, facts, push, pop):
                return True
            if index or e.id not in done or facts.stores.get(e.id) != 2:
                return False   # a value written but by its definition and its pop: unsure
            d_def, d_pop, d_site = done[e.id]
            def_site = facts.sites[id(definition)]
            if d_site.block is not def_site.block or d_site.index >= def_site.index:
                return False
            deps.append(e.id)
            return True
        if isinstance(e, gast.Subscript):
            if index or not (
                    isinstance(e.value, gast.Name) and _fixed(e.value.id, facts, push, pop)):
                return False
            key = e.slice
            parts = key.elts if isinstance(key, gast.Tuple) else [key]
            return all(ok(p, index=True) for p in parts)
        if isinstance(e, gast.BinOp) and isinstance(e.op, _CHEAP) and not index:
            operations += 1
            return ok(e.left) and ok(e.right)
        if isinstance(e, gast.UnaryOp) and isinstance(e.op, gast.USub) and not index:
            operations += 1
            return ok(e.operand)
        return False

    if not ok(expr) or operations > MAX_OPERATIONS:
        return None
    return deps


def _fixed(n: str, facts: _Facts, push: gast.stmt, pop: gast.stmt) -> bool:
    """Whether name ``n`` holds, where ``pop`` is, the value it held where ``push`` is."""
    if n in facts.lists:
        return False
    if n not in facts.stores:    # a parameter or a free name the function never assigns
        return True
    top = facts.top_assigned.get(n)
    if top is not None:
        return top < facts.sites[id(push)].top and top < facts.sites[id(pop)].top
    if facts.stores.get(n) != facts.loop_stores.get(n):
        return False
    forward = _innermost_loop(facts.sites[id(push)].loops, n)
    backward = _innermost_loop(facts.sites[id(pop)].loops, n)
    if forward is None or backward is None or forward is backward:
        return False
    it = backward.iter
    return (isinstance(it, gast.Call) and isinstance(it.func, gast.Name)
            and it.func.id == "reversed" and len(it.args) == 1 and not it.keywords
            and gast.dump(it.args[0]) == gast.dump(forward.iter)
            and all(_fixed(m.id, facts, push, pop) for m in trees.walk(forward.iter)
                    if isinstance(m, gast.Name) and m.id not in ("range", "reversed")))


def _innermost_loop(loops: list[gast.For], n: str) -> gast.For | None:
    for loop in reversed(loops):
        if isinstance(loop.target, gast.Name) and loop.target.id == n:
            return loop
    return None


def _place_after(facts: _Facts, pop: gast.stmt, deps: list[gast.stmt]) -> bool:
    """Move ``pop`` (soon a computation reading the values ``deps`` computes) after each of
    ``deps``, where they are in its block with only pops, or computations that replaced pops,
    between; False where they are not."""
    if not deps:
        return True
    block = facts.sites[id(pop)].block
    start = _index(block, pop)
    positions = [p for p in (_index(block, d) for d in deps) if p is not None]
    if start is None or len(positions) != len(deps):
        return False
    last = max(positions)
    if last < start:
        return True
    between = block[start + 1:last + 1]
    if any(is_comment(s) or not (isinstance(s, gast.Assign) and len(s.targets) == 1
                                 and isinstance(s.targets[0], gast.Name)) for s in between):
        return False
    moved = pop.targets[0].id    # type: ignore[attr-defined]
    if any(moved in {n.id for n in trees.walk(s.value) if isinstance(n, gast.Name)}
           for s in between):
        return False
    if not all(popped_stack(s) is not None or id(s) in facts.recomputed for s in between):
        return False
    del block[start]
    block.insert(last, pop)
    return True


def _index(block: list[gast.stmt], s: gast.stmt) -> int | None:
    for i, t in enumerate(block):
        if t is s:
            return i
    return None

