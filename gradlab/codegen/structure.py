"""Early exits made explicit, so the backward pass knows which statements ran.

``return`` anywhere becomes an assignment to the result variable; ``break``/``continue``/
``return`` in the middle of a block move the rest of the block under the branch that did not
exit (``if c: continue`` + rest  ->  ``if c: continue`` / ``else: rest``). Where no such move is
possible, a flag records the exit. The emitter prints the moved form back the way it was written.
"""
from __future__ import annotations

import gast

from . import ir
from .ir import Assign, Const, Op, OpKind
from .naming import Names
from .parse import ParsedFunction


def _name(n: str) -> gast.Name:
    return gast.Name(n, gast.Load(), None, None)


def _not(n: str) -> gast.expr:
    return gast.UnaryOp(op=gast.Not(), operand=_name(n))


def has(stmts: list[ir.Stmt], kinds: tuple[type, ...], into_loops: bool = False,
        flag: str | None = None) -> bool:
    """Whether ``stmts`` contain a statement of ``kinds`` (by default not looking into loops,
    whose break/continue are their own). A loop that assigns ``flag`` — the flag a ``return``
    inside a loop sets — counts as a return."""
    for s in stmts:
        if isinstance(s, kinds):
            return True
        if flag and isinstance(s, (ir.For, ir.While)) and flag in ir.writes_in(s.body):
            return True
        if isinstance(s, ir.If) and (has(s.body, kinds, into_loops, flag) or
                                     has(s.orelse, kinds, into_loops, flag)):
            return True
        if isinstance(s, (ir.For, ir.While)) and (into_loops or ir.Return in kinds) and has(
                s.body, kinds, into_loops):
            return True
    return False


def always(stmts: list[ir.Stmt], kinds: tuple[type, ...]) -> bool:
    """Whether every path through ``stmts`` ends in a statement of ``kinds``."""
    for s in stmts:
        if isinstance(s, kinds):
            return True
        if isinstance(s, ir.If) and s.orelse and always(s.body, kinds) and always(s.orelse, kinds):
            return True
    return False


def structure(stmts: list[ir.Stmt], kinds: tuple[type, ...], flag_for: "FlagMaker") -> list[ir.Stmt]:
    """Rewrite ``stmts`` so that nothing follows a statement that may exit (``kinds``) except
    under the branch that does not exit."""
    out: list[ir.Stmt] = []
    for i, s in enumerate(stmts):
        rest = stmts[i + 1:]
        if isinstance(s, kinds):
            out.append(s)
            return out  # the rest never runs
        flag = flag_for.name if ir.Return in kinds else None
        if isinstance(s, ir.If) and (has(s.body, kinds, flag=flag) or
                                     has(s.orelse, kinds, flag=flag)):
            s.body = structure(s.body, kinds, flag_for)
            s.orelse = structure(s.orelse, kinds, flag_for)
            body_exits, else_exits = always(s.body, kinds), always(s.orelse, kinds)
            if body_exits and else_exits:
                out.append(s)
                return out
            if body_exits and not has(s.orelse, kinds, flag=flag):
                s.orelse = structure(s.orelse + rest, kinds, flag_for)
                out.append(s)
                return out
            if else_exits and not has(s.body, kinds, flag=flag):
                s.body = structure(s.body + rest, kinds, flag_for)
                out.append(s)
                return out
            flag = flag_for.flag()
            _set_flag_before_exits(s, kinds, flag)
            out.append(s)
            if rest:
                out.append(ir.If(s.origin, _not(flag), structure(rest, kinds, flag_for), []))
            return out
        if isinstance(s, (ir.For, ir.While)) and ir.Return in kinds and flag_for.name and (
                flag_for.name in ir.writes_in(s.body)):
            flag = flag_for.flag()
            out.append(s)
            if rest:
                out.append(ir.If(s.origin, _not(flag), structure(rest, kinds, flag_for), []))
            return out
        out.append(s)
    return out


def _set_flag_before_exits(s: ir.Stmt, kinds: tuple[type, ...], flag: str) -> None:
    def visit(stmts: list[ir.Stmt]) -> None:
        i = 0
        while i < len(stmts):
            t = stmts[i]
            if isinstance(t, kinds):
                stmts.insert(i, Assign(t.origin, [flag], Op(OpKind.COPY, args=[Const(True)])))
                i += 1
            elif isinstance(t, ir.If):
                visit(t.body)
                visit(t.orelse)
            i += 1
    if isinstance(s, ir.If):
        visit(s.body)
        visit(s.orelse)


class FlagMaker:
    """One flag per kind of exit and scope, created on first need and reset where it matters."""

    def __init__(self, names: Names, hint: str) -> None:
        self.names = names
        self.hint = hint
        self.name: str | None = None

    def flag(self) -> str:
        if self.name is None:
            self.name = self.names.fresh(self.hint)
        return self.name


def lower_returns(fn: ir.Function, names: Names, parsed: ParsedFunction) -> None:
    """Turn every ``return`` into an assignment to ``fn.result`` and structure the exits."""
    returns = [s for s in ir.walk(fn.body) if isinstance(s, ir.Return)]
    if not returns:
        raise parsed.error(f"{fn.name} returns nothing: gradlab differentiates the value a "
                           f"function returns", parsed.node, "no return")
    last = fn.body[-1] if fn.body else None
    if not fn.result and len(returns) == 1 and last is returns[0] and isinstance(
            last.value, str):
        fn.result = last.value
        fn.body.pop()
        _structure_loops(fn.body, names)
        return
    if not fn.result:
        fn.result = names.fresh(fn.name)
    flags = FlagMaker(names, "returned")
    _lower(fn.body, fn.result, flags, in_loop=False)
    fn.body = structure(fn.body, (ir.Return,), flags)
    _drop_returns(fn.body)
    if flags.name is not None:
        fn.body.insert(0, Assign(None, [flags.name], Op(OpKind.COPY, args=[Const(False)])))
        # the result exists on every path, even before a return assigns it
        fn.body.insert(0, Assign(None, [fn.result], Op(OpKind.COPY, args=[Const(None)])))
    _structure_loops(fn.body, names)


def _lower(stmts: list[ir.Stmt], result: str, flags: FlagMaker, in_loop: bool) -> bool:
    """Replace returns by ``result = value`` (+ flag and break inside loops)."""
    i = 0
    any_in_loop = False
    while i < len(stmts):
        s = stmts[i]
        if isinstance(s, ir.Return):
            value = s.value if s.value is not None else Const(None)
            lines: list[ir.Stmt] = []
            if value != result:
                lines.append(Assign(s.origin, [result], Op(OpKind.COPY, args=[value])))
            if in_loop:
                flag = flags.flag()
                lines += [Assign(s.origin, [flag], Op(OpKind.COPY, args=[Const(True)])),
                          ir.Break(s.origin)]
                any_in_loop = True
            else:
                lines.append(s)   # the Return stays as an exit marker for structure()
            stmts[i:i + 1] = lines
            i += len(lines)
            continue
        if isinstance(s, ir.If):
            any_in_loop |= _lower(s.body, result, flags, in_loop)
            any_in_loop |= _lower(s.orelse, result, flags, in_loop)
        elif isinstance(s, (ir.For, ir.While)):
            if _lower(s.body, result, flags, True):
                any_in_loop = True
                if in_loop:   # leave the enclosing loop too
                    stmts.insert(i + 1, ir.If(s.origin, _name(flags.flag()), [ir.Break(s.origin)],
                                              []))
                    i += 1
        i += 1
    return any_in_loop


def _drop_returns(stmts: list[ir.Stmt]) -> None:
    stmts[:] = [s for s in stmts if not isinstance(s, ir.Return)]
    for s in stmts:
        for block in ir.children(s):
            _drop_returns(block)


def _structure_loops(stmts: list[ir.Stmt], names: Names) -> None:
    """Structure break/continue inside every loop body (innermost first)."""
    for s in stmts:
        for block in ir.children(s):
            _structure_loops(block, names)
        if isinstance(s, (ir.For, ir.While)):
            flags = FlagMaker(names, "exited")
            s.body = structure(s.body, (ir.Break, ir.Continue), flags)
            if flags.name is not None:
                s.body.insert(0, Assign(None, [flags.name], Op(OpKind.COPY, args=[Const(False)])))
