"""One entry read once a step (``optimized=True``, reverse mode): ``u[t]`` written twice on a
line, or on two lines of a loop's body, is read once.

The user writes ``0.3 * u[t] * u[t]`` and ``u[t] * 0.5`` in one step of a loop; normalized,
each is its own ``u_t = u[t]``, ``u_t_2 = u[t]``, so the backward pass adds two gradients into
``du[t]`` one after the other, and may save the same entry twice. Where the second read surely
gives the first one's value, the second is dropped and its readers read the first: the
gradients of both add up in ``du_t`` and reach ``du[t]`` in one update, and one value is saved.

The proof is from the code alone, and deliberately narrow:

- the array is a name the function never assigns, and nothing changes in place anywhere in the
  function (no augmented assignment, no item or in-place method write);
- the index is a name or an integer; between the two reads, in one block, nothing assigns the
  array, the index or the first read's name, and no ``break``, ``continue`` or ``return``
  leaves the block;
- both names are assigned once in the function, and the second is read only by assignments
  after it (never between the two reads, where a loop's next step would see an old value).
"""
from __future__ import annotations

from typing import Any

import gast

from . import ir, trees
from .ir import Assign, Effect, EffectKind, OpKind


def share_entries(fn: ir.Function) -> None:
    """Each second ``b = x[i]`` of a block dropped, its readers reading ``a`` of the first
    ``a = x[i]`` instead (see the module's docstring)."""
    stmts = list(ir.walk(fn.body))
    if any(isinstance(s, Effect) and s.kind in (EffectKind.LIST_SET, EffectKind.INPLACE)
           or isinstance(s, Assign) and s.augmented for s in stmts):
        return
    writes: dict[str, int] = {}
    for s in stmts:
        for name in ir.stmt_writes(s):
            writes[name] = writes.get(name, 0) + 1
    _block(fn, fn.body, writes)


def _block(fn: ir.Function, stmts: list[ir.Stmt], writes: dict[str, int]) -> None:
    for s in stmts:
        for inner in ir.children(s):
            _block(fn, inner, writes)
    keys = [_entry(s, writes) for s in stmts]
    repeated = {k for k in keys if k is not None and keys.count(k) > 1}
    if not repeated:      # the common case: nothing to share, and no scan of the block
        return
    i = 0
    while i < len(stmts):
        key = _entry(stmts[i], writes)
        if key in repeated:
            _share(fn, stmts, i, key, writes)   # type: ignore[arg-type]
        i += 1


def _share(fn: ir.Function, stmts: list[ir.Stmt], i: int, key: tuple[Any, ...],
           writes: dict[str, int]) -> None:
    """Drop the later reads of ``key`` in ``stmts`` that may read ``stmts[i]``'s value."""
    a = stmts[i].targets[0]     # type: ignore[attr-defined]
    guarded = {key[0], a} | ({key[1]} if isinstance(key[1], str) else set())
    j = i + 1
    while j < len(stmts):
        later = stmts[j]
        if _entry(later, writes) == key:
            b = later.targets[0]     # type: ignore[attr-defined]
            if _only_read_after(fn, stmts[i + 1:j], b):
                del stmts[j]
                _rename_reads(fn.body, b, a)
                continue
        inner = list(ir.walk([later]))
        if ir.writes_in([later]) & guarded or any(
                isinstance(s, (ir.Break, ir.Continue, ir.Return)) for s in inner):
            return
        j += 1


def _entry(s: ir.Stmt, writes: dict[str, int]) -> tuple[Any, ...] | None:
    """``(x, index)`` for ``a = x[index]`` (``a`` assigned once) of an array ``x`` the function
    never assigns, at an index that is a name or an integer."""
    if not (isinstance(s, Assign) and len(s.targets) == 1 and s.op.kind is OpKind.PRIM
            and s.op.prim == "getitem" and len(s.op.args) == 2 and not s.op.kwargs
            and writes.get(s.targets[0]) == 1):
        return None
    x, index = s.op.args
    if not isinstance(x, str) or x in writes:
        return None
    if isinstance(index, gast.Name) and isinstance(index.ctx, gast.Load):
        index = index.id
    if isinstance(index, str):
        return (x, index)
    value = index.value if isinstance(index, (ir.Const, gast.Constant)) else None
    if type(value) is int:
        return (x, ("const", value))
    return None


def _only_read_after(fn: ir.Function, between: list[ir.Stmt], b: str) -> bool:
    """Whether ``b`` is read only by assignments, none of them in ``between``, and is not the
    function's result."""
    if fn.result == b or b in ir.reads_in(between):
        return False
    return not any(b in ir.stmt_reads(s) for s in ir.walk(fn.body) if not isinstance(s, Assign))


def _rename_reads(stmts: list[ir.Stmt], old: str, new: str) -> None:
    """Every read of ``old`` by an assignment in ``stmts`` made a read of ``new``."""
    def read(atom: Any) -> Any:
        if isinstance(atom, str):
            return new if atom == old else atom
        if isinstance(atom, gast.AST):
            for sub in trees.walk(atom):
                if isinstance(sub, gast.Name) and isinstance(sub.ctx, gast.Load) and (
                        sub.id == old):
                    sub.id = new
        return atom

    for s in ir.walk(stmts):
        if isinstance(s, Assign):
            s.op.args = [read(a) for a in s.op.args]
            s.op.kwargs = {k: read(v) for k, v in s.op.kwargs.items()}
            if s.op.node is not None:
                read(s.op.node)
