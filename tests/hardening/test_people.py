"""Programs of the kind people write (``people/builder.py``), through grad, jvp and hvp on every
backend, judged by the oracle ``people/oracle.py``: right, or refused with a gradlab error.

A refusal passes; a wrong value or derivative, or any other exception, fails. The CI run is
derandomized (300 programs, split across the dialects by their weights) and stops at the first
failure, which hypothesis shrinks. ``--fuzz`` checks 10,000 from a random seed and lists every
failure at the end (``--fuzz-shrink`` to stop and shrink instead; ``--fuzz-out`` writes them
as JSON lines for ``python -m tests.hardening.people.report``).

Open bug classes are steered around by ``people/switches.py`` (each with a strict-xfail
reproduction in ``test_known_bugs.py``); ``--people-all`` turns every switch on and counts the
failures without raising, to measure what is still open.
"""
from __future__ import annotations

import pytest
from hypothesis import HealthCheck, Phase, assume, given, seed, settings

from tests.hardening.differential import frameworks
from tests.hardening.people.builder import DIALECT_WEIGHTS, people_programs
from tests.hardening.people.inputs import setup
from tests.hardening.people.oracle import Check, Checker, Verdict
from tests.hardening.people.program import PeopleProgram
from tests.hardening.stats import PEOPLE_STATS


class PeopleFailure(AssertionError):
    """gradlab gave a wrong answer, or crashed, on a program people might write."""


def describe(verdict: Verdict) -> str:
    program = verdict.program
    lines = [f"{len(verdict.failures)} failing checks on {program!r}"]
    for c in verdict.failures:
        lines.append(f"  {c.mode}/{c.backend}: {c.status} ({c.kind}) {c.detail[:400]}")
    return "\n".join(lines)


#: hypothesis draws some programs twice (they are checked once): draw this many more to check
#: about the number asked for.
REPEATS = 1.3


def _count(dialect: str, total: int) -> int:
    weight = DIALECT_WEIGHTS[dialect] / sum(DIALECT_WEIGHTS.values())
    return max(1, round(total * weight * REPEATS))


@pytest.mark.parametrize("dialect", list(DIALECT_WEIGHTS))
def test_people_programs(dialect: str, hardening_options) -> None:
    installed = frameworks()
    for fw in installed:
        setup(fw)
    checker = Checker(installed)
    PEOPLE_STATS.out = hardening_options.out
    count = _count(dialect, hardening_options.programs)

    @settings(max_examples=count, deadline=None, database=None,
              derandomize=hardening_options.seed is None, print_blob=hardening_options.fuzz,
              phases=[Phase.explicit, Phase.generate, Phase.shrink]
              if hardening_options.shrink else [Phase.generate],
              suppress_health_check=list(HealthCheck))
    @given(people_programs(dialect))
    def check(program: PeopleProgram) -> None:
        if program.digest in PEOPLE_STATS.seen:
            PEOPLE_STATS.repeated += 1
            return
        PEOPLE_STATS.seen.add(program.digest)
        verdict = checker.run(program)
        PEOPLE_STATS.record(verdict)
        if verdict.invalid:
            assume(False)
        if verdict.failures and hardening_options.shrink:
            PEOPLE_STATS.seen.discard(program.digest)   # shrinking replays it
            raise PeopleFailure(describe(verdict))

    if hardening_options.seed is not None:
        check = seed(hardening_options.seed + list(DIALECT_WEIGHTS).index(dialect))(check)
    before = len(PEOPLE_STATS.failing)
    check()
    failing = PEOPLE_STATS.failing[before:]
    if failing and not hardening_options.people_all:
        pytest.fail(f"{len(failing)} {dialect} programs with wrong or crashing checks:\n" +
                    "\n".join(describe(v) for v in failing[:5]), pytrace=False)


def test_people_programs_draw_list_arguments(monkeypatch: pytest.MonkeyPatch) -> None:
    """Programs whose ``f`` takes a list or tuple of arrays (``def f(params, x)``, a list of
    ``(W, b)`` pairs): every kind is drawn, and the inputs are lists (tuples) of the dialect's
    own arrays, shaped as their ``Param`` says, on which the program runs. (Every program draws
    one here; the fuzzer's share is ``LIST_ARGUMENT_PERCENT``.)"""
    import collections

    from tests.hardening.people import builder, lists
    from tests.hardening.people.inputs import (FRAMEWORK_OF, framework_of_value, to_dialect,
                                               value_leaves)
    from tests.hardening.people.program import load
    monkeypatch.setattr(builder, "LIST_ARGUMENT_PERCENT", 100)
    kinds: collections.Counter[str] = collections.Counter()

    @settings(max_examples=60, deadline=None, database=None, derandomize=True,
              phases=[Phase.generate], suppress_health_check=list(HealthCheck))
    @given(people_programs())
    def draw(program: PeopleProgram) -> None:
        setup(FRAMEWORK_OF[program.dialect])
        containers = [p for p in program.params if p.is_container]
        assert len(containers) == 1
        args = [to_dialect(v, program.dialect) for v in program.inputs()]
        for p, value in zip(program.params, args):
            if not p.is_container:
                continue
            kinds[lists.kind_label(p)] += 1
            assert type(value) is (list if p.dtype == "list" else tuple)
            assert len(value) == len(p.items)
            for leaf, item in zip(p.leaves(), value_leaves(value), strict=True):
                assert framework_of_value(item) == FRAMEWORK_OF[program.dialect]
                assert tuple(item.shape) == leaf.shape
        assert [c for c in program.constructs if c.startswith("list argument: ") and
                not c.endswith(("differentiated", "differentiated one"))], "the list is not read"
        load(program).f(*args)

    draw()
    assert set(kinds) == {"container: list argument", "container: tuple argument",
                          "container: list of pairs argument"}, kinds


def test_people_programs_draw_dict_arguments(monkeypatch: pytest.MonkeyPatch) -> None:
    """Programs whose ``f`` takes a dict of arrays (``params = {"l1": {"W": .., "b": ..}}``,
    ``{"layers": [{..}, {..}]}``): every kind is drawn, the inputs are dicts (of lists of
    dicts) of the dialect's own arrays under the ``Param``'s keys, on which the program runs,
    and the body reads the dict (through the program's own helpers among others). (Every
    program draws one here; the fuzzer's share is ``DICT_ARGUMENT_PERCENT``.)"""
    import collections

    from tests.hardening.people import builder, dicts
    from tests.hardening.people.inputs import (FRAMEWORK_OF, framework_of_value, to_dialect,
                                               value_leaves)
    from tests.hardening.people.program import load
    monkeypatch.setattr(builder, "LIST_ARGUMENT_PERCENT", 0)
    monkeypatch.setattr(builder, "DICT_ARGUMENT_PERCENT", 100)
    kinds: collections.Counter[str] = collections.Counter()
    reads: collections.Counter[str] = collections.Counter()

    @settings(max_examples=150, deadline=None, database=None, derandomize=True,
              phases=[Phase.generate], suppress_health_check=list(HealthCheck))
    @given(people_programs())
    def draw(program: PeopleProgram) -> None:
        setup(FRAMEWORK_OF[program.dialect])
        containers = [p for p in program.params if p.is_container]
        assert len(containers) == 1 and containers[0].is_dict
        args = [to_dialect(v, program.dialect) for v in program.inputs()]
        for p, value in zip(program.params, args):
            if not p.is_container:
                continue
            kinds[dicts.kind_label(p)] += 1
            assert type(value) is dict and list(value) == [item.name for item in p.items]
            for leaf, item in zip(p.leaves(), value_leaves(value), strict=True):
                assert framework_of_value(item) == FRAMEWORK_OF[program.dialect]
                assert tuple(item.shape) == leaf.shape
        read = [c for c in program.constructs if c.startswith("dict argument: ") and
                not c.endswith(("differentiated", "differentiated one"))]
        assert read, "the dict is not read"
        reads.update(read)
        load(program).f(*args)

    draw()
    assert set(kinds) == {f"container: dict argument ({k})" for k in dicts.KINDS}, kinds
    assert reads["dict argument: passed to a helper"] >= 5, reads


def test_oracle_judges_a_dict_argument_leaf_by_leaf() -> None:
    """The oracle's gradient, tangents and hvp vectors of a dict argument are dicts of its
    structure (a nested dict with a layer without bias, passed to a helper read for two
    structures): gradlab's answers on every backend are judged right, key by key; a gradient
    with a key missing is a wrong structure."""
    import numpy as np

    from gradlab.tensor import FRAMEWORKS, is_installed
    from tests.hardening.people.builder import HEADERS
    from tests.hardening.people.inputs import Param
    source = HEADERS["numpy"] + (
        '\n\ndef dense(p, x, act=True):\n    h = x @ p["W"]\n    if "b" in p:\n'
        '        h = h + p["b"]\n    if act:\n        h = np.tanh(h)\n    return h\n\n\n'
        'def f(params, x):\n    h = dense(params["l1"], x)\n'
        '    h = dense(p=params["l2"], x=h, act=False)\n    return np.sum(h ** 2)\n')
    params = (Param("params", (), "dict", items=(
        Param("l1", (), "dict", items=(Param("W", (3, 2), "float64"), Param("b", (2,), "float64"))),
        Param("l2", (), "dict", items=(Param("W", (2, 2), "float64"),)))),
        Param("x", (3,), "float64"))
    program = PeopleProgram(source, "numpy", params, 0, seed=5)
    installed = [fw for fw in FRAMEWORKS if is_installed(fw)]
    for fw in installed:
        setup(fw)
    verdict = Checker(installed).run(program)
    assert not verdict.invalid, verdict.invalid
    assert {c.status for c in verdict.checks} == {"right"}, describe(verdict)
    assert len(verdict.checks) == 3 * len(installed)
    grads = {"l1": {"W": np.zeros((3, 2))}, "l2": {"W": np.zeros((2, 2))}}
    check = Checker(installed).structure_of("grad", "numpy", grads, params[0],
                                            program.inputs()[0], "params")
    assert isinstance(check, Check) and check.kind == "structure", check
