"""The exceptions gradlab raises.

Every error a user can provoke derives from :class:`GradlabError`, so a notebook can catch one
type; errors that point at the user's source carry the file and line so the message can quote it.
"""
from __future__ import annotations


class GradlabError(Exception):
    """Base class of every error gradlab raises on purpose."""


class GradlabSyntaxError(GradlabError):
    """The user's function uses a construct gradlab cannot differentiate.

    The message names the construct and quotes the user's line; ``filename`` and ``lineno`` point
    into the user's file (not into generated code), so editors and tracebacks can jump there.
    """

    def __init__(self, message: str, *, construct: str = "", filename: str = "<unknown>",
                 lineno: int | None = None, line: str = "") -> None:
        self.construct = construct
        self.filename = filename
        self.lineno = lineno
        self.line = line.strip()
        where = f"{filename}, line {lineno}" if lineno is not None else filename
        text = f"{message}\n  at {where}"
        if self.line:
            text += f":\n    {self.line}"
        super().__init__(text)


class NoRuleError(GradlabError):
    """A call resolved to a function gradlab has no derivative rule for."""


class BackendError(GradlabError, TypeError):
    """Values from an unsupported type, or from two frameworks in one operation."""


class CallError(GradlabError, TypeError):
    """A generated function called with arguments that do not fit the function differentiated
    (a TypeError too, as Python's own for a wrong call)."""


def gradlab_refuses(message: str) -> None:
    """Raise a :class:`GradlabError` with ``message``. The definitions gradlab writes NumPy
    functions out as (``codegen/rules/definitions.py``) call it, kept as written in the generated
    code, where an argument is one they do not implement (``np.kron`` of a 3-d array): a clear
    refusal at run time, where the shapes are known, instead of an IndexError from inside."""
    raise GradlabError(message)
