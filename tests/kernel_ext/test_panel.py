"""The panel's widgets driven from Python: edit the editor, click Recompile and Run."""
from __future__ import annotations

import _thread
import html
import re
import threading

import numpy as np
import pytest

import gradlab
from gradlab.kernel_ext.panel import GradPanel


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


def test_widgets_show_code_and_result(panel):
    w = panel.widget
    assert w is panel.widget   # built once
    assert 'class="gradlab-code"' in panel.code.value
    assert "<style" not in panel.code.value and 'style="' in panel.code.value  # inline only
    assert "dW = gl.matmul_grad_y(dxW, x, W)" in text_of(panel.code.value)
    assert "numpy · cpu" in panel.result.value and "median of" in panel.result.value
    assert panel.editor.value == panel.session.source


def test_edit_recompile_run_through_widgets(panel):
    panel.widget
    before = panel.results[0].gradients
    panel.editor.value = panel.editor.value.replace("dxW = (1.0 - h * h) * dh",
                                                    "dxW = (1.0 - h * h) * dh * 2.0")
    panel.recompile_button.click()
    assert panel.error == ""
    assert "+    dxW = (1.0 - h * h) * dh * 2.0" in panel.session.diff_text
    assert "dxW = (1.0 - h * h) * dh * 2.0" in text_of(panel.code.value)
    panel.backend_select.value = "torch"
    panel.run_button.click()
    assert panel.results[0].framework == "torch"
    np.testing.assert_allclose(np.asarray(panel.results[0].gradients), 2 * before)
    panel.reset_button.click()
    assert panel.session.active is panel.session.df and panel.editor.value == panel.session.source


def test_failed_edit_keeps_the_previous_version(panel):
    panel.widget
    panel.recompile(panel.editor_text.replace("dxW = (1.0 - h * h) * dh",
                                              "dxW = (1.0 - h * h) * dh * 3.0"))
    good = panel.session.active
    panel.editor.value = panel.editor.value.replace("return dW", "return dW +")
    panel.recompile_button.click()
    assert "syntax error" in panel.error
    assert panel.session.error_line is not None
    assert "syntax error" in panel.status.value
    assert panel.session.active is good
    panel.run_button.click()
    assert not panel.results[0].error


def test_interrupted_infinite_loop_leaves_the_kernel_alive(panel):
    panel.widget
    looping = panel.editor_text.replace("    return dW", "    while True:\n        pass\n"
                                                        "    return dW")
    assert panel.recompile(looping)
    timer = threading.Timer(1.0, _thread.interrupt_main)
    timer.start()
    try:
        results = panel.run()
    finally:
        timer.cancel()
    assert "interrupted" in results[0].error
    assert "interrupted" in panel.result.value


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


def test_tabs_other_than_the_code_are_built_when_first_opened(panel):
    """The panel on screen fast: the front end creates few models before it draws the code."""
    from ipywidgets.widgets.widget import _instances
    before = len(_instances)
    panel.widget
    assert len(_instances) - before <= 20, len(_instances) - before
    assert panel._page is None and "gradlab-code" in panel.tabs.children[0].value
    panel.tabs.selected_index = 1
    assert panel.tabs.children[1] is panel._page.box and panel.editor.value == panel.editor_text
    panel.tabs.selected_index = 2
    assert "gradlab-step-box" in panel.tabs.children[2]._dom_classes
    panel.tabs.selected_index = 3
    graph = panel.tabs.children[3]
    assert "gradlab-graph-view" in graph._dom_classes and graph.value == panel.graph_html()
    assert panel.tabs.titles == ("code", "edit", "step through", "graph")


def test_a_failed_recompile_opens_its_message_in_the_edit_tab(panel):
    panel.widget
    assert panel._page is None
    assert not panel.recompile(panel.editor_text.replace("return dW", "return dW +"))
    assert panel._page is not None and "syntax error" in panel.status.value
    assert "return dW +" in panel.editor.value
