"""The binomial checkpointing schedule that a checkpointed loop's generated code follows.

A loop of ``n`` steps is reversed with a fixed number of *snapshots* (copies of the state the
loop carries from one step to the next) instead of a tape of every step. The forward sweep runs
the loop without a tape, keeping snapshots at some steps; the backward sweep then, segment by
segment, restores a snapshot, advances (recomputes without a tape) to the step to reverse,
records that one step and runs its backward code. The split points follow Griewank's binomial
rule (the *revolve* schedule): with ``s`` free snapshots and ``r`` repetitions, at most
``C(s + r, s)`` steps can be reversed, each step recomputed at most ``r`` times; a segment is
split so that its right part needs one snapshot less and its left part one repetition less.

What the generated code runs is :func:`binomial_schedule`; it is plain Python on integers, so
it runs the same on every backend (under ``jax.jit`` or ``tf.function`` it is unrolled while
tracing).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from math import comb
from typing import Optional

#: The actions of the backward sweep, as the generated code tests them.
SNAPSHOT, RESTORE, DROP, ADVANCE, REVERSE = "snapshot", "restore", "drop", "advance", "reverse"


@dataclass
class Schedule:
    """``first_sweep``: the steps whose state the forward sweep keeps; ``backward``: the
    backward sweep's actions ``(action, t, steps)`` — ``t`` the step (the loop variable's
    value) a snapshot is taken of, restored, dropped or reversed; ``steps`` the range an
    advance recomputes (None for the others). ``snapshots``: the most states kept at once."""

    first_sweep: frozenset[int]
    backward: list[tuple[str, int, Optional[range]]] = field(default_factory=list)
    snapshots: int = 0
    recomputed: int = 0      # steps run without a tape in the backward sweep


def default_snapshots(n: int) -> int:
    """The free snapshots for ``n`` steps when the caller names none: the fewest with which
    every step runs at most twice without a tape: once in the forward sweep, at most once more
    in the backward sweep (``C(s + 2, 2) >= n``, about ``sqrt(2 n)``)."""
    s = 0
    while comb(s + 2, 2) < n:
        s += 1
    return s


def repetitions(steps: int, free: int) -> int:
    """The fewest repetitions ``r`` with ``C(free + r, free) >= steps``."""
    r = 0
    while comb(free + r, free) < steps:
        r += 1
    return r


@lru_cache(maxsize=16)
def binomial_schedule(steps: range, snapshots: Optional[int] = None) -> Schedule:
    """The schedule reversing the loop steps ``steps`` (the loop's ``range``) with at most
    ``snapshots`` snapshots besides the one of the loop's start (None: :func:`default_snapshots`).
    Made once per trip count and number of snapshots (it takes ~1 s for 100,000 steps)."""
    n = len(steps)
    if n == 0:
        return Schedule(frozenset())
    free = default_snapshots(n) if snapshots is None else max(int(snapshots), 0)
    # reverse(a, b, s): a snapshot of position a exists (positions 0..n-1); reverse steps
    # b-1 .. a with s snapshots to spare. Worked with an explicit stack (a deep recursion would
    # hit Python's limit for long loops): an entry is a segment to reverse, or a snapshot to
    # drop once the entries above it are done. The forward sweep already walked the first
    # segments' right parts, keeping a snapshot at each split: those are not done again.
    todo: list[tuple[int, int, int]] = []     # (a, b, s); s == -1: drop the snapshot of a
    kept = {0}
    a, s = 0, free
    while n - a > 1 and s > 0:
        m = _split(a, n, s)
        todo += [(a, m, s), (m, m, -1)]
        kept.add(m)
        a, s = m, s - 1
    todo.append((a, n, s))
    out: list[tuple[str, int, Optional[range]]] = []
    emit = out.append
    at: Optional[int] = None        # the position the loop's state is at, when known
    most, live, recomputed = len(kept), len(kept), 0
    while todo:
        a, b, s = todo.pop()
        if s < 0:
            emit((DROP, steps[a], None))
            live -= 1
            continue
        if b - a == 1 or s == 0:
            for k in range(b - 1, a - 1, -1):
                if at != a:
                    emit((RESTORE, steps[a], None))
                if k > a:
                    emit((ADVANCE, steps[a], steps[a:k]))
                    recomputed += k - a
                emit((REVERSE, steps[k], None))
                at = None
            continue
        m = _split(a, b, s)
        if at != a:
            emit((RESTORE, steps[a], None))
        emit((ADVANCE, steps[a], steps[a:m]))
        emit((SNAPSHOT, steps[m], None))
        recomputed += m - a
        at = m
        live += 1
        most = max(most, live)
        todo += [(a, m, s), (m, m, -1), (m, b, s - 1)]
    return Schedule(frozenset(steps[p] for p in kept), out, most, recomputed)


def _split(a: int, b: int, s: int) -> int:
    """Where segment ``a..b`` (more than one step, ``s`` > 0 snapshots to spare) is split: its
    right part is as long as ``s - 1`` snapshots reverse in the repetitions the whole needs."""
    r = repetitions(b - a, s)
    return b - min(comb(s - 1 + r, s - 1), b - a - 1)
