"""Gradient buffers the generated code owns are updated in place: ``du[t] += du_t``.

The backward pass of ``u[t]`` in a loop adds one row into ``du`` per step. Written as
``du = gl.index_add(du, t, du_t)`` it copies the whole of ``du`` at every step (the backward
pass is then quadratic in the number of steps); written ``du[t] += du_t`` it adds into the
buffer, as a person would write it. :func:`update_in_place` rewrites a gradient function that
way where that is safe, which it proves from the code alone:

* the buffer is the generated code's own: every assignment of its name makes a new array
  (``gl.zeros_like(u)``, ``gl.index_add(...)``, an arithmetic expression), it is not a parameter
  (the seed the user passed), and the name is never read but to be added to, subtracted or
  returned at the end — so no other name, list or value the user sees shares its memory
  (``dx = du`` then ``du[t] += ...`` would change ``dx`` too);
* the index is a Python integer (a ``range`` loop's variable, a literal such as ``-1``), or a
  tuple of those and slices: such an index names each entry once, where ``du[[0, 0]] += g``
  would add ``g`` once instead of twice (``gl.index_add`` keeps ``np.add.at``'s meaning there).

Frameworks whose arrays cannot change (JAX, TensorFlow), and torch while autograd records the
call (inputs that require grad, ``torch.func`` transforms), run the same text with each such
update written back as ``du = gl.index_add(du, t, du_t)`` on the same line
(:func:`functional_text`, the text compiled for them).
"""
from __future__ import annotations

import ast
from typing import Any

import gast

from . import trees
from .build import subscript_index

#: The free name generated code calls a checkpoint schedule by (see :mod:`.checkpoint`).
_SCHEDULE = "checkpoint_schedule"


def update_in_place(fn: gast.FunctionDef) -> None:
    """Rewrite ``d = gl.index_add(d, i, v)`` as ``d[i] += v`` in ``fn`` where that is safe."""
    parents = {child: node for node in trees.walk(fn) for child in gast.iter_child_nodes(node)}
    names: dict[str, list[gast.Name]] = {}
    for n in trees.walk(fn):
        if isinstance(n, gast.Name):
            names.setdefault(n.id, []).append(n)
    params = {a.id for a in fn.args.args + fn.args.kwonlyargs + fn.args.posonlyargs
              if isinstance(a, gast.Name)}
    ints = _integer_names(names, parents)
    for block in _blocks(fn):
        for i, s in enumerate(block):
            update = _self_update(s)
            if update is None:
                continue
            d, index, value = update
            if d in params or not _owned(d, names.get(d, []), parents, fn):
                continue
            if not _plain_index(index, ints):
                continue
            target = gast.Subscript(value=gast.Name(id=d, ctx=gast.Store(), annotation=None,
                                                    type_comment=None),
                                    slice=subscript_index(index), ctx=gast.Store())
            block[i] = gast.AugAssign(target=target, op=gast.Add(), value=value)


def store_first_writes(fn: gast.FunctionDef) -> None:
    """Write ``du[t] += du_t`` as ``du[t] = du_t`` where each entry is written once into new
    zeros: the buffer is made by ``gl.zeros_like`` in the loop's block, nothing between reads
    or writes it, the loop runs over ``range(n)`` or ``reversed(range(n))`` (one argument: no
    negative index names an entry twice), and that statement is the only one of the loop
    that names the buffer or assigns ``t``. NumPy's ``du[t] += v`` reads the entry, adds and
    writes it back; a store is what the hand-written gradient does (W6, bench/HISTORY.md).

    No other statement may add into the buffer in place: where it is a Python list (the
    gradient of a list argument), a store puts ``du_t`` itself in the list, which may be
    another gradient's array (``unbroadcast`` of a same-shaped value is the value), and a
    later ``du[j] += v`` would change that array, and every entry holding it, in place."""
    added_into = [s.target.value.id for s in trees.walk(fn) if isinstance(s, gast.AugAssign)
                  and isinstance(s.target, gast.Subscript)
                  and isinstance(s.target.value, gast.Name)]
    for block in _blocks(fn):
        for i, loop in enumerate(block):
            counter = _single_range_counter(loop)
            if counter is None:
                continue
            updates = [s for s in loop.body if isinstance(s, gast.AugAssign)
                       and isinstance(s.op, gast.Add) and isinstance(s.target, gast.Subscript)
                       and isinstance(s.target.value, gast.Name)
                       and isinstance(s.target.slice, gast.Name) and s.target.slice.id == counter]
            for s in updates:
                d = s.target.value.id
                in_loop = [n for n in trees.walk(loop) if isinstance(n, gast.Name) and n.id == d]
                if len(in_loop) != 1 or _stores(loop.body, counter) or not _zeros_before(
                        block, i, d) or added_into.count(d) > 1:
                    continue
                s_index = loop.body.index(s)
                loop.body[s_index] = gast.Assign(targets=[s.target], value=s.value,
                                                 type_comment=None)


def _single_range_counter(loop: gast.stmt) -> str | None:
    """``t`` of ``for t in range(n)`` or ``for t in reversed(range(n))``."""
    if not (isinstance(loop, gast.For) and isinstance(loop.target, gast.Name)) or loop.orelse:
        return None
    it = loop.iter
    if isinstance(it, gast.Call) and isinstance(it.func, gast.Name) and it.func.id == (
            "reversed") and len(it.args) == 1:
        it = it.args[0]
    if isinstance(it, gast.Call) and isinstance(it.func, gast.Name) and it.func.id == (
            "range") and len(it.args) == 1 and not it.keywords:
        return loop.target.id
    return None


def _stores(body: list[gast.stmt], name: str) -> bool:
    return any(isinstance(n, gast.Name) and n.id == name and not isinstance(n.ctx, gast.Load)
               for s in body for n in trees.walk(s))


def _zeros_before(block: list[gast.stmt], i: int, d: str) -> bool:
    """``d = gl.zeros_like(...)`` earlier in ``block``, and no statement between names ``d``."""
    for s in reversed(block[:i]):
        if isinstance(s, gast.Assign) and len(s.targets) == 1 and isinstance(
                s.targets[0], gast.Name) and s.targets[0].id == d:
            return _is_gl_call(s.value, "zeros_like") and not any(
                isinstance(n, gast.Name) and n.id == d for n in trees.walk(s.value))
        if any(isinstance(n, gast.Name) and n.id == d for n in trees.walk(s)):
            return False
    return False


def _blocks(node: gast.AST) -> list[list[gast.stmt]]:
    out = []
    for n in trees.walk(node):
        for field in ("body", "orelse"):
            block = getattr(n, field, None)
            if isinstance(block, list) and block and isinstance(block[0], gast.stmt):
                out.append(block)
    return out


def _is_gl_call(node: Any, attr: str) -> bool:
    return (isinstance(node, gast.Call) and isinstance(node.func, gast.Attribute)
            and node.func.attr == attr and isinstance(node.func.value, gast.Name)
            and node.func.value.id == "gl" and not node.keywords)


def _self_update(s: gast.stmt) -> tuple[str, gast.expr, gast.expr] | None:
    """``d = gl.index_add(d, i, v)`` as ``(d, i, v)``."""
    if not (isinstance(s, gast.Assign) and len(s.targets) == 1
            and isinstance(s.targets[0], gast.Name)):
        return None
    d = s.targets[0].id
    value = s.value
    if _is_gl_call(value, "index_add") and len(value.args) == 3 and isinstance(
            value.args[0], gast.Name) and value.args[0].id == d:
        return d, value.args[1], value.args[2]
    return None


def _owned(d: str, occurrences: list[gast.Name], parents: dict[Any, Any],
           fn: gast.FunctionDef) -> bool:
    """Whether every assignment of ``d`` makes a new array and every read of it only adds it
    up or returns it (see the module's docstring)."""
    for n in occurrences:
        parent = parents.get(n)
        if isinstance(n.ctx, gast.Store):
            if not (isinstance(parent, gast.Assign) and parent.targets == [n]
                    and _fresh(parent.value, d)):
                return False
        elif isinstance(n.ctx, gast.Load):
            if isinstance(parent, gast.Call) and _is_gl_call(parent, "index_add") and (
                    parent.args and parent.args[0] is n):
                owner = parents.get(parent)
                if not (isinstance(owner, gast.Assign) and isinstance(owner.targets[0], gast.Name)
                        and owner.targets[0].id == d):
                    return False     # added into another name: that name would share it
            elif isinstance(parent, gast.BinOp) and isinstance(parent.op, (gast.Add, gast.Sub)):
                continue
            elif isinstance(parent, gast.UnaryOp) and isinstance(parent.op, gast.USub):
                continue
            elif not _returned(n, parents, fn):
                return False
        else:
            return False
    return True


def _fresh(value: gast.expr, d: str) -> bool:
    """An expression whose value is a new array (or list) that no other name holds, nor any of
    its items: ``gl.index_add`` of a list copies the list, not its items, so only an index_add
    into ``d`` itself or into new zeros counts."""
    if isinstance(value, (gast.BinOp, gast.UnaryOp)):
        return True
    if _is_gl_call(value, "index_add") and value.args:
        into = value.args[0]
        return isinstance(into, gast.Name) and into.id == d or _is_gl_call(into, "zeros_like")
    return _is_gl_call(value, "zeros_like")


def _returned(n: gast.Name, parents: dict[Any, Any], fn: gast.FunctionDef) -> bool:
    """``return d`` or ``return (.., d, ..)`` as the function's last statement."""
    parent = parents.get(n)
    if isinstance(parent, gast.Tuple):
        parent = parents.get(parent)
    return isinstance(parent, gast.Return) and fn.body and parent is fn.body[-1]


def _integer_names(names: dict[str, list[gast.Name]], parents: dict[Any, Any]) -> set[str]:
    """The names that only ever hold a Python int: the variables of loops over a ``range``
    (written ``range(...)``, ``reversed(range(...))``, or a name that holds a range), and the
    step of a checkpoint schedule's actions."""
    def only_stored_by(name: str, test: Any) -> bool:
        stores = [n for n in names.get(name, []) if isinstance(n.ctx, gast.Store)]
        return bool(stores) and all(test(n, parents.get(n)) for n in stores)

    def is_range(e: Any) -> bool:
        if isinstance(e, gast.Subscript) and isinstance(e.slice, gast.Slice):
            e = e.value        # range(n)[::-1] is a range
        return isinstance(e, gast.Call) and isinstance(e.func, gast.Name) and (
            e.func.id == "range")

    def holds_range(name: str) -> bool:
        return only_stored_by(name, lambda n, p: isinstance(p, gast.Assign) and (
            p.targets == [n]) and is_range(p.value)) or only_stored_by(
            name, lambda n, p: _schedule_field(n, p, parents, 2))

    def range_loop(n: gast.Name, p: Any) -> bool:
        if not (isinstance(p, gast.For) and p.target is n):
            return _schedule_field(n, p, parents, 1)
        it = p.iter
        if isinstance(it, gast.Call) and isinstance(it.func, gast.Name) and (
                it.func.id == "reversed") and len(it.args) == 1:
            it = it.args[0]
        return is_range(it) or isinstance(it, gast.Name) and holds_range(it.id)

    return {name for name in names if only_stored_by(name, range_loop)}


def _schedule_field(n: gast.Name, parent: Any, parents: dict[Any, Any], position: int) -> bool:
    """``n`` is field ``position`` of ``for action, t, steps in <schedule>.backward``, where
    the schedule is made by the checkpoint schedule (its ``t`` an int, its ``steps`` a range)."""
    if not isinstance(parent, gast.Tuple) or len(parent.elts) != 3 or (
            parent.elts[position] is not n):
        return False
    loop = parents.get(parent)
    if not (isinstance(loop, gast.For) and loop.target is parent
            and isinstance(loop.iter, gast.Attribute) and loop.iter.attr == "backward"
            and isinstance(loop.iter.value, gast.Name)):
        return False
    schedule = loop.iter.value.id
    root = loop
    while root in parents:
        root = parents[root]
    made = [s for s in trees.walk(root) if isinstance(s, gast.Assign)
            and any(isinstance(t, gast.Name) and t.id == schedule
                    for t in trees.walk(gast.Module(body=[s], type_ignores=[]))
                    if isinstance(t, gast.Name) and isinstance(t.ctx, gast.Store))]
    return bool(made) and all(
        len(s.targets) == 1 and isinstance(s.targets[0], gast.Name)
        and isinstance(s.value, gast.Call) and isinstance(s.value.func, gast.Name)
        and s.value.func.id == _SCHEDULE for s in made)


def _plain_index(index: gast.expr, ints: set[str]) -> bool:
    """An index that names each entry at most once, read the same by ``[]`` on every array
    framework and by a Python list: an int, or (arrays only: a list takes no tuple) a tuple of
    ints and slices with int bounds."""
    if _is_int(index, ints):
        return True
    if isinstance(index, gast.Tuple) and index.elts:
        return all(_is_int(e, ints) or _is_slice(e, ints) for e in index.elts)
    return False


def _is_int(e: Any, ints: set[str]) -> bool:
    if isinstance(e, gast.Constant):
        return type(e.value) is int
    if isinstance(e, gast.UnaryOp) and isinstance(e.op, gast.USub):
        return _is_int(e.operand, ints)
    return isinstance(e, gast.Name) and e.id in ints


def _is_slice(e: Any, ints: set[str]) -> bool:
    """``slice(a, b)`` (how an index value spells ``a:b``) with int or None bounds and no step
    (a negative step is read differently by some frameworks)."""
    if not (isinstance(e, gast.Call) and isinstance(e.func, gast.Name) and e.func.id == "slice"
            and 1 <= len(e.args) <= 2 and not e.keywords):
        return False
    return all(_is_int(a, ints) or isinstance(a, gast.Constant) and a.value is None
               for a in e.args)


# --- the same text for frameworks whose arrays do not change --------------------------------------
class _Functional(ast.NodeTransformer):
    def __init__(self, buffers: set[str]) -> None:
        self.buffers = buffers      # the names made by gl.zeros_like: arrays, not lists

    def visit_Assign(self, node: ast.Assign) -> Any:
        """``du[t] = du_t`` (see :func:`store_first_writes`) as
        ``du = gl.index_update(du, t, du_t)``; ``d[i] = d[i] + v`` (the gradient of an item
        read from a list, or from an argument that may be an array) as
        ``d = gl.index_add(d, i, v)``."""
        added = _self_addition(node)
        if added is not None:
            return _written_back(node, "index_add", *added)
        target = node.targets[0]
        if not (len(node.targets) == 1 and isinstance(target, ast.Subscript)
                and isinstance(target.value, ast.Name) and target.value.id in self.buffers):
            return node
        return _written_back(node, "index_update", target.value.id, target.slice, node.value)

    def visit_AugAssign(self, node: ast.AugAssign) -> Any:
        if not (isinstance(node.target, ast.Subscript) and isinstance(node.op, ast.Add)
                and isinstance(node.target.value, ast.Name)):
            return node
        return _written_back(node, "index_add", node.target.value.id, node.target.slice,
                             node.value)


def _written_back(node: ast.stmt, helper: str, d: str, index: ast.expr,
                  value: ast.expr) -> ast.Assign:
    """``d = gl.<helper>(d, index, value)`` on ``node``'s line."""
    update = ast.Assign(
        targets=[ast.Name(d, ast.Store())],
        value=ast.Call(func=ast.Attribute(ast.Name("gl", ast.Load()), helper, ast.Load()),
                       args=[ast.Name(d, ast.Load()), _index_value(index), value],
                       keywords=[]))
    return ast.copy_location(update, node)


def _self_addition(node: ast.stmt) -> tuple[str, ast.expr, ast.expr] | None:
    """``d[i] = d[i] + v`` as ``(d, i, v)``."""
    if not (isinstance(node, ast.Assign) and len(node.targets) == 1):
        return None
    target, value = node.targets[0], node.value
    if not (isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name)
            and isinstance(value, ast.BinOp) and isinstance(value.op, ast.Add)
            and isinstance(value.left, ast.Subscript) and isinstance(value.left.value, ast.Name)
            and value.left.value.id == target.value.id
            and ast.dump(value.left.slice) == ast.dump(target.slice)):
        return None
    return target.value.id, target.slice, value.right


def _index_value(index: ast.expr) -> ast.expr:
    """``1:`` as ``slice(1, None)`` (a subscript's index as a value)."""
    if isinstance(index, ast.Slice):
        parts = [index.lower, index.upper, index.step]
        while len(parts) > 2 and parts[-1] is None:
            parts.pop()
        return ast.Call(func=ast.Name("slice", ast.Load()),
                        args=[p if p is not None else ast.Constant(None) for p in parts],
                        keywords=[])
    if isinstance(index, ast.Tuple):
        return ast.Tuple(elts=[_index_value(e) for e in index.elts], ctx=ast.Load())
    return index


def functional_updates(tree: ast.Module) -> None:
    """Write each ``d[i] += v`` of ``tree`` as ``d = gl.index_add(d, i, v)``, and each
    ``d[i] = v`` into a buffer of zeros as ``d = gl.index_update(d, i, v)``, on its line."""
    _Functional(_zeros_buffers(tree)).visit(tree)
    ast.fix_missing_locations(tree)


def functional_text(text: str) -> str:
    """``text`` with each update in place written functionally (as :func:`functional_updates`
    writes them) on its own line: line numbers and comments are kept, and the text compiled
    is the text read back, by tracebacks and by hvp, whose forward mode reads the gradient's
    code (over ``dp[1] = dp[1] + v`` it would assign into a JAX array)."""
    tree = ast.parse(text)
    rewrite = _Functional(_zeros_buffers(tree))
    lines = text.split("\n")
    for stmt in _statements(tree):
        if isinstance(stmt, ast.Assign):
            new = rewrite.visit_Assign(stmt)
        elif isinstance(stmt, ast.AugAssign):
            new = rewrite.visit_AugAssign(stmt)
        else:
            continue
        if new is stmt:
            continue
        first, last = stmt.lineno - 1, (stmt.end_lineno or stmt.lineno) - 1
        lines[first] = " " * stmt.col_offset + ast.unparse(new)
        for k in range(first + 1, last + 1):       # (a statement over several lines)
            lines[k] = ""
    return "\n".join(lines)


def _statements(tree: ast.AST) -> list[ast.stmt]:
    """Every statement of ``tree``, nested ones too (not the expressions: a walk of those was
    a good part of a cold transform's time)."""
    out: list[ast.stmt] = []
    todo: list[ast.AST] = [tree]
    while todo:
        n = todo.pop()
        for field in ("body", "orelse", "finalbody"):
            block = getattr(n, field, None)
            if isinstance(block, list):
                todo.extend(block)
                out.extend(s for s in block if isinstance(s, ast.stmt))
    return out


def _zeros_buffers(tree: ast.AST) -> set[str]:
    return {n.targets[0].id for n in _statements(tree) if isinstance(n, ast.Assign)
            and len(n.targets) == 1 and isinstance(n.targets[0], ast.Name)
            and isinstance(n.value, ast.Call) and isinstance(n.value.func, ast.Attribute)
            and n.value.func.attr == "zeros_like"}


def has_updates_in_place(text: str) -> bool:
    """Whether generated text holds an update in place (then it needs a functional twin)."""
    if "] += " not in text and "] = " not in text:   # (parsing is a cold transform's cost)
        return False
    tree = ast.parse(text)
    buffers = _zeros_buffers(tree)
    return any(isinstance(n, ast.AugAssign) and isinstance(n.target, ast.Subscript) or
               isinstance(n, ast.Assign) and isinstance(n.targets[0], ast.Subscript)
               and isinstance(n.targets[0].value, ast.Name) and n.targets[0].value.id in buffers
               or _self_addition(n) is not None for n in _statements(tree))
