"""The ``%%grad`` panel in a real JupyterLab, driven by a real Chromium.

The test starts its own JupyterLab server (random port and token, every Jupyter and IPython
directory inside ``tmp_path``), opens a notebook with ``%load_ext gradlab``, a NumPy setup cell
and a ``%%grad --run`` cell, runs it, and checks what a person would see: the highlighted
generated code, the run line (``numpy · cpu · ... (median of 20) ...``), then an edit in the
"edit" tab, Recompile (the diff shows the edited line), Run (the gradient doubles). It records
how long the panel took to appear after the ``%%grad`` cell was executed and keeps a screenshot
at ``tmp_path / "panel.png"``.

Without Chromium at /usr/bin/chromium or the Python ``playwright`` package (or JupyterLab) the
test is skipped, except under ``GRADLAB_REQUIRE_ALL_BACKENDS=1`` (``make test``), where a
missing browser is an error. Playwright's own browser downloads are never used.
"""
from __future__ import annotations

import importlib.util
import json
import os
import re
import secrets
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any, Iterator

import pytest

pytestmark = [pytest.mark.browser]
if importlib.util.find_spec("pytest_timeout") is not None:
    pytestmark.append(pytest.mark.timeout(600))  # a hung browser must not hang CI

CHROMIUM = "/usr/bin/chromium"
REQUIRE_ALL = os.environ.get("GRADLAB_REQUIRE_ALL_BACKENDS") == "1"
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]

SERVER_START_S = 120       # JupyterLab on a busy 2-core machine
KERNEL_IDLE_S = 120
STEP_S = 60                # any single UI step (a cell run, a button's round trip)
PANEL_BOUND_S = 10         # loose: this machine is noisy, the number is recorded, not judged

SETUP_CELL = "import numpy as np\nW = np.ones((3, 2)) * 0.1\nx = np.ones((4, 3))"
GRAD_CELL = ('%%grad --run "W, x"\n'
             "def loss(W, x):\n"
             "    h = np.tanh(x @ W)\n"
             "    return np.mean(h ** 2)")
ORIGINAL_LINE = "dxW = (1.0 - h * h) * dh"
EDITED_LINE = "dxW = (1.0 - h * h) * dh * 2.0"
EXERCISE_CELL = ('%%grad --exercise --run "W, x"\n'
                 "def loss(W, x):\n"
                 "    h = np.tanh(x @ W)\n"
                 "    return np.mean(h ** 2)")
#: a 30-line model for the timing target (panel on screen <= 300 ms for a 30-line function)
LONG_CELL = '%%grad --run "W1, W2, X, Y" --name dlong\n' + "\n".join([
    "def long_loss(W1, W2, X, Y):",
    "    h = np.tanh(X @ W1)",
    "    h = h * 0.5 + 0.1",
    "    z = h @ W2",
    "    m = np.max(z, axis=1, keepdims=True)",
    "    e = np.exp(z - m)",
    "    p = e / np.sum(e, axis=1, keepdims=True)",
    "    nll = -np.sum(Y * np.log(p + 1e-9), axis=1)",
    "    total = np.mean(nll)",
    "    reg = 0.0",
    "    for W in (W1, W2):",
    "        reg = reg + np.sum(W * W)",
    "    total = total + 1e-3 * reg",
    "    s = 0.0",
    "    for i in range(3):",
    "        if i % 2 == 0:",
    "            s = s + np.mean(h[i] ** 2)",
    "        else:",
    "            s = s - 0.1 * np.mean(np.abs(z[i]))",
    "    total = total + 0.01 * s",
    "    k = 0",
    "    while k < 2:",
    "        total = total * 1.0001",
    "        k = k + 1",
    "    q = np.sqrt(np.sum(W2 ** 2) + 1.0)",
    "    total = total + 1e-4 * q",
    "    lo = np.minimum(total, 100.0)",
    "    hi = np.maximum(lo, -100.0)",
    "    out = hi + 0.0",
    "    return out",
])
LONG_SETUP = ("W1 = np.ones((4, 5)) * 0.1\nW2 = np.ones((5, 3)) * 0.2\n"
              "X = np.ones((6, 4))\nY = np.eye(3)[[0, 1, 2, 0, 1, 2]]")

#: what a student writes under each comment of the exercise's outline
STUDENT_LINES = {"    # return np.mean(h ** 2)": "    dh = 2 * h * (dloss / gl.size(h_pow2))",
                 "    # h = np.tanh(x @ W)": "    dxW = {factor} * dh\n"
                                            "    dW = gl.matmul_grad_y(dxW, x, W)"}


def _unavailable(reason: str) -> None:
    if REQUIRE_ALL:
        pytest.fail(f"{reason}; with GRADLAB_REQUIRE_ALL_BACKENDS=1 (as `make test` sets it) "
                    f"the browser test must run, not skip (`make sysdeps` installs Chromium, "
                    f"`make setup` the Python packages)")
    pytest.skip(reason)


def _require_browser_stack() -> None:
    if not os.access(CHROMIUM, os.X_OK):
        _unavailable(f"Chromium is not installed at {CHROMIUM}")
    for module, what in (("playwright", "the playwright Python package"),
                         ("jupyterlab", "JupyterLab"), ("ipykernel", "ipykernel"),
                         ("ipywidgets", "ipywidgets"), ("nbformat", "nbformat")):
        if importlib.util.find_spec(module) is None:
            _unavailable(f"{what} is not installed (it comes with pip install -e '.[dev,lab]')")


# --- the JupyterLab server ------------------------------------------------------------------------
def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _tail(path: Path, n: int = 60) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-n:])
    except OSError:
        return "(no log)"


def _isolated_env(tmp_path: Path) -> dict[str, str]:
    """Every directory Jupyter and IPython write to inside tmp_path; the venv's kernelspec and
    lab extensions (ipywidgets) stay on the data path."""
    env = dict(os.environ)
    for var, sub in (("JUPYTER_CONFIG_DIR", "jupyter/config"), ("JUPYTER_DATA_DIR", "jupyter/data"),
                     ("JUPYTER_RUNTIME_DIR", "jupyter/runtime"), ("IPYTHONDIR", "ipython")):
        (tmp_path / sub).mkdir(parents=True, exist_ok=True)
        env[var] = str(tmp_path / sub)
    venv_data = str(Path(sys.prefix) / "share" / "jupyter")
    env["JUPYTER_PATH"] = os.pathsep.join(
        p for p in (venv_data, os.environ.get("JUPYTER_PATH", "")) if p)
    env["PYTHONUNBUFFERED"] = "1"
    env.pop("JUPYTER_TOKEN", None)
    # No news, no update check, no "would you like to receive news?" toast.
    settings = tmp_path / "jupyter/config/lab/user-settings/@jupyterlab/apputils-extension"
    settings.mkdir(parents=True, exist_ok=True)
    (settings / "notification.jupyterlab-settings").write_text(
        json.dumps({"fetchNews": "false", "checkForUpdates": False}))
    return env


def _api(base: str, path: str, token: str, method: str = "GET", timeout: float = 5) -> Any:
    request = urllib.request.Request(f"{base}{path}?token={token}", method=method)
    with urllib.request.urlopen(request, timeout=timeout) as response:
        body = response.read()
    return json.loads(body) if body else None


class Lab:
    def __init__(self, base: str, token: str, root: Path, log: Path) -> None:
        self.base, self.token, self.root, self.log = base, token, root, log

    def url(self, path: str) -> str:
        return f"{self.base}{path}?token={self.token}"


def _start_server(tmp_path: Path, root: Path,
                  log: Path) -> tuple[subprocess.Popen[bytes], str, str]:
    """Start JupyterLab on a free port; returns (process, base URL, token) once it answers."""
    env = _isolated_env(tmp_path)
    for attempt in range(3):  # another process may take the free port before the server does
        port, token = _free_port(), secrets.token_hex(24)
        base = f"http://127.0.0.1:{port}"
        command = [
            sys.executable, "-m", "jupyterlab", "--no-browser",
            "--ServerApp.ip=127.0.0.1", f"--ServerApp.port={port}",
            "--ServerApp.port_retries=0", f"--IdentityProvider.token={token}",
            f"--ServerApp.root_dir={root}", "--ServerApp.open_browser=False",
            "--ServerApp.terminals_enabled=False",
            "--LabApp.news_url=None",
            "--LabApp.check_for_updates_class="
            "jupyterlab.handlers.announcements.NeverCheckForUpdate",
            "--LabApp.expose_app_in_browser=True",   # window.jupyterapp: run cells by command
            "--LabApp.extension_manager=readonly",   # no PyPI queries from the extension manager
            "--MappingKernelManager.cull_idle_timeout=0",
        ]
        if hasattr(os, "geteuid") and os.geteuid() == 0:  # CI containers run as root
            command.append("--ServerApp.allow_root=True")
        with open(log, "ab") as out:
            proc = subprocess.Popen(command, cwd=root, env=env, stdin=subprocess.DEVNULL,
                                    stdout=out, stderr=subprocess.STDOUT)
        try:
            deadline = time.monotonic() + SERVER_START_S
            while True:
                if proc.poll() is not None:
                    break
                try:
                    _api(base, "/api/status", token)
                    return proc, base, token
                except (urllib.error.URLError, ConnectionError, OSError, ValueError):
                    pass
                if time.monotonic() > deadline:
                    pytest.fail(f"JupyterLab did not answer /api/status within "
                                f"{SERVER_START_S} s:\n{_tail(log)}")
                time.sleep(0.25)
        except BaseException:
            _stop_server(proc, base, token)
            raise
        if "already in use" not in _tail(log, 20) or attempt == 2:
            pytest.fail(f"JupyterLab exited with {proc.returncode} while starting:\n"
                        f"{_tail(log)}")
    raise AssertionError("unreachable")


def _stop_server(proc: subprocess.Popen[bytes], base: str, token: str) -> None:
    """Shut the kernels down through the server (they run in their own sessions, so they would
    outlive a killed server), then stop the server by its process id."""
    if proc.poll() is None:
        try:
            for kernel in _api(base, "/api/kernels", token) or []:
                _api(base, f"/api/kernels/{kernel['id']}", token, method="DELETE", timeout=20)
        except Exception:
            pass
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=20)


@pytest.fixture
def lab(tmp_path: Path) -> Iterator[Lab]:
    _require_browser_stack()
    root = tmp_path / "notebooks"
    root.mkdir()
    log = tmp_path / "jupyterlab.log"
    proc, base, token = _start_server(tmp_path, root, log)
    try:
        yield Lab(base, token, root, log)
    finally:
        _stop_server(proc, base, token)


# --- the browser --------------------------------------------------------------------------------
@pytest.fixture
def console() -> list[str]:
    """The page's console errors and warnings and its uncaught exceptions."""
    return []


@pytest.fixture
def page(lab: Lab, tmp_path: Path, console: list[str]) -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    profile = tmp_path / "chromium-profile"
    profile.mkdir()
    with sync_playwright() as p:
        # launch_persistent_context is Playwright's way to give Chromium its --user-data-dir
        context = p.chromium.launch_persistent_context(
            str(profile), executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS,
            viewport={"width": 1400, "height": 1000}, device_scale_factor=1,
        )
        try:
            context.set_default_timeout(STEP_S * 1000)
            pg = context.pages[0] if context.pages else context.new_page()
            pg.on("console", lambda m: console.append(f"{m.type}: {m.text}")
                  if m.type in ("error", "warning") else None)
            pg.on("pageerror", lambda e: console.append(f"pageerror: {e}"))
            yield pg
        finally:
            context.close()


def _write_notebook(root: Path, name: str) -> None:
    import nbformat
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3 (ipykernel)",
                                 "language": "python"}
    nb.metadata["language_info"] = {"name": "python"}
    nb.cells = [nbformat.v4.new_code_cell("%load_ext gradlab"),
                nbformat.v4.new_code_cell(SETUP_CELL),
                nbformat.v4.new_code_cell(GRAD_CELL),
                nbformat.v4.new_code_cell(EXERCISE_CELL),
                nbformat.v4.new_code_cell(LONG_SETUP),
                nbformat.v4.new_code_cell(LONG_CELL)]
    nbformat.write(nb, str(root / name))


def _dismiss_interruptions(page: Any) -> None:
    """Choose Python 3 in a "Select Kernel" dialog; close any notification toast."""
    dialog = page.locator(".jp-Dialog")
    if dialog.count() and dialog.first.is_visible():
        text = dialog.first.inner_text()
        if "kernel" in text.lower():
            select = dialog.locator("select")
            if select.count():
                try:
                    select.first.select_option(label=re.compile("Python 3"), timeout=5000)
                except Exception:
                    pass
            print(f"dialog answered: {' '.join(text.split())[:120]!r}")
            dialog.locator(".jp-mod-accept").first.click(timeout=10_000)
    for toast in page.locator(".Toastify__toast").all():
        try:
            if toast.is_visible():
                print(f"notification closed: {' '.join(toast.inner_text().split())[:120]!r}")
                toast.locator("button.jp-toast-button, .Toastify__close-button, "
                              "button[title*='Hide'], button[aria-label*='close' i]"
                              ).last.click(timeout=2000)
        except Exception:
            pass


_KERNEL_STATUS_JS = """() => {
    const app = window.jupyterapp;
    if (!app || !app.shell) return 'no app';
    const w = app.shell.currentWidget;
    if (!w || !w.sessionContext || !w.content || !w.content.widgets) return 'no notebook';
    const ctx = w.sessionContext;
    if (!ctx.isReady) return 'session not ready';
    const kernel = ctx.session && ctx.session.kernel;
    if (!kernel) return 'no kernel';
    return kernel.status + (w.content.widgets.length === 6 ? '' : ' (cells not loaded)');
}"""


def _wait_kernel_idle(page: Any, timeout_s: float, console: list[str]) -> None:
    deadline = time.monotonic() + timeout_s
    status = ""
    while time.monotonic() < deadline:
        _dismiss_interruptions(page)
        status = page.evaluate(_KERNEL_STATUS_JS)
        if status == "idle":
            return
        page.wait_for_timeout(250)
    pytest.fail(f"the notebook's kernel was not idle within {timeout_s} s (last: {status!r});"
                f"\nconsole: {console[-20:]}")


_RUN_CELLS_JS = """async ({first, last}) => {
    // Select cells first..last and run them; resolves when they have executed.
    const app = window.jupyterapp;
    const panel = app.shell.currentWidget;
    const nb = panel.content;
    nb.activeCellIndex = first;
    nb.deselectAll();
    if (last > first) nb.extendContiguousSelectionTo(last);
    const ok = await app.commands.execute('notebook:run-cell');
    return ok;
}"""

_START_GRAD_CELL_JS = """(index) => {
    // Run a %%grad cell and note when (the panel check measures from here).
    const app = window.jupyterapp;
    const nb = app.shell.currentWidget.content;
    nb.deselectAll();
    nb.activeCellIndex = index;
    window.__gradlabRunOk = undefined;
    window.__gradlabT0 = performance.now();
    window.__gradlabRun = app.commands.execute('notebook:run-cell').then(
        ok => (window.__gradlabRunOk = ok), e => (window.__gradlabRunOk = String(e)));
    return true;
}"""

_PANEL_VISIBLE_JS = """([index, expected]) => {
    // ms from executing the %%grad cell to its highlighted code being on screen, else null
    const cell = document.querySelectorAll('.jp-Notebook .jp-Cell')[index];
    const code = cell && cell.querySelector('.gradlab-panel .gradlab-code');
    if (!code) return null;
    const r = code.getBoundingClientRect();
    if (r.width === 0 || r.height === 0) return null;
    if (!code.textContent.includes(expected)) return null;
    return performance.now() - window.__gradlabT0;
}"""


def _outputs_text(page: Any, index: int) -> str:
    cell = page.locator(".jp-Notebook .jp-Cell").nth(index)
    return cell.locator(".jp-OutputArea").inner_text() if cell.locator(
        ".jp-OutputArea").count() else ""


def _tab(panel: Any, title: str) -> Any:
    return panel.locator(".lm-TabBar-tab", has_text=re.compile(rf"^\s*{re.escape(title)}\s*$"))


def _button(panel: Any, label: str) -> Any:
    # by its text, not get_by_role(name=...): the Font Awesome icon's ::before glyph is part of
    # the accessible name, so an exact "Run" would not match
    return panel.locator("button.widget-button",
                         has_text=re.compile(rf"^\s*{re.escape(label)}\s*$"))


def _gradient_preview(run_text: str) -> list[float]:
    match = re.search(r"gradient shape \(3, 2\) (?:\w+ )?\[([^\]]*)\]", run_text)
    assert match, f"no gradient preview in the run line:\n{run_text}"
    return [float(v) for v in match.group(1).replace("...", "").split(",") if v.strip()]


def test_grad_panel_in_jupyterlab(lab: Lab, page: Any, console: list[str], tmp_path: Path,
                                  request: pytest.FixtureRequest) -> None:
    # the report's user_properties (what record_property fills, without its warning under
    # --junitxml's default xunit2 family): the timing and the screenshot's path
    def record_property(name: str, value: Any) -> None:
        request.node.user_properties.append((name, value))

    try:
        _drive(lab, page, console, tmp_path, record_property)
    except BaseException:
        # What a person debugging CI needs: the page as it was, the server log, the console.
        shot = tmp_path / "failure.png"
        try:
            page.screenshot(path=str(shot), full_page=True, timeout=10_000)
            print(f"screenshot of the failure: {shot}")
        except Exception as e:
            print(f"(no failure screenshot: {e})")
        print(f"--- JupyterLab log ({lab.log}) ---\n{_tail(lab.log, 40)}")
        print("--- browser console ---\n" + "\n".join(console[-30:]))
        raise


def _student_answer(starter: str, factor: str) -> str:
    head, sep, tail = starter.partition("# ── backward ──")
    for comment, code in STUDENT_LINES.items():
        tail = tail.replace(comment + "\n", comment + "\n" + code.format(factor=factor) + "\n")
    return head + sep + tail


def _drive(lab: Lab, page: Any, console: list[str], tmp_path: Path,
           record_property: Any) -> None:
    from playwright.sync_api import expect

    name = "grad_panel.ipynb"
    _write_notebook(lab.root, name)
    page.goto(lab.url(f"/lab/tree/{name}"), wait_until="domcontentloaded",
              timeout=SERVER_START_S * 1000)
    page.wait_for_function("() => window.jupyterapp && window.jupyterapp.started !== undefined",
                           timeout=SERVER_START_S * 1000)
    _dismiss_interruptions(page)
    page.locator(".jp-Notebook .jp-Cell").nth(5).wait_for(state="visible",
                                                          timeout=KERNEL_IDLE_S * 1000)
    _wait_kernel_idle(page, KERNEL_IDLE_S, console)

    # Cells 1 and 2: the extension and the inputs.
    ok = page.evaluate(_RUN_CELLS_JS, {"first": 0, "last": 1})
    assert ok, (f"running the first two cells failed:\n{_outputs_text(page, 0)}\n"
                f"{_outputs_text(page, 1)}")
    _wait_kernel_idle(page, STEP_S, console)

    # Cell 3: %%grad, timed from executing it until the generated code is on screen.
    page.evaluate(_START_GRAD_CELL_JS, 2)
    handle = page.wait_for_function(_PANEL_VISIBLE_JS, arg=[2, "def dloss_dW"],
                                    timeout=STEP_S * 1000, polling="raf")
    ms = float(handle.json_value())
    print(f"panel on screen after {ms:.0f} ms")
    record_property("panel_on_screen_ms", round(ms, 1))
    page.wait_for_function("() => window.__gradlabRunOk !== undefined", timeout=STEP_S * 1000)
    run_ok = page.evaluate("() => window.__gradlabRunOk")
    assert run_ok is True, f"the %%grad cell failed ({run_ok!r}):\n{_outputs_text(page, 2)}"
    assert ms < PANEL_BOUND_S * 1000, f"the panel took {ms:.0f} ms to appear"

    cell = page.locator(".jp-Notebook .jp-Cell").nth(2)
    assert cell.locator("[data-mime-type='application/vnd.jupyter.stderr']").count() == 0, \
        _outputs_text(page, 2)
    panel = cell.locator(".gradlab-panel")
    expect(panel).to_have_count(1)
    code = panel.locator(".gradlab-code")
    expect(code).to_be_visible()
    code_text = code.inner_text()
    assert "def dloss_dW" in code_text, code_text
    assert "dW = gl.matmul_grad_y(dxW, x, W)" in code_text, code_text
    assert ORIGINAL_LINE in code_text, code_text
    # highlighted by pygments with inline styles, not plain text
    assert code.locator("span[style]").count() > 0, code.inner_html()

    result = panel.locator(".gradlab-result")
    run_line = result.locator(".gradlab-run")
    expect(run_line).to_have_count(1)
    expect(run_line).to_be_visible()
    before = run_line.inner_text()
    assert "numpy · cpu" in before and "median of" in before, before
    assert before.startswith("value "), before
    grad_before = _gradient_preview(before)
    assert grad_before and all(g != 0 for g in grad_before), before

    # The edit tab: change one line, Recompile, read the diff.
    _tab(panel, "edit").click()
    editor = panel.locator(".gradlab-editor textarea")
    expect(editor).to_be_visible()
    generated = editor.input_value()
    assert generated.count(ORIGINAL_LINE + "\n") == 1, generated
    edited = generated.replace(ORIGINAL_LINE + "\n", EDITED_LINE + "\n")
    editor.fill(edited)              # one `input` event: ipywidgets syncs the value to the kernel
    editor.dispatch_event("change")  # and the `change` a person leaving the field would cause
    expect(editor).to_have_value(edited)

    # the editor tab's VBox: [Textarea, HBox(Recompile, Reset), HTML(status), HTML(diff)]
    box_html = panel.locator(".widget-vbox:has(> .gradlab-editor) > .widget-html")
    expect(box_html).to_have_count(2)
    status, diff = box_html.nth(0), box_html.nth(1)
    _button(panel, "Recompile").click()
    expected_diff_line = "+    " + EDITED_LINE
    try:
        expect(diff).to_contain_text(EDITED_LINE, timeout=STEP_S * 1000)
    except AssertionError:
        raise AssertionError(
            f"no diff after Recompile: the edit did not reach the kernel, or recompiling "
            f"failed\nstatus: {status.inner_text()!r}\ndiff: {diff.inner_text()!r}") from None
    diff_text = diff.inner_text()
    assert expected_diff_line in diff_text.splitlines(), diff_text
    assert "-    " + ORIGINAL_LINE in diff_text.splitlines(), diff_text
    assert status.inner_text().strip() == "", f"Recompile reported an error: {status.inner_text()}"
    expect(editor).to_have_value(edited)  # the kernel's refresh left the edit alone
    panel.scroll_into_view_if_needed()
    cell.screenshot(path=str(tmp_path / "panel-edit.png"))

    # Run the edited gradient: the gradient doubles, the loss value stays.
    _button(panel, "Run").click()
    expect(run_line).not_to_have_text(before, timeout=STEP_S * 1000)
    expect(run_line).to_have_count(1)
    after = run_line.inner_text()
    assert "numpy · cpu" in after and "median of" in after and "error" not in after, after
    grad_after = _gradient_preview(after)
    assert grad_after == pytest.approx([2 * g for g in grad_before], rel=2e-3), (before, after)
    assert before.splitlines()[0] == after.splitlines()[0], (before, after)  # the value line
    print(f"run before the edit: {before!r}\nrun after the edit:  {after!r}")

    # The code tab now shows the edited version, highlighted.
    _tab(panel, "code").click()
    expect(code).to_be_visible()
    expect(code).to_contain_text(EDITED_LINE)

    _dismiss_interruptions(page)
    shot = tmp_path / "panel.png"
    panel.scroll_into_view_if_needed()
    cell.screenshot(path=str(shot))
    assert shot.stat().st_size > 0
    print(f"screenshot: {shot}")
    record_property("screenshot", str(shot))

    # Step through the backward pass: the stepper shows a step, Next moves to the next one.
    _tab(panel, "step through").click()
    stepper = panel.locator(".gradlab-stepper")
    expect(stepper).to_be_visible(timeout=STEP_S * 1000)
    expect(stepper).to_contain_text("step 1 of", timeout=STEP_S * 1000)
    expect(stepper).to_contain_text("differentiates your line")
    _button(stepper, "Next").click()
    expect(stepper).to_contain_text("step 2 of", timeout=STEP_S * 1000)
    cell.screenshot(path=str(tmp_path / "panel-step.png"))

    # An exercise: the code is hidden, a wrong answer is located, a right one is accepted.
    ok = page.evaluate(_RUN_CELLS_JS, {"first": 3, "last": 3})
    assert ok, f"the exercise cell failed:\n{_outputs_text(page, 3)}"
    exercise_cell = page.locator(".jp-Notebook .jp-Cell").nth(3)
    exercise = exercise_cell.locator(".gradlab-panel")
    expect(exercise).to_have_count(1, timeout=STEP_S * 1000)
    ex_editor = exercise.locator(".gradlab-editor textarea")
    expect(ex_editor).to_be_visible(timeout=STEP_S * 1000)
    starter = ex_editor.input_value()
    assert "dxW" not in starter and "# h = np.tanh(x @ W)" in starter, starter
    status = exercise.locator(".gradlab-status")
    for factor, expected in (("(1.0 - h)", "first differs"), ("(1.0 - h * h)", "correct")):
        ex_editor.fill(_student_answer(starter, factor))
        ex_editor.dispatch_event("change")
        _button(exercise, "Check").click()
        expect(status).to_contain_text(expected, timeout=STEP_S * 1000)
    exercise_cell.screenshot(path=str(tmp_path / "exercise.png"))

    # The timing target's case: a 30-line function, warm kernel, NumPy.
    ok = page.evaluate(_RUN_CELLS_JS, {"first": 4, "last": 4})
    assert ok, f"the setup cell failed:\n{_outputs_text(page, 4)}"
    page.evaluate(_START_GRAD_CELL_JS, 5)
    handle = page.wait_for_function(_PANEL_VISIBLE_JS, arg=[5, "def dlong_loss_dW1"],
                                    timeout=STEP_S * 1000, polling="raf")
    long_ms = float(handle.json_value())
    page.wait_for_function("() => window.__gradlabRunOk !== undefined", timeout=STEP_S * 1000)
    print(f"30-line function: panel on screen after {long_ms:.0f} ms")
    record_property("panel_on_screen_30_lines_ms", round(long_ms, 1))
    assert long_ms < PANEL_BOUND_S * 1000, f"the panel took {long_ms:.0f} ms to appear"
    long_panel = page.locator(".jp-Notebook .jp-Cell").nth(5).locator(".gradlab-panel")
    expect(long_panel.locator(".gradlab-run")).to_contain_text("numpy · cpu")
    errors = [m for m in console if m.startswith("pageerror")]
    assert not errors, f"uncaught errors in the page: {errors}"
