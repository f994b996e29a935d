"""Adjoints written as a textbook writes them, for a variant whose shapes are known
(:mod:`.ranks`): ``dx = dz @ W.T``, ``dW = x.T @ dz``, ``dW = gl.outer(dz, h)``, a broadcast
operand's gradient as ``gl.sum(g, axis=0)``, a reduction's as ``gl.ones_like(x) * g``.

Shapes say nothing about one case: an adjoint that is still the number ``0.0`` (a value whose
gradient has had no contribution yet on some path through a branch or a loop), which ``@`` and
``gl.sum(g, axis=0)`` cannot take and the generic helpers can. So each rewrite that needs an
array is first written as a choice, ``__textbook__(special, generic, g)``, and
:func:`settle_choices` takes the special form only where the finished backward pass shows that
``g`` can never hold a number.
"""
from __future__ import annotations

from typing import Any, Callable

import gast

from . import trees
from .build import attr, call, name
from .ranks import MATRIX_PRODUCTS, Shape, Signature, matmul_shape, sum_axes
from .resolve import bindings

CHOICE = "__textbook__"

#: Calls of the tensor layer whose result is a number, not an array.
_COUNTS = {"size", "ndim"}
#: Calls of the tensor layer whose result is shaped like one of their arguments (its
#: position): an array where that argument is one.
_SHAPED_BY = {"broadcast_like": 1, "unbroadcast": 1, "full_like": 0, "zeros_like": 0,
              "ones_like": 0, "broadcast_to": 1}


class Textbook:
    """The shapes a variant knows, and how it spells a transpose."""

    def __init__(self, shapes: dict[str, Shape], signature: Signature, gl: str) -> None:
        self.shapes = shapes
        self.signature = signature
        self.gl = gl

    def array_params(self) -> set[str]:
        """The parameters the signature knows to hold arrays."""
        return set(self.signature.known())

    def shape(self, e: Any) -> Shape | None:
        if isinstance(e, gast.Name):
            return self.shapes.get(e.id)
        return None

    def transposed(self, e: gast.expr) -> gast.expr:
        if self.signature.transpose_method:
            return gast.Attribute(value=trees.clone(e), attr="T", ctx=gast.Load())
        return call(attr(self.gl, "transpose"), [trees.clone(e)])

    def product(self, a: gast.expr, b: gast.expr) -> gast.expr:
        """``a @ b`` (TensorFlow's ``@`` takes no vector: ``gl.matmul(a, b)`` there)."""
        if self.signature.transpose_method:
            return gast.BinOp(left=a, op=gast.MatMult(), right=b)
        return call(attr(self.gl, "matmul"), [a, b])

    # --- matrix products ----------------------------------------------------------------------
    def matmul_adjoints(self, x: Any, y: Any, z: str, dz: str,
                        carries: Callable[[gast.expr], bool],
                        generic: dict[str, gast.expr]) -> list[tuple[str, gast.expr]] | None:
        """``(operand, contribution)`` for ``z = x @ y`` with x and y of ranks 1 or 2; None
        when a shape is unknown. ``generic``: each operand's contribution by the helper."""
        sx, sy = self.shape(x), self.shape(y)
        if sx is None or sy is None or matmul_shape(sx, sy) is None:
            return None
        g = name(dz)
        ranks = (len(sx), len(sy))
        mm = self.product
        mul = lambda a, b: gast.BinOp(left=a, op=gast.Mult(), right=b)  # noqa: E731
        outer = lambda a, b: call(attr(self.gl, "outer"), [a, b])  # noqa: E731
        cx = cy = None
        if ranks == (2, 2):
            if not self.signature.transposes_copy:
                cx, cy = mm(g, self.transposed(y)), mm(self.transposed(x), g)
        elif ranks == (2, 1):            # W @ h: W.T @ g, or g @ W (a vector g: the same
            cx = outer(g, trees.clone(y))   # product, with no transpose to copy)
            cy = mm(g, trees.clone(x)) if self.signature.row_vectors else mm(
                self.transposed(x), g)
        elif ranks == (1, 2):            # h @ W
            cx, cy = mm(trees.clone(y), g), outer(trees.clone(x), g)
        elif ranks == (1, 1):            # a dot product: dz is a number or a 0-d array
            return [(e.id, mul(name(dz), trees.clone(other)))
                    for e, other in ((x, y), (y, x)) if carries(e)]
        out = []
        for e, special in ((x, cx), (y, cy)):
            if carries(e):
                out.append((e.id, generic[e.id] if special is None else
                            choice(special, generic[e.id], name(dz))))
        return out

    # --- broadcasts -------------------------------------------------------------------------
    def sum_to(self, g: gast.expr, have: Shape, target: Shape) -> gast.expr | None:
        """``g`` (shaped ``have``) summed back to ``target``, as ``gl.sum`` calls."""
        axes = sum_axes(have, target)
        if axes is None:
            return None
        lead, keep = axes
        out = trees.clone(g)
        for axis, keepdims in ((lead, False), (keep, True)):
            if not axis:
                continue
            keywords = [gast.keyword(arg="axis", value=_axis(axis))]
            if keepdims:
                keywords.append(gast.keyword(arg="keepdims", value=gast.Constant(True, None)))
            out = gast.Call(func=attr(self.gl, "sum"), args=[out], keywords=keywords)
        return out


#: Reductions whose rule spreads the result's gradient back with ``gl.broadcast_like``.
_SPREAD_BACK = ("sum", "mean")
#: The mark a ``gl.broadcast_like(g, x)`` of such a rule gets: how :func:`fill_spreads`
#: may write it once the optimizer has skipped those a product does anyway.
_MARK = "_textbook_spread"


def mark_spreads(steps: list[Any], textbook: Textbook, reduced: Shape) -> None:
    """Mark each ``gl.broadcast_like(g, x)`` to an ``x`` of known rank: ``g`` is a number or
    0-d (``reduced`` is ``()`` and no axis is put back: a full reduction) or shaped like
    ``reduced`` with its axes put back (``gl.expand_dims(dy, axis)``)."""
    for step in steps:
        for node in trees.walk(getattr(step, "expr", None) or gast.Pass()):
            if isinstance(node, gast.Call) and isinstance(node.func, gast.Attribute) and (
                    node.func.attr == "broadcast_like") and len(node.args) == 2 and isinstance(
                    node.args[1], gast.Name) and textbook.shapes.get(node.args[1].id):
                spreads_axes = any(
                    isinstance(n, gast.Call) and isinstance(n.func, gast.Attribute)
                    and n.func.attr == "expand_dims" for n in trees.walk(node.args[0]))
                setattr(node, _MARK, "fill" if reduced == () and not spreads_axes else "spread")


def fill_spreads(fn: gast.FunctionDef, textbook: Textbook) -> None:
    """The marked ``gl.broadcast_like(g, x)`` left after optimizing, written out: a full
    reduction's as ``gl.full_like(x, g)``, another's as ``gl.broadcast_to(g, gl.shape(x))``
    where ``g`` is surely an array (a number cannot be broadcast by every framework)."""
    numbers = _numbers(fn, textbook.array_params())

    class _Fill(gast.NodeTransformer):
        def visit_Call(self, node: gast.Call) -> gast.expr:
            self.generic_visit(node)
            how = getattr(node, _MARK, None)
            if how is None:
                return node
            g, x = node.args
            if how == "fill" and textbook.signature.fills:
                return call(attr(textbook.gl, "full_like"), [x, g])
            if how == "spread" and not _number_like(g, numbers):
                return call(attr(textbook.gl, "broadcast_to"), [
                    g, call(attr(textbook.gl, "shape"), [trees.clone(x)])])
            return node
    _Fill().visit(fn)


def _axis(axes: tuple[int, ...]) -> gast.expr:
    if len(axes) == 1:
        return gast.Constant(axes[0], None)
    return gast.Tuple(elts=[gast.Constant(a, None) for a in axes], ctx=gast.Load())


def choice(special: gast.expr, generic: gast.expr, needs_array: gast.expr) -> gast.Call:
    """The special form where ``needs_array`` surely holds an array, else the generic one."""
    return gast.Call(func=gast.Name(CHOICE, gast.Load(), None, None),
                     args=[special, generic, trees.clone(needs_array)], keywords=[])


def is_choice(node: Any) -> bool:
    return isinstance(node, gast.Call) and isinstance(node.func, gast.Name) and (
        node.func.id == CHOICE)


def rewrite_calls(expr: gast.expr, rewrite: Callable[[gast.Call], gast.expr | None]
                  ) -> gast.expr:
    """``expr`` with each call ``rewrite`` gives a replacement for replaced (innermost first)."""
    class _Rewriter(gast.NodeTransformer):
        def visit_Call(self, node: gast.Call) -> gast.expr:
            self.generic_visit(node)
            if is_choice(node):
                return node
            new = rewrite(node)
            return node if new is None else new
    return _Rewriter().visit(expr)  # type: ignore[no-any-return]


def settle_choices(fn: gast.FunctionDef, arrays: set[str]) -> None:
    """Each choice made: the special form where its guard is surely an array. ``arrays``:
    the parameters known to hold arrays; any other name the function reads without assigning
    it (the seed, whose default is ``1.0``, a global) may be a number."""
    may_be_number = _numbers(fn, arrays)

    class _Settle(gast.NodeTransformer):
        def visit_Call(self, node: gast.Call) -> gast.expr:
            self.generic_visit(node)
            if not is_choice(node):
                return node
            special, generic, guard = node.args
            return generic if _number_like(guard, may_be_number) else special
    _Settle().visit(fn)


def _numbers(fn: gast.FunctionDef, arrays: set[str]) -> set[str]:
    """The names that may hold a Python number somewhere in ``fn`` (flow-insensitive, so
    conservative): assigned a number, a sum or product of numbers, a count, or anything
    gradlab cannot see through (a call of a helper, an item of a list)."""
    assigns = [n for n in trees.walk(fn) if isinstance(n, (gast.Assign, gast.AugAssign))]
    assigned = {n.id for s in assigns for t in (
        s.targets if isinstance(s, gast.Assign) else [s.target])
        for n in trees.walk(t) if isinstance(n, gast.Name)}
    numbers = {n.id for n in trees.walk(fn) if isinstance(n, gast.Name)} - assigned - arrays
    # a stack (``h_stack.append(h)``, later ``h = h_stack.pop()``) holds a number if anything
    # pushed on it may be one; a list nothing pushes on is not a stack of values
    pushes: dict[str, list[gast.expr]] = {}
    for n in trees.walk(fn):
        if isinstance(n, gast.Call) and isinstance(n.func, gast.Attribute) and (
                n.func.attr == "append") and isinstance(n.func.value, gast.Name) and (
                len(n.args) == 1):
            pushes.setdefault(n.func.value.id, []).append(n.args[0])
    numbers -= set(pushes)
    changed = True
    while changed:
        changed = False
        for stack, pushed in pushes.items():
            if stack not in numbers and any(_number_like(v, numbers) for v in pushed):
                numbers.add(stack)
                changed = True
        for s in assigns:
            targets = s.targets if isinstance(s, gast.Assign) else [s.target]
            value_number = _number_like(s.value, numbers)
            for t in targets:
                for n in trees.walk(t):
                    if isinstance(n, gast.Name) and n.id not in numbers and (
                            value_number or not isinstance(t, gast.Name)):
                        numbers.add(n.id)
                        changed = True
    return numbers


def _number_like(e: gast.expr, numbers: set[str]) -> bool:
    if isinstance(e, gast.Constant):
        return isinstance(e.value, (int, float, complex))     # None: no value yet
    if isinstance(e, gast.Call) and isinstance(e.func, gast.Attribute) and (
            e.func.attr == "pop") and not e.args and isinstance(e.func.value, gast.Name):
        return e.func.value.id in numbers   # a stack: what was pushed on it (see _numbers)
    if isinstance(e, gast.Name):
        return e.id in numbers
    if isinstance(e, gast.BinOp):
        return _number_like(e.left, numbers) and _number_like(e.right, numbers)
    if isinstance(e, gast.UnaryOp):
        return _number_like(e.operand, numbers)
    if isinstance(e, (gast.List, gast.Tuple)):
        return any(_number_like(v, numbers) for v in e.elts)
    if isinstance(e, gast.IfExp):
        return _number_like(e.body, numbers) or _number_like(e.orelse, numbers)
    if is_choice(e):
        return any(_number_like(a, numbers) for a in e.args[:2])
    if isinstance(e, gast.Call) and isinstance(e.func, gast.Attribute) and isinstance(
            e.func.value, gast.Name) and e.func.value.id == "gl":
        if e.func.attr in _COUNTS:
            return True
        shaped_by = _SHAPED_BY.get(e.func.attr)
        if shaped_by is not None:
            return len(e.args) > shaped_by and _number_like(e.args[shaped_by], numbers)
        # the maths of a number is a number (NumPy's scalar, which ``@`` refuses too)
        return any(_number_like(a, numbers) for a in e.args)
    if isinstance(e, gast.Attribute) and e.attr == "T":
        return False
    return True          # a helper's call, an item, a tuple: it may be anything


def textbook_steps(textbook: Textbook, s: Any, steps: list[Any], atom: Callable[[Any], Any],
                   adjoint: Callable[[str], str]) -> list[Any]:
    """The backward steps of statement ``s`` (a primitive's rule, filled in) in textbook
    form where the shapes allow: a matrix product's adjoints written out, a broadcast
    operand's ``unbroadcast`` as the sum it is."""
    from .rules import Contribution
    from .rules.instantiate import ELEMENTWISE
    prim, z = s.op.prim, s.targets[0]
    if len(s.targets) != 1:
        return steps
    args = bindings(s.op)
    if prim in MATRIX_PRODUCTS:
        x, y = atom(args["x"]), atom(args["y"])
        targets = [c.target for c in steps if isinstance(c, Contribution)]
        if len(targets) != len(steps) or len(set(targets)) != len(targets) or not (
                isinstance(x, gast.Name) and isinstance(y, gast.Name)) or x.id == y.id:
            return steps
        generic = {c.target: c.expr for c in steps}
        written = textbook.matmul_adjoints(x, y, z, adjoint(z), lambda e: e.id in generic,
                                           generic)
        return steps if written is None else [Contribution(t, e) for t, e in written]
    have = textbook.shapes.get(z)
    if prim in _SPREAD_BACK and have is not None:
        mark_spreads(steps, textbook, have)
        return steps
    if prim not in ELEMENTWISE or have is None:
        return steps

    def summed(node: gast.Call) -> gast.expr | None:
        f = node.func
        if not (isinstance(f, gast.Attribute) and f.attr == "unbroadcast" and len(node.args) == 2
                and isinstance(node.args[1], gast.Name)):
            return None
        target = textbook.shapes.get(node.args[1].id)
        if not target or target == have:
            return None
        special = textbook.sum_to(node.args[0], have, target)
        return None if special is None else choice(special, node, node.args[0])

    for step in steps:
        if isinstance(step, Contribution):
            step.expr = rewrite_calls(step.expr, summed)
    return steps


__all__ = ["Textbook", "choice", "settle_choices", "rewrite_calls", "MATRIX_PRODUCTS"]
