"""The tangent program (forward mode): each statement followed by the statement that carries
its tangent, ``h = tanh(xW)`` then ``h_dot = (1.0 - h * h) * xW_dot``.

Forward mode needs no stacks: values and tangents advance together, so loops, branches and
calls keep their shape. Only values that depend on the differentiated inputs get a tangent;
a tangent that is zero is never computed, and where a value that has a tangent is (re)assigned
from constants its tangent is set to zeros.
"""
from __future__ import annotations

from typing import Any

import gast

from . import ir
from .analyze import array_arguments
from .build import REQUIRED, assign, attr, call, const, expr_stmt, function_def, name, param, \
    expanding_index, indexes_by_array, not_plain_index, subscript_index
from .dispatch import StatementRules, apply_rule, rule_for
from .ir import Assign, OpKind
from .prepare import Prepared
from .primal import structured
from .resolve import bindings
from .rules import ELEMENTWISE, TANGENTS, Temporary
from .shapes import SCALAR


class Forward(StatementRules[list[gast.stmt]]):
    """Builds ``<f>_jvp(*args, *tangents) -> (value, tangent)`` for one prepared function.
    ``subroutine``: called by generated code (which passes every argument, the tangents by
    position), not by the user (who passes the tangents by keyword)."""

    def __init__(self, program: Any, unit: Any, prepared: Prepared, wrt: list[str],
                 func_name: str, subroutine: bool = False) -> None:
        self.program = program
        self.unit = unit
        self.fn = prepared.fn
        self.names = prepared.names
        self.emitter = prepared.emitter
        self.act = prepared.activity
        self.varied = self.act.varied
        self.classes = prepared.classes
        self.lists = ir.list_names(self.fn)
        self.wrt = wrt
        self.func_name = func_name
        self.subroutine = subroutine
        self.gl = program.gl
        self.tangents: dict[str, str] = {}

    def dot(self, v: str) -> str:
        if v not in self.tangents:
            self.tangents[v] = self.names.fresh(f"{v}_dot")
        return self.tangents[v]

    def build(self) -> gast.FunctionDef:
        fn = self.fn
        tangent_params = [self.dot(p) for p in self.wrt]
        # A parameter we do not differentiate with respect to can still come to depend on one
        # that we do, when a loop overwrites it (``dx = dx * a`` in generated gradient code):
        # its tangent is zero on entry and must exist before the loop's first read of it.
        body = [self._zeros(p) for p in fn.params if p in self.varied and p not in self.wrt]
        body += structured(self.emitter, fn.body, self._lines)
        body.append(gast.Return(value=gast.Tuple(elts=[name(fn.result), self._result_tangent()],
                                                 ctx=gast.Load())))
        if self.subroutine:   # called by generated code, which passes every argument
            return function_def(self.func_name, self.unit.parsed.node.args, tangent_params,
                                [REQUIRED] * len(tangent_params), body, keep_defaults=False)
        # The function people call: the user's parameters with their defaults as written, then
        # the tangents, by keyword (a required parameter cannot follow one with a default).
        fn_def = function_def(self.func_name, self.unit.parsed.node.args, [], [], body)
        fn_def.args.kwonlyargs = [param(t) for t in tangent_params]
        fn_def.args.kw_defaults = [None] * len(tangent_params)
        return fn_def

    def _result_tangent(self) -> gast.expr:
        result = self.fn.result
        if result in self.varied:
            return name(self.dot(result))
        if self.classes.get(result) == SCALAR:
            return const(0.0)
        helper = "zeros_like_list" if result in self.lists else "zeros_like"
        return call(attr(self.gl, helper), [name(result)])

    def _lines(self, s: ir.Stmt) -> list[gast.stmt]:
        """A statement's primal lines, then the lines that carry its tangent (an opaque call's
        one line computes both)."""
        if isinstance(s, Assign) and s.op.kind is OpKind.OPAQUE and s.targets[0] in self.varied \
                and any(a in self.varied for a in ir.op_reads(s.op)):
            return self.rules_for(s)
        return self.emitter.forward(s) + self.rules_for(s)

    # --- the tangent lines of each statement (the dispatch shared with reverse mode) ---------
    def nothing(self, s: ir.Stmt) -> list[gast.stmt]:
        """No tangent, except the zeros of the values it assigns that have one elsewhere."""
        if isinstance(s, Assign):
            return [self._zeros(t) for t in s.targets if t in self.varied]
        return []

    def assignment(self, s: Assign) -> list[gast.stmt]:
        targets = [t for t in s.targets if t in self.varied]
        if not targets:
            return []
        op = s.op
        if op.kind is OpKind.COPY and isinstance(op.args[0], ir.Const):
            return [assign(self.dot(t), const(0.0)) for t in targets]   # a number's tangent
        if op.kind is OpKind.LIST and not op.args:   # xs = []: its tangents are appended alongside
            return [assign(self.dot(t), gast.List(elts=[], ctx=gast.Load())) for t in targets]
        if not any(a in self.varied for a in ir.op_reads(op)) and op.kind is not OpKind.POP:
            return [self._zeros(t) for t in targets]
        return self.operation(s)

    def copy(self, s: Assign) -> list[gast.stmt]:
        return [assign(self.dot(s.targets[0]), self._tangent_atom(s.op.args[0]))]

    def sequence(self, s: Assign) -> list[gast.stmt]:
        values = [self._tangent_atom(a) for a in s.op.args]
        if len(s.targets) > 1:
            return [assign([self.dot(t) for t in s.targets],
                           gast.Tuple(elts=values, ctx=gast.Load()))]
        literal = gast.List(elts=values, ctx=gast.Load()) if s.op.kind is OpKind.LIST else \
            gast.Tuple(elts=values, ctx=gast.Load())
        return [assign(self.dot(s.targets[0]), literal)]

    def pop(self, s: Assign) -> list[gast.stmt]:
        return [assign(self.dot(s.targets[0]), call(attr(self.dot(str(s.op.args[0])), "pop"),
                                                    []))]

    def user_call(self, s: Assign) -> list[gast.stmt]:
        op = s.op
        active = tuple(i for i, a in enumerate(op.args) if isinstance(a, str)
                       and a in self.varied)
        jvp = self.program.jvp(op.callee, active, array_arguments(op, self.act.arrays))
        args = [self.emitter.atom(a) for a in op.args] + [name(self.dot(str(op.args[i])))
                                                          for i in active]
        # the forward line already computed the value; the jvp recomputes it alongside
        return [assign(["_", self.dot(s.targets[0])], call(name(jvp), args))]

    def opaque_call(self, s: Assign) -> list[gast.stmt]:
        """``y, y_dot = gl.jvp_of(model, (x, t), (x_dot, None))``: the value and its tangent by
        the framework's forward mode (None: an argument with no tangent)."""
        op = s.op
        if ir.atom_names(op.node) & self.varied:
            raise ir.refusal(f"forward mode with respect to the parameters of {op.source} (a "
                             f"call gradlab cannot read) is not supported: use reverse mode "
                             f"(gradlab.grad)", s.origin, str(op.source))
        primals = gast.Tuple(elts=[self.emitter.atom(a) for a in op.args], ctx=gast.Load())
        tangents = gast.Tuple(elts=[name(self.dot(a)) if isinstance(a, str) and a in self.varied
                                    else const(None) for a in op.args], ctx=gast.Load())
        keywords = {"keywords": gast.Dict(keys=[const(k) for k in op.kwargs], values=[
            self.emitter.atom(v) for v in op.kwargs.values()])} if op.kwargs else {}
        value = call(attr(self.gl, "jvp_of"), [self.emitter.inline(op.node), primals, tangents],
                     keywords)
        return [assign([s.targets[0], self.dot(s.targets[0])], value)]

    def list_item(self, s: Assign) -> list[gast.stmt]:
        xs, index = s.op.args
        return [assign(self.dot(s.targets[0]), gast.Subscript(
            value=name(self.dot(str(xs))), slice=self.emitter.atom(index), ctx=gast.Load()))]

    def primitive(self, s: Assign) -> list[gast.stmt]:
        op = s.op
        rule = rule_for(TANGENTS, op, "gradlab has no forward-mode rule for {}; add one with "
                                      "@gradlab.tangent_rule")
        if rule is None:
            return self.nothing(s)
        instance = apply_rule(rule, s, self.emitter, self.dot, self.names.fresh,
                              lambda v: v in self.varied, counters=self.act.counters,
                              arrays=self.act.arrays)
        lines: list[gast.stmt] = []
        for step in instance.steps:
            if isinstance(step, Temporary):
                lines.append(step.stmt)
                continue
            value = _ZeroSpreads().visit(step.expr)
            if _is_zero(value):
                lines.append(self._zeros(step.target))
                continue
            if op.prim in ELEMENTWISE and self._may_broadcast(op, s):
                value = call(attr(self.gl, "broadcast_like"), [value, name(s.targets[0])])
            lines.append(assign(self.dot(step.target), self._subscripts(value)))
        return lines

    def append(self, s: ir.Effect) -> list[gast.stmt]:
        if s.target not in self.varied:
            return []
        return [expr_stmt(call(attr(self.dot(s.target), "append"), [self._tangent_atom(s.value)]))]

    def list_set(self, s: ir.Effect) -> list[gast.stmt]:
        if s.target not in self.varied:
            return []
        target = gast.Subscript(value=name(self.dot(s.target)), slice=self.emitter.atom(s.node),
                                ctx=gast.Store())
        return [gast.Assign(targets=[target], value=self._tangent_atom(s.value),
                            type_comment=None)]

    def kept_effect(self, s: ir.Effect) -> list[gast.stmt]:
        popped = ir.popped_list(s)
        if popped is not None and popped in self.varied:   # xs.pop(): its tangents too
            return [expr_stmt(call(attr(self.dot(popped), "pop"), []))]
        return []

    def _subscripts(self, value: gast.expr) -> gast.expr:
        """``gl.getitem(x_dot, i)`` reads better as ``x_dot[i]`` where the index is no array."""
        if (isinstance(value, gast.Call) and isinstance(value.func, gast.Attribute)
                and value.func.attr == "getitem" and len(value.args) == 2):
            index = value.args[1]
            if not indexes_by_array(index, self.act.counters, self.act.arrays):
                written = subscript_index(index)
                if not not_plain_index(written) and not expanding_index(written):
                    return gast.Subscript(value=value.args[0], slice=written, ctx=gast.Load())
        return value

    def _may_broadcast(self, op: ir.Op, s: Assign) -> bool:
        """A tangent computed from the varying operands only has their shape; when a constant
        operand broadcasts them, spread the tangent to the result's shape."""
        out = self.classes.get(s.targets[0])
        for pname, atom in bindings(op).items():
            if isinstance(atom, str) and atom in self.varied:
                if out is None or self.classes.get(atom) != out:
                    return True
        return False

    def _tangent_atom(self, a: Any) -> gast.expr:
        if isinstance(a, str) and a in self.varied:
            return name(self.dot(a))
        if isinstance(a, str) and self.classes.get(a) == SCALAR:
            return const(0.0)
        if isinstance(a, str):
            helper = "zeros_like_list" if a in self.lists else "zeros_like"
            return call(attr(self.gl, helper), [name(a)])
        return const(0.0)

    def _zeros(self, v: str) -> gast.stmt:
        if self.classes.get(v) == SCALAR:
            return assign(self.dot(v), const(0.0))
        helper = "zeros_like_list" if v in self.lists else "zeros_like"
        return assign(self.dot(v), call(attr(self.gl, helper), [name(v)]))



def tangent_reads_old(s: Assign) -> bool:
    """``y = f(..y..)``: the forward line is written before the tangent line, so a tangent
    that reads the old ``y`` (``y = y * y``; a call ``y = helper(y)``) needs its own name
    (:mod:`.prepare` gives the new value one)."""
    target = s.targets[0]
    if target not in ir.op_reads(s.op):
        return False
    if s.op.kind in (OpKind.USER, OpKind.OPAQUE):
        return True
    if s.op.kind is not OpKind.PRIM:
        return False
    rule = TANGENTS.get(s.op.prim)
    if rule is None:
        return False
    bound = bindings(s.op)
    return any(bound.get(p) == target and p in rule.reads for p in rule.params[1:])


def _is_zero(e: gast.expr) -> bool:
    return isinstance(e, gast.Constant) and e.value == 0


class _ZeroSpreads(gast.NodeTransformer):
    """``gl.broadcast_like(0.0, x)`` -> ``gl.zeros_like(x)``: a zero tangent spread to ``x``'s
    shape is a zero of ``x``'s structure. (``broadcast_like`` of a number to a Python list or a
    number gives the number back, and ``0.0[1]`` or ``gl.index_update(0.0, ...)`` fail.)"""

    def visit_Call(self, node: gast.Call) -> gast.expr:
        self.generic_visit(node)
        if (isinstance(node.func, gast.Attribute) and node.func.attr == "broadcast_like"
                and len(node.args) == 2 and _is_zero(node.args[0])):
            return gast.Call(func=gast.Attribute(value=node.func.value, attr="zeros_like",
                                                 ctx=gast.Load()),
                             args=[node.args[1]], keywords=[])
        return node
