"""The tangent program (forward mode): each statement followed by the statement that carries
its tangent, ``h = tanh(xW)`` then ``h_dot = (1.0 - h * h) * xW_dot``.

Forward mode needs no stacks: values and tangents advance together, so loops, branches and
calls keep their shape. Only values that depend on the differentiated inputs get a tangent;
a tangent that is zero is never computed, and where a value that has a tangent is (re)assigned
from constants its tangent is set to zeros.
"""
from __future__ import annotations

import copy
from typing import Any

import gast

from ..errors import NoRuleError
from . import ir, trees
from .analyze import SCALAR, array_arguments, check, number_params, shape_classes
from .build import REQUIRED, assign, attr, call, const, expr_stmt, function_def, index_value, \
    name, subscript_index
from .ir import Assign, EffectKind, OpKind
from .naming import Names
from .primal import structured
from .resolve import bindings
from .rules import ELEMENTWISE, NONDIFFERENTIABLE, TANGENTS, RuleGap, Temporary, instantiate


class Forward:
    """Builds ``<f>_jvp(*args, *tangents) -> (value, tangent)`` for one normalized function."""

    def __init__(self, program: Any, unit: Any, wrt: list[str], func_name: str,
                 subroutine: bool = False, scalar_params: set[str] | None = None,
                 arrays: set[str] | None = None) -> None:
        self.arrays = arrays          # the parameters holding arrays (None: all of them)
        self.scalar_params = (scalar_params or set()) | number_params(unit.ir.params, arrays)
        self.program = program
        self.unit = unit
        self.fn: ir.Function = copy.deepcopy(unit.ir)
        self.names: Names = copy.deepcopy(unit.names)
        self.wrt = wrt
        self.func_name = func_name
        self.subroutine = subroutine
        self.emitter = program.emitter_for(unit, self.names, arrays)
        self.gl = program.gl
        self.tangents: dict[str, str] = {}

    def dot(self, v: str) -> str:
        if v not in self.tangents:
            self.tangents[v] = self.names.fresh(f"{v}_dot")
        return self.tangents[v]

    def build(self) -> gast.FunctionDef:
        fn = self.fn
        check(fn, self.program.activity(fn, self.wrt, self.arrays), mode="forward",
              helper=self.unit is not self.program.main, generated=is_generated(self.unit.fn))
        from .normalize import split_self_updates
        split_self_updates(fn.body, self.names, _tangent_reads_old)
        self.act = self.program.activity(fn, self.wrt, self.arrays)
        self.varied = self.act.varied
        self.classes = shape_classes(fn, self.scalar_params)
        self.lists = ir.list_names(fn)
        tangent_params = [self.dot(p) for p in self.wrt]
        # A parameter we do not differentiate with respect to can still come to depend on one
        # that we do, when a loop overwrites it (``dx = dx * a`` in generated gradient code):
        # its tangent is zero on entry and must exist before the loop's first read of it.
        body = [self._zeros(p) for p in fn.params if p in self.varied and p not in self.wrt]
        body += structured(self.emitter, fn.body, self._lines)
        result = fn.result
        value_dot: gast.expr
        if result in self.varied:
            value_dot = name(self.dot(result))
        elif self.classes.get(result) == SCALAR:
            value_dot = const(0.0)
        elif result in self.lists:
            value_dot = call(attr(self.gl, "zeros_like_list"), [name(result)])
        else:
            value_dot = call(attr(self.gl, "zeros_like"), [name(result)])
        body.append(gast.Return(value=gast.Tuple(elts=[name(result), value_dot], ctx=gast.Load())))
        if self.subroutine:   # called by generated code, which passes every argument
            return function_def(self.func_name, self.unit.parsed.node.args, tangent_params,
                                [REQUIRED] * len(tangent_params), body, keep_defaults=False)
        # The function people call: the user's parameters with their defaults as written, then
        # the tangents, by keyword (a required parameter cannot follow one with a default).
        fn_def = function_def(self.func_name, self.unit.parsed.node.args, [], [], body)
        fn_def.args.kwonlyargs = [gast.Name(t, gast.Param(), None, None) for t in tangent_params]
        fn_def.args.kw_defaults = [None] * len(tangent_params)
        return fn_def

    # --- statements ---------------------------------------------------------------------------
    def _lines(self, s: ir.Stmt) -> list[gast.stmt]:
        """A statement's primal lines, then the lines that carry its tangent."""
        return self.emitter.forward(s) + self._tangent(s)

    def _tangent(self, s: ir.Stmt) -> list[gast.stmt]:
        if isinstance(s, ir.Effect):
            if s.kind is EffectKind.APPEND and s.target in self.varied:
                value = self._tangent_atom(s.value)
                return [expr_stmt(call(attr(self.dot(s.target), "append"), [value]))]
            popped = ir.popped_list(s)
            if popped is not None and popped in self.varied:   # xs.pop(): its tangents too
                return [expr_stmt(call(attr(self.dot(popped), "pop"), []))]
            if s.kind is EffectKind.LIST_SET and s.target in self.varied:
                index = self.emitter.atom(s.node)
                target = gast.Subscript(value=name(self.dot(s.target)), slice=index,
                                        ctx=gast.Store())
                return [gast.Assign(targets=[target], value=self._tangent_atom(s.value),
                                    type_comment=None)]
            return []
        if not isinstance(s, Assign):
            return []
        targets = [t for t in s.targets if t in self.varied]
        if not targets:
            return []
        op = s.op
        if op.kind is OpKind.COPY and isinstance(op.args[0], ir.Const):
            return [assign(self.dot(t), const(0.0)) for t in targets]   # a number's tangent
        if op.kind is OpKind.LIST and not op.args:      # xs = []: its tangents are appended alongside
            return [assign(self.dot(t), gast.List(elts=[], ctx=gast.Load())) for t in targets]
        if not any(a in self.varied for a in ir.op_reads(op)) and op.kind is not OpKind.POP:
            return [self._zeros(t) for t in targets]
        if op.kind is OpKind.COPY:
            return [assign(self.dot(s.targets[0]), self._tangent_atom(op.args[0]))]
        if op.kind in (OpKind.TUPLE, OpKind.LIST):
            values = [self._tangent_atom(a) for a in op.args]
            if len(s.targets) > 1:
                return [assign([self.dot(t) for t in s.targets],
                               gast.Tuple(elts=values, ctx=gast.Load()))]
            literal = gast.List(elts=values, ctx=gast.Load()) if op.kind is OpKind.LIST else \
                gast.Tuple(elts=values, ctx=gast.Load())
            return [assign(self.dot(s.targets[0]), literal)]
        if op.kind is OpKind.POP:
            return [assign(self.dot(s.targets[0]), call(attr(self.dot(str(op.args[0])), "pop"),
                                                        []))]
        if op.kind is OpKind.USER:
            active = tuple(i for i, a in enumerate(op.args) if isinstance(a, str)
                           and a in self.varied)
            jvp = self.program.jvp(op.callee, active, array_arguments(op, self.act.arrays))
            args = [self.emitter.atom(a) for a in op.args] + [name(self.dot(str(op.args[i])))
                                                              for i in active]
            # the forward line already computed the value; the jvp recomputes it alongside
            return [assign(["_", self.dot(s.targets[0])], call(name(jvp), args))]
        if op.kind is not OpKind.PRIM:
            return [self._zeros(t) for t in targets]
        if op.prim == "list_getitem":
            xs, index = op.args
            return [assign(self.dot(s.targets[0]), gast.Subscript(
                value=name(self.dot(str(xs))), slice=self.emitter.atom(index), ctx=gast.Load()))]
        rule = TANGENTS.get(op.prim)
        if rule is None:
            if op.prim in NONDIFFERENTIABLE:
                return [self._zeros(t) for t in targets]
            raise NoRuleError(f"gradlab has no forward-mode rule for {op.source or op.prim}; "
                              f"add one with @gradlab.tangent_rule")
        binding = {rule.params[0]: name(s.targets[0])}
        for pname, atom in bindings(op).items():
            binding[pname] = self.emitter.atom(atom)
            if pname == "index":
                binding[pname] = index_value(binding[pname])
        try:
            instance = instantiate(rule, binding, self.dot, self.names.fresh,
                                   lambda x: isinstance(x, gast.Name) and x.id in self.varied
                                   and x.id not in s.frozen, label=str(op.source or op.prim))
        except RuleGap as e:
            raise ir.refusal(str(e), s.origin, str(op.source or op.prim)) from None
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

    def _subscripts(self, value: gast.expr) -> gast.expr:
        """``gl.getitem(x_dot, i)`` reads better as ``x_dot[i]`` where the index is no array."""
        if (isinstance(value, gast.Call) and isinstance(value.func, gast.Attribute)
                and value.func.attr == "getitem" and len(value.args) == 2):
            index = value.args[1]
            names = {n.id for n in trees.walk(index) if isinstance(n, gast.Name)}
            if not names & self.act.arrays:
                return gast.Subscript(value=value.args[0], slice=subscript_index(index),
                                      ctx=gast.Load())
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


def _tangent_reads_old(s: Assign) -> bool:
    """``y = f(..y..)``: the forward line is written before the tangent line, so a tangent
    that reads the old ``y`` (``y = y * y``; a call ``y = helper(y)``) needs its own name."""
    target = s.targets[0]
    if target not in ir.op_reads(s.op):
        return False
    if s.op.kind is OpKind.USER:
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


def is_generated(fn: Any) -> bool:
    """Whether ``fn`` is gradlab's own generated code (compiled under a ``<gradlab:...>`` name),
    which ``hvp`` differentiates."""
    code = getattr(fn, "__code__", None)
    return code is not None and code.co_filename.startswith("<gradlab:")
