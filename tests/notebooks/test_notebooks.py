"""The lesson notebooks in ``notebooks/``: each runs top to bottom in a fresh kernel, and each is
stored with its outputs (so it reads on a code-hosting site without running).

``pytest tests/notebooks`` executes every ``notebooks/*.ipynb`` with nbclient in a fresh
``python3`` kernel started in ``notebooks/`` (as ``make lab`` would), fails on any error output,
and never writes the executed notebook back. A second, fast test checks the stored files: every
code cell was executed, in order, in one session, and has outputs unless it carries the cell tag
``no-output`` (a cell that is output-free on purpose, like the imports).

To refresh the stored outputs after editing a lesson (or after gradlab changed what it shows)::

    .venv/bin/python -m tests.notebooks.test_notebooks --write            # every notebook
    .venv/bin/python -m tests.notebooks.test_notebooks --write 03_backprop_classroom

``--write`` executes the same way and then stores the notebook without the parts that only a
live kernel can use: the widget views (model ids that mean nothing once the kernel is gone), the
outputs that held nothing else, and the widget state. What is left for each ``%%grad`` panel
(and each stepper shown) is its static twin, the output beside the widget holding its
``text/html`` and ``text/plain`` view (see ``gradlab/kernel_ext/reopen.py``), which is what a
code-hosting site shows.
"""
from __future__ import annotations

import importlib.util
import os
import re
import sys
import time
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS_DIR = ROOT / "notebooks"
CELL_TIMEOUT_S = 300
NO_OUTPUT_TAG = "no-output"
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
FRAMEWORK_IMPORT = re.compile(r"^\s*(?:import|from)\s+(torch|tensorflow|jax)\b", re.M)
REQUIRE_ALL = os.environ.get("GRADLAB_REQUIRE_ALL_BACKENDS") == "1"


def notebook_paths() -> list[Path]:
    return sorted(NOTEBOOKS_DIR.glob("*.ipynb"))


def read(path: Path) -> Any:
    import nbformat
    return nbformat.read(path, as_version=4)


def execute(path: Path) -> Any:
    """``path`` executed top to bottom in a fresh kernel whose working directory is
    ``notebooks/``; raises ``nbclient.exceptions.CellExecutionError`` on the first error."""
    from nbclient import NotebookClient
    nb = read(path)
    client = NotebookClient(nb, timeout=CELL_TIMEOUT_S, kernel_name="python3",
                            resources={"metadata": {"path": str(NOTEBOOKS_DIR)}})
    client.execute()
    return nb


def code_cells(nb: Any) -> list[Any]:
    return [c for c in nb.cells if c.cell_type == "code"]


def error_outputs(nb: Any) -> list[str]:
    """Every error output, as ``cell N: Name: message``."""
    found = []
    for i, cell in enumerate(code_cells(nb), start=1):
        for out in cell.get("outputs", []):
            if out.get("output_type") == "error":
                found.append(f"code cell {i}: {out.get('ename')}: {out.get('evalue')}")
    return found


def needed_frameworks(nb: Any) -> set[str]:
    text = "\n".join(c.source for c in code_cells(nb))
    return set(FRAMEWORK_IMPORT.findall(text))


def strip_for_storage(nb: Any) -> Any:
    """Drop what only a live kernel can use: widget views, the outputs that held nothing else
    (a live widget's output carries an empty ``text/plain``: its static twin has the view), and
    the widget state."""
    for cell in code_cells(nb):
        kept = []
        for out in cell.get("outputs", []):
            data = out.get("data")
            if data is not None and WIDGET_VIEW in data:
                data.pop(WIDGET_VIEW)
                if not any(value for value in data.values()):
                    continue
            kept.append(out)
        cell["outputs"] = kept
    nb.metadata.pop("widgets", None)
    return nb


def has_output(cell: Any) -> bool:
    return bool(cell.get("outputs"))


# --- tests ----------------------------------------------------------------------------------------
PATHS = notebook_paths()


def test_storage_keeps_the_static_twin_and_drops_the_live_widget():
    """A %%grad panel's two outputs (the widget, empty in text; its static twin) become one."""
    nbformat = pytest.importorskip("nbformat")
    cell = nbformat.v4.new_code_cell("%%grad ...")
    cell.outputs = [
        nbformat.v4.new_output("execute_result", {WIDGET_VIEW: {"model_id": "abc"},
                                                  "text/plain": ""}, execution_count=1),
        nbformat.v4.new_output("display_data", {"text/html": "<div class='gradlab-static'>",
                                                "text/plain": "dloss(W, x) → ..."}),
        nbformat.v4.new_output("display_data", {WIDGET_VIEW: {"model_id": "def"},
                                                "text/plain": "Button(...)"}),
    ]
    nb = nbformat.v4.new_notebook(cells=[cell])
    nb.metadata["widgets"] = {"state": {}}
    stored = strip_for_storage(nb)
    assert [sorted(o["data"]) for o in stored.cells[0].outputs] == [
        ["text/html", "text/plain"], ["text/plain"]]
    assert "widgets" not in stored.metadata
IDS = [p.stem for p in PATHS]


def test_there_are_lessons():
    assert PATHS, f"no notebooks in {NOTEBOOKS_DIR}"
    assert (NOTEBOOKS_DIR / "README.md").exists()
    listed = (NOTEBOOKS_DIR / "README.md").read_text(encoding="utf-8")
    missing = [p.name for p in PATHS if p.name not in listed]
    assert not missing, f"notebooks/README.md does not list {missing}"


@pytest.mark.parametrize("path", PATHS, ids=IDS)
def test_stored_with_outputs(path: Path):
    """The stored file reads without running: it was executed top to bottom in one session,
    every code cell has outputs unless tagged ``no-output``, and none is an error."""
    pytest.importorskip("nbformat")
    nb = read(path)
    cells = code_cells(nb)
    counts = [c.get("execution_count") for c in cells]
    assert all(isinstance(n, int) for n in counts), (
        f"{path.name}: code cells {[i + 1 for i, n in enumerate(counts) if n is None]} were "
        f"never executed; refresh with python -m tests.notebooks.test_notebooks --write")
    assert counts == list(range(1, len(cells) + 1)), (
        f"{path.name}: execution counts {counts} are not 1..{len(cells)}: not one top-to-bottom "
        f"run in a fresh kernel")
    empty = [i for i, c in enumerate(cells, start=1)
             if not has_output(c) and NO_OUTPUT_TAG not in c.metadata.get("tags", [])]
    assert not empty, (f"{path.name}: code cells {empty} have no stored output (tag a cell "
                       f"'{NO_OUTPUT_TAG}' if it is output-free on purpose)")
    assert not error_outputs(nb), f"{path.name} is stored with errors: {error_outputs(nb)}"
    widget_views = [i for i, c in enumerate(cells, start=1) for o in c.get("outputs", [])
                    if WIDGET_VIEW in o.get("data", {})]
    for i, cell in enumerate(cells, start=1):
        for out in cell.get("outputs", []):
            data = out.get("data", {})
            if data and not ({"text/plain", "text/html", "image/png", "image/svg+xml"} & set(data)):
                pytest.fail(f"{path.name}: code cell {i} has an output with no static "
                            f"rendering ({sorted(data)})")
    assert not widget_views, (f"{path.name}: code cells {widget_views} store widget views "
                              f"(they cannot render without a kernel); store with --write")


@pytest.mark.slow
@pytest.mark.parametrize("path", PATHS, ids=IDS)
def test_notebook_runs_top_to_bottom(path: Path):
    pytest.importorskip("nbclient")
    pytest.importorskip("ipykernel")
    from gradlab.tensor import is_installed
    missing = sorted(fw for fw in needed_frameworks(read(path)) if not is_installed(fw))
    if missing:
        message = f"{path.name} needs {', '.join(missing)} (make test installs all four)"
        if REQUIRE_ALL:
            pytest.fail(message)
        pytest.skip(message)
    from nbclient.exceptions import CellExecutionError
    start = time.perf_counter()
    try:
        nb = execute(path)
    except CellExecutionError as e:
        pytest.fail(f"{path.name} stopped with an error:\n{e}", pytrace=False)
    seconds = time.perf_counter() - start
    assert not error_outputs(nb), f"{path.name}: {error_outputs(nb)}"
    # every cell that has output when run fresh has it stored too (the stored file is current)
    stored = code_cells(read(path))
    fresh = code_cells(nb)
    assert len(stored) == len(fresh)
    stale = [i for i, (s, f) in enumerate(zip(stored, fresh), start=1)
             if has_output(f) and not has_output(s)]
    assert not stale, (f"{path.name}: code cells {stale} produce output but are stored "
                       f"without it; refresh with python -m tests.notebooks.test_notebooks "
                       f"--write {path.stem}")
    print(f"{path.name}: {seconds:.1f} s")


if importlib.util.find_spec("pytest_timeout") is not None:
    test_notebook_runs_top_to_bottom = pytest.mark.timeout(1800)(test_notebook_runs_top_to_bottom)


# --- refreshing the stored outputs ------------------------------------------------------------------
def main(argv: list[str]) -> int:
    import argparse

    import nbformat
    parser = argparse.ArgumentParser(description="execute the lesson notebooks and store them "
                                                 "with their outputs")
    parser.add_argument("--write", action="store_true",
                        help="store the executed notebooks (without --write: execute only)")
    parser.add_argument("names", nargs="*", help="notebook names (default: all)")
    args = parser.parse_args(argv)
    paths = [p for p in notebook_paths()
             if not args.names or p.stem in args.names or p.name in args.names]
    if not paths:
        print("no such notebook", file=sys.stderr)
        return 2
    status = 0
    for path in paths:
        start = time.perf_counter()
        nb = execute(path)
        seconds = time.perf_counter() - start
        errors = error_outputs(nb)
        stderr = [i for i, c in enumerate(code_cells(nb), start=1) for o in c.get("outputs", [])
                  if o.get("output_type") == "stream" and o.get("name") == "stderr"]
        note = f"  (stderr output in code cells {stderr})" if stderr else ""
        print(f"{path.name}: {seconds:.1f} s{note}")
        if errors:
            print("  errors: " + "; ".join(errors))
            status = 1
            continue
        if args.write:
            nbformat.write(strip_for_storage(nb), path)
    return status


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
