"""The panel's code editor (gradlab.kernel_ext.editor): CodeMirror and its Textarea fallback
hold the same text; an action sent from CodeMirror runs on the code it carries."""
from __future__ import annotations

import pytest

pytest.importorskip("ipywidgets")

from gradlab.kernel_ext.editor import Editor  # noqa: E402
from gradlab.kernel_ext.reopen import anywidget_available  # noqa: E402


def make(value="x = 1\n"):
    changes = []
    editor = Editor(value, changes.append)
    return editor, changes


def test_both_editors_hold_the_same_text_whichever_is_typed_in() -> None:
    editor, changes = make()
    assert editor.value == "x = 1\n" and editor.fallback.value == "x = 1\n"
    editor.fallback.value = "x = 2\n"                 # typed in the Textarea
    assert editor.value == "x = 2\n" and changes[-1] == "x = 2\n"
    if editor.code is not None:
        assert editor.code.value == "x = 2\n"
        editor.code.value = "x = 3\n"                 # typed in CodeMirror
        assert editor.fallback.value == "x = 3\n" and changes[-1] == "x = 3\n"
    editor.value = "y = 0\n"                          # set from Python
    assert editor.fallback.value == "y = 0\n"


def test_read_only_and_error_marks() -> None:
    editor, _ = make()
    editor.set_read_only(True)
    assert editor.fallback.disabled
    editor.mark_error(3, "name 'z' is not defined")
    if editor.code is not None:
        assert editor.code.read_only
        assert (editor.code.error_line, editor.code.error_message) == \
            (3, "name 'z' is not defined")
        editor.mark_error(None)
        assert editor.code.error_line == 0
    editor.set_read_only(False)
    assert not editor.fallback.disabled


@pytest.mark.skipif(not anywidget_available(), reason="anywidget is not installed")
def test_an_action_from_codemirror_runs_on_the_code_it_carries() -> None:
    import ipywidgets as w
    editor, changes = make()
    seen = []
    button = editor.action_button("recompile", w.Button(description="Recompile"),
                                  lambda: seen.append(editor.value))
    assert "gradlab-action-recompile" in button._dom_classes
    editor.code._handle_custom_msg({"action": "recompile", "text": "x = 9\n"}, [])   # a click
    assert seen == ["x = 9\n"] and changes[-1] == "x = 9\n"
    editor.code._handle_custom_msg({"action": "unknown", "text": "x = 0\n"}, [])
    editor.code._handle_custom_msg("not a dict", [])
    assert seen == ["x = 9\n"] and editor.value == "x = 9\n"
