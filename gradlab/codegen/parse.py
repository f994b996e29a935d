"""Source → gast: read a function's source, keeping the user's file name and line numbers."""
from __future__ import annotations

import __future__
import builtins
import dis
import inspect
import textwrap
import types
from dataclasses import dataclass, field
from typing import Any

import gast

from ..errors import GradlabError, GradlabSyntaxError
from .ir import Origin, refusal


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
        return refusal(message, self.origin(node), construct)


def is_generated(fn: Any) -> bool:
    """Whether ``fn`` is gradlab's own generated code (compiled under a ``<gradlab:...>`` name),
    which ``hvp`` differentiates."""
    code = getattr(fn, "__code__", None)
    return code is not None and code.co_filename.startswith("<gradlab:")


def _refuse_unreadable(fn: Any) -> None:
    """A callable whose source is not the code Python runs for it, or that has none."""
    if isinstance(fn, types.MethodType):
        raise GradlabError(f"{fn.__qualname__} is a bound method; differentiate the plain "
                           f"function (type(obj).{fn.__name__}) and pass the instance explicitly")
    if not isinstance(fn, types.FunctionType):
        raise GradlabError(f"gradlab differentiates Python functions written in Python; got "
                           f"{type(fn).__name__} {getattr(fn, '__name__', fn)!r}")
    if fn.__name__ == "<lambda>":
        raise GradlabError("gradlab cannot differentiate a lambda: write it as a def so its "
                           "source can be read and its backward pass shown")
    if hasattr(fn, "__wrapped__"):
        inner = fn.__wrapped__
        raise GradlabError(
            f"{fn.__qualname__} is a wrapper made by a decorator (it has __wrapped__, as "
            f"functools.wraps sets): Python runs the wrapper's code, but its source is that of "
            f"the function it wraps ({getattr(inner, '__qualname__', inner)!r}), so gradlab "
            f"would differentiate the wrong function. Differentiate an undecorated def that "
            f"does what the wrapper does (calls the wrapped function and transforms its "
            f"result), or the wrapped function itself if that is what you meant")


#: The attribute of a function gradlab compiled from a user's function (the same body, other
#: parameters: see :mod:`gradlab.pytrees`) naming that user's function, whose source it reads.
ORIGINAL = "__gradlab_original__"


def parse_function(fn: Any) -> ParsedFunction:
    """Parse ``fn``'s source into a gast ``FunctionDef`` with line numbers kept (for a function
    compiled from a user's function with other parameters, the user's function's source: the
    caller rewrites its parameters)."""
    _refuse_unreadable(fn)
    source_fn = getattr(fn, ORIGINAL, fn)
    try:
        lines, first_line = inspect.getsourcelines(source_fn)
    except (OSError, TypeError) as e:
        raise GradlabError(
            f"cannot read the source of {fn.__qualname__} ({e}). gradlab needs a function "
            f"defined in a file or a notebook cell, not typed into a bare interpreter or "
            f"built with exec") from None
    filename = inspect.getsourcefile(source_fn) or fn.__code__.co_filename
    source = textwrap.dedent("".join(lines))
    _require_source_matches_code(source_fn, source, first_line or 1, filename)
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


def _require_source_matches_code(fn: types.FunctionType, source: str, first_line: int,
                                 filename: str) -> None:
    """The source gradlab read must be the code Python runs: a file edited and saved after it
    was imported (or whose lines moved) would give the gradient of its new text, or of another
    function. The source is compiled again, in an enclosing function that binds the same free
    variables, and compared with ``fn.__code__`` instruction by instruction."""
    code = fn.__code__
    if code.co_filename.startswith("<gradlab") or any(
            v.startswith("@py_assert") for v in code.co_varnames):
        return   # gradlab's own generated code (compiled with a changed return), or pytest's
        # assertion rewriting: the code was changed on purpose after compiling the text
    enclosing = "def __gradlab_enclosing__():\n" + "".join(
        f"    {name} = None\n" for name in code.co_freevars) + textwrap.indent(source, "    ")
    try:
        compiled = compile(enclosing, filename, "exec", _FUTURE_FLAGS & code.co_flags,
                           dont_inherit=True)
    except (SyntaxError, ValueError):
        compiled = None
    candidates = _code_named(compiled, code.co_name) if compiled is not None else []
    if any(_same_code(code, c) for c in candidates):
        return
    raise GradlabError(
        f"the source of {fn.__qualname__} in {filename} (line {first_line}) is not the code "
        f"Python is running: the file was edited and saved after it was imported, or lines "
        f"moved. gradlab would differentiate the text now in the file. Reload the module "
        f"(importlib.reload(module), or restart the kernel) so that the function you call "
        f"is the one in the file")


def _code_named(code: types.CodeType, name: str) -> list[types.CodeType]:
    found = []
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            if const.co_name == name:
                found.append(const)
            found.extend(_code_named(const, name))
    return found


#: ``from __future__`` flags that change how a function's body compiles (annotations of
#: functions defined inside it)
_FUTURE_FLAGS = __future__.annotations.compiler_flag

#: Instructions that depend on where a function was compiled (a closure's set-up, cells,
#: ``NULL`` pushed before a global's call), not on what it computes.
_CONTEXT_OPS = frozenset({"COPY_FREE_VARS", "MAKE_CELL", "RESUME", "NOP", "PUSH_NULL",
                          "EXTENDED_ARG", "CACHE"})
_OUTER_LOADS = frozenset({"LOAD_GLOBAL", "LOAD_DEREF", "LOAD_NAME", "LOAD_CLASSDEREF",
                          "LOAD_CLOSURE"})


def _same_code(a: types.CodeType, b: types.CodeType) -> bool:
    if (a.co_argcount, a.co_posonlyargcount, a.co_kwonlyargcount, a.co_varnames) != (
            b.co_argcount, b.co_posonlyargcount, b.co_kwonlyargcount, b.co_varnames):
        return False
    if _instructions(a) != _instructions(b) or _lines(a) != _lines(b):
        return False
    nested_a = [c for c in a.co_consts if isinstance(c, types.CodeType)]
    nested_b = [c for c in b.co_consts if isinstance(c, types.CodeType)]
    return len(nested_a) == len(nested_b) and all(
        _same_code(x, y) for x, y in zip(nested_a, nested_b))


def _instructions(code: types.CodeType) -> list[tuple[str, Any]]:
    out = []
    for ins in dis.get_instructions(code):
        if ins.opname in _CONTEXT_OPS:
            continue
        op = "LOAD_OUTER" if ins.opname in _OUTER_LOADS else ins.opname
        if op == "LOAD_METHOD":   # Python 3.11 reads ``np.sum`` as LOAD_ATTR where the module
            op = "LOAD_ATTR"      # imports np: the snippet, compiled alone, does not know it
        arg = ins.argval
        if isinstance(arg, types.CodeType):
            arg = arg.co_name
        elif isinstance(arg, str) and "<locals>." in arg:
            arg = arg.rpartition("<locals>.")[2]   # a qualified name, which says where the
            # function was compiled: the snippet is compiled inside another function
        if ins.opcode in dis.hasjrel or ins.opcode in dis.hasjabs:
            arg = None   # jump targets are offsets, which the dropped instructions shift
        out.append((op, _comparable(arg)))
    return out


def _comparable(value: Any) -> Any:
    """A constant as a comparable key (``0.0 == -0.0`` and ``1 == 1.0 == True`` in Python)."""
    if isinstance(value, (tuple, frozenset)):
        return (type(value).__name__, tuple(_comparable(v) for v in value))
    if isinstance(value, float):
        return ("float", repr(value))
    return (type(value).__name__, value) if isinstance(value, (int, complex, str, bytes)) \
        else (type(value).__name__, repr(value))


def _lines(code: types.CodeType) -> list[int]:
    """The lines the code's instructions come from, counted from its first line."""
    seen: list[int] = []
    for _, _, line in code.co_lines():
        if line is not None and (not seen or seen[-1] != line - code.co_firstlineno):
            seen.append(line - code.co_firstlineno)
    return sorted(set(seen))
