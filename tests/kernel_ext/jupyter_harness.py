"""A Jupyter server and a headless Chromium, for the browser test (``test_browser.py``) and the
panel's latency benchmark (``bench/panel_latency.py``): one place that knows how to start the
server with every directory isolated, open a notebook in JupyterLab or in Notebook 7 (the same
server serves both: ``/lab/tree/<file>`` and ``/notebooks/<file>``), run its cells, and time a
``%%grad`` cell until its panel is on screen.

Chromium is the system's (``/usr/bin/chromium``); Playwright's own browser downloads are never
used. A server or page that does not come up raises :class:`HarnessError` with the server's log.
"""
from __future__ import annotations

import contextlib
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
from typing import Any, Iterator, Sequence

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]
SERVER_START_S = 120       # a Jupyter server on a busy 2-core machine
KERNEL_IDLE_S = 120
STEP_S = 60                # any single UI step (a cell run, a button's round trip)

#: the Python packages each front end needs, with what to call them in a message
NEEDS = {"lab": (("playwright", "the playwright Python package"), ("jupyterlab", "JupyterLab"),
                 ("ipykernel", "ipykernel"), ("ipywidgets", "ipywidgets"),
                 ("nbformat", "nbformat")),
         "notebook": (("notebook", "Notebook 7 (the notebook package)"),)}


class HarnessError(RuntimeError):
    """The server or the page did not do what the harness waited for."""


def missing(uis: Sequence[str] = ("lab",)) -> str | None:
    """Why the browser stack cannot run here (None when it can)."""
    if not os.access(CHROMIUM, os.X_OK):
        return f"Chromium is not installed at {CHROMIUM}"
    for ui in uis:
        for module, what in NEEDS[ui]:
            if importlib.util.find_spec(module) is None:
                return f"{what} is not installed (it comes with pip install -e '.[dev,lab]')"
    return None


# --- the server ---------------------------------------------------------------------------------
def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def tail(path: Path, n: int = 60) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-n:])
    except OSError:
        return "(no log)"


def isolated_env(tmp_path: Path) -> dict[str, str]:
    """Every directory Jupyter and IPython write to inside tmp_path; the venv's kernelspec and
    lab extensions (ipywidgets, anywidget) stay on the data path."""
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


def api(base: str, path: str, token: str, method: str = "GET", timeout: float = 5) -> Any:
    request = urllib.request.Request(f"{base}{path}?token={token}", method=method)
    with urllib.request.urlopen(request, timeout=timeout) as response:
        body = response.read()
    return json.loads(body) if body else None


class Server:
    """A running Jupyter server: ``url(path)`` with its token, ``root`` (the notebooks'
    folder), ``log``."""

    def __init__(self, proc: subprocess.Popen[bytes], base: str, token: str, root: Path,
                 log: Path) -> None:
        self.proc, self.base, self.token, self.root, self.log = proc, base, token, root, log

    def url(self, path: str) -> str:
        return f"{self.base}{path}?token={self.token}"

    def api(self, path: str, method: str = "GET", timeout: float = 5) -> Any:
        return api(self.base, path, self.token, method=method, timeout=timeout)

    def shutdown_kernels(self) -> None:
        for kernel in self.api("/api/kernels") or []:
            self.api(f"/api/kernels/{kernel['id']}", method="DELETE", timeout=20)

    def stop(self) -> None:
        """Shut the kernels down through the server (they run in their own sessions, so they
        would outlive a killed server), then stop the server by its process id."""
        if self.proc.poll() is not None:
            return
        try:
            self.shutdown_kernels()
        except Exception:
            pass
        self.proc.terminate()
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=20)


def _server_command(port: int, token: str, root: Path) -> list[str]:
    command = [
        sys.executable, "-m", "jupyterlab", "--no-browser",
        "--ServerApp.ip=127.0.0.1", f"--ServerApp.port={port}",
        "--ServerApp.port_retries=0", f"--IdentityProvider.token={token}",
        f"--ServerApp.root_dir={root}", "--ServerApp.open_browser=False",
        "--ServerApp.terminals_enabled=False",
        "--LabApp.news_url=None",
        "--LabApp.check_for_updates_class="
        "jupyterlab.handlers.announcements.NeverCheckForUpdate",
        # window.jupyterapp in both front ends: the harness runs cells by command
        "--LabApp.expose_app_in_browser=True",
        "--JupyterNotebookApp.expose_app_in_browser=True",
        "--LabApp.extension_manager=readonly",   # no PyPI queries from the extension manager
        "--MappingKernelManager.cull_idle_timeout=0",
    ]
    if hasattr(os, "geteuid") and os.geteuid() == 0:  # CI containers run as root
        command.append("--ServerApp.allow_root=True")
    return command


def start_server(tmp_path: Path, root: Path, log: Path) -> Server:
    """JupyterLab's server (which serves Notebook 7 too, where it is installed) on a free port,
    once it answers."""
    env = isolated_env(tmp_path)
    for attempt in range(3):  # another process may take the free port before the server does
        port, token = free_port(), secrets.token_hex(24)
        with open(log, "ab") as out:
            proc = subprocess.Popen(_server_command(port, token, root), cwd=root, env=env,
                                    stdin=subprocess.DEVNULL, stdout=out,
                                    stderr=subprocess.STDOUT)
        server = Server(proc, f"http://127.0.0.1:{port}", token, root, log)
        try:
            if _wait_answering(server):
                return server
        except BaseException:
            server.stop()
            raise
        if "already in use" not in tail(log, 20) or attempt == 2:
            raise HarnessError(f"the Jupyter server exited with {proc.returncode} while "
                               f"starting:\n{tail(log)}")
    raise AssertionError("unreachable")


def _wait_answering(server: Server) -> bool:
    """True once /api/status answers; False when the server exited first."""
    deadline = time.monotonic() + SERVER_START_S
    while server.proc.poll() is None:
        try:
            server.api("/api/status")
            return True
        except (urllib.error.URLError, ConnectionError, OSError, ValueError):
            pass
        if time.monotonic() > deadline:
            raise HarnessError(f"the Jupyter server did not answer /api/status within "
                               f"{SERVER_START_S} s:\n{tail(server.log)}")
        time.sleep(0.25)
    return False


@contextlib.contextmanager
def jupyter_server(tmp_path: Path) -> Iterator[Server]:
    root = tmp_path / "notebooks"
    root.mkdir(exist_ok=True)
    server = start_server(tmp_path, root, tmp_path / "jupyter.log")
    try:
        yield server
    finally:
        server.stop()


# --- the 30-line function of the panel's timing target ---------------------------------------------
#: ``W1, W2, X, Y`` for :func:`thirty_line_cell`
THIRTY_LINE_SETUP = ("W1 = np.ones((4, 5)) * 0.1\nW2 = np.ones((5, 3)) * 0.2\n"
                     "X = np.ones((6, 4))\nY = np.eye(3)[[0, 1, 2, 0, 1, 2]]")


def thirty_line_cell(bound: str = "100.0", name: str = "dlong") -> str:
    """A ``%%grad --run`` cell of a 30-line model (the target: its panel on screen within
    300 ms of running the cell). ``bound`` is one of its constants: a new one makes new code,
    which the transform cache has not seen."""
    return f'%%grad --run "W1, W2, X, Y" --name {name}\n' + "\n".join([
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
        f"    lo = np.minimum(total, {bound})",
        "    hi = np.maximum(lo, -100.0)",
        "    out = hi + 0.0",
        "    return out",
    ])


# --- the browser --------------------------------------------------------------------------------
@contextlib.contextmanager
def chromium(profile: Path, console: list[str]) -> Iterator[Any]:
    """A page of a headless Chromium with its own profile; ``console`` collects the page's
    console errors and warnings and its uncaught exceptions."""
    from playwright.sync_api import sync_playwright

    profile.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as p:
        # launch_persistent_context is Playwright's way to give Chromium its --user-data-dir
        context = p.chromium.launch_persistent_context(
            str(profile), executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS,
            viewport={"width": 1400, "height": 1000}, device_scale_factor=1,
        )
        try:
            context.set_default_timeout(STEP_S * 1000)
            page = context.pages[0] if context.pages else context.new_page()
            listen(page, console)
            yield page
        finally:
            context.close()


def listen(page: Any, console: list[str]) -> None:
    page.on("console", lambda m: console.append(f"{m.type}: {m.text}")
            if m.type in ("error", "warning") else None)
    page.on("pageerror", lambda e: console.append(f"pageerror: {e}"))


def write_notebook(root: Path, name: str, cells: Sequence[str]) -> None:
    import nbformat
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3 (ipykernel)",
                                 "language": "python"}
    nb.metadata["language_info"] = {"name": "python"}
    nb.cells = [nbformat.v4.new_code_cell(c) for c in cells]
    nbformat.write(nb, str(root / name))


#: where each front end opens a notebook
NOTEBOOK_URL = {"lab": "/lab/tree/{name}", "notebook": "/notebooks/{name}"}


def open_notebook(page: Any, server: Server, name: str, cells: int, console: list[str],
                  ui: str = "lab") -> None:
    """Open ``name`` in JupyterLab (``ui="lab"``) or Notebook 7 (``"notebook"``) and wait for
    its ``cells`` cells and an idle kernel."""
    page.goto(server.url(NOTEBOOK_URL[ui].format(name=name)), wait_until="domcontentloaded",
              timeout=SERVER_START_S * 1000)
    page.wait_for_function("() => window.jupyterapp && window.jupyterapp.started !== undefined",
                           timeout=SERVER_START_S * 1000)
    dismiss_interruptions(page)
    page.locator(".jp-Notebook .jp-Cell").nth(cells - 1).wait_for(
        state="visible", timeout=KERNEL_IDLE_S * 1000)
    wait_kernel_idle(page, cells, KERNEL_IDLE_S, console)


def dismiss_interruptions(page: Any) -> None:
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


KERNEL_STATUS_JS = """(cells) => {
    const app = window.jupyterapp;
    if (!app || !app.shell) return 'no app';
    const w = app.shell.currentWidget;
    if (!w || !w.sessionContext || !w.content || !w.content.widgets) return 'no notebook';
    const ctx = w.sessionContext;
    if (!ctx.isReady) return 'session not ready';
    const kernel = ctx.session && ctx.session.kernel;
    if (!kernel) return 'no kernel';
    return kernel.status + (w.content.widgets.length === cells ? '' : ' (cells not loaded)');
}"""


def wait_kernel_idle(page: Any, cells: int, timeout_s: float, console: list[str]) -> None:
    deadline = time.monotonic() + timeout_s
    status = ""
    while time.monotonic() < deadline:
        dismiss_interruptions(page)
        status = page.evaluate(KERNEL_STATUS_JS, cells)
        if status == "idle":
            return
        page.wait_for_timeout(250)
    raise HarnessError(f"the notebook's kernel was not idle within {timeout_s} s "
                       f"(last: {status!r});\nconsole: {console[-20:]}")


RUN_CELLS_JS = """async ({first, last}) => {
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

START_CELL_JS = """(index) => {
    // Run a cell and note when (the panel check measures from here).
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

VISIBLE_JS = """([index, selector, expected]) => {
    // ms from executing cell `index` to `selector` in it on screen showing `expected`, else null
    const cell = document.querySelectorAll('.jp-Notebook .jp-Cell')[index];
    const node = cell && cell.querySelector(selector);
    if (!node) return null;
    const r = node.getBoundingClientRect();
    if (r.width === 0 || r.height === 0) return null;
    if (!node.textContent.includes(expected)) return null;
    return performance.now() - window.__gradlabT0;
}"""

#: the panel's highlighted code: what "the panel is on screen" waits for
PANEL_CODE = ".gradlab-panel .gradlab-code"


def cell(page: Any, index: int) -> Any:
    return page.locator(".jp-Notebook .jp-Cell").nth(index)


def outputs_text(page: Any, index: int) -> str:
    node = cell(page, index)
    return node.locator(".jp-OutputArea").inner_text() if node.locator(
        ".jp-OutputArea").count() else ""


def run_cells(page: Any, first: int, last: int | None = None) -> None:
    ok = page.evaluate(RUN_CELLS_JS, {"first": first, "last": first if last is None else last})
    if not ok:
        raise HarnessError(f"running cells {first}..{last} failed:\n{outputs_text(page, first)}")


def timed_cell(page: Any, index: int, expected: str, selector: str = PANEL_CODE) -> float:
    """Run cell ``index``; ms from executing it to ``selector`` (by default the panel's code)
    on screen with ``expected`` in it. Raises when the cell fails."""
    page.evaluate(START_CELL_JS, index)
    handle = page.wait_for_function(VISIBLE_JS, arg=[index, selector, expected],
                                    timeout=STEP_S * 1000, polling="raf")
    ms = float(handle.json_value())
    page.wait_for_function("() => window.__gradlabRunOk !== undefined", timeout=STEP_S * 1000)
    run_ok = page.evaluate("() => window.__gradlabRunOk")
    if run_ok is not True:
        raise HarnessError(f"cell {index} failed ({run_ok!r}):\n{outputs_text(page, index)}")
    return ms
