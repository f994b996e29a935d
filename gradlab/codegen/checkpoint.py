"""Checkpointed loops: which ``for`` loops a gradient reverses with a binomial schedule instead of
a tape, what state they carry, and the code that runs the schedule.

``gradlab.grad(f, checkpoint=True)`` (or ``checkpoint=k``, at most ``k`` snapshots besides the
loop's start) checkpoints every ``for`` loop at the top level of ``f``'s body. The forward pass
runs such a loop without pushing anything, keeping *snapshots* of the values the loop carries
from one step to the next at the steps :func:`gradlab.codegen.schedule.binomial_schedule`
names; the backward pass follows the schedule's actions: restore a snapshot, advance
(recompute steps without a tape), take a snapshot, drop one, or *reverse* a step — run it once
more with its pushes, then its backward code at once, so the tape never holds more than one
step. The backward code of a step is the one the plain gradient runs, unchanged.

A snapshot is a tuple of references: gradlab's code never changes an array in place, so the
values a snapshot names stay as they were.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import gast

from . import ir
from .build import assign, attr, call, const, for_, name, note, store
from .ir import EffectKind
from .schedule import ADVANCE, DROP, RESTORE, SNAPSHOT, binomial_schedule

#: The name generated code calls the schedule by (a free value of the generated module).
SCHEDULE = "checkpoint_schedule"
FREE = {SCHEDULE: binomial_schedule}


@dataclass
class CheckpointedLoop:
    """One loop to checkpoint: the values its snapshots hold, and the generated names."""

    state: list[str]          # what the loop carries from one step to the next, snapshotted
    steps: str                # the loop's range, kept for the backward pass
    schedule: str             # the schedule object
    snapshots: str            # the dict of snapshots, by step
    action: str               # the backward sweep's loop variables
    span: str


def plan_checkpoints(fn: ir.Function, active_block: Callable[[list[ir.Stmt]], bool],
                     defined_before: Callable[[str, Any], bool], fresh: Callable[[str], str]
                     ) -> dict[int, CheckpointedLoop]:
    """The loops to checkpoint (by ``id``), each checked; refuses, naming the loop's line and
    what to write instead, a loop that cannot be checkpointed."""
    loops = {}
    for s in fn.body:
        if isinstance(s, (ir.For, ir.While)) and active_block(s.body):
            loops[id(s)] = _checkpointed(s, defined_before, fresh)
    covered = {id(t) for top in fn.body if isinstance(top, ir.For) and id(top) in loops
               for t in ir.walk(top.body)}
    inner = [s for s in ir.walk(fn.body) if isinstance(s, (ir.For, ir.While))
             and id(s) not in loops and id(s) not in covered and active_block(s.body)]
    for s in inner:
        raise ir.refusal(
            "checkpoint= applies to the loops at the top level of the function's body; this "
            "loop is inside an `if`: move it out of the branch (or differentiate without "
            "checkpoint=)", s.origin, "checkpoint")
    if not loops:
        raise ir.refusal(f"checkpoint= was asked for, but {fn.name} has no loop at the top "
                         f"level of its body whose steps carry a gradient: differentiate it "
                         f"without checkpoint=", None, "checkpoint")
    return loops


def _checkpointed(s: ir.For | ir.While, defined_before: Callable[[str, Any], bool],
                  fresh: Callable[[str], str]) -> CheckpointedLoop:
    def refuse(why: str) -> Exception:
        return ir.refusal(f"cannot checkpoint this loop: {why}", s.origin, "checkpoint")

    if isinstance(s, ir.While):
        raise refuse("a `while` loop's number of steps is unknown when it starts; write it as "
                     "`for t in range(n)` (or differentiate without checkpoint=)")
    if s.counter is not None:
        why = "it can stop early (`break` or `return` inside)" if _exits(s.body) else \
            "it changes the range it loops over or its loop variable"
        raise refuse(f"{why}: the schedule needs the number of steps when the loop starts; "
                     f"compute the steps first, or differentiate without checkpoint=")
    appended = sorted({t.target for t in ir.walk(s.body) if isinstance(t, ir.Effect)
                       and t.kind in (EffectKind.APPEND, EffectKind.LIST_SET)})
    if appended:
        raise refuse(f"it changes the list {appended[0]} in place, which a snapshot cannot "
                     f"keep; collect the values in an array, or differentiate without "
                     f"checkpoint=")
    written = ir.writes_in(s.body) - {s.target}
    for v in sorted(written):
        if not defined_before(v, s) and _read_before_written(v, s.body):
            raise refuse(f"{v} is carried from one step to the next but first assigned inside "
                         f"the loop; give it a value before the loop")
    state = sorted(v for v in written if defined_before(v, s))
    t = s.target
    return CheckpointedLoop(state, fresh(f"{t}_steps"), fresh(f"{t}_schedule"),
                            fresh(f"{t}_snapshots"), fresh("action"), fresh("steps"))


def _exits(stmts: list[ir.Stmt]) -> bool:
    return any(isinstance(t, (ir.Break, ir.Return)) for t in ir.walk(stmts))


def _read_before_written(v: str, body: list[ir.Stmt]) -> bool:
    """Whether a step may read ``v`` before it assigns it (then ``v`` is carried)."""
    return _exposed(v, body)[0]


def _exposed(v: str, stmts: list[ir.Stmt]) -> tuple[bool, bool]:
    """(``stmts`` may read ``v`` before assigning it, ``stmts`` surely assign it)."""
    for s in stmts:
        if v in ir.stmt_reads(s):
            return True, False
        if isinstance(s, ir.If):
            body, orelse = _exposed(v, s.body), _exposed(v, s.orelse)
            if body[0] or orelse[0]:
                return True, False
            if body[1] and orelse[1]:
                return False, True
        elif isinstance(s, (ir.For, ir.While)):
            # a loop may run no step: it assigns nothing surely (its own variable included)
            if not (isinstance(s, ir.For) and v == s.target) and _exposed(v, s.body)[0]:
                return True, False
        elif v in ir.stmt_writes(s):
            return False, True
    return False, False


# --- the code -----------------------------------------------------------------------------------
def _state(loop: CheckpointedLoop, ctx: type) -> gast.expr:
    if len(loop.state) == 1:
        return gast.Name(id=loop.state[0], ctx=ctx(), annotation=None, type_comment=None)
    return gast.Tuple(elts=[gast.Name(id=v, ctx=ctx(), annotation=None, type_comment=None)
                            for v in loop.state], ctx=ctx())


def _snapshot(loop: CheckpointedLoop, t: str) -> gast.stmt:
    key = gast.Subscript(value=name(loop.snapshots), slice=name(t), ctx=gast.Store())
    return gast.Assign(targets=[key], value=_state(loop, gast.Load), type_comment=None)


def forward_sweep(s: ir.For, loop: CheckpointedLoop, iterable: gast.expr, snapshots: int | None,
                  body: list[gast.stmt]) -> list[gast.stmt]:
    """The loop run forward without a tape, keeping the schedule's first snapshots."""
    state = ", ".join(loop.state)
    keep = gast.If(test=gast.Compare(left=name(s.target), ops=[gast.In()],
                                     comparators=[attr(loop.schedule, "first_sweep")]),
                   body=[_snapshot(loop, s.target)], orelse=[])
    lines = [note(f"checkpointed: no tape; ({state}) kept before the steps the schedule "
                  f"names"),
             assign(loop.steps, iterable),
             assign(loop.schedule, call(name(SCHEDULE), [name(loop.steps), const(snapshots)])),
             assign(loop.snapshots, gast.Dict(keys=[], values=[]))]
    if loop.state:
        body = [keep] + body
    return lines + [for_(s.target, name(loop.steps), body)]


def backward_sweep(s: ir.For, loop: CheckpointedLoop, advance: list[gast.stmt],
                   taped: list[gast.stmt], backward: list[gast.stmt]) -> list[gast.stmt]:
    """The schedule's actions: restore, snapshot, drop, advance (no tape), reverse (one step
    recorded, then its backward code)."""
    t = s.target
    key = gast.Subscript(value=name(loop.snapshots), slice=name(t), ctx=gast.Load())

    def action_is(what: str) -> gast.expr:
        return gast.Compare(left=name(loop.action), ops=[gast.Eq()], comparators=[const(what)])

    reverse = [note(f"reverse step {t}: run it once more, recording, then backward")]
    reverse += taped + backward
    branches: list[tuple[str, list[gast.stmt]]] = [
        (RESTORE, [gast.Assign(targets=[_state(loop, gast.Store)], value=key,
                               type_comment=None)] if loop.state else [gast.Pass()]),
        (SNAPSHOT, [_snapshot(loop, t)] if loop.state else [gast.Pass()]),
        (DROP, [gast.Delete(targets=[gast.Subscript(value=name(loop.snapshots), slice=name(t),
                                                    ctx=gast.Del())])] if loop.state
         else [gast.Pass()]),
        (ADVANCE, [for_(t, name(loop.span), advance)])]
    chain: list[gast.stmt] = reverse
    for what, lines in reversed(branches):
        chain = [gast.If(test=action_is(what), body=lines, orelse=chain)]
    target = gast.Tuple(elts=[store(loop.action), store(t), store(loop.span)], ctx=gast.Store())
    return [note("checkpointed: the schedule's actions, the last step first"),
            gast.For(target=target, iter=attr(loop.schedule, "backward"), body=chain,
                     orelse=[], type_comment=None)]
