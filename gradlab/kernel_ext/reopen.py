"""Widgets whose notebook reopens readable: a live widget, and its static view beside it.

A widget's output holds only a model id; saved and reopened without the kernel that made the
model, JupyterLab shows "Error displaying widget: model not found" in its place, and code-hosting
sites show whatever static rendering the output had when the cell ran. So a gradlab widget is
shown as two outputs:

- the live widget (its bundle holds the widget view and an empty ``text/plain``);
- its *static twin*, displayed right after the cell with a display id and updated in place
  whenever the widget changes (:meth:`StaticTwin.update`), so that the saved notebook holds the
  current static view (active code, last results) for GitHub, nbviewer and nbconvert.

While the widget is on screen, a style rule it carries hides its twin. When the notebook is
saved, the widget's :class:`Keeper` (a hidden anywidget, ``static/keeper.js``) writes an empty
placeholder model for the widget into the notebook's widget state: reopened without a kernel,
the widget output shows nothing instead of an error and the twin, no longer hidden, shows the
view. Without anywidget the keeper is left out (the twin is still there and current).
"""
from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any, Callable

STATIC = Path(__file__).parent / "static"
#: What a saved panel's widget output shows once the kernel is gone: nothing (its static twin
#: shows the panel), not even the "disconnected" mark ipywidgets puts on widgets without one.
PLACEHOLDER = ("<style>.jupyter-widgets-disconnected:has(> .gradlab-saved-panel)::before, "
               ".gradlab-saved-panel.jupyter-widgets-disconnected::before "
               "{display: none;}</style>")
#: CSS selectors of an output's box in JupyterLab / Notebook 7 and in the classic notebook
_OUTPUT_BOXES = (".jp-OutputArea-child", ".output_area")


def anywidget_available() -> bool:
    try:
        import anywidget  # noqa: F401
    except ImportError:
        return False
    return True


_keeper_class: Any = None


def keeper_class() -> Any:
    """The :class:`Keeper` widget class (made on first use: it needs anywidget)."""
    global _keeper_class
    if _keeper_class is None:
        import anywidget
        import traitlets

        class Keeper(anywidget.AnyWidget):  # type: ignore[misc]
            """Hidden; writes the panel's placeholder into the widget state at save time."""

            _esm = STATIC / "keeper.js"
            root = traitlets.Unicode("").tag(sync=True)
            placeholder = traitlets.Unicode(PLACEHOLDER).tag(sync=True)

        _keeper_class = Keeper
    return _keeper_class


class StaticTwin:
    """A widget's static view as an output of its own, kept current with a display id.

    ``render()`` returns the static bundle (``text/html`` and ``text/plain``). The twin is shown
    once per display of the widget, after the running cell's other outputs. With
    ``snapshots=True`` each display keeps the view of its moment (a stepper shown at step 1,
    then at step 3) and is never updated."""

    def __init__(self, render: Callable[[], dict[str, Any]], snapshots: bool = False) -> None:
        self.render = render
        self.id = f"gradlab-{uuid.uuid4().hex[:12]}"
        self.snapshots = snapshots
        self.shown = False
        self._pending = False

    @property
    def marker(self) -> str:
        """The class the static view's outermost element carries."""
        return f"gradlab-static-{self.id}"

    def css(self) -> str:
        """The rule that hides the twin while the live widget is on screen."""
        selectors = ", ".join(f"{box}:has(.{self.marker})" for box in _OUTPUT_BOXES)
        return f"{selectors} {{display: none !important;}}"

    def bundle(self) -> dict[str, Any]:
        data = dict(self.render())
        body = data.get("text/html", "")
        data["text/html"] = f'<div class="gradlab-static {self.marker}">{body}</div>'
        return data

    def schedule(self) -> None:
        """Show the twin after the cell that is running (so that it comes below the widget and
        nothing moves when it is hidden), or now when no cell is running."""
        if self._pending:
            return
        shell = _shell()
        if shell is None:
            return
        if not _in_cell(shell):
            return      # a widget callback: its output would land nowhere
        self._pending = True

        def show(*_: Any) -> None:
            try:
                shell.events.unregister("post_run_cell", show)
            except ValueError:
                pass
            self._pending = False
            self._display()
        shell.events.register("post_run_cell", show)

    def _display(self) -> None:
        from IPython.display import display
        if self.snapshots:
            display(self.bundle(), raw=True)
        else:
            display(self.bundle(), raw=True, display_id=self.id)
        self.shown = True

    def update(self) -> None:
        """Bring every shown copy of the twin up to date (nothing before it is shown)."""
        if not self.shown or self.snapshots:
            return
        from IPython.display import update_display
        try:
            update_display(self.bundle(), raw=True, display_id=self.id)
        except Exception:  # a twin that cannot be updated must not break the widget
            pass


def _shell() -> Any:
    try:
        from IPython import get_ipython
    except ImportError:
        return None
    shell = get_ipython()
    return shell if shell is not None and hasattr(shell, "events") else None


def _in_cell(shell: Any) -> bool:
    """Whether a cell is executing (not a widget's callback, whose outputs have no cell)."""
    header = getattr(shell, "parent_header", None) or {}
    kind = header.get("msg_type") or header.get("header", {}).get("msg_type")
    return kind in (None, "execute_request")


def keeper_for(root: Any, layout: Any = None) -> Any:
    """A :class:`Keeper` for the widget ``root`` (None without anywidget)."""
    if not anywidget_available():
        return None
    options = {"layout": layout} if layout is not None else {}
    return keeper_class()(root=root.model_id, **options)


def live_bundle(widget: Any, render: Callable[[], dict[str, Any]], owner: Any) -> dict[str, Any]:
    """The bundle that shows ``widget`` live, with a static twin (``render()``, a snapshot of
    this moment) scheduled beside it. For a widget that is not a gradlab panel (the stepper
    shown alone): the twin's style and a keeper are added to a box around it, made once and
    kept by ``owner``."""
    twin = getattr(owner, "_twin", None)
    if twin is None:
        twin = owner._twin = StaticTwin(render, snapshots=True)
        owner._live_box = wrap(widget, twin)
    twin.schedule()
    bundle = owner._live_box._repr_mimebundle_() or {}
    bundle["text/plain"] = ""
    bundle.pop("text/html", None)
    return bundle


def wrap(widget: Any, twin: StaticTwin) -> Any:
    """``widget`` in a box with the style that hides ``twin`` and a keeper."""
    import ipywidgets as w
    style = w.HTML(f"<style>{twin.css()}</style>", layout=w.Layout(display="none"))
    box = w.VBox([style, widget])
    keeper = keeper_for(box)
    if keeper is not None:
        box.children = (style, widget, keeper)
    box.add_class("gradlab-live")
    return box
