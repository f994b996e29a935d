"""The panel's widgets driven from Python: edit, Recompile (& Run), Reset, Run on every backend,
the busy state, exercises that keep their answer, and what a saved notebook keeps."""
from __future__ import annotations

import html
import re
import signal

import numpy as np
import pytest

import gradlab
from gradlab.kernel_ext.panel import GradPanel
from gradlab.kernel_ext.reopen import anywidget_available

EDITED = "    dW = dW * 0.5\n    return dW"


def loss(W, x):
    h = np.tanh(x @ W)
    return np.mean(h ** 2)


def text_of(markup: str) -> str:
    return html.unescape(re.sub(r"<[^>]+>", "", markup))


W = np.full((3, 2), 0.1)
X = np.ones((4, 3))


@pytest.fixture()
def panel() -> GradPanel:
    return gradlab.show(gradlab.grad(loss), W, X)


def halved(panel: GradPanel) -> str:
    return panel.session.generated_source.replace("    return dW", EDITED)


def test_widgets_show_header_code_and_result(panel):
    w = panel.widget
    assert w is panel.widget   # built once
    assert text_of(panel.header_view.value) == "dloss_dW(W, x) → ∂loss/∂W · generated"
    assert 'class="gradlab-code"' in panel.code.value
    assert "<style" not in panel.code.value and 'style="' in panel.code.value  # inline only
    assert "# specialised for W: 2-d, x: 2-d" in text_of(panel.code.value)   # after a run:
    assert "dW = x.T @ dxW" in text_of(panel.code.value)    # the code for its shapes
    assert "numpy · cpu" in panel.result.value and "median of" in panel.result.value
    assert panel.editor.value == panel.session.source


def test_surgery_becomes_the_active_version_and_reset_restores_everything(panel):
    panel.widget
    before = panel.results[0].gradients
    panel.editor.value = halved(panel)
    panel.recompile_button.click()
    assert panel.error == "" and panel.session.edited
    assert panel.header == "dloss_dW(W, x) → ∂loss/∂W · edited: 1 line changed"
    assert "+    dW = dW * 0.5" in panel.session.diff_text
    assert "dW = dW * 0.5" in text_of(panel.code.value)
    status = text_of(panel.status.value)
    assert status == "✓ compiled (edited: 1 line changed) · panel.session.active is this version"
    assert panel.stale and "come from the generated code" in panel.result.value
    panel.backend_select.value = "torch"
    panel.recompile_run_button.click()
    assert panel.results[0].framework == "torch" and not panel.stale
    np.testing.assert_allclose(np.asarray(panel.results[0].gradients), 0.5 * before)
    panel.reset_button.click()
    assert panel.session.active is panel.session.df and panel.editor.value == panel.session.source
    assert panel.header.endswith("· generated") and panel.session.diff_text == ""
    # the generated version's own results come back, not the edit's
    assert panel.results[0].framework == "numpy" and not panel.stale
    np.testing.assert_allclose(panel.results[0].gradients, before)


def test_a_failed_edit_says_it_once_marks_its_line_and_keeps_the_previous_version(panel):
    panel.widget
    assert panel.recompile(halved(panel))
    good = panel.session.active
    broken = halved(panel).replace("dW * 0.5", "dW * (0.5")
    panel.editor.value = broken
    panel.recompile_button.click()
    assert "syntax error" in panel.error and panel.session.active is good
    line = panel.session.error_line
    assert broken.splitlines()[line - 1].strip() == "dW = dW * (0.5"
    status = text_of(panel.status.value)
    assert status.startswith(f"✗ line {line}: syntax error")
    assert len(re.findall(r"line \d+", status)) == 1, status          # said once
    assert status.endswith("still running: your previous edit (edited: 1 line changed)")
    if panel._page.editor.code is not None:                         # CodeMirror marks it
        assert panel._page.editor.code.error_line == line
    assert "the version running now" in panel.diff.value             # the diff says which
    panel.run_button.click()
    assert not panel.results[0].error


def test_the_fallback_textarea_and_codemirror_hold_the_same_text(panel):
    panel.widget
    editor = panel._edit_page().editor
    editor.fallback.value = halved(panel)
    assert panel.editor_text == halved(panel)
    if anywidget_available():
        assert editor.code.value == halved(panel)
        editor.code.value = panel.session.source
        assert editor.fallback.value == panel.session.source == panel.editor_text
        assert editor.code._esm.strip().startswith("// gradlab's %%grad code editor")


@pytest.mark.skipif(not anywidget_available(), reason="anywidget is not installed")
def test_a_click_sent_by_codemirror_acts_on_the_code_it_carries(panel):
    """CodeMirror sends a button's click with the text (one message): the action runs on that
    text even though the editor's value still holds the older code."""
    panel.widget
    editor = panel._edit_page().editor
    classes = panel.recompile_run_button._dom_classes
    assert "gradlab-action" in classes and "gradlab-action-recompile-run" in classes
    assert sorted(editor.actions) == ["recompile", "recompile-run", "reset"]
    before = panel.results[0].gradients
    assert editor.code.value == panel.session.source          # the kernel's copy is older
    editor.code._handle_custom_msg({"action": "recompile-run", "text": halved(panel)}, [])
    assert panel.session.edited and panel.editor_text == halved(panel)
    assert editor.code.value == editor.fallback.value == halved(panel)
    np.testing.assert_allclose(panel.results[0].gradients, 0.5 * before)
    editor.code._handle_custom_msg({"action": "reset", "text": halved(panel)}, [])
    assert not panel.session.edited and panel.editor_text == panel.session.source
    editor.code._handle_custom_msg({"action": "unknown", "text": "x"}, [])   # ignored
    assert panel.editor_text == panel.session.source

    exercise = gradlab.show(gradlab.grad(loss), W, X, exercise=True)
    exercise.widget
    code = exercise._edit_page().editor.code
    assert "gradlab-action-check" in exercise.check_button._dom_classes
    code._handle_custom_msg({"action": "check", "text": answer(exercise.exercise.starter)}, [])
    assert exercise.verdict.ok and not exercise.hidden


def test_the_step_through_and_graph_follow_the_active_version(panel):
    panel.widget
    panel.tabs.selected_index = 2
    first = panel.stepper
    assert first.df is panel.session.df and len(first) == 3
    panel.tabs.selected_index = 3
    assert panel.recompile(halved(panel))
    assert panel.stepper is not first and panel.stepper.df is panel.session.active
    assert len(panel.stepper) == 4                      # the edit's line is a step
    assert panel.tabs.children[2].children[0] is panel.stepper.widget
    panel.stepper.next()
    assert "-v_xW" in panel._graph_lit.value            # the graph lights up the step's value
    panel.reset()
    assert panel.stepper.df is panel.session.df


def test_interrupted_infinite_loop_leaves_the_kernel_alive(panel):
    panel.widget
    looping = panel.editor_text.replace("    return dW", "    while True:\n        pass\n"
                                                        "    return dW")
    assert panel.recompile(looping)

    def ctrl_c(signum, frame):      # what Ctrl-C raises in the kernel's main thread
        if panel.session.running:   # (one that lands before the run starts waits for the next)
            raise KeyboardInterrupt
    previous = signal.signal(signal.SIGALRM, ctrl_c)
    signal.setitimer(signal.ITIMER_REAL, 1.0, 1.0)
    try:
        results = panel.run()
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    assert "interrupted" in results[0].error
    assert "interrupted" in panel.result.value


def test_a_run_shows_a_busy_state_and_a_queued_click_runs_once(panel):
    panel.widget
    seen = []
    panel.session.listeners.append(lambda: seen.append(
        (panel.session.running, panel.run_button.disabled, panel.run_button.description,
         "gradlab-busy" in panel.result.value)))
    panel._on_run_click()
    assert ("numpy · cpu", True, "Running…", True) in seen
    assert not panel.run_button.disabled and panel.run_button.description == "Run"
    runs = len([s for s in seen if s[0]])
    panel._on_run_click()          # the second click of a double click, queued while it ran
    assert len([s for s in seen if s[0]]) == runs


def test_missing_inputs_and_unknown_backend(panel):
    empty = gradlab.show(gradlab.grad(loss))
    assert empty.run() == [] and "no inputs" in empty.error
    results = panel.run("pandas")
    assert "unknown backend 'pandas'" in results[0].error


def test_backend_not_installed(panel, monkeypatch):
    import gradlab.workbench.session as session
    monkeypatch.setattr(session, "installed_frameworks", lambda: ["numpy"])
    results = panel.run("jax")
    assert "jax is not installed here" in results[0].error


def test_devices_offered_are_those_present(panel):
    from gradlab.tensor import available_devices, installed_frameworks
    panel.widget
    for fw in installed_frameworks():
        panel.backend_select.value = fw
        assert list(panel.device_select.options) == available_devices(fw)


def test_run_is_off_while_a_chosen_framework_loads(panel, monkeypatch):
    """Listing a framework's devices imports it (seconds for TensorFlow, JAX or 'all'): Run
    says so and takes no click meanwhile, then comes back."""
    panel.widget
    seen = []

    def devices(backend):
        seen.append((panel.run_button.disabled, panel.run_button.description,
                     panel.device_select.disabled))
        return ["cpu"]
    monkeypatch.setattr(panel, "device_options", devices)
    panel.backend_select.value = "all"
    assert seen == [(True, "loading all…", True)]
    assert not panel.run_button.disabled and panel.run_button.description == "Run"
    assert not panel.device_select.disabled


def test_a_wrong_shaped_gradient_is_flagged_with_both_shapes(panel):
    panel.widget
    panel.check = True
    transposed = panel.session.source.replace("return dW", "return dW.T")
    (result,) = panel.recompile_and_run(transposed)
    assert not result.ok and result.check is None           # not compared: no IndexError
    assert result.shape_problems == [
        "dW has shape (2, 3) but W has shape (3, 2): it cannot be W's gradient"]
    assert 'class="gradlab-warning"' in panel.result.value and "#b00020" in panel.result.value
    assert "IndexError" not in panel.result.value


def test_all_frameworks_make_one_table(panel):
    pytest.importorskip("torch")
    panel.widget
    panel.check = True
    results = panel.run("all")
    assert len(results) >= 2 and all(not r.error for r in results)
    assert panel.result.value.count("gradlab-comparison") == 1
    assert panel.result.value.count("gradlab-run-values") == 1      # value and gradient once
    assert panel.result.value.count("class='gradlab-check'") == 1   # one check table
    assert all(r.difference is not None and r.difference < 1e-6 for r in results)
    table = panel.session.comparison().splitlines()
    assert table[0].split()[:4] == ["framework", "device", "median", "first"]
    assert [row.split()[0] for row in table[1:]] == [r.framework for r in results]


def test_tabs_other_than_the_code_are_built_when_first_opened(panel):
    """The panel on screen fast: the front end creates few models before it draws the code."""
    from ipywidgets.widgets.widget import _instances
    before = len(_instances)
    panel.widget
    assert len(_instances) - before <= 21, len(_instances) - before
    assert panel._page is None and "gradlab-code" in panel.tabs.children[0].value
    panel.tabs.selected_index = 1
    assert panel.tabs.children[1] is panel._page.box and panel.editor.value == panel.editor_text
    panel.tabs.selected_index = 2
    assert "gradlab-step-box" in panel.tabs.children[2]._dom_classes
    panel.tabs.selected_index = 3
    box = panel.tabs.children[3]
    view = box.children[0]
    assert "gradlab-graph-view" in view._dom_classes and view.value == panel.graph_html()
    assert panel.tabs.titles == ("code", "edit", "step through", "graph", "saved")
    panel.tabs.selected_index = 4
    view = panel.tabs.children[4]
    assert "gradlab-saved-view" in view._dom_classes and view.value == panel.saved_html()


def test_the_saved_tab_lists_each_saved_value_and_after_a_run_its_bytes():
    """Issue 16: the values the backward pass reads, where they come from, what reads them,
    their size per step and in all (an RNN: its hidden state on each step taken)."""
    from gradlab.examples import rnn_loss
    rng = np.random.default_rng(0)
    W3, xs, h0 = rng.normal(size=(4, 4)) * 0.3, rng.normal(size=(10, 4)), rng.normal(size=4)
    panel = gradlab.show(gradlab.grad(rnn_loss), W3, xs, h0)
    panel.widget
    panel.tabs.selected_index = 4
    shown = text_of(panel.tabs.children[4].value)
    report = panel.saved_report()
    assert report.measured and report.names == ["h"] == [v.name for v in panel.session.df.saved
                                                          if v.name == "h"]
    h = report[0]
    assert "h = np.tanh(W @ h + xs[t])" in shown and f"{h.user_line}: " in shown
    lines = panel.session.source.splitlines()
    for number, text in h.read_by:       # the backward lines, as the code tab numbers them
        assert f"{number}: {text}" in shown and lines[number - 1].strip() == text
    assert "(4,)" in shown and "float64" in shown and "32" in shown     # 4 float64 a step
    assert "total: 256 bytes saved for the backward pass" in shown      # 8 steps taken of 10


def test_the_saved_tab_before_a_run_and_after_an_edit():
    from gradlab.examples import rnn_loss
    panel = gradlab.show(gradlab.grad(rnn_loss))         # no inputs: names and lines only
    panel.widget
    panel.tabs.selected_index = 4
    shown = text_of(panel.tabs.children[4].value)
    assert "h = np.tanh(W @ h + xs[t])" in shown and "Run to see" in shown
    assert "gl.shape(Wh)" in shown       # the generic code saves only the shape of W @ h
    edited = panel.session.source.replace("h_stack.append(h)", "h_stack.append(h)  # kept")
    assert panel.recompile(edited)
    assert "h = np.tanh(W @ h + xs[t])" in text_of(panel.tabs.children[4].value)


def test_the_saved_tab_hides_the_backward_lines_in_an_exercise():
    panel = gradlab.show(gradlab.grad(loss), W, X, exercise=True)
    panel.widget
    panel.tabs.selected_index = 4
    assert panel.tabs.children[4].value == panel.saved_html() and "hidden" in panel.saved_html()


def test_a_failed_recompile_opens_its_message_in_the_edit_tab(panel):
    panel.widget
    assert panel._page is None
    assert not panel.recompile(panel.editor_text.replace("return dW", "return dW +"))
    assert panel._page is not None and "syntax error" in panel.status.value
    assert "return dW +" in panel.editor.value


# --- exercises -----------------------------------------------------------------------------------
def answer(starter: str, dxW: str = "(1.0 - h * h) * dh", seed: str = "seed") -> str:
    head, sep, tail = starter.partition("# ── backward ──")
    tail = tail.replace("    # return np.mean(h ** 2)\n", "    # return np.mean(h ** 2)\n"
                        f"    dh = 2 * h * ({seed} / gl.size(h_pow2))\n")
    tail = tail.replace("    # h = np.tanh(x @ W)\n", f"    # h = np.tanh(x @ W)\n    dxW = {dxW}\n"
                        "    dW = gl.matmul_grad_y(dxW, x, W)\n")
    return head + sep + tail


SOLUTION = "dxW = (1.0 - h * h) * dh"


def test_an_exercise_shows_its_answer_nowhere_until_solved():
    panel = gradlab.show(gradlab.grad(loss), W, X, exercise=True)
    panel.widget
    assert panel.hidden and panel.results == []
    assert panel.header == "exercise: write the backward pass of loss (∂loss/∂W)"
    assert panel.run_button.disabled and panel.run() == []
    assert "Run is off in an exercise" in panel.error
    for index in (0, 2, 3):
        panel.tabs.selected_index = index
    page_texts = [panel.code.value, panel.tabs.children[2].children[0].value,
                  panel.tabs.children[3].children[0].value, panel.html(), panel.text()]
    assert all(SOLUTION not in t for t in page_texts)
    assert "hidden in an exercise" in panel.tabs.children[2].children[0].value
    assert ">grad " not in page_texts[2] and "<svg" in page_texts[2]   # values, no gradients
    with pytest.raises(ValueError, match="hidden"):
        panel.step_through()

    verdict = panel.check_exercise(answer(panel.exercise.starter, seed="1.0"))
    assert not verdict.ok and "right when the seed is 1 but not" in verdict.message
    verdict = panel.check_exercise(answer(panel.exercise.starter, dxW="(1.0 - h) * dh"))
    assert not verdict.ok and "check the local derivative ∂h/∂xW" in verdict.message
    assert SOLUTION not in verdict.message and panel.hidden

    assert panel.check_exercise(answer(panel.exercise.starter)).ok
    assert not panel.hidden and not panel.run_button.disabled
    assert panel.header.endswith("your backward pass (solved)")
    assert panel.session.edited and panel.run()[0].error == ""
    panel.tabs.selected_index = 2
    assert panel.stepper is not None
    assert not panel.check_exercise(answer(panel.exercise.starter, dxW="dh")).ok
    assert not panel.hidden                      # once solved, it stays open


def test_show_solution_puts_it_beside_the_students_code():
    panel = gradlab.show(gradlab.grad(loss), W, X, exercise=True)
    panel.widget
    panel.tabs.selected_index = 1
    panel.solution_button.click()
    page = panel._page
    assert page.columns.children == (page.editor.widget, page.solution)
    assert SOLUTION in text_of(page.solution.value)
    assert panel.header.endswith("the solution (shown)") and not panel.hidden
    assert not panel.run_button.disabled


# --- what a saved notebook keeps ---------------------------------------------------------------
def test_the_static_twin_is_the_current_view(panel, monkeypatch):
    panel.widget
    twin = panel._twin
    assert f":has(.{twin.marker})" in twin.css()
    assert f".jp-OutputArea-child:has(.{twin.marker})" in panel.widget.children[0].value
    panel.recompile_and_run(halved(panel))
    bundle = twin.bundle()
    assert twin.marker in bundle["text/html"] and "dW = dW * 0.5" in bundle["text/html"]
    assert "[0.1333" in bundle["text/html"] and "edited: 1 line changed" in bundle["text/plain"]
    updates = []
    monkeypatch.setattr("IPython.display.update_display",
                        lambda data, raw, display_id: updates.append((display_id, data)))
    twin.shown = True
    panel.reset()
    assert updates and updates[-1][0] == twin.id
    assert "dW = dW * 0.5" not in updates[-1][1]["text/html"]


def test_the_live_bundle_leaves_the_static_view_to_the_twin(panel, monkeypatch):
    import gradlab.kernel_ext.panel as panel_module
    monkeypatch.setattr(panel_module, "widgets_available", lambda: True)
    scheduled = []
    panel.widget
    monkeypatch.setattr(panel._twin, "schedule", lambda: scheduled.append(True))
    bundle = panel._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in bundle
    assert bundle["text/plain"] == "" and "text/html" not in bundle and scheduled


@pytest.mark.skipif(not anywidget_available(), reason="anywidget is not installed")
def test_the_keeper_knows_its_panel():
    from gradlab.kernel_ext.reopen import PLACEHOLDER
    panel = gradlab.show(gradlab.grad(loss), W, X)
    keeper = panel.widget.children[-1]
    assert type(keeper).__name__ == "Keeper" and keeper.root == panel.widget.model_id
    assert keeper.placeholder == PLACEHOLDER and "keeper" in keeper._esm


def test_terminal_text_follows_the_colour_settings(panel, monkeypatch):
    monkeypatch.setenv("NO_COLOR", "1")
    assert "\x1b[" not in panel.text()
    monkeypatch.delenv("NO_COLOR")
    assert "\x1b[" not in panel.text()          # pytest's stdout is not a terminal
    coloured = panel.text(color="always")
    assert "\x1b[90m# h = np.tanh(x @ W)" in coloured  # dark grey comments on a light background


def test_show_refuses_an_unknown_backend():
    import pytest

    import gradlab
    from tests.workbench.functions import loss
    with pytest.raises(gradlab.BackendError, match="unknown backend 'nope'"):
        gradlab.show(gradlab.grad(loss), backend="nope")
    assert issubclass(gradlab.CallError, gradlab.GradlabError)
