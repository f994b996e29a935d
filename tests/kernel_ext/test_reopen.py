"""Widgets whose notebook reopens readable (gradlab.kernel_ext.reopen): a static twin shown
after the cell, hidden while the live widget is on screen, kept current by its display id."""
from __future__ import annotations

import pytest

from gradlab.kernel_ext.reopen import (PLACEHOLDER, StaticTwin, anywidget_available, keeper_for,
                                       live_bundle, wrap)

w = pytest.importorskip("ipywidgets")


def render():
    return {"text/html": "<b>step 1</b>", "text/plain": "step 1"}


def test_the_static_view_carries_the_class_its_style_hides() -> None:
    twin = StaticTwin(render)
    bundle = twin.bundle()
    assert bundle["text/plain"] == "step 1"
    assert bundle["text/html"] == f'<div class="gradlab-static {twin.marker}"><b>step 1</b></div>'
    assert twin.marker == f"gradlab-static-{twin.id}" and twin.id.startswith("gradlab-")
    css = twin.css()
    assert f".jp-OutputArea-child:has(.{twin.marker})" in css and "display: none" in css
    assert StaticTwin(render).id != twin.id


def test_nothing_is_shown_or_updated_outside_a_running_cell(monkeypatch) -> None:
    twin = StaticTwin(render)
    shown = []
    monkeypatch.setattr(twin, "_display", lambda: shown.append(True))
    twin.update()                          # not shown yet: nothing to update
    twin.schedule()                        # no IPython shell here (or not in a cell)
    assert shown == [] and not twin.shown


def test_the_twin_is_shown_once_after_the_running_cell(monkeypatch) -> None:
    from IPython.core.interactiveshell import InteractiveShell
    shell = InteractiveShell.instance()
    twin = StaticTwin(render)
    shown = []
    monkeypatch.setattr(twin, "_display", lambda: shown.append(True))
    twin.schedule()
    twin.schedule()                        # twice in one cell: one twin
    assert shown == []
    shell.events.trigger("post_run_cell", None)
    shell.events.trigger("post_run_cell", None)
    assert shown == [True]


def test_a_wrapped_widget_sits_with_the_style_that_hides_its_twin() -> None:
    twin = StaticTwin(render)
    inner = w.Label("live")
    box = wrap(inner, twin)
    assert box.children[1] is inner and twin.css() in box.children[0].value
    assert "gradlab-live" in box._dom_classes
    if anywidget_available():
        keeper = box.children[2]
        assert keeper.root == box.model_id and keeper.placeholder == PLACEHOLDER
    else:
        assert len(box.children) == 2 and keeper_for(box) is None


def test_a_live_bundle_shows_the_widget_only_and_makes_its_box_once() -> None:
    class Owner:
        pass
    owner, inner = Owner(), w.Label("live")
    bundle = live_bundle(inner, render, owner)
    assert bundle["text/plain"] == "" and "text/html" not in bundle
    assert "application/vnd.jupyter.widget-view+json" in bundle
    box = owner._live_box
    live_bundle(inner, render, owner)
    assert owner._live_box is box and owner._twin.snapshots
