"""List comprehensions and generator expressions, rewritten as the loops they stand for.

For differentiation, ``ys = [f(v) for v in xs if c(v)]`` is the loop a student would write::

    ys = []
    for v in xs:
        if c(v):
            ys.append(f(v))

Rewriting it so (before normalization reads the function) lets every later stage handle it with
what it already knows (loops, branches, lists built by ``append``), and the generated code shows
that loop next to the user's line.

The loop runs just before the statement that held the comprehension. That computes the same
values wherever the statement evaluates the comprehension once, unconditionally. Where it does
not, gradlab refuses and says to compute the list on a line of its own: in a ``while`` test
(evaluated again at every step), in one branch of ``a if c else b``, after ``and``/``or``, in a
lambda.

A generator expression is read as a list only where that gives the same result: as the one
argument of the builtins ``sum``, ``min``, ``max``, ``any`` and ``all``. Elsewhere (``np.sum`` of
a generator sums differently than of a list, ``np.array`` of one makes an object array) it is
refused with the list comprehension to write instead. Set and dict comprehensions stay refused
by the normalizer.

The comprehension's variables do not leak out of it in Python; in the loop they keep the user's
names unless the function uses the same name elsewhere, where they get a fresh one (``v_2``).
"""
from __future__ import annotations

import builtins
from typing import Any

import gast

from . import trees
from .naming import Names
from .parse import ParsedFunction

#: Builtins whose one generator argument gives the same result read as a list.
_READS_ALL_ITEMS = ("sum", "min", "max", "any", "all")

_COMPREHENSIONS = (gast.ListComp, gast.GeneratorExp, gast.SetComp, gast.DictComp)


def lower_comprehensions(parsed: ParsedFunction, names: Names) -> None:
    """Rewrite, in place, every list comprehension of ``parsed``'s function (and each generator
    expression given to ``sum``/``min``/``max``/``any``/``all``) as a loop building a list."""
    root = parsed.node
    _lists_as_comprehensions(parsed, names)
    if not any(isinstance(n, (gast.ListComp, gast.GeneratorExp)) for n in trees.walk(root)):
        return
    lowering = _Lowering(parsed, names, _names_outside_comprehensions(root))
    root.body = lowering.block(root.body)


def _lists_as_comprehensions(parsed: ParsedFunction, names: Names) -> None:
    """``list(v ** 2 for v in vs)`` and ``list(x)`` of a parameter (its rows, or a copy of a
    list) as the comprehensions they are, ``[v ** 2 for v in vs]`` and ``[r for r in x]``
    (builtin ``list`` and ``tuple`` only, not names the function rebinds)."""
    root = parsed.node
    params = {a.id for a in root.args.posonlyargs + root.args.args + root.args.kwonlyargs}
    stored = {n.id for n in trees.walk(root) if isinstance(n, gast.Name) and isinstance(
        n.ctx, gast.Store)}
    builtin = {name for name in ("list", "tuple") if name not in stored | params and
               parsed.scope.lookup(name)[1] is getattr(builtins, name)}
    if not builtin:
        return

    class Rewrite(gast.NodeTransformer):
        def visit_Call(self, node: gast.Call) -> gast.AST:
            self.generic_visit(node)
            if not (isinstance(node.func, gast.Name) and node.func.id in builtin and len(
                    node.args) == 1 and not node.keywords):
                return node
            arg = node.args[0]
            if isinstance(arg, gast.GeneratorExp):
                made = gast.ListComp(elt=arg.elt, generators=arg.generators)
            elif isinstance(arg, gast.Name) and arg.id in params and arg.id not in stored:
                row = names.fresh(f"{arg.id}_row")
                made = gast.ListComp(
                    elt=gast.Name(row, gast.Load(), None, None),
                    generators=[gast.comprehension(target=gast.Name(row, gast.Store(), None,
                                                                    None),
                                                   iter=arg, ifs=[], is_async=0)])
            else:
                return node
            for n in trees.walk(made):
                gast.copy_location(n, node)
            return made
    Rewrite().visit(root)


class _Lowering:
    def __init__(self, parsed: ParsedFunction, names: Names, outside: set[str]) -> None:
        self.parsed = parsed
        self.names = names
        self.outside = outside            # names the function uses outside any comprehension
        self.enclosing: list[set[str]] = []   # names bound by the loops being built

    # --- statements ---------------------------------------------------------------------------
    def block(self, stmts: list[gast.stmt]) -> list[gast.stmt]:
        out: list[gast.stmt] = []
        for s in stmts:
            out.extend(self.statement(s))
        return out

    def statement(self, s: gast.stmt) -> list[gast.stmt]:
        """``s`` preceded by the loops of the comprehensions it evaluates."""
        for field in ("body", "orelse", "finalbody"):
            inner = getattr(s, field, None)
            if isinstance(inner, list) and inner and isinstance(inner[0], gast.stmt):
                setattr(s, field, self.block(inner))
        if isinstance(s, gast.While):
            self._refuse_inside(s.test, "a while condition (it is evaluated again at every "
                                        "step)")
            return [s]
        direct = self._assigned_list(s)
        if direct is not None:
            target, comp = direct
            return self.loop(comp, target)
        before: list[gast.stmt] = []
        hoister = _Hoister(self, before)
        for field, value in gast.iter_fields(s):
            if field in ("body", "orelse", "finalbody", "target", "targets"):
                continue
            if isinstance(value, gast.expr):
                setattr(s, field, hoister.visit(value))
        return before + [s]

    def _assigned_list(self, s: gast.stmt) -> tuple[str, gast.ListComp] | None:
        """``ys = [...]`` whose comprehension does not read ``ys``: the loop builds ``ys``
        itself (no temporary)."""
        if not (isinstance(s, gast.Assign) and len(s.targets) == 1
                and isinstance(s.targets[0], gast.Name) and isinstance(s.value, gast.ListComp)):
            return None
        target = s.targets[0].id
        if any(isinstance(n, gast.Name) and n.id == target for n in trees.walk(s.value)):
            return None
        return target, s.value

    # --- one comprehension --------------------------------------------------------------------
    def loop(self, comp: gast.ListComp | gast.GeneratorExp, into: str | None,
             hint: str = "items") -> list[gast.stmt]:
        """The statements that build, in the list ``into`` (a fresh name when None), what
        ``comp`` computes."""
        for gen in comp.generators:
            if getattr(gen, "is_async", 0):
                raise self.parsed.error("async comprehensions cannot be differentiated", comp,
                                        "async comprehension")
        name = into or self.names.fresh(hint)
        renames = self._loop_names(comp)
        comp = _substitute(comp, renames)
        append = gast.Expr(value=gast.Call(
            func=gast.Attribute(value=_name(name, gast.Load()), attr="append", ctx=gast.Load()),
            args=[comp.elt], keywords=[]))
        body: list[gast.stmt] = [append]
        for gen in reversed(comp.generators):
            for cond in reversed(gen.ifs):
                body = [gast.If(test=cond, body=body, orelse=[])]
            body = [gast.For(target=gen.target, iter=gen.iter, body=body, orelse=[],
                             type_comment=None)]
        start = gast.Assign(targets=[_name(name, gast.Store())],
                            value=gast.List(elts=[], ctx=gast.Load()), type_comment=None)
        statements = [start] + body
        for s in statements:
            _locate(s, comp)
        self.enclosing.append(set(renames.values()) | _bound_by(comp))
        try:
            return self.block(statements)
        finally:
            self.enclosing.pop()

    def _loop_names(self, comp: gast.AST) -> dict[str, str]:
        """The comprehension's variables that need a fresh name in the loop: those the function
        uses elsewhere, or that an enclosing comprehension's loop already binds."""
        taken = set(self.outside).union(*self.enclosing)
        return {v: self.names.fresh(v) for v in sorted(_bound_by(comp)) if v in taken}

    def refuse(self, comp: gast.AST, where: str) -> None:
        kind = "a generator expression" if isinstance(comp, gast.GeneratorExp) else \
            "a list comprehension"
        raise self.parsed.error(
            f"{kind} in {where} is not supported by gradlab: compute the list on a line of its "
            f"own before this one", comp, kind)

    def _refuse_inside(self, node: gast.AST, where: str) -> None:
        for sub in trees.walk(node):
            if isinstance(sub, (gast.ListComp, gast.GeneratorExp)):
                self.refuse(sub, where)

    def reads_all_items(self, call: gast.Call) -> bool:
        """A call of a builtin that reads every item of its one argument (``sum(...)``)."""
        func = call.func
        if not (isinstance(func, gast.Name) and func.id in _READS_ALL_ITEMS
                and len(call.args) == 1 and not call.keywords):
            return False
        local = any(isinstance(n, gast.Name) and n.id == func.id and isinstance(
            n.ctx, (gast.Store, gast.Param)) for n in trees.walk(self.parsed.node))
        found, value = self.parsed.scope.lookup(func.id)
        return not local and found and value is getattr(builtins, func.id)


class _Hoister(gast.NodeTransformer):
    """Replaces each comprehension of an expression by the name of the list its loop builds
    (the loop's statements go to ``before``), refusing those whose evaluation is conditional."""

    def __init__(self, lowering: _Lowering, before: list[gast.stmt]) -> None:
        self.lowering = lowering
        self.before = before
        self.conditional = ""    # why an expression here may not be evaluated, if it may not

    def _under(self, why: str, node: gast.AST) -> Any:
        saved = self.conditional
        self.conditional = saved or why
        try:
            return self.visit(node)
        finally:
            self.conditional = saved

    def visit_IfExp(self, node: gast.IfExp) -> gast.AST:
        node.test = self.visit(node.test)
        node.body = self._under("a branch of a conditional expression", node.body)
        node.orelse = self._under("a branch of a conditional expression", node.orelse)
        return node

    def visit_BoolOp(self, node: gast.BoolOp) -> gast.AST:
        node.values = [self.visit(node.values[0])] + [
            self._under("the right side of and/or", v) for v in node.values[1:]]
        return node

    def visit_Lambda(self, node: gast.Lambda) -> gast.AST:
        return node     # refused by the normalizer

    def visit_Call(self, node: gast.Call) -> gast.AST:
        if node.args and isinstance(node.args[0], gast.GeneratorExp) and \
                self.lowering.reads_all_items(node):
            node.func = self.visit(node.func)
            node.args = [self._list_of(node.args[0], "terms")]
            return node
        return self.generic_visit(node)

    def visit_ListComp(self, node: gast.ListComp) -> gast.AST:
        return self._list_of(node, "items")

    def visit_GeneratorExp(self, node: gast.GeneratorExp) -> gast.AST:
        raise self.lowering.parsed.error(
            "a generator expression is supported as the one argument of sum, min, max, any or "
            "all: write a list comprehension [...] here instead (np.sum and np.array read a "
            "generator differently than a list)", node, "generator expression")

    def _list_of(self, comp: gast.ListComp | gast.GeneratorExp, hint: str) -> gast.AST:
        if self.conditional:
            self.lowering.refuse(comp, self.conditional)
        name = self.lowering.names.fresh(hint)
        self.before.extend(self.lowering.loop(comp, name))
        return _locate(_name(name, gast.Load()), comp)


def _names_outside_comprehensions(root: gast.FunctionDef) -> set[str]:
    """Every name the function reads or binds outside its comprehensions (its parameters too)."""
    out: set[str] = {a.id for a in root.args.posonlyargs + root.args.args + root.args.kwonlyargs}

    def visit(node: gast.AST) -> None:
        if isinstance(node, _COMPREHENSIONS):
            return
        if isinstance(node, gast.Name):
            out.add(node.id)
        for child in gast.iter_child_nodes(node):
            visit(child)

    for s in root.body:
        visit(s)
    return out


def _bound_by(comp: gast.AST) -> set[str]:
    """The names a comprehension's own ``for`` clauses bind."""
    return {n.id for gen in getattr(comp, "generators", []) for n in trees.walk(gen.target)
            if isinstance(n, gast.Name)}


def _substitute(comp: Any, renames: dict[str, str]) -> Any:
    """``comp`` with its variables renamed, except inside an inner comprehension that binds
    the same name again (its first iterable still reads the outer one)."""
    if not renames:
        return comp
    renamer = _Renamer(renames)
    for i, gen in enumerate(comp.generators):
        gen.target = renamer.visit(gen.target)
        gen.iter = renamer.visit(gen.iter) if i else gen.iter   # the first: enclosing scope
        gen.ifs = [renamer.visit(c) for c in gen.ifs]
    comp.elt = renamer.visit(comp.elt)
    return comp


class _Renamer(gast.NodeTransformer):
    def __init__(self, renames: dict[str, str]) -> None:
        self.renames = renames

    def visit_Name(self, node: gast.Name) -> gast.AST:
        new = self.renames.get(node.id)
        return gast.copy_location(_name(new, node.ctx), node) if new else node

    def _inner(self, node: Any) -> Any:
        shadowed = _bound_by(node)
        inner = {k: v for k, v in self.renames.items() if k not in shadowed}
        node.generators[0].iter = self.visit(node.generators[0].iter)
        rest = _Renamer(inner)
        for i, gen in enumerate(node.generators):
            gen.target = rest.visit(gen.target)
            if i:
                gen.iter = rest.visit(gen.iter)
            gen.ifs = [rest.visit(c) for c in gen.ifs]
        for field in ("elt", "key", "value"):
            if getattr(node, field, None) is not None:
                setattr(node, field, rest.visit(getattr(node, field)))
        return node

    visit_ListComp = visit_GeneratorExp = visit_SetComp = visit_DictComp = _inner


def _name(identifier: str, ctx: gast.AST) -> gast.Name:
    return gast.Name(id=identifier, ctx=ctx, annotation=None, type_comment=None)


_LOCATION = ("lineno", "col_offset", "end_lineno", "end_col_offset")


def _locate(node: gast.AST, origin: gast.AST) -> Any:
    """Give the new nodes under ``node`` the comprehension's place in the user's code (nodes
    copied from it keep their own)."""
    for sub in trees.walk(node):
        for attr in _LOCATION:
            if getattr(sub, attr, None) is None and attr in getattr(sub, "_attributes", ()):
                setattr(sub, attr, getattr(origin, attr, None))
    return node

