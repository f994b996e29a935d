"""Functions defined inside the function: read as the subroutines they are.

A helper written inside the function it serves (``def _fn(a, n): return a * n`` at the top of a
loss) is, when it reads none of that function's variables, the same thing as a helper written
at module level: a subroutine, which gradlab differentiates from its source and shows as a
helper of the generated code. Python already compiled it: its code object is a constant of the
enclosing function's code, with its own file and line, so its source can be read as any
function's. This pass takes the ``def`` out of the body and makes the name mean that function.

Refused, at the user's line, with what to write instead: a nested function that reads the
enclosing function's variables (a closure: its value depends on when it is called), one given
decorators or default values that are not literals, one defined inside a loop or a branch (it
may not exist when called), and a name defined so that is also assigned another value.
"""
from __future__ import annotations

import types

import gast

from . import trees
from .parse import ParsedFunction


def lift_nested_functions(parsed: ParsedFunction) -> None:
    """Each ``def`` at the top of ``parsed``'s body becomes a function its scope knows."""
    outer = parsed.node
    lifted = {stmt.name: _function_of(parsed, stmt) for stmt in outer.body
              if isinstance(stmt, gast.FunctionDef)}
    if not lifted:
        return
    outer.body = [s for s in outer.body if not isinstance(s, gast.FunctionDef)] or [gast.Pass()]
    for node in trees.walk(outer):
        if isinstance(node, gast.Name) and isinstance(node.ctx, (gast.Store, gast.Del)) and (
                node.id in lifted):
            raise parsed.error(f"{node.id} is a function defined inside the function and is "
                               f"also assigned: give the value another name", node, "nested def")
    parsed.scope.closure.update(lifted)


def _function_of(parsed: ParsedFunction, node: gast.FunctionDef) -> types.FunctionType:
    if node.decorator_list:
        raise parsed.error(f"the function {node.name} defined inside the function has "
                           f"decorators: define it at module level", node, "nested def")
    defaults = node.args.defaults + [d for d in node.args.kw_defaults if d is not None]
    if any(not isinstance(d, gast.Constant) for d in defaults):
        raise parsed.error(f"the function {node.name} defined inside the function has default "
                           f"values that are not literals: pass them as arguments",
                           node, "nested def")
    code = _code_of(parsed.fn.__code__, node.name, parsed.first_line + node.lineno - 1)
    if code is None:
        raise parsed.error(f"the function {node.name} defined inside the function could not be "
                           f"found in the code Python compiled: define it at module level",
                           node, "nested def")
    if code.co_freevars:
        names = ", ".join(code.co_freevars)
        plural = "s" if len(code.co_freevars) > 1 else ""
        raise parsed.error(
            f"the function {node.name} defined inside the function reads its variables "
            f"({names}): gradlab differentiates a helper from its arguments only. Pass "
            f"{names} to {node.name} as argument{plural} (or define it at module level)",
            node, "closure")
    fn = types.FunctionType(code, parsed.fn.__globals__, node.name)
    fn.__defaults__ = tuple(d.value for d in node.args.defaults) or None
    kw = {a.arg: d.value for a, d in zip(node.args.kwonlyargs, node.args.kw_defaults)
          if d is not None}
    fn.__kwdefaults__ = kw or None
    fn.__qualname__ = f"{parsed.fn.__qualname__}.<locals>.{node.name}"
    fn.__module__ = parsed.fn.__module__
    return fn


def _code_of(code: types.CodeType, name: str, line: int) -> types.CodeType | None:
    """The code object of the ``def name`` on ``line`` (the file's numbering) among the
    constants of ``code`` (a nested function's code is one of them)."""
    for const in code.co_consts:
        if isinstance(const, types.CodeType) and const.co_name == name and (
                const.co_firstlineno == line):
            return const
    return None
