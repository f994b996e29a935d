"""Source → gast: read a function's source, keeping the user's file name and line numbers."""
from __future__ import annotations

import builtins
import inspect
import textwrap
import types
from dataclasses import dataclass, field
from typing import Any

import gast

from ..errors import GradlabError, GradlabSyntaxError
from .ir import Origin


@dataclass
class Scope:
    """What names mean where the user's function was defined: closure cells, then the module's
    globals, then builtins — the lookup order Python itself uses."""

    globals: dict[str, Any]
    closure: dict[str, Any] = field(default_factory=dict)

    def lookup(self, name: str) -> tuple[bool, Any]:
        if name in self.closure:
            return True, self.closure[name]
        if name in self.globals:
            return True, self.globals[name]
        if hasattr(builtins, name):
            return True, getattr(builtins, name)
        return False, None


@dataclass
class ParsedFunction:
    fn: types.FunctionType
    node: gast.FunctionDef
    filename: str
    first_line: int              # the file's line number of the snippet's line 1
    lines: list[str]             # the snippet's lines, as in the file
    scope: Scope

    @property
    def name(self) -> str:
        return self.node.name

    def origin(self, node: gast.AST) -> Origin:
        """The user's line for a node of this function, as one line of text."""
        start = getattr(node, "lineno", 1)
        end = getattr(node, "end_lineno", None) or start
        if hasattr(node, "body") and isinstance(getattr(node, "body"), list):
            end = start  # a compound statement is quoted by its header line
        text = " ".join(line.strip() for line in self.lines[start - 1:end])
        if len(text) > 100:
            text = text[:97] + "..."
        return Origin(self.first_line + start - 1, text, self.filename)

    def error(self, message: str, node: gast.AST, construct: str = "") -> GradlabSyntaxError:
        origin = self.origin(node)
        return GradlabSyntaxError(message, construct=construct, filename=self.filename,
                                  lineno=origin.lineno, line=origin.text)


def parse_function(fn: Any) -> ParsedFunction:
    """Parse ``fn``'s source into a gast ``FunctionDef`` with line numbers kept."""
    if isinstance(fn, types.MethodType):
        raise GradlabError(f"{fn.__qualname__} is a bound method; differentiate the plain "
                           f"function (type(obj).{fn.__name__}) and pass the instance explicitly")
    if not isinstance(fn, types.FunctionType):
        raise GradlabError(f"gradlab differentiates Python functions written in Python; got "
                           f"{type(fn).__name__} {getattr(fn, '__name__', fn)!r}")
    if fn.__name__ == "<lambda>":
        raise GradlabError("gradlab cannot differentiate a lambda: write it as a def so its "
                           "source can be read and its backward pass shown")
    try:
        lines, first_line = inspect.getsourcelines(fn)
    except (OSError, TypeError) as e:
        raise GradlabError(
            f"cannot read the source of {fn.__qualname__} ({e}). gradlab needs a function "
            f"defined in a file or a notebook cell, not typed into a bare interpreter or "
            f"built with exec") from None
    filename = inspect.getsourcefile(fn) or fn.__code__.co_filename
    source = textwrap.dedent("".join(lines))
    try:
        module = gast.parse(source)
    except SyntaxError as e:
        raise GradlabError(f"cannot parse the source of {fn.__qualname__}: {e}") from None
    node = module.body[0]
    if not isinstance(node, (gast.FunctionDef, gast.AsyncFunctionDef)):
        raise GradlabError(f"the source of {fn.__qualname__} is not a plain def")
    node.decorator_list = []
    closure = {}
    if fn.__closure__:
        for name, cell in zip(fn.__code__.co_freevars, fn.__closure__):
            try:
                closure[name] = cell.cell_contents
            except ValueError:  # an empty cell: the name is not bound yet
                pass
    parsed = ParsedFunction(fn, node, filename, first_line or 1,
                            [line.rstrip("\n") for line in source.splitlines()],
                            Scope(fn.__globals__, closure))
    if isinstance(node, gast.AsyncFunctionDef):
        raise parsed.error("async functions cannot be differentiated: a coroutine computes "
                           "no value until it is awaited; write a plain def", node, "async def")
    return parsed
