"""The panel's editor tabs (gradlab.kernel_ext.pages): what each page shows of its panel's
state when it is opened or the state changes."""
from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("ipywidgets")

import gradlab  # noqa: E402
from gradlab.kernel_ext.pages import EditPage, ExercisePage  # noqa: E402


def loss(W, x):
    h = np.tanh(x @ W)
    return np.mean(h ** 2)


W, X = np.full((3, 2), 0.1), np.ones((4, 3))


def page_of(panel):
    panel.widget                       # the page is built with the panel's widgets, when opened
    return panel._edit_page()


def test_the_edit_page_names_its_actions_after_its_buttons() -> None:
    page = page_of(gradlab.show(gradlab.grad(loss), W, X))
    assert isinstance(page, EditPage)
    assert list(page.buttons) == ["Recompile", "Recompile & Run", "Reset"]
    assert sorted(page.editor.actions) == ["recompile", "recompile-run", "reset"]
    assert "gradlab-edit-page" in page.box._dom_classes


def test_the_edit_page_shows_a_failed_edit_and_disables_its_buttons_while_busy() -> None:
    panel = gradlab.show(gradlab.grad(loss), W, X)
    page = page_of(panel)
    page.show()
    assert page.status.value == "" and page.diff.value == ""
    assert not panel.recompile(panel.editor_text.replace("    return dW", "    return dW +"))
    page.show()
    assert "✗ line " in page.status.value and "still running: the generated code" in \
        page.status.value
    if page.editor.code is not None:
        assert page.editor.code.error_line == panel.session.error_line
    panel.session.running = "numpy"
    page.show()
    assert all(b.disabled for b in page.buttons.values())
    panel.session.running = ""
    page.show()
    assert not any(b.disabled for b in page.buttons.values())


def test_the_exercise_page_shows_the_verdict_and_the_solution_once_revealed() -> None:
    panel = gradlab.show(gradlab.grad(loss), W, X, exercise=True)
    page = page_of(panel)
    assert isinstance(page, ExercisePage)
    assert list(page.buttons) == ["Check", "Show solution"]
    assert sorted(page.editor.actions) == ["check", "show-solution"]
    page.show()
    assert page.status.value == "" and page.columns.children == (page.editor.widget,)
    verdict = panel.check_exercise(panel.exercise.starter)          # dW never computed
    page.show()
    assert not verdict.ok and 'class="gradlab-verdict"' in page.status.value
    assert "#b00020" in page.status.value
    panel.exercise.solution()                                        # revealed
    page.show()
    page.show()
    assert page.columns.children == (page.editor.widget, page.solution)
    assert "the solution" in page.solution.value
    assert page.diff is page.status                                  # no diff: the answer
