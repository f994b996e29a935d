"""Single-use temporaries folded back into the line that uses them (``optimized=True``, the last
pass over a generated function): ``dT = (10.0 - T) * 0.1 + u_t * 0.5`` as the user wrote it,
where normalizing made four lines of it.

Normalizing gives every operation a name of its own, which the rules of differentiation need;
once the derivative is written, a name read once, right after, by the next lines of its block,
is only noise (and a store and a load the interpreter does for nothing). It is folded back
when all of this holds, and kept otherwise:

- it is a generated name (never one of the user's, nor one of its values ``x_2``, nor the
  gradient ``dx`` of one of the user's variables ``x``, nor a name the caller reads back), assigned once and read once in the whole
  function, by a later statement of the same block: an assignment or a ``return`` whose calls
  are all ``gl.*`` (or ``range``, ``len``...), as an operand of its value's arithmetic (not
  inside a call's arguments, a matrix product or a conditional expression);
- its value is arithmetic (no call, no ``@``, no attribute): names, constants, entries
  ``x[i]``, operators — a ``gl.*`` call or a matrix product keeps its line, and so does what
  they take, so the code still reads like the textbook (``dW = x.T @ dz``);
- every statement in between (under the same quoted line of the user's) assigns plain names only, none of them a name the value reads,
  and calls only ``gl.*`` functions (or pushes onto the function's own stacks): no item,
  attribute or augmented assignment, no other call, no loop or branch;
- the folded line keeps at most :data:`MAX_OPERATIONS` operators.

The expression tree is the one the temporaries spelled, so the value is computed by the same
operations in the same order; only when (after the statements in between, which cannot change
it) and without the intermediate name.
"""
from __future__ import annotations

import gast

from . import trees
from .build import is_comment, quotes_line
from .naming import users_value_or_gradient
from .saves import list_names, pushed_stack

#: The most operators a line folded into may hold.
MAX_OPERATIONS = 5
_PURE_BUILTINS = {"range", "reversed", "len", "min", "max", "abs", "float", "int"}


def inline_temporaries(fn: gast.FunctionDef, user_names: set[str], keep: set[str],
                       gl: str = "gl") -> None:
    """Fold ``fn``'s single-use temporaries into their use (see the module's docstring)."""
    loads: dict[str, list[gast.Name]] = {}
    stores: dict[str, int] = {}
    blocks: list[list[gast.stmt]] = []
    for n in trees.walk(fn):
        if isinstance(n, gast.Name):
            if isinstance(n.ctx, gast.Load):
                loads.setdefault(n.id, []).append(n)
            else:
                stores[n.id] = stores.get(n.id, 0) + 1
        for field in ("body", "orelse"):
            block = getattr(n, field, None)
            if isinstance(block, list) and block and isinstance(block[0], gast.stmt):
                blocks.append(block)
    lists = list_names(fn)
    fixed = user_names | keep
    for block in blocks:
        i = 0
        while i < len(block):
            s = block[i]
            a = _temporary(s, fixed)
            if a is not None and stores.get(a) == 1 and len(loads.get(a, ())) == 1 and (
                    _fold(block, i, loads[a][0], lists, gl)):
                del block[i]
                del loads[a]
                stores[a] = 0
                continue
            i += 1


def _temporary(s: gast.stmt, fixed: set[str]) -> str | None:
    """``a`` for ``a = E`` with ``a`` a generated name that is not the gradient of a user's
    variable and ``E`` arithmetic (see the module's docstring)."""
    if not (isinstance(s, gast.Assign) and len(s.targets) == 1
            and isinstance(s.targets[0], gast.Name)):
        return None
    a = s.targets[0].id
    if users_value_or_gradient(a, fixed):
        return None
    return a if _arithmetic(s.value) else None


def _arithmetic(e: gast.expr) -> bool:
    if isinstance(e, (gast.Name, gast.Constant)):
        return True
    if isinstance(e, gast.BinOp):
        return not isinstance(e.op, gast.MatMult) and _arithmetic(e.left) and _arithmetic(
            e.right)
    if isinstance(e, gast.UnaryOp):
        return _arithmetic(e.operand)
    if isinstance(e, gast.Subscript):
        key = e.slice
        parts = key.elts if isinstance(key, gast.Tuple) else [key]
        return isinstance(e.value, gast.Name) and all(
            isinstance(p, (gast.Name, gast.Constant)) for p in parts)
    return False


def _fold(block: list[gast.stmt], i: int, use: gast.Name, lists: set[str], gl: str) -> bool:
    """Put ``block[i]``'s value where ``use`` is, if ``use`` is in a later statement of
    ``block`` that may take it (see the module's docstring)."""
    s = block[i]
    value = s.value   # type: ignore[attr-defined]
    reads = {n.id for n in trees.walk(value) if isinstance(n, gast.Name)}
    for later in block[i + 1:]:
        if is_comment(later):
            if quotes_line(later):   # each line of the user's keeps its own code
                return False
            continue
        if any(n is use for n in trees.walk(later)):
            parent = _parent_of(later, use)
            if parent is None or not isinstance(later, (gast.Assign, gast.Return)) or not _pure(
                    later, lists, gl):
                return False
            if _operators(later) + _operators(value) > MAX_OPERATIONS:
                return False
            return _replace(parent, use, value)
        if not _harmless(later, reads, lists, gl):
            return False
    return False


def _parent_of(s: gast.stmt, use: gast.Name) -> gast.AST | None:
    """The node holding ``use`` in ``s``'s value, where the way down to it passes operators
    only (no call, ``@``, conditional or container): a value folded into a call's argument or
    a matrix product would hide a name the textbook shows (``dW = x.T @ dxW``). None
    otherwise, or where ``use`` is not in ``s``'s value."""
    node: gast.AST | None = getattr(s, "value", None)
    if node is use:
        return s
    while isinstance(node, (gast.BinOp, gast.UnaryOp)) and not (
            isinstance(node, gast.BinOp) and isinstance(node.op, gast.MatMult)):
        children = [node.left, node.right] if isinstance(node, gast.BinOp) else [node.operand]
        for child in children:
            if child is use:
                return node
        inner = [c for c in children if any(n is use for n in trees.walk(c))]
        node = inner[0] if inner else None
    return None


def _replace(parent: gast.AST, use: gast.Name, value: gast.expr) -> bool:
    for field, old in gast.iter_fields(parent):
        if old is use:
            setattr(parent, field, value)
            return True
        if isinstance(old, list):
            for k, item in enumerate(old):
                if item is use:
                    old[k] = value
                    return True
    return False


def _operators(node: gast.AST) -> int:
    return sum(1 for n in trees.walk(node) if isinstance(n, (gast.BinOp, gast.UnaryOp)))


def _pure(s: gast.stmt, lists: set[str], gl: str) -> bool:
    """Whether every call in ``s`` is a ``gl.*`` function, a harmless builtin or a push onto one
    of the function's own lists."""
    for n in trees.walk(s):
        if isinstance(n, gast.Call):
            f = n.func
            if isinstance(f, gast.Attribute) and isinstance(f.value, gast.Name) and (
                    f.value.id == gl or f.value.id in lists and f.attr == "append"):
                continue
            if isinstance(f, gast.Name) and f.id in _PURE_BUILTINS:
                continue
            return False
    return True


def _harmless(s: gast.stmt, reads: set[str], lists: set[str], gl: str) -> bool:
    """Whether ``s``, between a temporary and its use, leaves the temporary's value as it was:
    it assigns plain names the value does not read, or pushes onto a stack, and calls nothing
    else."""
    if not _pure(s, lists, gl):
        return False
    stack = pushed_stack(s)
    if stack is not None:
        return stack in lists and stack not in reads
    if not isinstance(s, gast.Assign):
        return False
    for target in s.targets:
        parts = target.elts if isinstance(target, gast.Tuple) else [target]
        if not all(isinstance(p, gast.Name) and p.id not in reads for p in parts):
            return False
    return True
