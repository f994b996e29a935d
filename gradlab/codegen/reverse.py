"""The adjoint program: the forward pass, then the backward pass that runs it in reverse.

Reading the backward pass relies on one invariant, *restore semantics*: when the backward code
of a statement runs, every variable it reads holds the value it had right after that statement
ran forward. Outside loops renaming gives that for free. Inside a loop a value the backward pass
needs is saved on a stack named after it: a value made and used within one iteration is pushed
after it is made and popped when its iteration is reversed; a value carried from one iteration
to the next is pushed before it is overwritten and popped after that overwrite is reversed.

Gradients are accumulated with the generator tracking, statically, which adjoints already hold
something: the first contribution assigns (``dh = ...``), later ones add (``dh = dh + ...``),
a contribution to an adjoint known to be zero is skipped, and where control flow merges a
zero is written only where one path needs it (``dW = gl.zeros_like(W)`` before a loop).

:meth:`Reverse.build` works in two stages on a function prepared for it (:mod:`.prepare`):
*plan* (what each statement's backward code is, which values are saved and how) and *emit*
(the forward pass with its pushes, then the backward pass).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Union

import gast

from . import checkpoint as checkpointing
from . import ir, trees
from .analyze import array_arguments
from .build import REQUIRED, assign, attr, call, comment, const, expr_stmt, for_, function_def, \
    if_, name, note, while_
from .dispatch import StatementRules, apply_rule, rule_for
from .ir import Assign, Atom, Const, EffectKind, OpKind
from .prepare import Prepared
from .rules import ADJOINTS, Contribution, Temporary
from .shapes import BINARY, SCALAR, SAME_SHAPE_UNARY
from .textbook import Textbook, settle_choices, textbook_steps

BACKWARD_MARK = "── backward ──"


@dataclass
class ListElement:
    """``dxs[index] += expr``: a gradient for one element of a Python list."""

    target: str
    index: gast.expr
    expr: gast.expr


@dataclass
class MultiContribution:
    """``dx, dW = helper_vjp(...)``: gradients for several arguments from one call."""

    targets: list[str]
    value: gast.expr


@dataclass
class Parallel:
    """``a, b = b, a``: each source gets the gradients of the targets it was copied to."""

    pairs: list[tuple[str, Atom]]


@dataclass
class Appended:
    """``xs.append(v)``: ``v``'s gradient is the last one of ``dxs``, popped from it."""


#: What the backward code of one statement is made of, in order.
PlanItem = Union[Contribution, Temporary, ListElement, MultiContribution, Parallel, Appended]


class Push(Enum):
    """How a value a loop overwrites is saved for the backward pass."""

    RECORD = "record"     # pushed after it is made, popped when its iteration is reversed
    RESTORE = "restore"   # pushed before it is overwritten, popped once that is reversed


@dataclass
class Plan:
    """Decisions about one statement made before any code is emitted."""

    items: list[PlanItem] = field(default_factory=list)   # what the backward code of it is
    push: Push | None = None
    pushed: list[str] = field(default_factory=list)
    pop_first: bool = False          # restore before the rule (it reads the old value)


def size_aliases(fn: ir.Function, classes: dict[str, Any], user_names: set[str]
                 ) -> dict[str, str]:
    """For each temporary made once by an elementwise operation from a value of the same shape
    class, the user's value it has the size of (``h_pow2 = h ** 2``: ``h``). That value is a
    parameter or assigned once, so it exists, with that shape, wherever the temporary does."""
    writes: dict[str, int] = {}
    for st in ir.walk(fn.body):
        for t in ir.stmt_writes(st):
            writes[t] = writes.get(t, 0) + 1
    made_from: dict[str, str] = {}
    for st in ir.walk(fn.body):
        if not (isinstance(st, Assign) and len(st.targets) == 1 and st.op.kind is OpKind.PRIM
                and st.op.prim in ELEMENTWISE_SIZE):
            continue
        t = st.targets[0]
        if writes.get(t) != 1 or t in user_names or classes.get(t) in (None, SCALAR):
            continue
        for a in st.op.args:
            if isinstance(a, str) and classes.get(a) == classes[t] and (
                    a in fn.params and a not in writes or writes.get(a) == 1):
                made_from[t] = a
                break
    aliases = {}
    for t in made_from:
        seen, u = {t}, made_from[t]
        while u not in user_names and u in made_from and made_from[u] not in seen:
            seen.add(u)
            u = made_from[u]
        if u in user_names:
            aliases[t] = u
    return aliases


def keeps_old_and_new(s: Assign) -> bool:
    """Whether the adjoint of ``y = f(..y..)`` needs both the old ``y`` and the new one (then
    :mod:`.prepare` gives the new value a name of its own)."""
    target = s.targets[0]
    if s.op.kind is not OpKind.PRIM or target not in ir.op_reads(s.op):
        return False
    rule = ADJOINTS.get(s.op.prim)
    return rule is not None and rule.reads_result()


#: Operations whose result has the size of an operand of its shape class.
ELEMENTWISE_SIZE = BINARY | SAME_SHAPE_UNARY


class Reverse(StatementRules[list[PlanItem]]):
    """Builds the adjoint function of one prepared function.

    ``seed_default``: the default of the seed parameter (1.0 for the gradient the user calls,
    :data:`REQUIRED` for a vjp helper, which generated callers pass every argument).
    ``checkpoint``: None, or the loops at the top level are checkpointed (:mod:`.checkpoint`)
    with that many snapshots (True: the schedule's default)."""

    def __init__(self, program: Any, unit: Any, prepared: Prepared, wrt: list[str],
                 seed_default: Any, func_name: str, checkpoint: Any = None) -> None:
        self.program = program
        self.unit = unit
        self.fn = prepared.fn
        self.names = prepared.names
        self.emitter = prepared.emitter
        self.act = prepared.activity
        self.classes = prepared.classes
        self.wrt = wrt
        self.seed_default = seed_default
        self.func_name = func_name
        self.gl = program.gl
        self.adjoints: dict[str, str] = {}
        self.plans: dict[int, Plan] = {}
        self.stacks: dict[str, str] = {}
        self.lists = ir.list_names(self.fn)
        self.grad_of: dict[Any, list[ir.GradOf]] = {}
        self.inits: set[str] = set()
        self.renewed: set[str] = set()   # targets whose old value's gradient restarted
        #: callables whose parameters get a gradient (see opaque_call): one per parameter
        self.models: set[str] = set()
        self.needed: set[str] = set()
        self.order: dict[int, int] = {}
        self.first_def: dict[str, int] = {}
        #: the variable that holds the function's value when the gradient returns (the wrapper
        #: checks it is a scalar; value_and_grad and hvp return or inspect it)
        self.value_name = self.fn.result
        #: the shapes a variant specialised for its call's signature knows (None: generic)
        self.textbook: Textbook | None = None
        self._size_alias: dict[str, str] | None = None
        self.checkpoint = checkpoint
        self.checkpointed: dict[int, checkpointing.CheckpointedLoop] = {}
        self.taping = True     # False while a checkpointed loop's untaped copy is written

    # --- names ------------------------------------------------------------------------------
    def adj(self, v: str) -> str:
        if v not in self.adjoints:
            self.adjoints[v] = self.names.fresh(f"d{v}" if not v.startswith("_") else f"d{v[1:]}")
        return self.adjoints[v]

    def stack(self, v: str) -> str:
        if v not in self.stacks:
            self.stacks[v] = self.names.fresh(f"{v}_stack")
        return self.stacks[v]

    @property
    def seed(self) -> str:
        """The seed parameter: the gradient of the function's result."""
        return self.adj(self.fn.result)

    # --- the whole function -------------------------------------------------------------------
    def build(self) -> gast.FunctionDef:
        self._name_gradients()
        self._plan()
        forward = self._forward_pass()
        backward, returned = self._backward_pass()
        if _changes(backward, self.fn.result):
            # the backward pass restores the loop's earlier values into the result's variable
            self.value_name = self.names.fresh(self.fn.name)
            forward += [note(f"the value, kept: the backward pass restores {self.fn.result}"),
                        assign(self.value_name, name(self.fn.result))]
        body = forward + [comment(BACKWARD_MARK)] + backward + [gast.Return(value=returned)]
        keep = self.seed_default is not REQUIRED
        # the user's gradient takes its seed by keyword only: an extra positional argument is
        # a mistake in the call, never the output's gradient (vjp helpers take it by position)
        fn_def = function_def(self.func_name, self.unit.parsed.node.args, [self.seed],
                              [self.seed_default], body, keep_defaults=keep, keyword_only=keep)
        if self.textbook is not None:
            settle_choices(fn_def, self.textbook.array_params())
        return fn_def

    def _name_gradients(self) -> None:
        """The seed, then the gradients the user named (``insert_grad_of(h) as dh``)."""
        self.classes[self.seed] = self.classes.get(self.fn.result)   # the seed's shape
        for g in ir.walk(self.fn.body):
            if isinstance(g, ir.GradOf) and g.name not in self.adjoints and (
                    g.alias not in self.adjoints.values()):
                self.adjoints[g.name] = g.alias

    # --- planning -----------------------------------------------------------------------------
    def _plan(self) -> None:
        body = self.fn.body
        self.order = {id(st): i for i, st in enumerate(ir.walk(body))}
        for st in ir.walk(body):
            for t in ir.stmt_writes(st):
                self.first_def.setdefault(t, self.order[id(st)])
        self._plan_control(body)
        if self.checkpoint is not None:
            self.checkpointed = checkpointing.plan_checkpoints(
                self.fn, self._active_block, self._defined_before, self.names.fresh)
            self.program.free.update(checkpointing.FREE)
        self._place_grad_of(body)
        for s in ir.walk(body):
            if self._active(s):
                self.plans.setdefault(id(s), Plan()).items = self.rules_for(s)
        self.needed = self._needed(body)
        counters = {t.counter for t in ir.walk(body)
                    if isinstance(t, (ir.For, ir.While)) and t.counter}
        self._plan_pushes(body, None, counters)

    def _active(self, s: ir.Stmt) -> bool:
        """Whether statement ``s`` passes a gradient back (so it gets backward code)."""
        if isinstance(s, Assign):
            return any(self.act.active(t) for t in s.targets)
        return isinstance(s, ir.Effect) and s.kind is EffectKind.APPEND and self.act.active(
            s.target)

    def _active_block(self, stmts: list[ir.Stmt]) -> bool:
        return any(self._active(s) or isinstance(s, ir.GradOf) for s in ir.walk(stmts))

    def _plan_control(self, stmts: list[ir.Stmt]) -> None:
        """Loop counters, loop reversal strategy and branch conditions, for active code."""
        i = 0
        while i < len(stmts):
            s = stmts[i]
            if isinstance(s, ir.If):
                if self._active_block([s]):
                    written = ir.writes_in(s.body) | ir.writes_in(s.orelse)
                    has_call = any(isinstance(n, gast.Call) for n in trees.walk(s.test))
                    if ir.atom_names(s.test) & written or has_call:
                        s.cond = self.names.fresh("cond")
                self._plan_control(s.body)
                self._plan_control(s.orelse)
            elif isinstance(s, (ir.For, ir.While)):
                if self._active_block(s.body):
                    reversible = isinstance(s, ir.For) and not _has_break(s.body) and not (
                        ir.atom_names(s.range_args) | {s.target}) & ir.writes_in(s.body)
                    if not reversible:
                        s.counter = self.names.fresh("steps")
                        stmts.insert(i, Assign(s.origin, [s.counter],
                                               ir.Op(OpKind.COPY, args=[Const(0)])))
                        i += 1
                self._plan_control(s.body)
            i += 1

    def _place_grad_of(self, stmts: list[ir.Stmt]) -> None:
        """``insert_grad_of(x)`` runs where x's gradient is complete: just before the backward
        code of x's definition (or at the very end, for a parameter)."""
        last_def: dict[str, Any] = {}
        for s in ir.walk(stmts):
            if isinstance(s, Assign):
                for t in s.targets:
                    last_def[t] = s
            if isinstance(s, ir.GradOf):
                anchor = last_def.get(s.name)
                self.grad_of.setdefault(id(anchor) if anchor is not None else "end", []).append(s)

    # --- what each statement's backward code is (the dispatch shared with forward mode) ------
    def nothing(self, s: ir.Stmt) -> list[PlanItem]:
        return []

    def copy(self, s: Assign) -> list[PlanItem]:
        src = s.op.args[0]
        if len(s.targets) == 1 and isinstance(src, str) and self.act.active(src):
            return [Contribution(src, name(self.adj(s.targets[0])))]
        return []

    def sequence(self, s: Assign) -> list[PlanItem]:
        op = s.op
        if len(s.targets) > 1:
            return [Parallel(list(zip(s.targets, op.args)))]
        d = self.adj(s.targets[0])
        return [Contribution(str(a), gast.Subscript(value=name(d), slice=const(k),
                                                    ctx=gast.Load()))
                for k, a in enumerate(op.args) if self._is_active_atom(a)]

    def user_call(self, s: Assign) -> list[PlanItem]:
        op = s.op
        active = [i for i, a in enumerate(op.args) if self._is_active_atom(a)]
        if not active:
            return []
        vjp = self.program.vjp(op.callee, tuple(active), array_arguments(op, self.act.arrays))
        target = s.targets[0]
        value = call(name(vjp), [self.emitter.atom(a) for a in op.args] + [name(self.adj(target))])
        return [MultiContribution([str(op.args[i]) for i in active], value)]

    def opaque_call(self, s: Assign) -> list[PlanItem]:
        """``dx = y_vjp(dy)``: the framework's backward, recorded by the forward line; with a
        model that carries a gradient, ``dmodel, dx = y_vjp(dy)`` (its parameters' first)."""
        wrt, model = self._opaque_wrt(s), self._opaque_model(s)
        if not wrt and model is None:
            return []
        targets = ([model] if model else []) + [str(s.op.args[i]) for i in wrt]
        value = call(name(s.targets[1]), [name(self.adj(s.targets[0]))])
        return [MultiContribution(targets, value)]

    def _opaque_wrt(self, s: Assign) -> list[int]:
        """The positions of an opaque call's arguments that carry a gradient."""
        return [i for i, a in enumerate(s.op.args) if self._is_active_atom(a)]

    def _opaque_model(self, s: Assign) -> str | None:
        """The callable of an opaque call, where it carries a gradient itself (``wrt="model"``:
        a gradient for its parameters, which check.py allows only for a plain name)."""
        node = s.op.node
        if isinstance(node, gast.Name) and self.act.active(node.id):
            self.models.add(node.id)
            return node.id
        return None

    def list_item(self, s: Assign) -> list[PlanItem]:
        xs, index = s.op.args
        if not isinstance(xs, str) or not self.act.active(xs):
            return []
        return [ListElement(xs, self.emitter.atom(index), name(self.adj(s.targets[0])))]

    def primitive(self, s: Assign) -> list[PlanItem]:
        rule = rule_for(ADJOINTS, s.op, "gradlab has no derivative rule for {}")
        if rule is None:
            return []
        steps: list[PlanItem] = list(apply_rule(rule, s, self.emitter, self.adj,
                                                self.names.fresh, self.act.active,
                                                self._shape_of, self.act.counters,
                                                self.act.arrays).steps)
        if self.textbook is not None:
            steps = textbook_steps(self.textbook, s, steps, self.emitter.atom, self.adj)
        return self._sizes_of_user_values(steps)

    def _sizes_of_user_values(self, steps: list[PlanItem]) -> list[PlanItem]:
        """``gl.size(h_pow2)`` read as ``gl.size(h)``: the size of the value the user wrote,
        where an elementwise operation on it made the temporary (same shape class)."""
        if self._size_alias is None:
            self._size_alias = size_aliases(self.fn, self.classes, self.unit.user_names)
        if not self._size_alias:
            return steps
        for step in steps:
            for node in trees.walk(getattr(step, "expr", None) or getattr(
                    getattr(step, "stmt", None), "value", None) or gast.Pass()):
                if isinstance(node, gast.Call) and isinstance(node.func, gast.Attribute) and (
                        node.func.attr == "size") and len(node.args) == 1 and isinstance(
                        node.args[0], gast.Name) and node.args[0].id in self._size_alias:
                    node.args[0] = name(self._size_alias[node.args[0].id])
        return steps

    def append(self, s: ir.Effect) -> list[PlanItem]:
        return [Appended()]

    def _shape_of(self, e: gast.expr) -> Any:
        if isinstance(e, gast.Name):
            return self.classes.get(e.id)
        if isinstance(e, gast.Constant) and isinstance(e.value, (int, float)):
            return SCALAR
        if isinstance(e, gast.UnaryOp) and isinstance(e.operand, gast.Constant):
            return SCALAR
        return None

    def _is_active_atom(self, a: Any) -> bool:
        return isinstance(a, str) and self.act.active(a)

    # --- which values the backward pass reads, and how they are saved ----------------------
    def _needed(self, stmts: list[ir.Stmt]) -> set[str]:
        """Primal names the backward code reads."""
        adjoint_names = set(self.adjoints.values())
        out: set[str] = set()

        def add_expr(e: Any) -> None:
            for n in trees.walk(e):
                if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load):
                    out.add(n.id)

        for s in ir.walk(stmts):
            plan = self.plans.get(id(s))
            if plan is not None:
                for item in plan.items:
                    if isinstance(item, Contribution):
                        add_expr(item.expr)
                        if item.target in self.lists:
                            out.add(item.target)
                    elif isinstance(item, Temporary):
                        add_expr(item.stmt.value)
                    elif isinstance(item, ListElement):
                        add_expr(item.index)
                        out.add(item.target)
                    elif isinstance(item, MultiContribution):
                        add_expr(item.value)
            if isinstance(s, ir.If) and self._active_block([s]) and s.cond is None:
                out |= ir.atom_names(s.test)
            if isinstance(s, ir.If) and s.cond:
                out.add(s.cond)
            if isinstance(s, ir.For) and s.counter is None and self._active_block(s.body):
                out |= ir.atom_names(s.range_args)
            if isinstance(s, (ir.For, ir.While)) and s.counter:
                out.add(s.counter)
            if isinstance(s, ir.GradOf):
                for b in s.body:
                    add_expr(b)
        return out - adjoint_names

    def _plan_pushes(self, stmts: list[ir.Stmt], loop: Any, counters: set[str]) -> None:
        """Which values each statement in a loop pushes, and whether it records or restores
        them (``counters``: the loop counters, which are never saved this way)."""
        for s in stmts:
            if loop is not None and isinstance(s, (ir.For, ir.While)) and s.counter and (
                    s.counter in self.needed):
                # an inner loop's count is final only once the loop is done: save it then
                plan = self.plans.setdefault(id(s), Plan())
                plan.pushed, plan.push = [s.counter], Push.RECORD
                self.stack(s.counter)
            if loop is not None:
                written = ir.stmt_writes(s) - counters
                if isinstance(s, ir.For):
                    written = set()   # the loop target belongs to the loop's own body
                if isinstance(s, ir.Effect) and s.kind is EffectKind.APPEND:
                    # the backward code undoes an append by popping the list itself; a copy of
                    # the list's name on a stack would hold the same, growing list, and pushes
                    # without pops would shift the stack under the other values saved on it
                    written = written - {s.target}
                saved = sorted(written & self.needed)
                if saved:
                    plan = self.plans.setdefault(id(s), Plan())
                    plan.pushed = saved
                    plan.push = Push.RECORD if self._iteration_local(s, stmts, loop, saved) \
                        else Push.RESTORE
                    if plan.push is Push.RESTORE and isinstance(s, Assign):
                        plan.pop_first = self._reads_old_value(s, plan)
                    for v in saved:
                        self.stack(v)
                        if plan.push is Push.RESTORE and not self._defined_before(v, loop):
                            self.inits.add(v)
                if isinstance(s, ir.Effect) and s.kind is EffectKind.APPEND and (
                        s.target in self.needed):
                    self.plans.setdefault(id(s), Plan()).pushed = [s.target]
            if isinstance(s, ir.For) and s.counter and s.target in self.needed:
                self.stack(s.target)
            for block in ir.children(s):
                self._plan_pushes(block, s if isinstance(s, (ir.For, ir.While)) else loop,
                                  counters)

    def _iteration_local(self, s: ir.Stmt, block: list[ir.Stmt], loop: Any,
                         names: list[str]) -> bool:
        """Made once per iteration, by ``s``, and read only after ``s`` in its own block: then
        it is pushed after it is made and popped when the backward code of that block starts."""
        position = next(i for i, t in enumerate(block) if t is s)
        later = block[position + 1:]
        for v in names:
            writes = sum(1 for t in ir.walk(loop.body) if v in ir.stmt_writes(t))
            if writes != 1 or v in ir.stmt_reads(s):
                return False
            reads_all = sum(1 for t in ir.walk(loop.body) if v in ir.stmt_reads(t))
            reads_later = sum(1 for t in ir.walk(later) if v in ir.stmt_reads(t))
            if reads_all != reads_later:
                return False
            if isinstance(loop, ir.While) and v in ir.atom_names(loop.test):
                return False
            if self._defined_before(v, loop):
                return False   # the backward of code before the loop reads its older value
        return True

    def _reads_old_value(self, s: Assign, plan: Plan) -> bool:
        """Does the backward code of ``s`` read a pushed name's value from *before* ``s``?"""
        for v in plan.pushed:
            if v in ir.op_reads(s.op):
                return True
        return False

    def _defined_before(self, v: str, loop: Any) -> bool:
        if v in self.fn.params:
            return True
        for s in ir.walk(self.fn.body):
            if s is loop:
                return False
            if v in ir.stmt_writes(s):
                return True
        return False

    # --- emit: the forward pass --------------------------------------------------------------
    def _forward_pass(self) -> list[gast.stmt]:
        """The stacks, the values saved before they exist, then the user's code with pushes."""
        forward: list[gast.stmt] = []
        for stack in self.stacks.values():
            forward.append(assign(stack, gast.List(elts=[], ctx=gast.Load())))
        for v in sorted(self.inits):   # saved before its first value exists
            forward.append(assign(v, const(None)))
        forward.extend(self._forward_block(self.fn.body))
        return forward

    def _forward_block(self, stmts: list[ir.Stmt]) -> list[gast.stmt]:
        out: list[gast.stmt] = []
        for s in stmts:
            self._forward_stmt(s, out)
        return out

    def _push(self, v: str) -> gast.stmt:
        return expr_stmt(call(attr(self.stack(v), "append"), [name(v)]))

    def _count(self, counter: str) -> gast.stmt:
        return assign(counter, gast.BinOp(left=name(counter), op=gast.Add(), right=const(1)))

    def _untaped(self, stmts: list[ir.Stmt]) -> list[gast.stmt]:
        """The forward code of ``stmts`` without pushes (a checkpointed loop's steps)."""
        self.taping = False
        self.emitter.last_origin[0] = None    # each copy of the steps quotes the user's lines
        try:
            return self._forward_block(stmts)
        finally:
            self.taping = True
            self.emitter.last_origin[0] = None

    def _forward_stmt(self, s: ir.Stmt, out: list[gast.stmt]) -> None:
        e = self.emitter
        if id(s) in self.checkpointed and isinstance(s, ir.For):
            out.extend(checkpointing.forward_sweep(
                s, self.checkpointed[id(s)], _forward_range(e, s), _snapshots(self.checkpoint),
                self._untaped(s.body)))
            return
        plan = self.plans.get(id(s)) if self.taping else None
        pushes = [self._push(v) for v in (plan.pushed if plan and plan.push else [])]
        restores = plan is not None and plan.push is Push.RESTORE
        if isinstance(s, ir.If):
            test = e.inline(s.test)
            lines: list[gast.stmt] = []
            if s.cond:
                lines.append(assign(s.cond, test))
                test = name(s.cond)
            e.with_comment(s, out, pushes + lines if restores else lines + pushes)
            body, orelse = self._forward_block(s.body), self._forward_block(s.orelse)
            out.extend(if_(test, body, orelse))
            return
        if isinstance(s, (ir.For, ir.While)):
            body = [self._count(s.counter)] if s.counter else []
            if isinstance(s, ir.For) and s.counter and s.target in self.needed and self.taping:
                body.append(self._push(s.target))
            body += self._forward_block(s.body)
            out.append(for_(s.target, e.loop_range(s), body) if isinstance(s, ir.For)
                       else while_(e.inline(s.test), body))
            out.extend(pushes)
            return
        lines = e.forward(s)
        if isinstance(s, Assign) and s.op.kind is OpKind.OPAQUE and self._active(s) and (
                self._opaque_wrt(s) or self._opaque_model(s)):
            lines = [e.opaque_recorded(s, self._opaque_wrt(s), self._opaque_model(s) is not None)]
        if restores:
            lines = pushes + lines
        elif plan and plan.push is Push.RECORD:
            lines = lines + pushes
        e.with_comment(s, out, lines)

    # --- emit: the backward pass -------------------------------------------------------------
    def _backward_pass(self) -> tuple[list[gast.stmt], gast.expr]:
        """The backward code, and what the gradient returns: each ``wrt`` parameter's gradient
        (a zero of its shape for one nothing flowed back to)."""
        fn = self.fn
        state: set[str] = {fn.result} if self.act.active(fn.result) or fn.result in self.wrt \
            else set()
        self.emitter.last_origin[0] = None
        backward = self._backward_block(fn.body, state)
        if "end" in self.grad_of:
            backward.extend(self._grad_of_code(self.grad_of["end"], state))
        results = []
        for p in self.wrt:
            if p in state:
                results.append(name(self.adj(p)))
            elif p in self.models:
                results.append(call(attr(self.gl, "zeros_like_params"), [name(p)]))
            elif self.classes.get(p) == SCALAR:
                results.append(const(0.0))
            else:
                results.append(call(attr(self.gl, "zeros_like"), [name(p)]))
        returned = results[0] if len(results) == 1 else gast.Tuple(elts=results, ctx=gast.Load())
        return backward, returned

    def _backward_block(self, stmts: list[ir.Stmt], state: set[str]) -> list[gast.stmt]:
        out: list[gast.stmt] = []
        records = [v for t in stmts for v in self._records(t)]
        out += [self._pop(v) for v in reversed(records)]
        for s in reversed(stmts):
            self._backward_stmt(s, state, out)
        return out

    def _pop(self, v: str) -> gast.stmt:
        return assign(v, call(attr(self.stack(v), "pop"), []))

    def _backward_stmt(self, s: ir.Stmt, state: set[str], out: list[gast.stmt]) -> None:
        plan = self.plans.get(id(s))
        if isinstance(s, Assign):
            self.emitter.with_comment(s, out, self._backward_assign(s, plan, state))
        elif isinstance(s, ir.Effect):
            self.emitter.with_comment(s, out, self._backward_effect(s, plan, state))
        elif isinstance(s, ir.If):
            self._backward_if(s, state, out, plan)
        elif isinstance(s, (ir.For, ir.While)):
            self._backward_loop(s, state, out)

    def _backward_assign(self, s: Assign, plan: Plan | None, state: set[str]
                         ) -> list[gast.stmt]:
        """The gradients ``s`` passes back, between the pops that restore what it overwrote."""
        lines: list[gast.stmt] = []
        self.renewed = set()
        if id(s) in self.grad_of:
            lines += self._grad_of_code(self.grad_of[id(s)], state)
        pops = [self._pop(v) for v in plan.pushed] if plan is not None and (
            plan.push is Push.RESTORE) else []
        if pops and plan is not None and plan.pop_first:
            lines += pops
        if plan is not None and plan.items:
            lines += self._shift_notes(s)
            lines += self._adjoint_lines(s, plan.items, state)
        parallel = plan is not None and any(isinstance(i, Parallel) for i in plan.items)
        for t in s.targets:
            if not _self_contributed(plan, t) and not parallel and t not in self.renewed:
                state.discard(t)
        if pops and plan is not None and not plan.pop_first:
            lines += pops
        return lines

    def _backward_effect(self, s: ir.Effect, plan: Plan | None, state: set[str]
                         ) -> list[gast.stmt]:
        """``xs.append(v)`` backward: ``v``'s gradient popped from ``dxs``, and ``xs``'s item
        popped where the backward pass reads ``xs``."""
        lines: list[gast.stmt] = []
        if s.kind is EffectKind.APPEND and plan is not None:
            if plan.items and s.target in state and self._is_active_atom(s.value):
                popped = call(attr(self.adj(s.target), "pop"), [])
                if str(s.value) in self.lists:   # a list's gradient is a list
                    popped = call(attr(self.gl, "as_list"), [popped])
                self._contribute(str(s.value), popped, state, lines)
            elif plan.items and s.target in state:
                lines.append(expr_stmt(call(attr(self.adj(s.target), "pop"), [])))
            if plan.pushed:
                lines.append(expr_stmt(call(attr(s.target, "pop"), [])))
        return lines

    def _shift_notes(self, s: Assign) -> list[gast.stmt]:
        """Say why a shift gets no gradient (invariance.py), where it would have got one."""
        if s.op.prim != "subtract":
            return []
        return [note(f"no gradient for {c}: {why}") for c, why in sorted(s.frozen.items())
                if c in self.act.varied]

    def _grad_of_code(self, blocks: list[ir.GradOf], state: set[str]) -> list[gast.stmt]:
        lines: list[gast.stmt] = []
        for g in blocks:
            d = self.adj(g.name)
            if g.name not in state:
                lines.append(assign(d, call(attr(self.gl, "zeros_like"), [name(g.name)])))
                state.add(g.name)
            lines.append(comment(f"with gradlab.insert_grad_of({g.name}) as {g.alias}:",
                                 g.origin.lineno if g.origin else 0))
            for b in g.body:
                lines.append(self.emitter.inline(_rename(trees.clone(b), {g.alias: d}),
                                                 force=True))
        return lines

    def _backward_if(self, s: ir.If, state: set[str], out: list[gast.stmt], plan: Plan | None
                     ) -> None:
        if not self._active_block([s]):
            return
        test = name(s.cond) if s.cond else self.emitter.inline(s.test)
        entry = set(state)
        body_state, else_state = set(entry), set(entry)
        body = self._backward_block(s.body, body_state)
        orelse = self._backward_block(s.orelse, else_state)
        for v in sorted(body_state - else_state):
            orelse.append(self._zero(v, s))
        for v in sorted(else_state - body_state):
            body.append(self._zero(v, s))
        state.clear()
        state |= body_state | else_state
        out.extend(if_(test, body, orelse))
        if plan is not None and plan.push is Push.RESTORE:
            out.extend(self._pop(v) for v in plan.pushed)

    def _zero(self, v: str, at: ir.Stmt) -> gast.stmt:
        """A zero gradient for ``v``, written where the backward pass reaches statement
        ``at``: shaped like ``v`` when ``v`` is assigned before ``at`` runs forward (so it
        exists), else the number 0.0 (a variable assigned later, or only on some paths)."""
        exists = v in self.fn.params or (
            self.first_def.get(v, 1 << 30) < self.order.get(id(at), -1))
        if not exists or self.classes.get(v) == SCALAR:
            return assign(self.adj(v), const(0.0))
        # (an argument unpacked as a list, x1, y1 = p, may be an array: gl.zeros_like takes
        # either, and gives a list of zeros for a list)
        helper = "zeros_like_list" if v in self.lists and v not in self.fn.params else \
            "zeros_like_params" if v in self.models else "zeros_like"
        return assign(self.adj(v), call(attr(self.gl, helper), [name(v)]))

    def _zero_for_earlier_iteration(self, v: str, loop: ir.For | ir.While) -> gast.stmt:
        """The gradient of ``v`` as the previous iteration left it, for a ``v`` this iteration
        overwrote: zero, shaped like that value when every write of ``v`` in the loop is
        undone on the way back (then ``v`` *is* the previous iteration's value here, and
        indexing ``dv[i]`` needs an array), else the number 0.0, which broadcasts to whatever
        shape an earlier iteration's value had. Before the first iteration the restored value
        is None, whose zero is 0.0."""
        writes = [t for t in ir.walk(loop.body) if v in ir.stmt_writes(t)]
        restored = bool(writes) and all(
            (plan := self.plans.get(id(t))) is not None and plan.push is Push.RESTORE
            and v in plan.pushed for t in writes)
        if restored and self.classes.get(v) != SCALAR and v not in self.lists:
            return assign(self.adj(v), call(attr(self.gl, "zeros_like"), [name(v)]))
        return self._zero(v, loop)

    def _backward_loop(self, s: ir.For | ir.While, state: set[str], out: list[gast.stmt]) -> None:
        """The loop run backward. Gradients that reach the loop's start from inside it (a
        value carried to the next iteration) must hold something on entry: the body is written
        again, with them zeroed before the loop, until that set stops growing. It only grows,
        within the finite set of the loop's names, so this ends."""
        if not self._active_block(s.body):
            return
        entry = set(state)
        inits: list[str] = []
        while True:
            body_state = set(entry)
            saved_origin = self.emitter.last_origin[0]
            body = self._loop_body(s, body_state)
            self.emitter.last_origin[0] = saved_origin
            grown = body_state - entry
            if not grown:
                break
            inits += sorted(grown)
            entry |= grown
        lost = entry - body_state
        body += [self._zero_for_earlier_iteration(v, s) for v in sorted(lost)]
        self.emitter.last_origin[0] = None
        out.extend(self._zero(v, s) for v in inits)
        if isinstance(s, ir.For) and s.counter is None:
            rng = self.emitter.loop_range(s, backward=True)
            target = s.target
        else:
            rng = call(name("range"), [name(str(s.counter))])
            target = "_"
        out.append(comment(_loop_text(s), s.origin.lineno if s.origin else 0))
        if id(s) in self.checkpointed and isinstance(s, ir.For):
            advance, taped = self._untaped(s.body), self._forward_block(s.body)
            self.emitter.last_origin[0] = None
            out.extend(checkpointing.backward_sweep(s, self.checkpointed[id(s)], advance, taped,
                                                    body))
        else:
            out.append(for_(target, rng, _pretty_loop_body(body)))
        state.clear()
        state |= entry

    def _loop_body(self, s: ir.For | ir.While, state: set[str]) -> list[gast.stmt]:
        body: list[gast.stmt] = []
        if isinstance(s, ir.For) and s.counter and s.target in self.needed:
            body.append(self._pop(s.target))
        body += self._backward_block(s.body, state)
        return body

    def _records(self, s: ir.Stmt) -> list[str]:
        plan = self.plans.get(id(s))
        if plan is not None and plan.push is Push.RECORD:
            return list(plan.pushed)
        return []

    # --- accumulation ---------------------------------------------------------------------------
    def _adjoint_lines(self, s: Assign, items: list[PlanItem], state: set[str]
                       ) -> list[gast.stmt]:
        targets = set(s.targets)
        if not targets & state and not any(isinstance(i, Parallel) for i in items):
            return []   # the result's gradient is zero here: nothing flows back
        lines: list[gast.stmt] = []
        deferred: list[Contribution] = []
        for item in items:
            if isinstance(item, Temporary):
                lines.append(item.stmt)
            elif isinstance(item, Contribution):
                if item.target in targets:
                    deferred.append(item)
                else:
                    self._contribute(item.target, item.expr, state, lines)
            elif isinstance(item, ListElement):
                if item.target not in state:
                    lines.append(self._zero(item.target, s))
                    state.add(item.target)
                d = self.adj(item.target)
                element = gast.Subscript(value=name(d), slice=item.index, ctx=gast.Load())
                store = gast.Subscript(value=name(d), slice=trees.clone(item.index),
                                       ctx=gast.Store())
                lines.append(gast.Assign(targets=[store], value=gast.BinOp(
                    left=element, op=gast.Add(), right=item.expr), type_comment=None))
            elif isinstance(item, MultiContribution):
                self._multi(item, state, lines, targets)
            elif isinstance(item, Parallel):
                self._parallel(item.pairs, state, lines)
        if deferred:
            total = deferred[0].expr
            for extra in deferred[1:]:
                total = gast.BinOp(left=total, op=gast.Add(), right=extra.expr)
            d = self.adj(deferred[0].target)
            if not (isinstance(total, gast.Name) and total.id == d):
                lines.append(assign(d, total))
            state.add(deferred[0].target)
        return lines

    def _contribute(self, target: str, expr: gast.expr, state: set[str],
                    lines: list[gast.stmt]) -> None:
        d = self.adj(target)
        if isinstance(expr, gast.Name) and expr.id == d:
            state.add(target)   # the gradient passes through unchanged
            return
        if target not in state:
            lines.append(assign(d, expr))
            state.add(target)
            return
        if target in self.lists:
            lines.append(assign(d, call(attr(self.gl, "add_lists"), [name(d), expr])))
            return
        if target in self.models:      # a model's gradients: one per parameter
            lines.append(assign(d, call(attr(self.gl, "add_params"), [name(d), expr])))
            return
        scatter = _scatter_into_zeros(expr)
        if scatter is not None:
            index, value = scatter
            lines.append(assign(d, call(attr(self.gl, "index_add"), [name(d), index, value])))
            return
        lines.append(assign(d, gast.BinOp(left=name(d), op=gast.Add(), right=expr)))

    def _multi(self, item: MultiContribution, state: set[str], lines: list[gast.stmt],
               overwritten: set[str]) -> None:
        """``dx, dW = helper_vjp(...)``. When an argument is also what the call assigns
        (``z = scale(z)`` in a loop), the call reads the new value's gradient first; the old
        value's gradient then starts from what the call returns."""
        targets = item.targets
        fresh = len(set(targets)) == len(targets) and not set(targets) & state
        if fresh:
            lines.append(assign([self.adj(t) for t in targets], item.value))
            state.update(targets)
            return
        parts = [self.names.fresh(f"{self.adj(t)}_part") for t in targets]
        lines.append(assign(parts, item.value))
        for t in set(targets) & overwritten:
            state.discard(t)
            self.renewed.add(t)
        for t, p in zip(targets, parts):
            self._contribute(t, name(p), state, lines)

    def _parallel(self, pairs: list[tuple[str, Any]], state: set[str],
                  lines: list[gast.stmt]) -> None:
        """``a, b = b, a``: each source gets the gradients of the targets it was copied to."""
        targets = [t for t, _ in pairs]
        sums: dict[str, list[gast.expr]] = {}
        for t, src in pairs:
            if t in state and self._is_active_atom(src):
                sums.setdefault(src, []).append(name(self.adj(t)))
        new_state = state - set(targets)
        names_out, values = [], []
        for src, terms in sums.items():
            total = terms[0]
            for extra in terms[1:]:
                total = gast.BinOp(left=total, op=gast.Add(), right=extra)
            if src in new_state:
                total = gast.BinOp(left=name(self.adj(src)), op=gast.Add(), right=total)
            names_out.append(self.adj(src))
            values.append(total)
            new_state.add(src)
        if names_out:
            lines.append(assign(names_out, gast.Tuple(elts=values, ctx=gast.Load())
                                if len(values) > 1 else values[0]))
        state.clear()
        state |= new_state


# --- small helpers ----------------------------------------------------------------------------------
def _forward_range(e: Any, s: ir.For) -> gast.expr:
    """The range a checkpointed loop runs over, as a ``range`` (its schedule slices it):
    ``range(n)[::-1]`` for a loop over ``reversed(range(n))``."""
    if not s.reverse:
        return e.loop_range(s)
    return gast.Subscript(value=e.loop_range(s, backward=True),
                          slice=gast.Slice(lower=None, upper=None, step=const(-1)),
                          ctx=gast.Load())


def _snapshots(checkpoint: Any) -> int | None:
    """The number of snapshots ``checkpoint=`` names (None: the schedule's default)."""
    return None if checkpoint is True else int(checkpoint)


def _self_contributed(plan: Plan | None, target: str) -> bool:
    """Whether ``s`` contributes to the gradient of its own target (``y = y + x`` in a loop):
    then that gradient stays alive through it."""
    if plan is None:
        return False
    return any(isinstance(i, Contribution) and i.target == target for i in plan.items)


def _scatter_into_zeros(expr: gast.expr) -> tuple[gast.expr, gast.expr] | None:
    """Match ``gl.index_add(gl.zeros_like(X), I, V)``: adding into the accumulator instead."""
    if (isinstance(expr, gast.Call) and isinstance(expr.func, gast.Attribute)
            and expr.func.attr == "index_add" and len(expr.args) == 3):
        inner = expr.args[0]
        if (isinstance(inner, gast.Call) and isinstance(inner.func, gast.Attribute)
                and inner.func.attr == "zeros_like"):
            return expr.args[1], expr.args[2]
    return None


def _has_break(stmts: list[ir.Stmt]) -> bool:
    for s in stmts:
        if isinstance(s, ir.Break):
            return True
        if isinstance(s, ir.If) and (_has_break(s.body) or _has_break(s.orelse)):
            return True
    return False


def _changes(code: list[gast.stmt], v: str) -> bool:
    """Whether ``code`` assigns ``v`` or pops from it (``v = v_stack.pop()``, ``v.pop()``)."""
    for node in trees.walk(gast.Module(body=code, type_ignores=[])):
        if isinstance(node, gast.Name) and node.id == v and isinstance(node.ctx, gast.Store):
            return True
        if (isinstance(node, gast.Call) and isinstance(node.func, gast.Attribute)
                and node.func.attr == "pop" and isinstance(node.func.value, gast.Name)
                and node.func.value.id == v):
            return True
    return False


def _pretty_loop_body(body: list[gast.stmt]) -> list[gast.stmt]:
    """``if not c: <rest>`` closing a backward loop body reads better as ``if c: continue``."""
    if body and isinstance(body[-1], gast.If) and not body[-1].orelse:
        last = body[-1]
        test = last.test
        if isinstance(test, gast.UnaryOp) and isinstance(test.op, gast.Not) and len(body) == 1:
            return [gast.If(test=test.operand, body=[gast.Continue()], orelse=[])] + last.body
    return body


def _loop_text(s: ir.For | ir.While) -> str:
    return s.origin.text if s.origin else ("for" if isinstance(s, ir.For) else "while")


def _rename(node: gast.AST, mapping: dict[str, str]) -> Any:
    for n in trees.walk(node):
        if isinstance(n, gast.Name) and n.id in mapping:
            n.id = mapping[n.id]
    return node
