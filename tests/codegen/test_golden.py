"""The generated code of the whole corpus, compared with a stored copy (golden/corpus.txt).

Any change to what gradlab writes — a new rule, a renamed temporary, an optimizer pass — shows
here as a diff of the generated sources, to be reviewed and then accepted on purpose:

    GRADLAB_UPDATE_GOLDEN=1 python -m pytest tests/codegen/test_golden.py

rewrites the stored file from the current code (review it with ``git diff``). A refactoring of
the engine must leave the file unchanged.
"""
from __future__ import annotations

import difflib
import functools
import os
import re
from pathlib import Path

import pytest

import gradlab
from tests.codegen.corpus import CORPUS, Case

GOLDEN = Path(__file__).parent / "golden" / "corpus.txt"
UPDATE = os.environ.get("GRADLAB_UPDATE_GOLDEN") == "1"
#: How a section of the stored file starts: ``### <case> <mode>``.
HEADER = re.compile(r"^### (\S+) (\S+)$", re.MULTILINE)


def generated(case: Case) -> dict[str, str]:
    """The sources gradlab generates for one corpus case, by mode: the gradient, the jvp, the
    hvp, and the gradient's variant for Python numbers when the case passes some."""
    out = {"grad": gradlab.grad(case.fn, case.wrt).source,
           "jvp": gradlab.jvp(case.fn, case.wrt).source,
           "hvp": gradlab.hvp(case.fn, case.wrt).source}
    if case.scalars:
        out["grad-scalars"] = gradlab.grad(case.fn, case.wrt).variant_source(*case.inputs())
    return out


def render(sections: dict[tuple[str, str], str]) -> str:
    return "".join(f"### {name} {mode}\n{text}" for (name, mode), text in sections.items())


@functools.lru_cache(maxsize=1)
def stored() -> dict[tuple[str, str], str]:
    text = GOLDEN.read_text()
    heads = list(HEADER.finditer(text))
    return {(m.group(1), m.group(2)): text[m.end() + 1:heads[i + 1].start() if i + 1 < len(
        heads) else len(text)] for i, m in enumerate(heads)}


@pytest.mark.skipif(not UPDATE, reason="set GRADLAB_UPDATE_GOLDEN=1 to rewrite the golden file")
def test_update_golden_file() -> None:
    sections = {(case.name, mode): text for case in CORPUS
                for mode, text in generated(case).items()}
    GOLDEN.parent.mkdir(exist_ok=True)
    GOLDEN.write_text(render(sections))


@pytest.mark.skipif(UPDATE, reason="the golden file is being rewritten")
@pytest.mark.parametrize("case", CORPUS, ids=lambda c: c.name)
def test_generated_code_is_unchanged(case: Case) -> None:
    expected = stored()
    for mode, text in generated(case).items():
        want = expected.get((case.name, mode))
        assert want is not None, f"{case.name} {mode} is not in {GOLDEN.name}: regenerate it"
        if text != want:
            diff = "".join(difflib.unified_diff(want.splitlines(True), text.splitlines(True),
                                                "stored", "generated now"))
            pytest.fail(f"the generated {mode} code of {case.name} changed (if on purpose, "
                        f"rerun with GRADLAB_UPDATE_GOLDEN=1):\n{diff}")


@pytest.mark.skipif(UPDATE, reason="the golden file is being rewritten")
def test_golden_file_has_no_stale_cases() -> None:
    names = {case.name for case in CORPUS}
    stale = sorted({name for name, _ in stored()} - names)
    assert not stale, f"{GOLDEN.name} has sections for cases no longer in the corpus: {stale}"
