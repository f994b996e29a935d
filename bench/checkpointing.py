"""Checkpointing's trade-off: the memory a loop's gradient holds against the time it takes.

Not a test: a script that prints a table and PASS/FAIL lines. The loop is a state of 1,000
entries updated from one input per step (the shape of a simulation or a hand-written RNN):

    x = x + 0.01 * np.tanh(w * x + u[t])       for t in range(n)

differentiated with respect to ``x0``, ``u`` and ``w`` by ``gradlab.grad`` (a tape of every
step) and by ``gradlab.grad(..., checkpoint=True)`` (a binomial schedule, about sqrt(2 n)
snapshots), on NumPy with one thread, for n = 1e3, 1e4, 1e5 steps. Peak memory is measured with
tracemalloc (NumPy reports its arrays to it) in a run of its own; time is the median of
repeated runs without tracemalloc, both gradients measured side by side.

Targets (n = 100,000): peak memory with checkpointing <= 10% of the tape's, time <= 3x.

    python bench/checkpointing.py [--quick] [--strict]

``--quick`` stops at 10,000 steps (its targets are checked there); ``--strict`` exits with
status 1 when a target fails.
"""
from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
    os.environ[_var] = "1"

import argparse  # noqa: E402
import gc  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import tracemalloc  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any, Callable  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np  # noqa: E402

import gradlab  # noqa: E402
from gradlab.codegen.schedule import binomial_schedule  # noqa: E402

MEMORY_LIMIT, TIME_LIMIT = 0.10, 3.0
STATE = 1000


def simulate(x0, u, w):
    x = x0
    for t in range(u.shape[0]):
        x = x + 0.01 * np.tanh(w * x + u[t])
    return np.sum(x ** 2)


def peak_bytes(fn: Callable[..., Any], args: tuple[Any, ...]) -> int:
    """The most memory ``fn(*args)`` held at once beyond what existed before the call."""
    gc.collect()
    tracemalloc.start()
    base = tracemalloc.get_traced_memory()[0]
    tracemalloc.reset_peak()
    result = fn(*args)
    peak = tracemalloc.get_traced_memory()[1] - base
    tracemalloc.stop()
    del result
    return peak


def seconds(fns: list[Callable[..., Any]], args: tuple[Any, ...], repeats: int) -> list[float]:
    """The median time of each function, the runs interleaved (a noisy machine slows both)."""
    times: list[list[float]] = [[] for _ in fns]
    for _ in range(repeats):
        for i, fn in enumerate(fns):
            gc.collect()
            start = time.perf_counter()
            fn(*args)
            times[i].append(time.perf_counter() - start)
    return [statistics.median(t) for t in times]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--strict", action="store_true")
    options = parser.parse_args()
    sizes = [1_000, 10_000] if options.quick else [1_000, 10_000, 100_000]
    taped = gradlab.grad(simulate, (0, 1, 2))
    checkpointed = gradlab.grad(simulate, (0, 1, 2), checkpoint=True)
    rng = np.random.default_rng(0)
    print(f"loop: x = x + 0.01 * tanh(w * x + u[t]), state of {STATE}, gradient wrt x0, u, w "
          f"(NumPy, one thread)")
    print(f"{'steps':>8} {'tape MB':>9} {'ckpt MB':>9} {'memory':>7} {'tape s':>8} "
          f"{'ckpt s':>8} {'time':>6} {'snapshots':>9} {'recomputed':>10}")
    rows = []
    for n in sizes:
        args = (rng.normal(size=STATE), rng.normal(size=n) * 0.1, rng.normal(size=STATE))
        a, b = taped(*args), checkpointed(*args)     # warm up, and the same gradient
        for ga, gb in zip(a, b):
            assert np.allclose(ga, gb, rtol=1e-12, atol=1e-12), "gradients differ"
        del a, b
        schedule = binomial_schedule(range(n))
        memory = [peak_bytes(taped, args), peak_bytes(checkpointed, args)]
        repeats = 5 if n <= 10_000 else 3
        time_tape, time_ckpt = seconds([taped, checkpointed], args, repeats)
        rows.append((n, memory[1] / memory[0], time_ckpt / time_tape))
        print(f"{n:>8} {memory[0] / 1e6:>9.1f} {memory[1] / 1e6:>9.1f} "
              f"{memory[1] / memory[0]:>6.1%} {time_tape:>8.3f} {time_ckpt:>8.3f} "
              f"{time_ckpt / time_tape:>5.2f}x {schedule.snapshots:>9} "
              f"{schedule.recomputed:>10}")
    n, memory_ratio, time_ratio = rows[-1]
    checks = [(f"memory with checkpointing at {n} steps <= {MEMORY_LIMIT:.0%} of the tape's",
               memory_ratio <= MEMORY_LIMIT, f"{memory_ratio:.1%}"),
              (f"time with checkpointing at {n} steps <= {TIME_LIMIT:g}x the tape's",
               time_ratio <= TIME_LIMIT, f"{time_ratio:.2f}x")]
    for text, ok, figure in checks:
        print(f"{'PASS' if ok else 'FAIL'}: {text} ({figure})")
    return 1 if options.strict and not all(ok for _, ok, _ in checks) else 0


if __name__ == "__main__":
    sys.exit(main())
