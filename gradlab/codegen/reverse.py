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
"""
from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

import gast

from ..errors import NoRuleError
from . import ir, trees
from .analyze import SCALAR, array_arguments, check, number_params, shape_classes
from .build import REQUIRED, assign, attr, call, comment, const, expr_stmt, for_, function_def, \
    if_, index_value, name, note
from .ir import Assign, Const, EffectKind, OpKind
from .naming import Names
from .resolve import bindings
from .rules import ADJOINTS, NONDIFFERENTIABLE, Contribution, RuleGap, Temporary, instantiate

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
class Plan:
    """Decisions about one statement made before any code is emitted."""

    items: list[Any] = field(default_factory=list)   # what the backward code of it is
    push: str = ""                                   # '' | 'record' | 'restore'
    pushed: list[str] = field(default_factory=list)
    pop_first: bool = False                          # restore before the rule (it reads the old value)


class Reverse:
    """Builds the adjoint function of one normalized function."""

    def __init__(self, program: Any, unit: Any, wrt: list[str], seed_default: Any,
                 func_name: str, scalar_params: set[str] | None = None,
                 arrays: set[str] | None = None) -> None:
        self.program = program
        self.unit = unit
        self.fn: ir.Function = copy.deepcopy(unit.ir)
        self.names: Names = copy.deepcopy(unit.names)
        self.wrt = wrt
        self.seed_default = seed_default
        self.func_name = func_name
        self.arrays = arrays          # the parameters holding arrays (None: all of them)
        self.emitter = program.emitter_for(unit, self.names, arrays)
        self.gl = program.gl
        self.adjoints: dict[str, str] = {}
        self.plans: dict[int, Plan] = {}
        self.stacks: dict[str, str] = {}
        self.lists: set[str] = set()
        self.depth: dict[int, int] = {}
        self.parent_loop: dict[int, Any] = {}
        self.grad_of: dict[Any, list[ir.GradOf]] = {}
        self.inits: set[str] = set()
        self.renewed: set[str] = set()   # targets whose old value's gradient restarted
        self.scalar_params = (scalar_params or set()) | number_params(unit.ir.params, arrays)
        self.renewed = set()

    # --- names ------------------------------------------------------------------------------
    def adj(self, v: str) -> str:
        if v not in self.adjoints:
            self.adjoints[v] = self.names.fresh(f"d{v}" if not v.startswith("_") else f"d{v[1:]}")
        return self.adjoints[v]

    def stack(self, v: str) -> str:
        if v not in self.stacks:
            self.stacks[v] = self.names.fresh(f"{v}_stack")
        return self.stacks[v]

    # --- the whole function -------------------------------------------------------------------
    def build(self) -> gast.FunctionDef:
        fn = self.fn
        check(fn, self.program.activity(fn, self.wrt, self.arrays),  # as written
              helper=self.unit is not self.program.main)
        from .normalize import split_self_updates
        split_self_updates(fn.body, self.names, _reads_old_and_new)
        if self.program.optimized:
            from .hoist import hoist
            hoist(fn.body)
        self.act = self.program.activity(fn, self.wrt, self.arrays)
        self.classes = shape_classes(fn, self.scalar_params)
        self.classes[self.adj(fn.result)] = self.classes.get(fn.result)   # the seed's shape
        self.lists = ir.list_names(fn)
        for g in ir.walk(fn.body):   # `insert_grad_of(h) as dh`: the user named h's gradient
            if isinstance(g, ir.GradOf) and g.name not in self.adjoints and (
                    g.alias not in self.adjoints.values()):
                self.adjoints[g.name] = g.alias
        self.always_defined = set(fn.params) | {
            t for st in fn.body if isinstance(st, Assign) for t in st.targets} | {
            t for st in ir.walk(fn.body) if isinstance(st, (ir.For, ir.While))
            for t in ir.writes_in(st.body)
            if t in ir.reads_in(st.body) or isinstance(st, ir.For) and t == st.target}
        seed = self.adj(fn.result)
        self.order = {id(st): i for i, st in enumerate(ir.walk(fn.body))}
        self.first_def: dict[str, int] = {}
        for st in ir.walk(fn.body):
            for t in ir.stmt_writes(st):
                self.first_def.setdefault(t, self.order[id(st)])
        self._plan_control(fn.body, depth=0, loop=None)
        self._place_grad_of(fn.body)
        for s in ir.walk(fn.body):
            if isinstance(s, Assign) and self._active_stmt(s):
                self.plans.setdefault(id(s), Plan()).items = self._items(s)
            elif isinstance(s, ir.Effect) and s.kind is EffectKind.APPEND and self.act.active(s.target):
                self.plans.setdefault(id(s), Plan()).items = ["append"]
        self.needed = self._needed(fn.body)
        self._plan_pushes(fn.body, loop=None)

        forward: list[gast.stmt] = []
        for v, stack in self.stacks.items():
            forward.append(assign(stack, gast.List(elts=[], ctx=gast.Load())))
        for v in sorted(self.inits):   # saved before its first value exists
            forward.append(assign(v, const(None)))
        forward.extend(self._forward_block(fn.body))

        state: set[str] = {fn.result} if self.act.active(fn.result) or fn.result in self.wrt else set()
        self.emitter.last_origin[0] = None
        backward = self._backward_block(fn.body, state, top=True)
        if "end" in self.grad_of:
            backward.extend(self._grad_of_code(self.grad_of["end"], state))
        results = []
        for p in self.wrt:
            if p in state:
                results.append(name(self.adj(p)))
            elif self.classes.get(p) == SCALAR:
                results.append(const(0.0))
            else:
                results.append(call(attr(self.gl, "zeros_like"), [name(p)]))
        ret = results[0] if len(results) == 1 else gast.Tuple(elts=results, ctx=gast.Load())
        #: the variable that holds the function's value when the gradient returns (the wrapper
        #: checks it is a scalar; value_and_grad and hvp return or inspect it)
        self.value_name = fn.result
        if _changes(backward, fn.result):
            # the backward pass restores the loop's earlier values into the result's variable
            self.value_name = self.names.fresh(self.fn.name)
            forward += [note(f"the value, kept: the backward pass restores {fn.result}"),
                        assign(self.value_name, name(fn.result))]
        body = forward + [comment(BACKWARD_MARK)] + backward + [gast.Return(value=ret)]
        keep = self.seed_default is not REQUIRED
        if self.program.optimized:
            _skip_broadcasts(body, self.classes)
            _scalars_first(body, self.classes)
        # the user's gradient takes its seed by keyword only: an extra positional argument is
        # a mistake in the call, never the output's gradient (vjp helpers take it by position)
        return function_def(self.func_name, self.unit.parsed.node.args, [seed], [self.seed_default], body,
                             keep_defaults=keep, keyword_only=keep)

    # --- planning -----------------------------------------------------------------------------
    def _active_stmt(self, s: Assign) -> bool:
        return any(self.act.active(t) for t in s.targets)

    def _active_block(self, stmts: list[ir.Stmt]) -> bool:
        for s in ir.walk(stmts):
            if isinstance(s, Assign) and self._active_stmt(s):
                return True
            if isinstance(s, ir.Effect) and s.kind is EffectKind.APPEND and self.act.active(s.target):
                return True
            if isinstance(s, ir.GradOf):
                return True
        return False

    def _plan_control(self, stmts: list[ir.Stmt], depth: int, loop: Any) -> None:
        """Loop counters, loop reversal strategy and branch conditions, for active code."""
        i = 0
        while i < len(stmts):
            s = stmts[i]
            self.depth[id(s)] = depth
            self.parent_loop[id(s)] = loop
            if isinstance(s, ir.If):
                if self._active_block([s]):
                    written = ir.writes_in(s.body) | ir.writes_in(s.orelse)
                    has_call = any(isinstance(n, gast.Call) for n in trees.walk(s.test))
                    if ir.atom_names(s.test) & written or has_call:
                        s.cond = self.names.fresh("cond")
                self._plan_control(s.body, depth, loop)
                self._plan_control(s.orelse, depth, loop)
            elif isinstance(s, (ir.For, ir.While)):
                if self._active_block(s.body):
                    reversible = isinstance(s, ir.For) and not _has_break(s.body) and not (
                        ir.atom_names(s.range_args) | {s.target}) & ir.writes_in(s.body)
                    if not reversible:
                        s.counter = self.names.fresh("steps")
                        init = Assign(s.origin, [s.counter], ir.Op(OpKind.COPY, args=[Const(0)]))
                        stmts.insert(i, init)
                        self.depth[id(init)] = depth
                        self.parent_loop[id(init)] = loop
                        i += 1
                self._plan_control(s.body, depth + 1, s)
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

    def _items(self, s: Assign) -> list[Any]:
        op = s.op
        if op.kind is OpKind.COPY:
            src = op.args[0]
            if len(s.targets) == 1 and self._is_active_atom(src):
                return [Contribution(src, name(self.adj(s.targets[0])))]  # type: ignore[arg-type]
            return []
        if op.kind in (OpKind.TUPLE, OpKind.LIST):
            if len(s.targets) > 1:
                return [("parallel", list(zip(s.targets, op.args)))]
            d = self.adj(s.targets[0])
            return [Contribution(str(a), gast.Subscript(value=name(d), slice=const(k),
                                                        ctx=gast.Load()))
                    for k, a in enumerate(op.args) if self._is_active_atom(a)]
        if op.kind is OpKind.USER:
            return self._user_items(s)
        if op.kind is not OpKind.PRIM:
            return []
        if op.prim == "list_getitem":
            xs, index = op.args
            if not self._is_active_atom(xs):
                return []
            return [ListElement(xs, self.emitter.atom(index), name(self.adj(s.targets[0])))]  # type: ignore[arg-type]
        rule = ADJOINTS.get(op.prim)
        if rule is None:
            if op.prim in NONDIFFERENTIABLE:
                return []
            raise NoRuleError(f"gradlab has no derivative rule for {op.source or op.prim}")
        binding = {rule.params[0]: name(s.targets[0])}
        for pname, atom in bindings(op).items():
            binding[pname] = self.emitter.atom(atom)
            if pname == "index":
                binding[pname] = index_value(binding[pname])
        try:
            instance = instantiate(rule, binding, self.adj, self.names.fresh,
                                   lambda e: isinstance(e, gast.Name) and self.act.active(e.id)
                                   and e.id not in s.frozen, self._shape_of,
                                   label=str(op.source or op.prim))
        except RuleGap as e:
            raise ir.refusal(str(e), s.origin, str(op.source or op.prim)) from None
        return instance.steps

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

    def _user_items(self, s: Assign) -> list[Any]:
        op = s.op
        active = [i for i, a in enumerate(op.args) if self._is_active_atom(a)]
        if not active:
            return []
        vjp = self.program.vjp(op.callee, tuple(active), array_arguments(op, self.act.arrays))
        target = s.targets[0]
        value = call(name(vjp), [self.emitter.atom(a) for a in op.args] + [name(self.adj(target))])
        return [MultiContribution([op.args[i] for i in active], value)]  # type: ignore[misc]

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

    def _plan_pushes(self, stmts: list[ir.Stmt], loop: Any) -> None:
        counters = {t.counter for t in ir.walk(self.fn.body)
                    if isinstance(t, (ir.For, ir.While)) and t.counter}
        for s in stmts:
            if loop is not None and isinstance(s, (ir.For, ir.While)) and s.counter and (
                    s.counter in self.needed):
                # an inner loop's count is final only once the loop is done: save it then
                plan = self.plans.setdefault(id(s), Plan())
                plan.pushed, plan.push = [s.counter], "record"
                self.stack(s.counter)
            if loop is not None:
                written = ir.stmt_writes(s) - counters
                if isinstance(s, ir.For):
                    written = set()   # the loop target belongs to the loop's own body
                saved = sorted(written & self.needed)
                if saved:
                    plan = self.plans.setdefault(id(s), Plan())
                    plan.pushed = saved
                    plan.push = "record" if self._iteration_local(s, stmts, loop, saved) \
                        else "restore"
                    if plan.push == "restore" and isinstance(s, Assign):
                        plan.pop_first = self._reads_old_value(s, plan)
                    for v in saved:
                        self.stack(v)
                        if plan.push == "restore" and not self._defined_before(v, loop):
                            self.inits.add(v)
                if isinstance(s, ir.Effect) and s.kind is EffectKind.APPEND and s.target in self.needed:
                    self.plans.setdefault(id(s), Plan()).pushed = [s.target]
            if isinstance(s, ir.For) and s.counter and s.target in self.needed:
                self.stack(s.target)
            for block in ir.children(s):
                self._plan_pushes(block, s if isinstance(s, (ir.For, ir.While)) else loop)

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

    # --- forward code -------------------------------------------------------------------------
    def _forward_block(self, stmts: list[ir.Stmt]) -> list[gast.stmt]:
        out: list[gast.stmt] = []
        for s in stmts:
            self._forward_stmt(s, out)
        return out

    def _forward_stmt(self, s: ir.Stmt, out: list[gast.stmt]) -> None:
        e = self.emitter
        plan = self.plans.get(id(s))
        pushes = [expr_stmt(call(attr(self.stack(v), "append"), [name(v)]))
                  for v in (plan.pushed if plan and plan.push else [])]
        if isinstance(s, ir.If):
            test = e.inline(s.test)
            lines: list[gast.stmt] = []
            if s.cond:
                lines.append(assign(s.cond, test))
                test = name(s.cond)
            before, after = (pushes, []) if plan and plan.push == "restore" else ([], pushes)
            lines = before + lines + after
            e.with_comment(s, out, lines)
            body, orelse = self._forward_block(s.body), self._forward_block(s.orelse)
            out.extend(if_(test, body, orelse))
            return
        if isinstance(s, ir.For):
            body = []
            if s.counter:
                body.append(assign(s.counter, gast.BinOp(left=name(s.counter), op=gast.Add(),
                                                         right=const(1))))
                if s.target in self.needed:
                    body.append(expr_stmt(call(attr(self.stack(s.target), "append"),
                                               [name(s.target)])))
            body += self._forward_block(s.body)
            out.append(gast.For(target=gast.Name(s.target, gast.Store(), None, None),
                                iter=e.loop_range(s), body=body or [gast.Pass()], orelse=[],
                                type_comment=None))
            out.extend(pushes)
            return
        if isinstance(s, ir.While):
            body = []
            if s.counter:
                body.append(assign(s.counter, gast.BinOp(left=name(s.counter), op=gast.Add(),
                                                         right=const(1))))
            body += self._forward_block(s.body)
            out.append(gast.While(test=e.inline(s.test), body=body or [gast.Pass()], orelse=[]))
            out.extend(pushes)
            return
        lines = e.forward(s)
        if plan and plan.push == "restore":
            lines = pushes + lines
        elif plan and plan.push == "record":
            lines = lines + pushes
        e.with_comment(s, out, lines)

    # --- backward code -------------------------------------------------------------------------
    def _backward_block(self, stmts: list[ir.Stmt], state: set[str], top: bool = False
                        ) -> list[gast.stmt]:
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
        restore = plan is not None and plan.push == "restore"
        if isinstance(s, Assign):
            lines: list[gast.stmt] = []
            self.renewed = set()
            if id(s) in self.grad_of:
                lines += self._grad_of_code(self.grad_of[id(s)], state)
            if restore and plan.pop_first:  # type: ignore[union-attr]
                lines += [self._pop(v) for v in plan.pushed]  # type: ignore[union-attr]
            if plan is not None and plan.items:
                lines += self._shift_notes(s)
                lines += self._adjoint_lines(s, plan.items, state)
            parallel = plan is not None and any(isinstance(i, tuple) for i in plan.items)
            for t in s.targets:
                if not _self_contributed(plan, t) and not parallel and t not in self.renewed:
                    state.discard(t)
            if restore and not plan.pop_first:  # type: ignore[union-attr]
                lines += [self._pop(v) for v in plan.pushed]  # type: ignore[union-attr]
            self.emitter.with_comment(s, out, lines)
            return
        if isinstance(s, ir.Effect):
            lines = []
            if s.kind is EffectKind.APPEND and plan is not None:
                if plan.items and s.target in state and self._is_active_atom(s.value):
                    popped = call(attr(self.adj(s.target), "pop"), [])
                    self._contribute(s.value, popped, state, lines)  # type: ignore[arg-type]
                elif plan.items and s.target in state:
                    lines.append(expr_stmt(call(attr(self.adj(s.target), "pop"), [])))
                if plan.pushed:
                    lines.append(expr_stmt(call(attr(s.target, "pop"), [])))
            self.emitter.with_comment(s, out, lines)
            return
        if isinstance(s, ir.If):
            self._backwardif_(s, state, out, plan)
            return
        if isinstance(s, (ir.For, ir.While)):
            self._backward_loop(s, state, out)
            return

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

    def _backwardif_(self, s: ir.If, state: set[str], out: list[gast.stmt], plan: Plan | None
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
        if plan is not None and plan.push == "restore":
            out.extend(self._pop(v) for v in plan.pushed)

    def _zero(self, v: str, at: ir.Stmt | None = None) -> gast.stmt:
        """A zero gradient for ``v``, written where the backward pass reaches statement
        ``at``: shaped like ``v`` when ``v`` is assigned before ``at`` runs forward (so it
        exists), else the number 0.0 (a variable assigned later, or only on some paths)."""
        exists = v in self.fn.params or (
            at is not None and self.first_def.get(v, 1 << 30) < self.order.get(id(at), -1)) or (
            at is None and v in self.always_defined)
        if not exists or self.classes.get(v) == SCALAR:
            return assign(self.adj(v), const(0.0))
        helper = "zeros_like_list" if v in self.lists else "zeros_like"
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
            (plan := self.plans.get(id(t))) is not None and plan.push == "restore"
            and v in plan.pushed for t in writes)
        if restored and self.classes.get(v) != SCALAR and v not in self.lists:
            return assign(self.adj(v), call(attr(self.gl, "zeros_like"), [name(v)]))
        return self._zero(v, loop)

    def _backward_loop(self, s: ir.For | ir.While, state: set[str], out: list[gast.stmt]) -> None:
        if not self._active_block(s.body):
            return
        entry = set(state)
        inits: list[str] = []
        for _ in range(4):
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
            rng = call(name("range"), [name(s.counter)])  # type: ignore[arg-type]
            target = "_"
        header = comment(_loop_text(s), s.origin.lineno if s.origin else 0)
        out.append(header)
        out.append(gast.For(target=gast.Name(target, gast.Store(), None, None), iter=rng,
                            body=_pretty_loop_body(body) or [gast.Pass()], orelse=[],
                            type_comment=None))
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
        if plan is not None and plan.push == "record":
            return list(plan.pushed)
        return []

    # --- accumulation ---------------------------------------------------------------------------
    def _adjoint_lines(self, s: Assign, items: list[Any], state: set[str]) -> list[gast.stmt]:
        targets = set(s.targets)
        if not targets & state and not any(isinstance(i, tuple) for i in items):
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
            elif isinstance(item, tuple) and item[0] == "parallel":
                self._parallel(item[1], state, lines)
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
def _reads_old_and_new(s: Assign) -> bool:
    """Does the adjoint of ``y = f(..y..)`` need both the old ``y`` and the new one?"""
    target = s.targets[0]
    if s.op.kind is not OpKind.PRIM or target not in ir.op_reads(s.op):
        return False
    rule = ADJOINTS.get(s.op.prim)
    return rule is not None and rule.reads_result()


def _skip_broadcasts(body: list[gast.stmt], classes: dict[str, Any]) -> None:
    """``d = gl.broadcast_like(g, X)`` used once, as a factor of a product that already has a
    factor shaped like ``X``: the product broadcasts ``g`` by itself, so skip the copy.
    (``dh = 2 * h * gl.broadcast_like(dloss, h_pow2)`` becomes ``dh = 2 * h * dloss``.)"""
    blocks = [body] + [b for n in trees.walk(gast.Module(body=body, type_ignores=[]))
                       for b in (getattr(n, "body", None), getattr(n, "orelse", None))
                       if isinstance(b, list) and n is not None]
    loads: dict[str, int] = {}
    for n in trees.walk(gast.Module(body=body, type_ignores=[])):
        if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load):
            loads[n.id] = loads.get(n.id, 0) + 1
    for block in blocks:
        i = 0
        while i < len(block) - 1:
            s, nxt = block[i], block[i + 1]
            if (isinstance(s, gast.Assign) and len(s.targets) == 1
                    and isinstance(s.targets[0], gast.Name)
                    and isinstance(s.value, gast.Call)
                    and isinstance(s.value.func, gast.Attribute)
                    and s.value.func.attr == "broadcast_like" and len(s.value.args) == 2
                    and isinstance(s.value.args[1], gast.Name)
                    and loads.get(s.targets[0].id) == 1
                    and isinstance(nxt, gast.Assign)):
                d, g, like = s.targets[0].id, s.value.args[0], s.value.args[1].id
                if _replace_factor(nxt.value, d, g, classes.get(like), classes):
                    del block[i]
                    continue
            i += 1


def _scalars_first(body: list[gast.stmt], classes: dict[str, Any]) -> None:
    """In a product, multiply the numbers first: ``2 * dloss * h`` costs one pass over ``h``,
    ``2 * h * dloss`` two."""
    def scalar(f: gast.expr) -> bool:
        if isinstance(f, gast.BinOp):
            return scalar(f.left) and scalar(f.right)
        if isinstance(f, gast.Call) and isinstance(f.func, gast.Attribute):
            return f.func.attr in ("size", "ndim")   # gl.size(x): a count
        return (isinstance(f, gast.Constant) and isinstance(f.value, (int, float))) or (
            isinstance(f, gast.Name) and classes.get(f.id) == SCALAR)

    for node in trees.walk(gast.Module(body=body, type_ignores=[])):
        for field in ("value", "left", "right", "operand"):
            child = getattr(node, field, None)
            if isinstance(child, gast.BinOp) and isinstance(child.op, gast.Mult):
                factors = _factors(child)
                numbers = [f for f in factors if scalar(f)]
                if not numbers or len(numbers) == len(factors) or all(
                        scalar(f) for f in factors[:len(numbers)]):
                    continue
                ordered = numbers + [f for f in factors if not scalar(f)]
                product = ordered[0]
                for f in ordered[1:]:
                    product = gast.BinOp(left=product, op=gast.Mult(), right=f)
                setattr(node, field, product)


def _factors(node: gast.expr) -> list[gast.expr]:
    if isinstance(node, gast.BinOp) and isinstance(node.op, gast.Mult):
        return _factors(node.left) + _factors(node.right)
    return [node]


def _replace_factor(expr: gast.expr, d: str, g: gast.expr, like_class: Any,
                    classes: dict[str, Any]) -> bool:
    if like_class is None:
        return False
    for node in trees.walk(expr):
        if not (isinstance(node, gast.BinOp) and isinstance(node.op, gast.Mult)):
            continue
        factors = _factors(node)
        if not any(isinstance(f, gast.Name) and f.id == d for f in factors):
            continue
        if not any(isinstance(f, gast.Name) and f.id != d and classes.get(f.id) == like_class
                   for f in factors):
            continue
        for parent in trees.walk(node):
            for field in ("left", "right"):
                child = getattr(parent, field, None)
                if isinstance(child, gast.Name) and child.id == d:
                    setattr(parent, field, trees.clone(g))
                    return True
    return False


def _self_contributed(plan: Plan | None, target: str) -> bool:
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
