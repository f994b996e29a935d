"""Generated code made pleasant to read: pygments highlighting for terminals and for HTML with
inline styles (no global CSS leaks into a notebook page)."""
from __future__ import annotations

import functools
import html
import os
import sys


def highlight_terminal(source: str, color: str = "auto") -> str:
    """ANSI-highlighted ``source`` when writing to a terminal (or ``color='always'``)."""
    use = color == "always" or (color == "auto" and sys.stdout.isatty()
                                and os.environ.get("NO_COLOR") is None)
    if not use:
        return source
    from pygments import highlight
    from pygments.formatters import TerminalFormatter
    from pygments.lexers import PythonLexer
    return highlight(source, PythonLexer(), TerminalFormatter())


@functools.lru_cache(maxsize=64)
def highlight_html(source: str, highlight_lines: tuple[int, ...] = ()) -> str:
    """``source`` as HTML with inline styles only, optional lines highlighted (1-based).
    Cached: a panel shows the same code in its widget and in its static HTML, and pygments
    takes ~10 ms for a page of code."""
    from pygments import highlight
    from pygments.formatters import HtmlFormatter
    from pygments.lexers import PythonLexer
    formatter = HtmlFormatter(noclasses=True, nowrap=False, style="default",
                              hl_lines=list(highlight_lines), cssstyles="margin:0",
                              prestyles="margin:0;font-size:12px;line-height:1.35;"
                                        "font-family:monospace")
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
