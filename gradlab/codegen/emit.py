"""The generated functions as text, then as code: gast to the source a person reads, compiled.

Comments quoting the user's lines are statements while the tree is built (``__comment__(...)``,
see :mod:`.build`) and become real ``#`` comments in the text; the text is what gets compiled,
so a traceback through generated code shows exactly the lines the user was shown (registered
with linecache).
"""
from __future__ import annotations

import ast
import itertools
import linecache
import re
import types
import weakref
from dataclasses import dataclass
from typing import Any, Callable

import gast

from .build import COMMENT, NOTE

_counter = itertools.count(1)


# --- text ------------------------------------------------------------------------------------------
_COMMENT_LINE = re.compile(r"^(\s*)" + COMMENT + r"\((-?\d+), (.*)\)$")


@dataclass
class Source:
    text: str
    line_map: dict[int, int]      # generated line -> user's line (0 where none)
    line_text: dict[int, str]     # generated line -> the quoted user line


def to_source(functions: list[gast.FunctionDef]) -> Source:
    module = gast.Module(body=functions, type_ignores=[])
    tree = gast.gast_to_ast(module)
    ast.fix_missing_locations(tree)
    raw = ast.unparse(tree)
    lines, line_map, line_text = [], {}, {}
    current, current_text = 0, ""
    for line in raw.splitlines():
        m = _COMMENT_LINE.match(line)
        if m:
            indent, lineno, text = m.group(1), int(m.group(2)), ast.literal_eval(m.group(3))
            lines.append(f"{indent}# {text}")
            if lineno != NOTE:
                current, current_text = lineno, text if lineno else ""
        else:
            if line.lstrip().startswith("def "):
                current, current_text = 0, ""
                if lines:
                    lines.append("")
            lines.append(line)
        line_map[len(lines)] = current
        line_text[len(lines)] = current_text
    return Source("\n".join(lines) + "\n", line_map, line_text)


def compile_source(text: str, user_globals: dict[str, Any],
                   free: dict[str, Any], label: str,
                   transform: Callable[[ast.Module], None] | None = None
                   ) -> tuple[Callable[..., dict[str, Any]], str]:
    """Compile ``text`` (one or more defs) into a factory of functions whose globals are the
    user's module.

    The factory takes the names in ``free`` (``gl``, closed-over values, helpers from other
    modules) as parameters, so nothing is written into the user's namespace and one compiled
    text serves every backend: call it with each backend's ``gl``. Returns the factory and the
    file name the text was registered under in linecache.
    """
    filename = f"<gradlab:{label}:{next(_counter)}>"
    tree = ast.parse(text, filename)
    if transform is not None:
        transform(tree)
    defs = [n for n in tree.body if isinstance(n, ast.FunctionDef)]
    factory = ast.FunctionDef(
        name="__gradlab_factory__",
        args=ast.arguments(posonlyargs=[], args=[ast.arg(arg=k) for k in free],
                           kwonlyargs=[], kw_defaults=[], defaults=[]),
        body=defs + [ast.Return(value=ast.Dict(keys=[ast.Constant(d.name) for d in defs],
                                               values=[ast.Name(d.name, ast.Load())
                                                       for d in defs]))],
        decorator_list=[], returns=None)
    if "type_params" in ast.FunctionDef._fields:
        setattr(factory, "type_params", [])
    factory.lineno = 1
    module = ast.Module(body=[factory], type_ignores=[])
    ast.fix_missing_locations(module)
    code = compile(module, filename, "exec")
    scratch: dict[str, Any] = {}
    exec(code, scratch)
    made = scratch["__gradlab_factory__"]
    made = types.FunctionType(made.__code__, user_globals, made.__name__)
    register_lines(filename, text, made.__code__)
    return _named_as_shown(made), filename


def _named_as_shown(factory: Callable[..., dict[str, Any]]) -> Callable[..., dict[str, Any]]:
    """The factory, making functions whose ``__qualname__`` is the name the user reads
    (``dloss_dW``), so that Python's own messages (``dloss_dW() takes 2 positional arguments
    but 3 were given``) name them as shown, not ``__gradlab_factory__.<locals>.dloss_dW``."""
    def make(**free: Any) -> dict[str, Any]:
        functions = factory(**free)
        for fn in functions.values():
            fn.__qualname__ = fn.__name__
        return functions
    return make


# --- linecache: generated text stays readable in tracebacks while its code is alive ------------
#: How many generated texts linecache keeps before the dead ones are swept out. Entries whose
#: code is still alive (a gradient in use, a frame in a stored traceback) are never removed.
LINECACHE_LIMIT = 256
_registered: dict[str, list[weakref.ref[types.CodeType]]] = {}
_sweep_at = [LINECACHE_LIMIT]


def register_lines(filename: str, text: str, code: types.CodeType) -> None:
    """Register ``text`` in linecache under ``filename`` for as long as ``code`` (or any code
    object compiled with it) is alive; beyond :data:`LINECACHE_LIMIT` entries, the entries of
    code that no longer exists are dropped."""
    linecache.cache[filename] = (len(text), None, text.splitlines(True), filename)
    _registered[filename] = [weakref.ref(c) for c in _code_objects(code)]
    if len(_registered) > _sweep_at[0]:
        _sweep()


def _sweep() -> None:
    for filename, refs in list(_registered.items()):
        if all(r() is None for r in refs):
            del _registered[filename]
            entry: Any = linecache.cache.get(filename)
            if entry is not None and len(entry) == 4 and entry[1] is None:
                del linecache.cache[filename]    # (not a file linecache read itself)
    # live entries past the limit are kept; sweep again once as many more have been added
    _sweep_at[0] = max(LINECACHE_LIMIT, 2 * len(_registered))


def _code_objects(code: types.CodeType) -> list[types.CodeType]:
    found = [code]
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            found.extend(_code_objects(const))
    return found
