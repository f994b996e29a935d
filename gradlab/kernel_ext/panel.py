"""The ``%%grad`` panel: a header saying which version runs, the highlighted backward code, an
editor with Recompile (and Recompile & Run, Reset), a backend and device selector with Run,
and where it ran, how long it took and how the gradient compares; tabs that step through the
backward pass, draw the graph of the version that runs, and list what it saves for its backward
pass (each value, the line that computes it, the lines that read it, its size after a run).

A :class:`GradPanel` is a view of a :class:`gradlab.workbench.session.GradSession`. Its methods
(``recompile``, ``run``, ``reset``, ``check_exercise``...) and state (``editor_text``,
``error``, ``header``, ``results``...) work without any front end, so tests drive it headless;
``.widget`` builds the ipywidgets lazily, and the text and HTML renderings serve terminal
IPython and notebooks reopened without a kernel (see :mod:`gradlab.kernel_ext.reopen`).

In an exercise (``exercise=``) the answer stays hidden until the student's backward pass is
correct or the solution is revealed: no generated code, no step-through, no gradients on the
graph, no Run.
"""
from __future__ import annotations

import html
import itertools
import time
from typing import Any, Callable

from ..errors import BackendError
from ..tensor import available_devices, installed_frameworks
from ..workbench.display import highlight_html, highlight_terminal, widgets_available
from ..workbench.session import GradSession, RunResult
from . import views

_ids = itertools.count(1)
#: A Run click that arrives this soon after a run ended was queued while it ran: ignored, so
#: that clicking twice runs once.
QUEUED_CLICK_S = 0.3
HIDDEN = ("<i>hidden in an exercise until your backward pass is correct (Check) or you show "
          "the solution</i>")


class GradPanel:
    def __init__(self, session: GradSession, backend: str = "numpy", device: str = "cpu",
                 check: bool = False, exercise: Any = None, name: str | None = None) -> None:
        self.session = session
        self.backend = backend
        self.device = device
        self.check = check
        self.exercise = exercise            # an Exercise: the generated code stays hidden
        #: the notebook's name for the gradient function (it follows the active version)
        self.name = name
        self.verdict: Any = None
        self.solved = False                 # once right, the exercise stays open
        self.stepper: Any = None
        self.editor_text = exercise.starter if exercise is not None else session.source
        self._widget: Any = None
        self._twin: Any = None
        self._pages: dict[int, Any] = {}
        self._version_shown: Any = session.active
        self._hidden_shown: bool | None = None
        self._last_run_end = 0.0
        self._saved_shown: tuple[Any, str] = (None, "")    # (what it shows, its markup)
        self._id = next(_ids)
        session.listeners.append(self._refresh)

    # --- what the panel does (usable without widgets) -------------------------------------------
    @property
    def hidden(self) -> bool:
        """In an exercise not yet solved nor revealed: the answer is not shown anywhere."""
        return self.exercise is not None and not self.exercise.revealed and not self.solved

    @property
    def header(self) -> str:
        """``dloss(W, x) → ∂loss/∂W · edited: 1 line changed``"""
        fn = getattr(self.session.df.fn, "__name__", "f")
        if self.hidden:
            return (f"exercise: write the backward pass of {fn} "
                    f"({', '.join(f'∂{fn}/∂{w}' for w in self.session.df.wrt)})")
        header = self.session.header(self.name)
        if self.exercise is not None:   # solved (the student's version runs) or revealed
            head = header.rsplit(" · ", 1)[0]
            return f"{head} · " + ("your backward pass (solved)" if self.session.edited
                                   else "the solution (shown)")
        return header

    def recompile(self, text: str | None = None) -> bool:
        """Build the edited code; on failure the previous version stays and ``error`` says why.
        On success it is the active version: the notebook's name follows it."""
        if text is not None:
            self._set_editor(text)
        return self.session.recompile(self.editor_text)

    def recompile_and_run(self, text: str | None = None, backend: str | None = None,
                          device: str | None = None) -> list[RunResult]:
        """Recompile, then run the new version (nothing runs when the edit fails)."""
        if not self.recompile(text) or self.session.args is None:
            return []
        return self.run(backend, device)

    def run(self, backend: str | None = None, device: str | None = None) -> list[RunResult]:
        if self.hidden:
            self.session.error = ("Run is off in an exercise until your backward pass is "
                                  "correct or the solution is shown")
            self._refresh()
            return []
        if backend is not None:
            self.backend = backend
        if device is not None:
            self.device = device
        return self.session.run(self.backend, self.device, check=self.check)

    def reset(self) -> None:
        """Back to the generated code: editor, active version (and the notebook's name), its
        results, the step-through and the graph."""
        self.verdict = None
        self._set_editor(self.exercise.starter if self.hidden else self.session.generated_source)
        self.session.reset()

    # --- classroom: exercises, step-through, graph --------------------------------------------
    def check_exercise(self, text: str | None = None) -> Any:
        """Check the student's backward pass (exercise mode); the answer stays hidden."""
        if self.exercise is None:
            raise ValueError("this panel is not an exercise (use %%grad --exercise)")
        if text is not None:
            self._set_editor(text)
        self.verdict = self.exercise.check(self.editor_text)
        if self.verdict.ok:
            self.solved = True
            self.session.recompile(self.editor_text)   # solved: the student's version runs
        else:
            self._refresh()
        return self.verdict

    def show_solution(self) -> str:
        """Reveal the generated backward pass (shown beside the student's code)."""
        if self.exercise is None:
            return self.session.generated_source  # type: ignore[no-any-return]
        solution = self.exercise.solution()
        if not self.solved:
            self.session.reset()          # the generated version runs (and is bound)
        else:
            self._refresh()
        return solution  # type: ignore[no-any-return]

    def step_through(self) -> Any:
        """A :class:`gradlab.step.Stepper` over the active version on the panel's inputs."""
        if self.hidden:
            raise ValueError("the step-through is hidden in an exercise until it is solved "
                             "or the solution is shown")
        if self.session.args is None:
            raise ValueError("no inputs to step through: give them with --run")
        if self.stepper is None or self.stepper.df is not self.session.active:
            from ..workbench.stepping import Stepper
            self.stepper = Stepper(self.session.active, *self.session.args)
            self.stepper.listeners.append(self._on_step)
        return self.stepper

    def graph_html(self) -> str:
        """The graph of the active version with its values and (not in an unsolved exercise)
        gradients, and a legend."""
        from ..workbench.graphs import graph
        try:
            report = None
            if self.session.args is not None:
                if self.hidden:
                    from ..workbench.tracing import trace
                    report = trace(self.session.active)(*self.session.args)
                else:
                    report = self.step_through().report
            g = graph(self.session.active, report=report, show_gradients=not self.hidden,
                      id_prefix=self._graph_prefix)
            legend = ("<div style='font-size:11px;color:#616161'>(3, 2) |·|=0.51: an array of "
                      "shape (3, 2) whose norm √(Σ x²) is 0.51" + (
                          "; in red, its gradient; lit up, the step-through's current step"
                          if not self.hidden else "") + "</div>")
            return g.html() + legend
        except Exception as e:  # a graph is a bonus: never let it break the panel
            return f"<pre>{html.escape(f'no graph: {type(e).__name__}: {e}')}</pre>"

    def saved_report(self) -> Any:
        """What the active version saves for its backward pass (``df.saved``, see
        :mod:`gradlab.saved`); once that version has run, measured on the run's inputs (shape,
        dtype and bytes of each value, the total): the gradient runs once more to count."""
        active = self.session.active
        s = self.session
        if s.args is not None and s.results and not s.stale:
            try:
                return active.saved_for(*s.args)
            except Exception:    # inputs the measuring run cannot take: the names still show
                pass
        return active.saved

    def saved_html(self) -> str:
        """The "saved" tab: :meth:`saved_report` as a table (hidden in an unsolved exercise:
        it quotes the backward lines)."""
        if self.hidden:
            return HIDDEN
        key = (self.session.active, self.session.results, self.session.stale)
        if self._saved_shown[0] is None or any(a is not b for a, b in zip(key,
                                                                          self._saved_shown[0])):
            try:
                markup = views.saved_html(self.saved_report())
            except Exception as e:  # a bonus: never let it break the panel
                markup = views.pre(f"no table of saved values: {type(e).__name__}: {e}",
                                   views.RED)
            self._saved_shown = (key, markup)
        return self._saved_shown[1]

    @property
    def _graph_prefix(self) -> str:
        return f"gradlab-graph-{self._id}-"

    def _graph_highlight(self) -> str:
        from ..workbench.graphs import highlight_css
        if self.stepper is None or self.hidden:
            return ""
        names = [n[1:] for n in self.stepper.current_names if n.startswith("d")]
        return "".join(highlight_css(self._graph_prefix, n) for n in names)

    @property
    def error(self) -> str:
        return self.session.error

    @property
    def result_line(self) -> str:
        return " | ".join(r.line for r in self.session.results) or (
            f"error: {self.session.error}" if self.session.error else "")

    @property
    def results(self) -> list[RunResult]:
        return self.session.results

    @property
    def stale(self) -> bool:
        return self.session.stale

    # --- text rendering -----------------------------------------------------------------------
    def text(self, color: str = "auto") -> str:
        if self.hidden:
            parts = [self.header, highlight_terminal(self.editor_text, color).rstrip("\n")]
            if self.verdict is not None:
                parts.append(self.verdict.message)
            return "\n\n".join(parts)
        parts = [self.header, highlight_terminal(self.session.source, color).rstrip("\n")]
        if self.session.diff_text:
            parts.append(self.session.diff_text.rstrip("\n"))
        if self.session.stale:
            parts.append("(these results come from another version than the active one)")
        if len(self.session.results) > 1:
            first = self.session.results[0]
            parts.append("\n".join(first.value_lines()))
            parts.append(self.session.comparison())
        else:
            parts.extend(r.summary() for r in self.session.results)
        parts.extend(r.check.table() for r in self.session.results if r.check is not None)
        if self.session.error and not self.session.results:
            parts.append(f"error: {self.session.error}")
        return "\n\n".join(parts)

    def __repr__(self) -> str:
        return self.text(color="never")

    def html(self) -> str:
        """The static view (header, the active code, the edit's diff, results, checks): what a
        notebook shows where widgets cannot run (reopened without a kernel, on GitHub)."""
        parts = [views.header_html(self.header),
                 highlight_html(self.editor_text if self.hidden else self.session.source)]
        if self.verdict is not None:
            parts.append(views.pre(self.verdict.message, views.GREEN if self.verdict.ok
                                   else views.RED, extra=views.WRAP))
        if self.session.error and not self.session.results:
            parts.append(views.pre(self.session.error, views.RED, extra=views.WRAP))
        if not self.hidden:
            parts.append(views.diff_html(self.session))
            parts.append(views.results_html(self.session))
        return f'<div class="gradlab-panel-static">{"".join(parts)}</div>'

    def _static_bundle(self) -> dict[str, Any]:
        return {"text/plain": self.text(color="never"), "text/html": self.html()}

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        if widgets_available():
            bundle = self.widget._repr_mimebundle_(include=include, exclude=exclude) or {}
            bundle["text/plain"] = ""       # the static twin below carries the text and HTML
            bundle.pop("text/html", None)
            self._twin.schedule()
            return bundle
        return {"text/plain": self.text(), "text/html": self.html()}

    # --- widgets ------------------------------------------------------------------------------
    @property
    def widget(self) -> Any:
        if self._widget is None:
            self._build()
        return self._widget

    def _build(self) -> None:
        import ipywidgets as w
        from ipywidgets.widgets.widget_description import DescriptionStyle
        from ipywidgets.widgets.widget_string import HTMLStyle

        from .editor import CSS
        from .reopen import StaticTwin, keeper_for
        klass = f"gradlab-panel-{self._id}"
        # Every widget, layout and style is a model the front end creates before it draws
        # anything. Widgets with no layout or style of their own share one of each, and the
        # tabs other than the code are built when first opened.
        self._plain, self._html_style = w.Layout(), HTMLStyle()
        self._button_style = w.ButtonStyle()
        label_style = DescriptionStyle()
        self._twin = StaticTwin(self._static_bundle)
        style = self._html(f"<style>{CSS} {self._twin.css()} .{klass} .widget-html pre "
                           f"{{white-space: pre;}}</style>")
        # each view made with what it shows: no update message follows its creation
        self.header_view = self._html(views.header_html(self.header))
        self.header_view.add_class("gradlab-header-view")
        self.code = self._html(HIDDEN if self.hidden else highlight_html(self.session.source),
                               layout=w.Layout(width="100%"))
        options = self.backend_options()
        self.backend_select = w.Dropdown(options=options, value=self.backend
                                         if self.backend in options else options[0],
                                         description="backend", layout=w.Layout(width="200px"),
                                         style=label_style)
        devices = self.device_options(self.backend_select.value)
        self.device_select = w.Dropdown(options=devices, value=_pick(self.device, devices),
                                        description="device", layout=w.Layout(width="180px"),
                                        style=label_style)
        self.backend_select.observe(self._on_backend, names="value")
        self.run_button = self._button(self._on_run_click, description="Run", icon="play",
                                       button_style="primary", disabled=self.hidden,
                                       tooltip=self._run_tooltip())
        self.run_button.add_class("gradlab-run-button")
        self.result = self._html(self._result_html())
        self.result.add_class("gradlab-result")
        not_yet = self._html()      # each tab but the code's, until it is first opened
        titles = ["code", "exercise" if self.exercise else "edit", "step through", "graph",
                  "saved"]
        self.tabs = w.Tab(children=[self.code, not_yet, not_yet, not_yet, not_yet],
                          titles=titles,
                          layout=self._plain)
        self.tabs.observe(self._on_tab, names="selected_index")
        controls = w.HBox([self.backend_select, self.device_select, self.run_button],
                          layout=self._plain)
        parts = [style, self.header_view, self.tabs, controls, self.result]
        self._widget = w.VBox(parts, layout=self._plain)
        keeper = keeper_for(self._widget, self._plain)
        if keeper is not None:
            self._widget.children = parts + [keeper]
        self._widget.add_class(klass)
        self._widget.add_class("gradlab-panel")
        self._hidden_shown = self.hidden
        if self.exercise is not None:
            self.tabs.selected_index = 1
        self._refresh()

    def backend_options(self) -> list[str]:
        """The menu of frameworks: those installed here (from the backend registry), then
        'all'."""
        return installed_frameworks() + ["all"]

    def device_options(self, backend: str) -> list[str]:
        """The menu of devices for ``backend``: those present here, CPU first ('all': the CPU,
        and 'gpu' where an installed framework has a GPU)."""
        if backend != "all":
            return _present_devices(backend)
        gpu = any(d != "cpu" for fw in installed_frameworks() for d in _present_devices(fw))
        return ["cpu", "gpu"] if gpu else ["cpu"]

    def _on_backend(self, change: dict[str, Any]) -> None:
        """A new framework chosen: its devices in the menu. Asking for them imports the
        framework (seconds for TensorFlow or JAX, all of them for 'all'), so Run says so and
        is off meanwhile, instead of taking a click that would wait unseen."""
        with self.run_button.hold_sync():
            self.run_button.disabled = True
            self.run_button.description = f"loading {change['new']}…"
        self.device_select.disabled = True
        try:
            devices = self.device_options(change["new"])
            self.device_select.options = devices
            self.device_select.value = _pick(self.device_select.value, devices)
        finally:
            self._refresh()

    def _on_run_click(self) -> None:
        self._clicked(lambda: self.run(self.backend_select.value, self.device_select.value))

    def _on_recompile_run_click(self) -> None:
        self._clicked(lambda: self.recompile_and_run(None, self.backend_select.value,
                                                     self.device_select.value))

    def _clicked(self, action: Callable[[], Any]) -> None:
        """Run a button's action, unless the click waited in the queue while the previous
        clicked run ran (the second click of a double click): the button was disabled then."""
        if time.monotonic() - self._last_run_end < QUEUED_CLICK_S:
            return
        try:
            action()
        finally:
            self._last_run_end = time.monotonic()

    def _html(self, value: str = "", layout: Any = None) -> Any:
        import ipywidgets as w
        return w.HTML(value, layout=layout or self._plain, style=self._html_style)

    def _button(self, on_click: Callable[[], Any], **options: Any) -> Any:
        import ipywidgets as w
        options.setdefault("layout", self._plain)
        b = w.Button(style=self._button_style, **options)
        b.on_click(lambda _: on_click())
        return b

    def _set_page(self, index: int, page: Any) -> None:
        children = list(self.tabs.children)
        children[index] = page
        self.tabs.children = children

    # --- the editor tab, built when first opened (or first used from Python) --------------------
    def _edit_page(self) -> Any:
        if self._widget is None:
            self._build()
        if 1 not in self._pages:     # (building the widget may have built it)
            from .pages import EditPage, ExercisePage
            page = ExercisePage(self) if self.exercise is not None else EditPage(self)
            self._pages[1] = page
            self._set_page(1, page.box)
            self._refresh()
        return self._pages[1]

    @property
    def _page(self) -> Any:
        return self._pages.get(1)

    @property
    def editor(self) -> Any:
        """The editor of the edit (or exercise) tab: ``.value`` is the code."""
        return self._edit_page().editor

    @property
    def status(self) -> Any:
        return self._edit_page().status

    @property
    def diff(self) -> Any:
        return self._edit_page().diff

    @property
    def recompile_button(self) -> Any:
        return self._edit_page().buttons["Recompile"]

    @property
    def recompile_run_button(self) -> Any:
        return self._edit_page().buttons["Recompile & Run"]

    @property
    def reset_button(self) -> Any:
        return self._edit_page().buttons["Reset"]

    @property
    def check_button(self) -> Any:
        return self._edit_page().buttons["Check"]

    @property
    def solution_button(self) -> Any:
        return self._edit_page().buttons["Show solution"]

    def _set_editor(self, text: str) -> None:
        self.editor_text = text
        page = self._pages.get(1)
        if page is not None:
            page.editor.value = text

    def _on_edit(self, text: str) -> None:
        self.editor_text = text

    # --- the step-through and graph tabs -----------------------------------------------------
    def _on_tab(self, change: dict[str, Any]) -> None:
        index = change["new"]
        if index == 1:
            self._edit_page()
        elif index == 2:
            self._step_page()
        elif index == 3:
            self._graph_page()
        elif index == 4:
            self._saved_page()

    def _step_page(self) -> None:
        import ipywidgets as w
        if self.hidden:
            page = self._html(HIDDEN)
        elif self.session.args is None:
            page = self._html("<i>give inputs (%%grad --run, or gradlab.show(df, *args)) to "
                              "step through the backward pass</i>")
        else:
            try:
                page = self.step_through().widget
            except Exception as e:  # show why instead of failing the widget callback
                page = self._html(f"<pre>{html.escape(str(e))}</pre>")
        box = w.VBox([page], layout=self._plain)
        box.add_class("gradlab-step-box")
        self._pages[2] = box
        self._set_page(2, box)

    def _graph_page(self) -> None:
        import ipywidgets as w
        view = self._html(self.graph_html())
        view.add_class("gradlab-graph-view")
        lit = self._html(self._graph_highlight())
        box = w.VBox([view, lit], layout=self._plain)
        box.add_class("gradlab-graph-box")
        self._graph_lit = lit
        self._pages[3] = box
        self._set_page(3, box)

    def _saved_page(self) -> None:
        view = self._html(self.saved_html())
        view.add_class("gradlab-saved-view")
        self._saved_view = view
        self._pages[4] = view
        self._set_page(4, view)

    def _on_step(self) -> None:
        """The stepper moved: light up its step on the graph."""
        if 3 in self._pages:
            self._graph_lit.value = self._graph_highlight()

    def _follow_version(self) -> None:
        """The active version changed (an edit, Reset, a solved exercise) or the exercise's
        answer was revealed: the step-through and the graph show what is now to be seen."""
        self._version_shown = self.session.active
        self._hidden_shown = self.hidden
        self.stepper = None
        if self._widget is None:
            return
        if 2 in self._pages:
            self._step_page()
        if 3 in self._pages:
            self._graph_page()

    # --- keeping every view current -------------------------------------------------------------
    def _refresh(self) -> None:
        if self.session.active is not self._version_shown or (
                self._hidden_shown is not None and self.hidden != self._hidden_shown):
            self._follow_version()
        if self._widget is None:
            return
        s = self.session
        hidden = self.hidden
        self.header_view.value = views.header_html(self.header)
        self.code.value = HIDDEN if hidden else highlight_html(s.source)
        if 1 not in self._pages and (s.error_message or self.verdict is not None):
            self._edit_page()     # something to say in the editor tab: it calls back here
            return
        if 1 in self._pages:
            self._pages[1].show()
        busy = bool(s.running)
        with self.run_button.hold_sync():     # one message: never "Running…" and clickable
            self.run_button.disabled = busy or hidden
            self.run_button.description = "Running…" if busy else "Run"
            self.run_button.tooltip = self._run_tooltip()
        self.backend_select.disabled = self.device_select.disabled = busy or hidden
        self.result.value = self._result_html()
        if 4 in self._pages and not busy:
            self._saved_view.value = self.saved_html()
        if self._twin is not None:
            self._twin.update()

    def _run_tooltip(self) -> str:
        if self.hidden:
            return "off in an exercise until it is solved"
        return f"running {self.session.running}" if self.session.running else (
            "run the active version")

    def _result_html(self) -> str:
        s = self.session
        markup = views.results_html(s, self.hidden)
        if s.error and not s.results and not s.error_message and not s.running:
            markup += views.pre(s.error, views.RED, extra=views.WRAP)
        return markup


def _present_devices(framework: str) -> list[str]:
    """The devices ``framework`` has here; just the CPU when it cannot be asked (not
    installed, or failing to start)."""
    try:
        return available_devices(framework)
    except Exception:  # a menu must not break the panel: running says what is wrong
        return ["cpu"]


def _pick(wanted: str, devices: list[str]) -> str:
    """``wanted`` if the menu has it, else the first GPU for 'cuda'/'gpu', else the CPU."""
    if wanted in devices:
        return wanted
    gpus = [d for d in devices if d != "cpu"]
    if gpus and wanted.partition(":")[0] in ("cuda", "gpu"):
        return gpus[0]
    return "cpu"


def show(df: Any, *args: Any, backend: str = "numpy", device: str = "cpu",
         check: bool = False, exercise: bool = False) -> GradPanel:
    """The ``%%grad`` panel for a generated function, from plain Python (optionally run on
    ``args`` right away; ``exercise=True`` hides the code and lets a student write it)."""
    from ..tensor.registry import FRAMEWORKS
    if backend not in FRAMEWORKS:
        raise BackendError(f"unknown backend {backend!r}; choose one of {', '.join(FRAMEWORKS)}")
    session = GradSession(df, args or None)
    task = None
    if exercise:
        from ..workbench.exercises import Exercise
        task = Exercise(df, *args)
    panel = GradPanel(session, backend=backend, device=device, check=check, exercise=task)
    if args and not exercise:
        panel.run()
    return panel
