"""Counts kept across the hardening session, printed by ``conftest.pytest_terminal_summary``."""
from __future__ import annotations

import time
from collections import Counter
from typing import Any


class Stats:
    def __init__(self) -> None:
        self.generated = 0            # programs hypothesis handed to a test (shrinking included)
        self.unstable = 0             # rejected: finite differences disagree (a kink nearby)
        self.checked = 0              # programs whose gradients were checked
        self.jvp_skipped = 0          # ...of which forward mode was not (a known bug)
        self.known_crashes: Counter[str] = Counter()    # programs that hit a known gradlab crash
        self.refused_programs = 0
        self.refused: Counter[str] = Counter()          # construct -> programs refused for it
        self.refused_examples: dict[str, str] = {}      # construct -> the shortest such program
        self.checks: Counter[str] = Counter()           # framework -> programs checked on it
        self.categories: Counter[str] = Counter()
        self.constructs: Counter[str] = Counter()       # constructs in checked programs
        self.failures: list[str] = []
        self.regressions_written: list[str] = []
        self.start = time.perf_counter()
        self.progress_every = 0                         # >0: print a line every N programs
        self.config: Any = None

    def progress(self) -> None:
        if not self.progress_every or self.generated % self.progress_every:
            return
        elapsed = time.perf_counter() - self.start
        line = (f"[fuzz] {self.generated} programs generated, {self.checked} checked on "
                f"{dict(self.checks)}, {self.refused_programs} refused, {self.unstable} "
                f"rejected as unstable, {len(self.failures)} failing ({elapsed:.0f} s)")
        write_line(self.config, line)

    def summary(self) -> list[str]:
        lines = [f"generated {self.generated} programs, {self.refused_programs} refused: "
                 f"{dict(self.refused)}"]
        if self.generated:
            lines.append(f"checked {self.checked} programs (reverse mode vs finite differences, "
                         f"backends vs each other, jvp vs <grad, v>); per backend: "
                         f"{dict(self.checks)}; by category: {dict(self.categories)}")
            if self.jvp_skipped:
                lines.append(f"forward mode not checked on {self.jvp_skipped} programs with "
                             f"loops (generator.JVP_ON_LOOPS is off)")
            if self.known_crashes:
                lines.append(f"programs that hit a known gradlab crash (test_known_bugs.py): "
                             f"{dict(self.known_crashes)}")
            lines.append(f"rejected {self.unstable} programs whose finite differences were "
                         f"unstable (a kink or branch boundary next to the inputs)")
            common = ", ".join(f"{k}: {v}" for k, v in self.constructs.most_common())
            lines.append(f"constructs in checked programs: {common}")
        if self.failures:
            lines.append(f"{len(self.failures)} failing program runs (shrinking included)")
        for construct, source in sorted(self.refused_examples.items()):
            lines.append(f"shortest program refused for {construct!r}:")
            lines.extend("    " + line for line in source.splitlines() if line.strip())
        for path in self.regressions_written:
            lines.append(f"wrote regression {path}")
        return lines


STATS = Stats()


def write_line(config: Any, line: str) -> None:
    """Print past pytest's output capture (the fuzz progress line)."""
    if config is None:
        print(line, flush=True)
        return
    reporter = config.pluginmanager.getplugin("terminalreporter")
    capture = config.pluginmanager.getplugin("capturemanager")
    if reporter is None:
        print(line, flush=True)
        return
    if capture is not None:
        with capture.global_and_fixture_disabled():
            reporter.write_line(line)
    else:
        reporter.write_line(line)


class PeopleStats:
    """Counts of the people generator's programs: per mode, backend and outcome, refusals by
    construct, failures by construct."""

    def __init__(self) -> None:
        self.generated = 0
        self.repeated = 0
        self.invalid = 0
        self.seconds = 0.0
        self.outcomes: Counter[tuple[str, str, str]] = Counter()   # (mode, backend, status)
        self.refused: Counter[str] = Counter()                     # construct -> programs
        self.constructs: Counter[str] = Counter()                  # in checked programs
        self.failing: list[Any] = []                               # verdicts
        self.seen: set[str] = set()
        self.start = time.perf_counter()
        self.progress_every = 0
        self.config: Any = None
        self.out: str | None = None

    def record(self, verdict: Any) -> None:
        self.generated += 1
        self.seconds += verdict.seconds
        if verdict.invalid:
            self.invalid += 1
        else:
            self.constructs.update(verdict.program.constructs)
            for c in verdict.checks:
                self.outcomes[(c.mode, c.backend, c.status)] += 1
            for kind in {c.kind for c in verdict.checks if c.status == "refused"}:
                self.refused[kind] += 1
            if verdict.failures:
                self.failing.append(verdict)
                if self.out:
                    write_verdict(self.out, verdict)
        self.progress()

    def count(self, status: str) -> int:
        return sum(n for (_, _, s), n in self.outcomes.items() if s == status)

    def progress(self) -> None:
        if not self.progress_every or self.generated % self.progress_every:
            return
        elapsed = time.perf_counter() - self.start
        line = (f"[fuzz people] {self.generated} programs ({self.generated / elapsed:.2f}/s), "
                f"{len(self.failing)} failing; checks: {self.count('right')} right, "
                f"{self.count('refused')} refused, {self.count('wrong')} wrong, "
                f"{self.count('crash')} crash, {self.count('unstable')} unstable "
                f"({elapsed:.0f} s)")
        write_line(self.config, line)

    def summary(self) -> list[str]:
        elapsed = time.perf_counter() - self.start
        lines = [f"people generator: {self.generated} programs in {elapsed:.0f} s "
                 f"({self.generated / max(elapsed, 1e-9):.2f}/s; {self.seconds:.0f} s "
                 f"checking), {self.invalid} invalid (not checked), {self.repeated} drawn "
                 f"twice, {len(self.failing)} with a wrong or crashing check"]
        statuses = ("right", "refused", "wrong", "crash", "unstable", "undefined", "skipped")
        lines.append("  mode/backend: " + " / ".join(statuses))
        for mode in ("grad", "jvp", "hvp"):
            for backend in ("numpy", "torch", "tensorflow", "jax"):
                counts = [self.outcomes[(mode, backend, s)] for s in statuses]
                if sum(counts):
                    lines.append(f"  {mode}/{backend}: " + " / ".join(map(str, counts)))
        if self.refused:
            lines.append(f"  refused, by construct (programs):")
            for kind, n in self.refused.most_common(30):
                lines.append(f"    {n:5d}  {kind[:150]}")
        for verdict in self.failing[:10]:
            lines.append(f"  FAILING {verdict.program.digest} ({verdict.program.dialect}):")
            for c in verdict.failures[:4]:
                lines.append(f"    {c.mode}/{c.backend} {c.status} {c.kind}: {c.detail[:200]}")
        if self.out and self.failing:
            lines.append(f"  the failing programs are in {self.out} (JSON lines)")
        return lines


def write_verdict(path: str, verdict: Any) -> None:
    """One JSON line per program (the format of people/run.py, read by people/report.py)."""
    import json
    from dataclasses import asdict
    p = verdict.program
    row = {"digest": p.digest, "dialect": p.dialect, "params": [q.describe() for q in p.params],
           "param_specs": [[q.name, list(q.shape), q.dtype, q.positive] for q in p.params],
           "wrt": repr(p.wrt), "seed": p.seed, "output": p.output,
           "constructs": sorted(p.constructs), "source": p.source, "invalid": verdict.invalid,
           "seconds": round(verdict.seconds, 3), "checks": [asdict(c) for c in verdict.checks]}
    with open(path, "a") as fh:
        fh.write(json.dumps(row) + "\n")


PEOPLE_STATS = PeopleStats()
