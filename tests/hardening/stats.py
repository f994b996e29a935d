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
