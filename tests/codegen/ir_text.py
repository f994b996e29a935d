"""The IR of a normalized function as short lines of text, so tests of the stages that change
it can say what they expect as a person would read it (``x_1 = sin(x)``, ``for i:``)."""
from __future__ import annotations

import ast
from typing import Any

import gast

from gradlab.codegen import ir
from gradlab.codegen.program import Unit, normalize_function


def atom(a: Any) -> str:
    if isinstance(a, str):
        return a
    if isinstance(a, ir.Const):
        return repr(a.value)
    if isinstance(a, gast.AST):
        return ast.unparse(gast.gast_to_ast(a))
    if isinstance(a, (list, tuple)):
        return "[" + ", ".join(atom(v) for v in a) + "]"
    return repr(a)


def op(o: ir.Op) -> str:
    args = [atom(a) for a in o.args] + [f"{k}={atom(v)}" for k, v in o.kwargs.items()]
    head = o.prim if o.kind is ir.OpKind.PRIM else o.kind.value
    return f"{head}({', '.join(args)})"


def lines(stmts: list[ir.Stmt], indent: str = "") -> list[str]:
    out = []
    for s in stmts:
        if isinstance(s, ir.Assign):
            out.append(f"{indent}{', '.join(s.targets)} = {op(s.op)}")
        elif isinstance(s, ir.For):
            out.append(f"{indent}for {s.target} in range({atom(s.range_args)[1:-1]}):")
            out += lines(s.body, indent + "    ")
        elif isinstance(s, ir.While):
            out.append(f"{indent}while {atom(s.test)}:")
            out += lines(s.body, indent + "    ")
        elif isinstance(s, ir.If):
            out.append(f"{indent}if {atom(s.test)}:")
            out += lines(s.body, indent + "    ")
            if s.orelse:
                out.append(f"{indent}else:")
                out += lines(s.orelse, indent + "    ")
        elif isinstance(s, ir.Effect) and s.node is not None:
            out.append(f"{indent}{s.kind.value}: {atom(s.node)}")
        elif isinstance(s, ir.Effect):
            out.append(f"{indent}{s.kind.value} {s.target} {atom(s.value)}".rstrip())
        else:
            out.append(f"{indent}{type(s).__name__.lower()}")
    return out


def normalized(fn: Any) -> Unit:
    return normalize_function(fn)


def text(fn: Any) -> list[str]:
    """The lines of ``fn``'s normalized, renamed body."""
    return lines(normalized(fn).ir.body)
