"""``gradlab grad path/to/file.py:func [--wrt x,y] [--no-optimize] [--mode forward]``:
prints the generated code of a function in a file, highlighted on a terminal."""
from __future__ import annotations

import argparse
import importlib.util
import sys
from pathlib import Path
from typing import Any

from .errors import GradlabError


def load_function(target: str) -> Any:
    path_text, sep, name = target.rpartition(":")
    if not sep or not name or not path_text:
        raise GradlabError(f"expected FILE.py:FUNCTION, got {target!r}")
    path = Path(path_text)
    if not path.is_file():
        raise GradlabError(f"no such file: {path}")
    spec = importlib.util.spec_from_file_location(path.stem, path)
    if spec is None or spec.loader is None:
        raise GradlabError(f"cannot import {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault(path.stem, module)
    sys.path.insert(0, str(path.parent.resolve()))
    try:
        spec.loader.exec_module(module)
    except SystemExit as e:
        raise GradlabError(f"importing {path} ran sys.exit({e.code!r}): put the script's own "
                           f"work under `if __name__ == \"__main__\":`") from None
    except BaseException as e:      # (KeyboardInterrupt too: the import is the file's code)
        if isinstance(e, KeyboardInterrupt):
            raise
        line, own = "", path.resolve()
        tb = e.__traceback__
        while tb is not None:         # the last frame in the user's file
            if Path(tb.tb_frame.f_code.co_filename).resolve() == own:
                line = f" (line {tb.tb_lineno})"
            tb = tb.tb_next
        if isinstance(e, SyntaxError) and e.lineno:
            line = f" (line {e.lineno})"
        raise GradlabError(f"importing {path} failed{line}: {type(e).__name__}: {e}") from None
    finally:
        sys.path.pop(0)
    fn = getattr(module, name, None)
    if fn is None:
        raise GradlabError(f"{path} defines no {name!r}")
    return fn


def parse_wrt(text: str) -> Any:
    """``--wrt`` as ``gradlab.grad`` takes it: ``"W"`` -> ``"W"``, ``"0"`` -> ``0``,
    ``"W,x"`` -> ``("W", "x")``. Quotes around it (kept by IPython's line parsing) are
    removed; an empty list or an empty item is an error, not the first parameter."""
    text = text.strip()
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        text = text[1:-1].strip()
    items = [w.strip() for w in text.split(",")]
    if not text or any(not w for w in items):
        raise GradlabError(f"--wrt {text!r} names no parameter"
                           f"{'' if not text else ' in one of its items'}: give parameter "
                           f"names or indices, comma separated (e.g. --wrt W,x or --wrt 0)")
    parsed: list[Any] = [int(w) if w.lstrip("-").isdigit() else w for w in items]
    return tuple(parsed) if len(parsed) > 1 else parsed[0]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="gradlab", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    g = sub.add_parser("grad", help="print the generated gradient code of FILE.py:FUNCTION")
    g.add_argument("target", help="path/to/file.py:function")
    g.add_argument("--wrt", default="0", help="parameter names or indices, comma separated")
    g.add_argument("--no-optimize", action="store_true", help="show every generated statement")
    g.add_argument("--mode", choices=("reverse", "forward"), default="reverse")
    g.add_argument("--color", choices=("auto", "always", "never"), default="auto")
    args = parser.parse_args(argv)
    from .api import grad, jvp
    from .workbench.display import highlight_terminal
    try:
        fn = load_function(args.target)
        wrt = parse_wrt(args.wrt)
        make = grad if args.mode == "reverse" else jvp
        df = make(fn, wrt, optimized=not args.no_optimize)
    except GradlabError as e:
        print(f"gradlab: {e}", file=sys.stderr)
        return 2
    print(highlight_terminal(df.source, args.color), end="")
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
