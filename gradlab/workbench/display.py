"""Generated code made pleasant to read: pygments highlighting for terminals and for HTML with
inline styles (no global CSS leaks into a notebook page).

Terminal colours follow the user's choices: none with ``NO_COLOR`` (https://no-color.org),
IPython's ``--colors=nocolor``, or output that is not a terminal (a pipe, a file); otherwise
IPython's scheme says whether the background is light or dark (``lightbg``, ``linux``), and
comments are dark grey on light backgrounds and light grey on dark ones, readable on both.
"""
from __future__ import annotations

import functools
import html
import os
import sys
from typing import Any


def terminal_palette(color: str = "auto") -> str | None:
    """The background colours are written for: ``'light'`` or ``'dark'``, or None for no
    colour. ``color`` is ``'auto'`` (see the module's docstring), ``'always'`` (colour even into
    a pipe, in IPython's scheme) or ``'never'``."""
    if color == "never":
        return None
    scheme = _ipython_colors()
    if color == "auto":
        if os.environ.get("NO_COLOR") or scheme == "nocolor":
            return None
        try:
            if not sys.stdout.isatty():
                return None
        except (AttributeError, ValueError):   # a closed or replaced stdout
            return None
    return "dark" if scheme in ("linux",) else "light"


def _ipython_colors() -> str:
    """IPython's colour scheme, lower-cased (``neutral``, ``linux``, ``lightbg``,
    ``nocolor``); ``neutral`` outside IPython."""
    shell = None
    if "IPython" in sys.modules:
        try:
            from IPython import get_ipython
            shell = get_ipython()
        except ImportError:
            shell = None
    return str(getattr(shell, "colors", "neutral") or "neutral").lower()


def _scheme() -> dict:  # type: ignore[type-arg]
    """pygments' terminal colours with comments and strings readable on both backgrounds
    (its own light-background comments are light grey)."""
    from pygments.formatters.terminal import TERMINAL_COLORS
    from pygments.token import Comment, String, Text
    scheme = dict(TERMINAL_COLORS)
    scheme[Comment] = ("brightblack", "gray")
    scheme[Text.Whitespace] = ("brightblack", "gray")
    scheme[String] = ("red", "yellow")
    return scheme


def highlight_terminal(source: str, color: str = "auto") -> str:
    """ANSI-highlighted ``source`` where colour is wanted (:func:`terminal_palette`)."""
    palette = terminal_palette(color)
    if palette is None:
        return source
    from pygments import highlight
    from pygments.formatters import TerminalFormatter
    from pygments.lexers import PythonLexer
    return highlight(source, PythonLexer(), TerminalFormatter(bg=palette,
                                                              colorscheme=_scheme()))


@functools.lru_cache(maxsize=64)
def highlight_html(source: str, highlight_lines: tuple[int, ...] = (),
                   first_number: int = 0) -> str:
    """``source`` as HTML with inline styles only, optional lines highlighted (1-based), and
    line numbers from ``first_number`` when it is given (a part of longer code).
    Cached: a panel shows the same code in its widget and in its static HTML, and pygments
    is slow on a page of code (bench/HISTORY.md)."""
    from pygments import highlight
    from pygments.formatters import HtmlFormatter
    from pygments.lexers import PythonLexer
    numbers: dict[str, Any] = ({"linenos": "inline", "linenostart": first_number}
                               if first_number else {})
    formatter = HtmlFormatter(noclasses=True, nowrap=False, style="default",
                              hl_lines=list(highlight_lines), cssstyles="margin:0",
                              prestyles="margin:0;font-size:12px;line-height:1.35;"
                                        "font-family:monospace;white-space:pre;"
                                        "word-break:normal;overflow-wrap:normal", **numbers)
    body = highlight(source, PythonLexer(), formatter)
    return f'<div class="gradlab-code" style="overflow:auto;max-height:480px">{body}</div>'


def escape(text: str) -> str:
    return html.escape(text)


def widgets_available() -> bool:
    """Widgets render only in a kernel with a front end (not in terminal IPython)."""
    if "ipykernel" not in sys.modules:
        return False
    try:
        import ipywidgets  # noqa: F401
        from IPython import get_ipython
    except ImportError:
        return False
    shell = get_ipython()
    return shell is not None and getattr(shell, "kernel", None) is not None
