"""Dead code and copies removed from generated functions (``optimized=True``).

Both passes are deliberately conservative: a statement is dead only if nothing anywhere in the
function reads what it assigns and it has no effect (stack pushes and pops are effects); a copy
``a = b`` is propagated only when ``a`` is a generated name assigned once and ``b`` is never
reassigned, so the user's own names always stay visible.
"""
from __future__ import annotations

import gast

from .emit import COMMENT

_EFFECT_METHODS = {"append", "pop"}


def optimize(fn: gast.FunctionDef, keep: set[str], user_names: set[str]) -> gast.FunctionDef:
    for _ in range(8):
        changed = _propagate_copies(fn, user_names)
        changed |= _propagate_local_copies(fn, user_names)
        changed |= _remove_dead(fn, keep)
        if not changed:
            break
    _drop_dangling_comments(fn.body)
    _fix_empty_blocks(fn.body)
    return fn


def _fix_empty_blocks(block: list[gast.stmt]) -> None:
    """Removing dead statements can empty a branch: ``if c: <nothing> else: B`` becomes
    ``if not c: B``; an if with nothing left goes; an empty loop body gets ``pass``."""
    i = 0
    while i < len(block):
        s = block[i]
        for name in ("body", "orelse"):
            inner = getattr(s, name, None)
            if isinstance(inner, list):
                _fix_empty_blocks(inner)
        if isinstance(s, gast.If):
            body = [t for t in s.body if not _is_comment(t)]
            orelse = [t for t in s.orelse if not _is_comment(t)]
            if not body and not orelse:
                if _has_effect(s.test):   # keep the call the condition makes, drop the if
                    block[i] = gast.Expr(value=s.test)
                    i += 1
                    continue
                del block[i]
                continue
            if not body:
                s.test = gast.UnaryOp(op=gast.Not(), operand=s.test)
                s.body, s.orelse = s.orelse, []
            elif not orelse:
                s.orelse = []
        elif isinstance(s, (gast.For, gast.While)) and not [
                t for t in s.body if not _is_comment(t)]:
            s.body = s.body + [gast.Pass()]
        i += 1


def _loads(fn: gast.AST) -> dict[str, int]:
    counts: dict[str, int] = {}
    for n in gast.walk(fn):
        if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load):
            counts[n.id] = counts.get(n.id, 0) + 1
    return counts


def _stores(fn: gast.AST) -> dict[str, int]:
    counts: dict[str, int] = {}
    for n in gast.walk(fn):
        if isinstance(n, gast.Name) and isinstance(n.ctx, (gast.Store, gast.Param)):
            counts[n.id] = counts.get(n.id, 0) + 1
        if isinstance(n, (gast.For,)) and isinstance(n.target, gast.Name):
            pass
    return counts


def _has_effect(value: gast.expr) -> bool:
    for n in gast.walk(value):
        if isinstance(n, gast.Call):
            f = n.func
            if isinstance(f, gast.Attribute) and f.attr in _EFFECT_METHODS:
                return True
            if isinstance(f, gast.Name) and not f.id.startswith(("gl", "__")) and f.id not in (
                    "range", "len", "reversed", "min", "max", "sum", "abs", "float", "int"):
                return True   # a user function or a vjp: keep, it may print or raise
    return False


def _blocks(node: gast.AST) -> list[list[gast.stmt]]:
    out = []
    for n in gast.walk(node):
        for name in ("body", "orelse"):
            block = getattr(n, name, None)
            if isinstance(block, list) and block and isinstance(block[0], gast.stmt):
                out.append(block)
    return out


def _remove_dead(fn: gast.FunctionDef, keep: set[str]) -> bool:
    loads = _loads(fn)
    changed = False
    for block in _blocks(fn):
        i = 0
        while i < len(block):
            s = block[i]
            if isinstance(s, gast.Assign) and len(s.targets) == 1:
                names = _target_names(s.targets[0])
                if names is not None and names and not any(loads.get(n) for n in names) \
                        and not names & keep and not _has_effect(s.value):
                    del block[i]
                    changed = True
                    continue
            i += 1
    return changed


def _target_names(target: gast.expr) -> set[str] | None:
    if isinstance(target, gast.Name):
        return {target.id}
    if isinstance(target, gast.Tuple) and all(isinstance(e, gast.Name) for e in target.elts):
        return {e.id for e in target.elts}  # type: ignore[attr-defined]
    return None


def _propagate_copies(fn: gast.FunctionDef, user_names: set[str]) -> bool:
    stores = _stores(fn)
    for block in _blocks(fn):
        for i, s in enumerate(block):
            if not (isinstance(s, gast.Assign) and len(s.targets) == 1
                    and isinstance(s.targets[0], gast.Name) and isinstance(s.value, gast.Name)):
                continue
            a, b = s.targets[0].id, s.value.id
            if a in user_names or stores.get(a, 0) != 1 or stores.get(b, 0) > 1:
                continue
            if a == b:
                continue
            del block[i]
            for n in gast.walk(fn):
                if isinstance(n, gast.Name) and n.id == a and isinstance(n.ctx, gast.Load):
                    n.id = b
            return True
    return False


def _propagate_local_copies(fn: gast.FunctionDef, user_names: set[str]) -> bool:
    """``a = b`` followed, in the same block, by the only use of ``a`` with ``b`` unchanged in
    between (``ddt = dx`` then ``dv = dv + dt * ddt``): use ``b`` there and drop the copy.
    The gradient code's own temporaries only; loops make this the common case."""
    stores = _stores(fn)
    loads = _loads(fn)
    for block in _blocks(fn):
        for i, s in enumerate(block):
            if not (isinstance(s, gast.Assign) and len(s.targets) == 1
                    and isinstance(s.targets[0], gast.Name) and isinstance(s.value, gast.Name)):
                continue
            a, b = s.targets[0].id, s.value.id
            if a in user_names or a == b or stores.get(a, 0) != 1 or loads.get(a, 0) != 1:
                continue
            for later in block[i + 1:]:
                uses = [n for n in gast.walk(later) if isinstance(n, gast.Name) and n.id == a
                        and isinstance(n.ctx, gast.Load)]
                if uses:
                    if isinstance(later, gast.Assign) and not isinstance(
                            later, (gast.For, gast.While, gast.If)):
                        uses[0].id = b
                        del block[i]
                        return True
                    break
                if any(isinstance(n, gast.Name) and n.id == b and isinstance(n.ctx, gast.Store)
                       for n in gast.walk(later)) or not isinstance(later, (gast.Assign,
                                                                           gast.Expr)):
                    break
    return False


def _is_comment(s: gast.stmt) -> bool:
    return (isinstance(s, gast.Expr) and isinstance(s.value, gast.Call)
            and isinstance(s.value.func, gast.Name) and s.value.func.id == COMMENT)


def _drop_dangling_comments(block: list[gast.stmt]) -> None:
    """A quoted line with nothing left under it is noise."""
    i = 0
    while i < len(block):
        s = block[i]
        for name in ("body", "orelse"):
            inner = getattr(s, name, None)
            if isinstance(inner, list):
                _drop_dangling_comments(inner)
        nxt = block[i + 1] if i + 1 < len(block) else None
        if _is_comment(s) and _quotes_line(s) and (nxt is None or (
                _is_comment(nxt) and _quotes_line(nxt))):
            del block[i]
            continue
        i += 1


def _quotes_line(s: gast.Expr) -> bool:
    args = s.value.args  # type: ignore[attr-defined]
    return bool(args) and isinstance(args[0], gast.Constant) and args[0].value != 0
