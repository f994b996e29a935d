"""Each value its own name outside loops: ``x = sin(x)`` twice becomes ``x_1 = sin(x)``,
``x_2 = sin(x_1)``, so the backward pass can read every earlier value without saving it.

Inside loops names stay as written (a loop-carried ``h`` must be the same variable on every
iteration); values a loop overwrites are saved on a stack by the reverse generator instead.
Where branches give a variable different versions, the branch that did not assign it copies
the other's version in (``else: x_1 = x``), so code after the ``if`` reads one name; a name
from before the ``if`` is never written again.
"""
from __future__ import annotations

import copy
from typing import Any

import gast

from . import ir, trees
from .ir import Assign, Op, OpKind
from .naming import Names


class Renamer:
    def __init__(self, names: Names, params: list[str]) -> None:
        self.names = names
        self.version: dict[str, str] = {p: p for p in params}
        self.counts: dict[str, int] = {}

    def run(self, fn: ir.Function) -> None:
        fn.body = self.block(fn.body, in_loop=False)
        if fn.result:
            fn.result = self.version.get(fn.result, fn.result)

    # reads ---------------------------------------------------------------------------------
    def read(self, atom: Any) -> Any:
        if isinstance(atom, str):
            return self.version.get(atom, atom)
        if isinstance(atom, gast.AST):
            node = trees.clone(atom)
            for sub in trees.walk(node):
                if isinstance(sub, gast.Name) and isinstance(sub.ctx, gast.Load):
                    sub.id = self.version.get(sub.id, sub.id)
            return node
        return atom

    def read_op(self, op: Op) -> Op:
        new = copy.copy(op)
        new.args = [self.read(a) for a in op.args]
        new.kwargs = {k: self.read(v) for k, v in op.kwargs.items()}
        if op.node is not None:
            new.node = self.read(op.node)
        return new

    # writes ----------------------------------------------------------------------------------
    def write(self, name: str, in_loop: bool) -> str:
        if in_loop or name not in self.version:
            current = self.version.get(name, name)
            self.version[name] = current
            return current
        n = self.counts.get(name, 0) + 1
        new = self.names.fresh(f"{name}_{n}")
        self.counts[name] = n
        self.version[name] = new
        return new

    def block(self, stmts: list[ir.Stmt], in_loop: bool) -> list[ir.Stmt]:
        out: list[ir.Stmt] = []
        for s in stmts:
            out.extend(self.stmt(s, in_loop))
        return out

    def stmt(self, s: ir.Stmt, in_loop: bool) -> list[ir.Stmt]:
        if isinstance(s, Assign):
            op = self.read_op(s.op)
            targets = [self.write(t, in_loop) for t in s.targets]
            return [Assign(s.origin, targets, op, s.augmented)]
        if isinstance(s, ir.Effect):
            value = self.read(s.value)
            node = self.read(s.node) if s.node is not None else None
            target = self.version.get(s.target, s.target) if s.target else ""
            return [ir.Effect(s.origin, s.kind, target, value, node, s.call)]
        if isinstance(s, ir.GradOf):
            body = [self.read(b) for b in s.body]
            return [ir.GradOf(s.origin, self.version.get(s.name, s.name), s.alias, body)]
        if isinstance(s, ir.If):
            return [self._if(s, in_loop)]
        if isinstance(s, ir.For):
            args = [self.read(a) for a in s.range_args]
            target = self.write(s.target, True)
            self._enter_loop(s.body)
            body = self.block(s.body, True)
            return [ir.For(s.origin, target, args, body, s.counter, s.reverse)]
        if isinstance(s, ir.While):
            self._enter_loop(s.body)
            test = self.read(s.test)
            body = self.block(s.body, True)
            return [ir.While(s.origin, test, body, s.counter)]
        return [s]

    def _if(self, s: ir.If, in_loop: bool) -> ir.If:
        """Outside loops each branch renames on its own; where they give a name different
        versions, the branch that did not write the later one copies its version in."""
        test = self.read(s.test)
        if in_loop:
            return ir.If(s.origin, test, self.block(s.body, True), self.block(s.orelse, True),
                         s.cond)
        before = dict(self.version)
        body = self.block(s.body, False)
        after_body = self.version
        self.version = dict(before)
        orelse = self.block(s.orelse, False)
        after_else = self.version
        merged = dict(before)
        # sorted: the copies come in one order in every run (a set's order is not stable)
        for name in sorted(set(after_body) | set(after_else)):
            a, b = after_body.get(name), after_else.get(name)
            if a == b:
                merged[name] = a  # type: ignore[assignment]
            elif a is not None and b is not None and a == before.get(name):
                # only the else branch wrote it: the if branch copies the new version in
                # (copying into ``a`` instead would overwrite a value the backward reads)
                merged[name] = b
                body.append(Assign(None, [b], Op(OpKind.COPY, args=[a])))
            elif a is not None and b is not None:
                merged[name] = a
                orelse.append(Assign(None, [a], Op(OpKind.COPY, args=[b])))
            else:
                merged[name] = a or b  # type: ignore[assignment]
        self.version = merged
        return ir.If(s.origin, test, body, orelse, s.cond)

    def _enter_loop(self, body: list[ir.Stmt]) -> None:
        """Variables a loop assigns keep the version they have when the loop starts."""
        for name in ir.writes_in(body):
            self.version.setdefault(name, name)
