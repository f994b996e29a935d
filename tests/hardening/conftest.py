"""Options and the end-of-session summary of the hardening tests.

``pytest tests/hardening`` checks ~300 generated programs with fixed seeds (reproducible);
``pytest tests/hardening --fuzz`` checks 10,000 (``--fuzz-programs=N`` to change it) with a
random seed that is printed (``--fuzz-seed=S`` to replay a run), with a progress line every
100 programs.
"""
from __future__ import annotations

import random

import pytest

from tests.hardening.stats import STATS, write_line

CI_PROGRAMS = 300
FUZZ_PROGRAMS = 10_000


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("gradlab hardening")
    group.addoption("--fuzz", action="store_true", default=False,
                    help="fuzz gradlab with 10,000 generated programs (random seed) instead of "
                         "the ~300 fixed ones")
    group.addoption("--fuzz-programs", type=int, default=None,
                    help="how many generated programs in all (default 300, or 10,000 with "
                         "--fuzz)")
    group.addoption("--fuzz-seed", type=int, default=None,
                    help="the seed of a --fuzz run (printed at its start), to replay it")


class HardeningOptions:
    def __init__(self, fuzz: bool, programs: int, seed: int | None) -> None:
        self.fuzz = fuzz
        self.programs = programs
        self.seed = seed     # None: derandomized (fixed examples, the CI run)


def options(config: pytest.Config) -> HardeningOptions:
    cached = getattr(config, "_gradlab_hardening", None)
    if cached is not None:
        return cached   # type: ignore[no-any-return]
    fuzz = bool(config.getoption("--fuzz", default=False))
    programs = config.getoption("--fuzz-programs", default=None) or (
        FUZZ_PROGRAMS if fuzz else CI_PROGRAMS)
    seed = config.getoption("--fuzz-seed", default=None)
    if fuzz and seed is None:
        seed = random.SystemRandom().randrange(2 ** 31)
    result = HardeningOptions(fuzz, int(programs), seed if fuzz else None)
    config._gradlab_hardening = result   # type: ignore[attr-defined]
    return result


def pytest_configure(config: pytest.Config) -> None:
    STATS.config = config
    opts = options(config)
    if opts.fuzz:
        STATS.progress_every = 100


def pytest_report_header(config: pytest.Config) -> str:
    opts = options(config)
    if opts.fuzz:
        return (f"gradlab hardening: --fuzz, {opts.programs} generated programs, seed "
                f"{opts.seed} (replay with --fuzz-seed={opts.seed})")
    return f"gradlab hardening: {opts.programs} generated programs, derandomized"


@pytest.fixture
def hardening_options(request: pytest.FixtureRequest) -> HardeningOptions:
    return options(request.config)


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if not (STATS.generated or STATS.regressions_written):
        return
    terminalreporter.section("gradlab hardening")
    for line in STATS.summary():
        terminalreporter.write_line(line)


__all__ = ["write_line"]
