"""Terminal colours follow NO_COLOR, IPython's colour scheme and whether output is a terminal."""
from __future__ import annotations

import io
import sys

from gradlab.workbench.display import highlight_terminal, terminal_palette

SOURCE = "def f(x):\n    # a comment\n    return 'text'\n"


class FakeTerminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_colour_only_on_a_terminal_and_never_with_no_color(monkeypatch):
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setattr(sys, "stdout", io.StringIO())         # a pipe
    assert terminal_palette() is None and highlight_terminal(SOURCE) == SOURCE
    monkeypatch.setattr(sys, "stdout", FakeTerminal())
    assert terminal_palette() == "light" and "\x1b[" in highlight_terminal(SOURCE)
    monkeypatch.setenv("NO_COLOR", "1")
    assert terminal_palette() is None and highlight_terminal(SOURCE) == SOURCE
    assert terminal_palette("always") == "light"


def test_comments_are_readable_on_light_and_dark_backgrounds():
    light = highlight_terminal(SOURCE, "always")
    assert "\x1b[90m# a comment" in light                      # dark grey, not light grey
    assert "\x1b[37m" not in light
    from gradlab.workbench import display
    assert display.terminal_palette("never") is None


def test_long_lines_scroll_instead_of_wrapping_inside_names():
    from gradlab.workbench.display import highlight_html
    long_line = "    d_a_rather_long_name = gl.matmul_grad_y(d_another_long_name, x, W) * 0.5\n"
    markup = highlight_html("def f(x):\n" + long_line * 3)
    assert 'class="gradlab-code" style="overflow:auto' in markup
    pre = markup[markup.index("<pre"):markup.index(">", markup.index("<pre"))]
    assert "white-space:pre;" in pre and "overflow-wrap:normal" in pre, pre
