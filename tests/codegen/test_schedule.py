"""The binomial checkpointing schedule: run as the generated code runs it, it reverses every
step once, last first, from the state that step starts from, and never holds more snapshots
than it was given."""
from __future__ import annotations

import collections

import pytest

from gradlab.codegen.schedule import binomial_schedule, default_snapshots


def run(steps: range, snapshots):
    """Follow the schedule as generated code does, with the loop's state being the step it is
    at: returns the steps reversed, the most snapshots held, and each step's recomputations."""
    schedule = binomial_schedule(steps, snapshots)
    kept = set(schedule.first_sweep)
    at, reversed_steps, most = None, [], len(kept)
    advanced: collections.Counter = collections.Counter()
    for action, t, span in schedule.backward:
        if action == "restore":
            assert t in kept
            at = t
        elif action == "snapshot":
            assert at == t
            kept.add(t)
            most = max(most, len(kept))
        elif action == "drop":
            kept.remove(t)
        elif action == "advance":
            assert at == span.start == t
            advanced.update(span)
            at = span[-1] + steps.step
        else:
            assert action == "reverse" and at == t
            reversed_steps.append(t)
            at = None        # a reversed step leaves the state where its backward code put it
    assert most == schedule.snapshots and sum(advanced.values()) == schedule.recomputed
    return reversed_steps, most, advanced


@pytest.mark.parametrize("snapshots", [None, 0, 1, 2, 3, 7, 100])
@pytest.mark.parametrize("n", list(range(0, 40)) + [97, 300])
def test_every_step_is_reversed_once_last_first(n, snapshots):
    for steps in (range(n), range(5, 5 + 3 * n, 3), range(n)[::-1]):
        reversed_steps, most, _ = run(steps, snapshots)
        assert reversed_steps == list(reversed(steps))
        free = default_snapshots(n) if snapshots is None else snapshots
        assert most <= free + 1      # the loop's start is kept besides


@pytest.mark.parametrize("n", [10, 1000, 5000])
def test_the_default_recomputes_each_step_at_most_once(n):
    _, most, advanced = run(range(n), None)
    assert max(advanced.values(), default=0) <= 1
    assert most <= default_snapshots(n) + 1 < 2 * int((2 * n) ** 0.5) + 3


def test_fewer_snapshots_recompute_more():
    counts = [binomial_schedule(range(200), k).recomputed for k in (0, 1, 3, 10)]
    assert counts == sorted(counts, reverse=True)
    assert counts[0] == 200 * 199 // 2      # no snapshot: step t recomputed from the start
