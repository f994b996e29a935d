"""Options and the end-of-session summary of the hardening tests.

Two generators feed the differential tests: ``people`` (programs of the kind people write,
``test_people.py``) and ``subset`` (programs inside gradlab's supported subset,
``test_generated.py``).

``pytest tests/hardening`` checks 300 people programs and 300 subset programs with fixed seeds
(reproducible, the CI run); ``pytest tests/hardening --fuzz`` checks 10,000 people programs
(``--fuzz-programs=N``) and 1,000 subset programs (``--fuzz-subset-programs=N``) from a random
seed that is printed (``--fuzz-seed=S`` replays a run), with a progress line every 100
programs. ``--people-all`` generates the constructs of open bugs too (every switch in
``people/switches.py`` on), to measure what is still open.
"""
from __future__ import annotations

import random

import pytest

from tests.hardening.stats import PEOPLE_STATS, STATS, write_line

CI_PROGRAMS = 300
FUZZ_PROGRAMS = 10_000
CI_SUBSET_PROGRAMS = 300
FUZZ_SUBSET_PROGRAMS = 1_000


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
    group.addoption("--fuzz-subset-programs", type=int, default=None,
                    help="how many programs of gradlab's supported subset (default 300, or "
                         "1,000 with --fuzz)")
    group.addoption("--people-all", action="store_true", default=False,
                    help="generate the constructs of open bugs too (every switch in "
                         "people/switches.py on): failures are counted, not raised")
    group.addoption("--fuzz-shrink", action="store_true", default=False,
                    help="with --fuzz: stop at the first failing people program and shrink it "
                         "(by default every program is checked and the failures listed)")
    group.addoption("--fuzz-collect", action="store_true", default=False,
                    help="check every people program and list the failures at the end, "
                         "without stopping at the first (the default with --fuzz)")
    group.addoption("--fuzz-out", default=None,
                    help="a file the failing people programs are written to (JSON lines)")


class HardeningOptions:
    def __init__(self, fuzz: bool, programs: int, seed: int | None, subset_programs: int = 0,
                 people_all: bool = False, shrink: bool = True, out: str | None = None) -> None:
        self.fuzz = fuzz
        self.programs = programs                 # people programs
        self.subset_programs = subset_programs   # programs of the supported subset
        self.seed = seed     # None: derandomized (fixed examples, the CI run)
        self.people_all = people_all
        self.shrink = shrink                     # raise at the first failure (hypothesis shrinks)
        self.out = out


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
    subset = config.getoption("--fuzz-subset-programs", default=None) or (
        FUZZ_SUBSET_PROGRAMS if fuzz else CI_SUBSET_PROGRAMS)
    people_all = bool(config.getoption("--people-all", default=False))
    collect = fuzz or people_all or bool(config.getoption("--fuzz-collect", default=False))
    shrink = not collect or bool(config.getoption("--fuzz-shrink", default=False))
    result = HardeningOptions(fuzz, int(programs), seed if fuzz else None, int(subset),
                              people_all, shrink, config.getoption("--fuzz-out", default=None))
    config._gradlab_hardening = result   # type: ignore[attr-defined]
    return result


def pytest_configure(config: pytest.Config) -> None:
    STATS.config = config
    PEOPLE_STATS.config = config
    opts = options(config)
    if opts.fuzz:
        STATS.progress_every = 100
        PEOPLE_STATS.progress_every = 100
    if opts.people_all:
        from tests.hardening.people import switches
        switches.turn_all_on()


def pytest_report_header(config: pytest.Config) -> str:
    opts = options(config)
    counts = f"{opts.programs} people programs, {opts.subset_programs} subset programs"
    if opts.fuzz:
        return (f"gradlab hardening: --fuzz, {counts}, seed {opts.seed} (replay with "
                f"--fuzz-seed={opts.seed})" + (", --people-all" if opts.people_all else ""))
    return f"gradlab hardening: {counts}, derandomized" + (
        ", --people-all" if opts.people_all else "")


@pytest.fixture
def hardening_options(request: pytest.FixtureRequest) -> HardeningOptions:
    return options(request.config)


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if not (STATS.generated or STATS.regressions_written or PEOPLE_STATS.generated):
        return
    terminalreporter.section("gradlab hardening")
    if PEOPLE_STATS.generated:
        for line in PEOPLE_STATS.summary():
            terminalreporter.write_line(line)
    if STATS.generated or STATS.regressions_written:
        terminalreporter.write_line("supported-subset generator:")
        for line in STATS.summary():
            terminalreporter.write_line(line)


__all__ = ["write_line"]
