"""Generated code run with a hook after each assignment: what the tracer, the stepper and the
semantic guard watch a generated function with.

The code is compiled again from its shown text with a call of ``record(lineno, {name: value})``
after every assignment (and one with the parameters on entry), so line numbers are those the
user reads and nothing is added to the code gradlab shows or runs otherwise.
"""
from __future__ import annotations

import ast
from typing import Any

from .codegen.emit import compile_source
from .codegen.inplace import functional_updates
from .tensor.detect import common_framework
from .tensor.registry import backend

#: The hook's name inside instrumented code.
_RECORD = "__gradlab_record__"


class _Instrument(ast.NodeTransformer):
    """After each assignment, record the names it assigned (and the parameters on entry)."""

    def __init__(self, main: str) -> None:
        self.main = main

    def visit_FunctionDef(self, node: ast.FunctionDef) -> Any:
        self.generic_visit(node)
        if node.name == self.main:
            params = [a.arg for a in node.args.args + node.args.kwonlyargs]
            entry = self._record(node, params)[1]
            node.body.insert(0, entry)
        return node

    def _record(self, node: ast.stmt, names: list[str]) -> list[ast.stmt]:
        call = ast.Expr(ast.Call(
            func=ast.Name(_RECORD, ast.Load()),
            args=[ast.Constant(node.lineno),
                  ast.Dict(keys=[ast.Constant(n) for n in names],
                           values=[ast.Name(n, ast.Load()) for n in names])],
            keywords=[]))
        ast.copy_location(call, node)
        ast.fix_missing_locations(call)
        return [node, call]

    def visit_Assign(self, node: ast.Assign) -> Any:
        names = [n.id for t in node.targets for n in ast.walk(t) if isinstance(n, ast.Name)
                 and isinstance(n.ctx, ast.Store)]
        return self._record(node, names) if names else node

    def visit_AugAssign(self, node: ast.AugAssign) -> Any:
        if isinstance(node.target, ast.Name):
            return self._record(node, [node.target.id])
        return node


def instrumented(df: Any, args: tuple[Any, ...], record: Any) -> tuple[Any, Any, str]:
    """``df``'s generated code for these inputs, compiled again with ``record(lineno,
    {name: value})`` called after each assignment (and with the parameters on entry).
    Returns the function, its :class:`~gradlab.codegen.emit.Source` and its name. The code is
    the one these inputs run (specialised for their shapes where it is), the code the panel
    shows after a run: a step's line is the line the user reads there."""
    variant = df.running_variant(args)
    source, name = variant.source, variant.name

    def instrument(tree: ast.Module) -> None:
        # each step's value of a gradient buffer is recorded as it was then: updates in place
        # (du[t] += du_t) run as new arrays here, and are recorded like other assignments
        functional_updates(tree)
        _Instrument(name).visit(tree)
        ast.fix_missing_locations(tree)

    values = dict(variant.free)
    values["gl"] = backend(common_framework(args))
    values[_RECORD] = record
    factory, _ = compile_source(source.text, df.fn.__globals__, values, f"trace:{name}",
                                transform=instrument)
    return factory(**values)[name], source, name


def main_lines(lines: list[str], name: str) -> set[int]:
    """The lines inside ``def name`` (helpers after it are not the main pass)."""
    inside, current = set(), None
    for i, line in enumerate(lines, start=1):
        if line.startswith("def "):
            current = line[4:].split("(")[0]
        elif current == name:
            inside.add(i)
    return inside
