"""Honest timings: every run waits for the device (CUDA sync, ``block_until_ready``), the first
call (compilation, caches) is reported apart, and the figure is a median of repeats."""
from __future__ import annotations

import statistics
import time
from dataclasses import dataclass
from typing import Any, Callable

from ..tensor.detect import common_framework
from ..tensor.devices import device_label, synchronize


@dataclass
class Timing:
    framework: str
    device: str
    median_ms: float
    first_ms: float
    repeats: int

    def line(self) -> str:
        """``torch · cuda:0 · NVIDIA H200 · 0.41 ms (median of 20) · first call 12 ms``"""
        return (f"{self.framework} · {self.device} · {format_ms(self.median_ms)} (median of "
                f"{self.repeats}) · first call {format_ms(self.first_ms)}")


def format_ms(value: float) -> str:
    """A time in milliseconds with the digits that matter at its size."""
    if value >= 100:
        return f"{value:.0f} ms"
    if value >= 1:
        return f"{value:.2f} ms"
    return f"{value:.3f} ms"


def first_array(values: Any) -> Any:
    stack = list(values)
    while stack:
        v = stack.pop(0)
        if isinstance(v, (list, tuple)):
            stack[:0] = list(v)
        elif hasattr(v, "shape"):
            return v
    return None


def measure(fn: Callable[..., Any], args: tuple[Any, ...], repeats: int = 20,
            budget_s: float = 2.0) -> tuple[Any, Timing]:
    """Run ``fn(*args)`` once (timed as the first call), then up to ``repeats`` more times
    within about ``budget_s`` seconds; returns the last result and the timing."""
    start = time.perf_counter()
    result = fn(*args)
    synchronize(result)
    first = time.perf_counter() - start
    times = []
    deadline = time.perf_counter() + budget_s
    for _ in range(repeats):
        t0 = time.perf_counter()
        result = fn(*args)
        synchronize(result)
        times.append(time.perf_counter() - t0)
        if time.perf_counter() > deadline:
            break
    fw = common_framework(args)
    sample = first_array(args)
    device = device_label(sample) if sample is not None else "cpu"
    return result, Timing(fw, device, statistics.median(times) * 1e3, first * 1e3, len(times))
