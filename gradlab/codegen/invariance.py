"""Gradients that cancel exactly, found before differentiation so no code is made for them.

The stable logsumexp people write by hand, ``m = np.max(x); m + np.log(np.sum(np.exp(x - m)))``,
does not depend on the shift ``m`` at all: ``c + log(sum(exp(x - c)))`` is the same number for
every ``c`` constant along the summed axes. Differentiated naively, ``m`` gets the seed from the
``+`` and minus the softmax's total from the ``-``, which sum to zero, and that zero then flows
through the max's rule (a mask, a division, an add over the whole array): three extra passes over
``x`` for nothing, and a rounding error where the answer is 0 analytically. JAX's own logsumexp
avoids it with ``stop_gradient`` on the shift. Here the pattern is recognised in the user's code
and ``m`` is marked *frozen* in both statements (``Assign.frozen``), so reverse and forward mode
skip its contributions there, and the generated code says why in a comment.

Only the exact shape of the identity is accepted, so nothing is ever dropped that does not cancel:
each intermediate (``x - m``, its exp, the sum, the log) is written once and read once, by the
next step; no statement between the subtraction and the addition writes ``m``; and ``m`` is a
reduction over the same axes as the sum (whole, or along ``axis`` with ``keepdims=True``), so it
is constant along them.
"""
from __future__ import annotations

from typing import Any

import gast

from . import ir
from .ir import Assign, OpKind

#: Reductions whose result is constant along the reduced axes (a valid shift).
_SHIFTS = {"max", "min", "mean", "sum"}


def freeze_shifts(fn: ir.Function) -> None:
    """Mark the shift ``c`` of every shift-invariant expression in ``fn`` as frozen:
    ``c + log(sum(exp(x - c)))`` (logsumexp), ``(x - c) - log(sum(exp(x - c)))`` (log-softmax)
    and ``exp(x - c) / sum(exp(x - c))`` (softmax)."""
    definitions: dict[str, list[ir.Stmt]] = {}
    readers: dict[str, list[ir.Stmt | None]] = {}
    for s in ir.walk(fn.body):
        for t in ir.stmt_writes(s):
            definitions.setdefault(t, []).append(s)
        for n in ir.stmt_reads(s):
            readers.setdefault(n, []).append(s)
    readers.setdefault(fn.result, []).append(None)   # read by the return
    uses = _Uses(definitions, readers)
    for block in _blocks(fn.body):
        for position, s in enumerate(block):
            if isinstance(s, Assign) and s.op.kind is OpKind.PRIM and s.op.prim == "subtract":
                _freeze_if_shift(s, block[position + 1:], uses)


def _blocks(stmts: list[ir.Stmt]) -> list[list[ir.Stmt]]:
    out = [stmts]
    for s in stmts:
        for block in ir.children(s):
            out.extend(_blocks(block))
    return out


class _Uses:
    """Which statements define and which read each name of a function."""

    def __init__(self, definitions: dict[str, list[ir.Stmt]],
                 readers: dict[str, list[ir.Stmt | None]]) -> None:
        self.definitions = definitions
        self.readers = readers

    def single(self, name: str) -> bool:
        """Whether ``name`` is assigned once."""
        return len(self.definitions.get(name, [])) == 1

    def steps(self, name: str, prim: str, reduction: bool = False) -> list[Assign]:
        """The statements ``_ = prim(name)`` among ``name``'s readers."""
        return [a for r in self.readers.get(name, [])
                if (a := _unary(r, prim, name, reduction)) is not None]

    def read_once(self, name: str) -> bool:
        return len(self.readers.get(name, [])) == 1


def _freeze_if_shift(difference: Assign, after: list[ir.Stmt], uses: _Uses) -> None:
    """``d = x - c``: when ``d`` only goes through ``exp``, a sum and one of the identities
    (see :func:`freeze_shifts`), ``c`` is frozen in ``d`` and in the identity's last step."""
    op = difference.op
    if len(op.args) != 2 or op.kwargs or len(difference.targets) != 1:
        return
    x, c = op.args
    d = difference.targets[0]
    if not (isinstance(x, str) and isinstance(c, str)) or x == c or not uses.single(d):
        return
    exps = uses.steps(d, "exp")
    if len(exps) != 1 or not uses.single(exp_name := exps[0].targets[0]):
        return
    exp = exps[0]
    sums = uses.steps(exp_name, "sum", reduction=True)
    if len(sums) != 1 or not uses.single(sums[0].targets[0]):
        return
    total = sums[0]
    closing = _identity_closed(uses, x, c, d, exp, total)
    if closing is None:
        return
    result, why, log = closing
    if not _in_order(after, [exp, total, *log, result], c):
        return
    if not _valid_shift(uses.definitions.get(c, []), total):
        return
    difference.frozen = {**difference.frozen, c: why}
    if c in ir.op_reads(result.op):
        result.frozen = {**result.frozen, c: why}


def _identity_closed(uses: _Uses, x: str, c: str, d: str, exp: Assign, total: Assign
                     ) -> tuple[Assign, str, list[Assign]] | None:
    """The step that closes an identity after ``exp(d)`` and its sum ``total``: ``c + log(total)``
    (logsumexp), ``d - log(total)`` (log-softmax) or ``exp / total`` (softmax), with why it does
    not depend on ``c`` and the ``log`` step between (if any); None when there is none."""
    exp_name, sum_name = exp.targets[0], total.targets[0]
    readers_of_d = uses.readers[d]
    one_use = len(readers_of_d) == 1
    log = uses.steps(sum_name, "log")
    log = log if len(log) == 1 and uses.read_once(sum_name) and uses.read_once(exp_name) else []
    if log:
        lse = log[0].targets[0]
        found = uses.readers.get(lse, [])
        r = found[0] if len(found) == 1 and uses.single(lse) else None
        if not isinstance(r, Assign) or r.op.kind is not OpKind.PRIM or r.op.kwargs:
            return None
        if r.op.prim == "add" and sorted(map(str, r.op.args)) == sorted([c, lse]) and one_use:
            return r, f"{c} + log(sum(exp({x} - {c}))) does not depend on {c}", log
        if r.op.prim == "subtract" and r.op.args == [d, lse] and len(readers_of_d) == 2 \
                and {id(u) for u in readers_of_d} == {id(exp), id(r)}:
            return r, f"({x} - {c}) - log(sum(exp({x} - {c}))) does not depend on {c}", log
        return None
    if one_use and uses.read_once(sum_name) and len(uses.readers[exp_name]) == 2:
        r = uses.readers[sum_name][0]
        if isinstance(r, Assign) and r.op.kind is OpKind.PRIM and r.op.prim == "divide" and (
                r.op.args == [exp_name, sum_name]) and not r.op.kwargs:
            return r, f"exp({x} - {c}) / sum(exp({x} - {c})) does not depend on {c}", []
    return None


def _unary(s: ir.Stmt | None, prim: str, arg: str, reduction: bool = False) -> Assign | None:
    """``s`` when it is ``target = prim(arg)`` (keyword arguments only for a reduction)."""
    if not isinstance(s, Assign) or s.op.kind is not OpKind.PRIM or s.op.prim != prim:
        return None
    if s.op.args != [arg] or len(s.targets) != 1 or (s.op.kwargs and not reduction):
        return None
    return s


def _in_order(after: list[ir.Stmt], chain: list[Assign], shift: str) -> bool:
    """Every step of ``chain`` comes later in the subtraction's block, in order, with only
    plain assignments up to the last one, none of which writes the shift: all read one value."""
    wanted = list(chain)
    for s in after:
        if not isinstance(s, Assign) or shift in s.targets:
            return False
        if s is wanted[0]:
            wanted.pop(0)
            if not wanted:
                return True
    return False


def _valid_shift(defs: list[ir.Stmt], reduction: Assign) -> bool:
    """The shift is one reduction over the summed axes: constant along them."""
    if len(defs) != 1 or not isinstance(defs[0], Assign):
        return False
    op = defs[0].op
    if op.kind is not OpKind.PRIM or op.prim not in _SHIFTS or len(op.args) != 1:
        return False
    axis, keepdims = _reduction_axes(op), _reduction_axes(reduction.op)
    if axis is None or keepdims is None or axis != keepdims:
        return False
    summed_axis, keeps = axis
    return summed_axis is None or keeps is True


def _reduction_axes(op: ir.Op) -> tuple[Any, Any] | None:
    """(axis, keepdims) as plain values; None when either is not a literal."""
    unknown = object()
    values = {}
    for key, default in (("axis", None), ("keepdims", False)):
        atom = op.kwargs.get(key)
        value = default if atom is None else _literal(atom, unknown)
        if value is unknown:
            return None
        values[key] = tuple(value) if isinstance(value, list) else value
    if set(op.kwargs) - {"axis", "keepdims"}:
        return None
    return values["axis"], values["keepdims"]


def _literal(atom: Any, unknown: object) -> Any:
    if isinstance(atom, ir.Const):
        return atom.value
    if isinstance(atom, gast.Constant):
        return atom.value
    if isinstance(atom, (gast.Tuple, gast.List)):
        items = [_literal(e, unknown) for e in atom.elts]
        return unknown if unknown in items else tuple(items)
    if isinstance(atom, gast.UnaryOp) and isinstance(atom.op, gast.USub) and isinstance(
            atom.operand, gast.Constant) and isinstance(atom.operand.value, int):
        return -atom.operand.value
    return unknown
