"""Loop-invariant code motion (``optimized=True``): a computation whose inputs a loop never
changes runs once, before the loop. Besides the time saved, a value that is no longer
recomputed on every iteration no longer needs saving on every iteration for the backward pass.
"""
from __future__ import annotations

from . import ir
from .ir import Assign, OpKind


def hoist(stmts: list[ir.Stmt], all_stmts: list[ir.Stmt] | None = None) -> None:
    root = all_stmts if all_stmts is not None else stmts
    i = 0
    while i < len(stmts):
        s = stmts[i]
        for block in ir.children(s):
            hoist(block, root)
        if isinstance(s, (ir.For, ir.While)):
            moved = _invariants(s, root)
            stmts[i:i] = moved
            i += len(moved)
        i += 1


def _invariants(loop: ir.For | ir.While, root: list[ir.Stmt]) -> list[ir.Stmt]:
    moved: list[ir.Stmt] = []
    changed = True
    while changed:
        changed = False
        written = ir.writes_in(loop.body) | ({loop.target} if isinstance(loop, ir.For) else set())
        for s in list(loop.body):
            if not isinstance(s, Assign) or len(s.targets) != 1:
                continue
            if s.op.kind not in (OpKind.PRIM, OpKind.COPY) or s.op.prim in ("uniform", "normal"):
                continue
            target = s.targets[0]
            if ir.op_reads(s.op) & written:
                continue
            writes = sum(1 for t in ir.walk(root) if target in ir.stmt_writes(t))
            if writes != 1:
                continue
            position = loop.body.index(s)
            if target in ir.reads_in(loop.body[:position]):
                continue
            loop.body.remove(s)
            moved.append(s)
            changed = True
            break
    return moved
