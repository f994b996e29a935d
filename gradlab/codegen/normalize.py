"""gast → the normalized program (:mod:`ir`): one operation per statement, temporaries named
after what they hold, every ``for`` a ``for i in range(...)``, every call resolved.

Constructs gradlab cannot differentiate are refused here, with the user's line, before any code
is generated: a refusal is always better than a silently wrong gradient.
"""
from __future__ import annotations

import ast
import builtins
import dataclasses
import inspect
import textwrap
from typing import Any

import gast

from ..tensor.backends.promote import FLOAT_FUNCTIONS
from ..tensor.spec import BOOLEAN, NONDIFFERENTIABLE, PRIMITIVES
from . import ir, trees
from .build import indexes_by_array, not_plain_index
from .callables import CallableNames
from .expand import expand
from .ir import Assign, Const, EffectKind, Op, OpKind, as_expr
from .naming import Names, binop_hint, describe
from .parse import ParsedFunction, is_generated
from .primitives import ATTRIBUTES, INPLACE_METHODS, signature
from .rules import ADJOINTS, TANGENTS, custom_signature, is_custom
from .rules.instantiate import tested_for_none
from .resolve import BindError, Resolution, Resolver, Transform, callee_text, dotted
from .structure import lower_returns


def value_params(prim: str) -> tuple[str, ...]:
    """The parameters of a primitive that hold values (flattened to atoms) rather than
    options (kept inline); every parameter of a user's own primitive."""
    record = PRIMITIVES.get(prim)
    return record.arrays if record is not None else ()

#: Operators that compute with a boolean operand as a number.
_ARITHMETIC = {"add", "subtract", "multiply", "divide", "power"}
#: Functions whose result is a boolean when their first operand is one (NumPy's ``abs``, ``real``
#: and the shape functions of a bool array are bool arrays): ``abs(mask) * 1.0`` still needs the
#: cast that TensorFlow's and torch's arithmetic need.
KEEPS_BOOLEANS = frozenset({"abs", "real", "conj", "reshape", "squeeze", "transpose", "flatten",
                            "expand_dims", "getitem", "copy", "matrix_transpose", "atleast_1d",
                            "broadcast_to", "ones_like", "zeros_like", "tile", "repeat"})
#: Functions of two booleans that are a boolean (``m * n`` is ``m and n``; ``m + n``, ``or``).
BOOLEAN_PAIRS = frozenset({"multiply", "add", "maximum", "minimum"})

_BINOPS = {gast.Add: "add", gast.Sub: "subtract", gast.Mult: "multiply", gast.Div: "divide",
           gast.Pow: "power", gast.MatMult: "matmul", gast.FloorDiv: "floor_divide",
           gast.Mod: "mod"}

_REFUSED = {
    gast.Try: ("try/except", "move the try outside the function you differentiate"),
    gast.Global: ("global", "pass the value in as an argument"),
    gast.Nonlocal: ("nonlocal", "pass the value in as an argument"),
    gast.Yield: ("yield", "generators cannot be differentiated; return a value"),
    gast.YieldFrom: ("yield from", "generators cannot be differentiated; return a value"),
    gast.Await: ("await", "async code cannot be differentiated"),
    gast.AsyncFor: ("async for", "async code cannot be differentiated"),
    gast.AsyncWith: ("async with", "async code cannot be differentiated"),
    gast.AsyncFunctionDef: ("async def", "async code cannot be differentiated"),
    gast.ClassDef: ("a class defined inside the function", "define the class outside"),
    gast.FunctionDef: ("a function defined inside the function's loops or branches",
                       "define it at the top of the function (reading only its arguments) or "
                       "at module level; gradlab differentiates it from its source"),
    gast.Lambda: ("lambda", "write a def at module level instead"),
    gast.Import: ("import inside the function", "import at module level"),
    gast.ImportFrom: ("import inside the function", "import at module level"),
    gast.NamedExpr: ("the walrus operator :=", "assign on a line of its own"),
    gast.SetComp: ("a set comprehension", "use a for loop"),
    gast.DictComp: ("a dict comprehension", "use a for loop"),
    gast.GeneratorExp: ("a generator expression", "use a for loop with a list and append"),
    gast.ListComp: ("a list comprehension", "use a for loop with a list and append"),
    gast.Starred: ("*-unpacking", "pass the values one by one"),
}


class Normalizer(CallableNames):
    def __init__(self, parsed: ParsedFunction, names: Names, dialect: str = "numpy",
                 lists: frozenset[str] = frozenset(),
                 checked_lists: frozenset[str] = frozenset()) -> None:
        self.parsed = parsed
        self.names = names
        self.locals = assigned_names(parsed.node)
        self.resolver = Resolver(parsed.scope, self.locals, dialect)
        self.lists: set[str] = set(lists)    # the names that hold Python lists (or tuples)
        self.sure_lists: set[str] = set(lists)   # ... and, of those, the ones sure to be
        self.checked_lists = frozenset(checked_lists)
        self.generated = is_generated(parsed.fn)      # gradient code, which hvp reads
        #: the user's functions this one calls with lists, and their parameters given them
        self.lists_passed: list[tuple[Any, frozenset[str]]] = []
        self.out: list[ir.Stmt] = []
        self.origin: ir.Origin | None = None
        self.temporaries: set[str] = set()
        #: the counters of the loops around the statement read: ints
        self.counters: set[str] = set()
        self.fields: dict[str, tuple[str, ...]] = {}   # name -> its items' names
        self.items: dict[str, list[ir.Atom]] = {}     # a list written out -> its items
        self.booleans: set[str] = set()                # names that hold booleans
        self.counts: set[str] = set()                  # ... and ints counted from booleans
        self.dialect = dialect
        #: g = functools.partial(h, a, k=b): g's calls spelled out, h(a, ..., k=b, ...)
        self.partials: dict[str, tuple[gast.expr, list[gast.expr], list[gast.keyword]]] = {}
        #: loss = lambda p: ...: loss's calls read as the lambda's expression of their arguments
        self.lambdas: dict[str, gast.Lambda] = {}
        self.expanding: set[str] = set()           # the lambdas whose bodies are being read

    # --- entry ------------------------------------------------------------------------------
    def function(self) -> ir.Function:
        node = self.parsed.node
        self._refuse_unsupported(node)
        self._refuse_undefined_names(node)
        args = node.args
        if args.vararg is not None or args.kwarg is not None:
            raise self.parsed.error("a function with *args or **kwargs cannot be differentiated; "
                                    "name its parameters", node, "*args/**kwargs")
        params = [a.id for a in args.posonlyargs + args.args + args.kwonlyargs]
        defaults = _defaults(self.parsed.fn)
        returns = [n for n in trees.walk(node) if isinstance(n, gast.Return)]
        simple = len(returns) == 1 and node.body and node.body[-1] is returns[0]
        self.result = "" if simple else self.names.fresh(node.name)
        body = self.block(node.body)
        fn = ir.Function(node.name, params, defaults, body, origin=self.parsed.origin(node),
                         temporaries=self.temporaries)
        fn.result = self.result
        lower_returns(fn, self.names, self.parsed)
        return fn

    def _refuse_unsupported(self, root: gast.FunctionDef) -> None:
        named = {id(n.value) for n in trees.walk(root) if isinstance(n, gast.Assign) and len(
            n.targets) == 1 and isinstance(n.targets[0], gast.Name) and isinstance(
                n.value, gast.Lambda)}       # loss = lambda p: ...: read where it is called
        starred = {id(e) for n in trees.walk(root) if isinstance(n, gast.Assign) and len(
            n.targets) == 1 and isinstance(n.targets[0], (gast.Tuple, gast.List))
            for e in n.targets[0].elts if isinstance(e, gast.Starred)}  # first, *rest = ws
        for node in trees.walk(root):
            if node is root or id(node) in named or id(node) in starred:
                continue
            entry = _REFUSED.get(type(node))
            if entry is not None:
                construct, advice = entry
                raise self.parsed.error(f"{construct} is not supported by gradlab: {advice}",
                                        node, construct)
            if isinstance(node, (gast.For, gast.While)) and node.orelse:
                raise self.parsed.error(f"{type(node).__name__.lower()}...else is not supported: "
                                        f"use a flag", node, "loop else")
            if isinstance(node, gast.With):
                if not _is_insert_grad_of(node, self.parsed):
                    raise self.parsed.error("with-blocks are not supported, except "
                                            "`with gradlab.insert_grad_of(x) as dx:`", node, "with")
            if isinstance(node, gast.Call) and isinstance(node.func, gast.Name) and (
                    node.func.id in ("eval", "exec")) and node.func.id not in self.locals and (
                    self.parsed.scope.lookup(node.func.id)[1] is getattr(builtins, node.func.id)):
                raise self.parsed.error(f"{node.func.id}() runs code gradlab cannot read, so it "
                                        f"cannot differentiate it: write the code itself",
                                        node, node.func.id)
            if isinstance(node, gast.Match if hasattr(gast, "Match") else ()):
                raise self.parsed.error("match statements are not supported: use if/elif",
                                        node, "match")

    def _refuse_undefined_names(self, root: gast.FunctionDef) -> None:
        """A name that is neither local nor found where the function was defined would only fail
        when the generated code runs (or, for a constant, silently give it no gradient): say so
        now, at the user's line."""
        args = root.args
        outside = [d for d in args.defaults + args.kw_defaults if d is not None] + [
            a.annotation for a in args.posonlyargs + args.args + args.kwonlyargs
            if getattr(a, "annotation", None) is not None] + (
            [root.returns] if root.returns is not None else [])
        defaults = {id(n) for d in outside for n in trees.walk(d)}   # evaluated at def time
        for node in trees.walk(root):
            if not isinstance(node, gast.Name) or not isinstance(node.ctx, gast.Load) or (
                    id(node) in defaults or node.id in self.locals):
                continue
            if self.parsed.scope.lookup(node.id)[0]:
                continue
            unbound = node.id in self.parsed.fn.__code__.co_freevars
            detail = (" yet: it belongs to the enclosing function, which has not assigned it"
                      if unbound else "")
            raise self.parsed.error(f"name {node.id!r} is not defined{detail}", node,
                                    "unknown name")

    # --- statements ---------------------------------------------------------------------------
    def block(self, stmts: list[gast.stmt]) -> list[ir.Stmt]:
        saved = self.out
        self.out = []
        for s in stmts:
            self.stmt(s)
        out, self.out = self.out, saved
        return out

    def emit(self, s: ir.Stmt) -> None:
        self.out.append(s)

    def stmt(self, node: gast.stmt) -> None:
        previous = self.origin
        self.origin = self.parsed.origin(node)
        self.memo: dict[str, str] = {}
        try:
            self._stmt(node)
        except BindError as e:
            raise self.parsed.error(str(e), node, "call") from None
        finally:
            self.origin = previous

    def _stmt(self, node: gast.stmt) -> None:
        if isinstance(node, gast.Assign):
            self._assign(node)
        elif isinstance(node, gast.AugAssign):
            self._augassign(node)
        elif isinstance(node, gast.AnnAssign):
            if node.value is not None:
                self._assign(gast.Assign(targets=[node.target], value=node.value,
                                         type_comment=None))
        elif isinstance(node, gast.Expr):
            self._expr_stmt(node)
        elif isinstance(node, gast.Return):
            self._return(node)
        elif isinstance(node, gast.If):
            test = self.inline(node.test)
            body, orelse = self.block(node.body), self.block(node.orelse)
            self.emit(ir.If(self.origin, test, body, orelse))
        elif isinstance(node, gast.For):
            self._for(node)
        elif isinstance(node, gast.While):
            test = self.inline(node.test)
            body = self.block(node.body)
            self.emit(ir.While(self.origin, test, body))
        elif isinstance(node, gast.Break):
            self.emit(ir.Break(self.origin))
        elif isinstance(node, gast.Continue):
            self.emit(ir.Continue(self.origin))
        elif isinstance(node, gast.Pass):
            pass
        elif isinstance(node, gast.Delete):
            self._delete(node)
        elif isinstance(node, (gast.Assert, gast.Raise)):
            self.emit(ir.Effect(self.origin, EffectKind.STATIC, node=node))
        elif isinstance(node, gast.With):
            self._insert_grad_of(node)
        else:
            raise self.parsed.error(f"{type(node).__name__} statements are not supported",
                                    node, type(node).__name__)

    def _delete(self, node: gast.Delete) -> None:
        """``del name`` only unbinds a name: no value changes, so nothing to differentiate (a
        later read would fail in Python first). ``del xs[i]`` changes a container in place."""
        for t in node.targets:
            if not isinstance(t, gast.Name):
                raise self.parsed.error("del of an item or an attribute changes a value in "
                                        "place, which gradlab cannot differentiate: build a new "
                                        "list or array without it", node, "del")

    def _return(self, node: gast.Return) -> None:
        value: ir.Atom | None = None
        if self.result:   # several returns: each assigns the one result variable
            self.assign_to(self.result, node.value if node.value is not None else
                           gast.Constant(value=None, kind=None))
            value = self.result
        elif node.value is not None:
            if isinstance(node.value, gast.Name) or _literal(node.value) is not None:
                value = self.atom(node.value)
            else:   # the value is named after the function: `return mean(h)` -> loss = ...
                value = self.names.fresh(self.parsed.name)
                self.assign_to(value, node.value)
        self.emit(ir.Return(self.origin, value))

    def _assign(self, node: gast.Assign) -> None:
        if len(node.targets) > 1:
            first = self.atom(node.value)
            for t in node.targets:
                self._assign(gast.Assign(targets=[t], value=as_expr(first), type_comment=None))
            return
        target = node.targets[0]
        if isinstance(target, gast.Name):
            self.assign_to(target.id, node.value)
        elif isinstance(target, (gast.Tuple, gast.List)):
            self._unpack(target, node.value, node)
        elif isinstance(target, gast.Subscript):
            self._setitem(target, node.value, node, "index_update")
        else:
            raise self.parsed.error("only names, tuples of names and subscripts can be assigned "
                                    "(not attributes)", node, "attribute assignment")

    def _unpack(self, target: gast.Tuple | gast.List, value: gast.expr, node: gast.AST) -> None:
        if self._unpack_starred(target, value):
            return
        names = []
        nested: list[tuple[str, gast.Tuple | gast.List]] = []
        for elt in target.elts:
            if isinstance(elt, (gast.Tuple, gast.List)):   # (W, b), (W2, b2) = params
                pair = self.names.fresh("pair")
                self.temporaries.add(pair)
                nested.append((pair, elt))
                names.append(pair)
                continue
            if isinstance(elt, gast.Starred):
                raise self.parsed.error("*-unpacking is not supported by gradlab but of a "
                                        "variable (first, *rest = ws): assign the value to a "
                                        "name first", node, "*-unpacking")
            if not isinstance(elt, gast.Name):
                raise self.parsed.error("tuple unpacking must assign names (or tuples of "
                                        "names), not starred names, items or attributes",
                                        node, "unpacking into other than names")
            names.append(elt.id)
        if nested:
            self._unpack(gast.Tuple(elts=[gast.Name(n, gast.Store(), None, None)
                                          for n in names], ctx=gast.Store()), value, node)
            for pair, elt in nested:
                self._unpack(elt, gast.Name(pair, gast.Load(), None, None), node)
            return
        if isinstance(value, (gast.Tuple, gast.List)) and len(value.elts) == len(names):
            atoms = [self.atom(v) for v in value.elts]
            self.emit(Assign(self.origin, names, Op(OpKind.TUPLE, args=atoms)))
            for n in names:
                self.lists.discard(n)
            return
        if isinstance(value, gast.Call):   # a call that gives a pair: v, i = torch.max(x, 1)
            op, hint = self.op(value)
            if op.kind is OpKind.TUPLE and len(op.args) == len(names):
                self.emit(Assign(self.origin, names, op))
                for n in names:
                    self.lists.discard(n)
                    self.fields.pop(n, None)
                return
            value = as_expr(self._bind_temp(hint, op))
        elif not isinstance(value, gast.Name):
            op, hint = self.op(value)
            if op.kind is OpKind.PRIM and op.prim not in ir.LIST_RESULTS and op.prim in \
                    PRIMITIVES and PRIMITIVES[op.prim].differentiable and "codegen" not in \
                    PRIMITIVES[op.prim].kinds and op.prim != "getitem" and not (
                        ir.op_reads(op) & self.lists):
                # a, b = np.sin(x) or x @ W: rows of an array, read as its items (an item or
                # a slice of an argument, W, b = params[0], may be a list's: read as one)
                array = self._bind_temp(hint, op)
                for i, n in enumerate(names):
                    self.emit(Assign(self.origin, [n], Op(OpKind.PRIM, "getitem",
                                                          [array, Const(i)], style="subscript")))
                    self.lists.discard(n)
                return
            value = as_expr(self._bind_temp("parts", op))
        source = self.atom(value)
        if not isinstance(source, str):
            source = self._bind_temp("parts", source)
        self.lists.add(source)
        for i, n in enumerate(names):
            self.emit(Assign(self.origin, [n], Op(OpKind.PRIM, "list_getitem", [source, Const(i)],
                                                  style="subscript")))
            self.lists.discard(n)

    def _unpack_starred(self, target: gast.Tuple | gast.List, value: gast.expr) -> bool:
        """``first, *rest = ws`` of a name: ``first = ws[0]``, ``rest = ws[1:]``, a list as
        Python makes it (of an array, a list of its rows: the slice, read as a list, so that
        ``rest + rest`` is refused as a list's joining and ``np.sum(rest)`` stacks the rows)."""
        marks = [i for i, e in enumerate(target.elts) if isinstance(e, gast.Starred)]
        if not (len(marks) == 1 and isinstance(value, gast.Name) and all(
                isinstance(e.value if i == marks[0] else e, gast.Name)
                for i, e in enumerate(target.elts))):
            return False
        self.lists.add(value.id)
        k, n = marks[0], len(target.elts)
        after = n - k - 1

        def item(index: Any) -> gast.Subscript:
            return gast.Subscript(value=gast.Name(value.id, gast.Load(), None, None),
                                  slice=index, ctx=gast.Load())
        for i in range(k):
            first = target.elts[i].id  # type: ignore[attr-defined]
            self.assign_to(first, item(gast.Constant(i, None)))
        rest = gast.Slice(gast.Constant(k, None),
                          gast.Constant(-after, None) if after else None, None)
        rest_name = target.elts[k].value.id  # type: ignore[attr-defined]
        self.assign_to(rest_name, item(rest))
        self.lists.add(rest_name)
        self.sure_lists.add(rest_name)
        for j in range(after):
            self.assign_to(target.elts[k + 1 + j].id,  # type: ignore[attr-defined]
                           item(gast.Constant(j - after, None)))
        return True

    def _setitem(self, target: gast.Subscript, value: gast.expr, node: gast.AST,
                 prim: str) -> None:
        if not isinstance(target.value, gast.Name):
            raise self.parsed.error("only a variable's items can be assigned (x[i] = ...)", node,
                                    "nested subscript assignment")
        name = target.value.id
        if name not in self.locals and name not in self.temporaries:
            raise self.parsed.error(
                f"{name}[...] changes {name}, a value from outside the function, in place: "
                f"gradlab's code would not change it (it makes new arrays), and the forward "
                f"pass runs again with each gradient; change it outside the function, or "
                f"change a copy made inside it ({name}_copy = {name}.copy())", node,
                "outside value changed in place")
        if name in self.lists:
            v = self.atom(value)
            self.items.pop(name, None)
            self.emit(ir.Effect(self.origin, EffectKind.LIST_SET, target=name, value=v,
                                node=self.inline(target.slice)))
            return
        v = self.atom(value)
        index = self.inline(target.slice)
        self.emit(Assign(self.origin, [name], Op(OpKind.PRIM, prim, [name, index, v])))

    def _augassign(self, node: gast.AugAssign) -> None:
        target = node.target
        if isinstance(target, gast.Name):
            value = gast.BinOp(left=gast.Name(target.id, gast.Load(), None, None), op=node.op,
                               right=node.value)
            self.assign_to(target.id, value)
            last = self.out[-1]
            if isinstance(last, Assign) and last.targets == [target.id]:
                last.augmented = True   # NumPy and torch change the array in place
        elif isinstance(target, gast.Subscript):
            # x[i] += v adds v once to each entry the index names: an index that may hold an
            # array of indices, so name an entry twice (x[[0, 0]] += v), is read as
            # x[idx] = x[idx] + v, as NumPy computes it, not as an accumulation (np.add.at)
            once = not (not_plain_index(target.slice) or indexes_by_array(
                target.slice, self.counters, frozenset()))
            if isinstance(node.op, gast.Add) and once:
                self._setitem(target, node.value, node, "index_add")
            elif isinstance(node.op, gast.Sub) and once:
                self._setitem(target, gast.UnaryOp(op=gast.USub(), operand=node.value), node,
                              "index_add")
            else:
                current = gast.Subscript(value=target.value, slice=target.slice, ctx=gast.Load())
                self._setitem(target, gast.BinOp(left=current, op=node.op, right=node.value),
                              node, "index_update")
        else:
            raise self.parsed.error("only names and subscripts can be updated in place", node,
                                    "attribute update")

    def _expr_stmt(self, node: gast.Expr) -> None:
        value = node.value
        if isinstance(value, gast.Constant):
            return  # a docstring or a bare literal
        if isinstance(value, gast.Call):
            parts = dotted(value.func)
            if parts and len(parts) == 2 and parts[0] in self.locals:
                method = parts[1]
                if method == "append":
                    if len(value.args) != 1 or value.keywords:
                        raise self.parsed.error("append takes one value", node, "append")
                    v = self.atom(value.args[0])
                    self.emit(ir.Effect(self.origin, EffectKind.APPEND, target=parts[0], value=v))
                    self.lists.add(parts[0])
                    self.sure_lists.add(parts[0])
                    self.items.pop(parts[0], None)
                    return
                if method in INPLACE_METHODS or method.endswith("_"):
                    self.emit(ir.Effect(self.origin, EffectKind.INPLACE, target=parts[0],
                                        node=gast.Expr(value=value)))
                    return
        effect = ir.Effect(self.origin, EffectKind.STATIC, node=gast.Expr(value=self.inline(value)))
        if isinstance(value, gast.Call):
            effect.call = self._discarded_call(value)
        self.emit(effect)

    def _discarded_call(self, node: gast.Call) -> str:
        """The name of a call on a line of its own that can only matter by changing its
        arguments (``np.copyto(y, v)``, ``np.add(a, b, out=a)``); '' for one that is harmless
        there (``print``, the user's own function, a primitive whose result is unused)."""
        try:
            res = self.resolver.call(node)
        except BindError:       # e.g. out=, which no primitive takes
            return callee_text(node.func)
        return res.label if res.kind == "unknown" else ""

    def _for(self, node: gast.For) -> None:
        """Every ``for`` as ``for i in range(...)``: a loop over a sequence's rows, over
        ``enumerate`` or ``zip`` reads its items by index at the top of the body."""
        index, range_args, rows, reverse = self._loop_over(node)
        saved = self.out
        self.out = []
        for row, seq in rows:
            # a row unpacked (``for W, b in params``): read into a name, then unpacked as
            # ``W, b = row`` would be
            row_name = row.id if isinstance(row, gast.Name) else self.names.fresh("row")
            self.emit(Assign(self.origin, [row_name], Op(OpKind.PRIM, "getitem", [seq, gast.Name(
                index, gast.Load(), None, None)], style="subscript")))
            if not isinstance(row, gast.Name):
                unpack = gast.Assign(targets=[row], value=gast.Name(row_name, gast.Load(), None,
                                                                      None), type_comment=None)
                self.stmt(gast.copy_location(unpack, node))
        fresh_counter = index not in self.counters
        self.counters.add(index)
        for s in node.body:
            self.stmt(s)
        if fresh_counter:
            self.counters.discard(index)
        body, self.out = self.out, saved
        self.emit(ir.For(self.origin, index, range_args, body, reverse=reverse))

    def _loop_over(self, node: gast.For
                   ) -> tuple[str, list[gast.expr], list[tuple[gast.expr, ir.Atom]], bool]:
        """What a ``for`` loops over: its index, the arguments of its ``range``, the names bound
        to a row of a sequence at each step (a name, or a tuple of names the row is unpacked
        into: ``for W, b in params``), and whether it counts down (``reversed``)."""
        target, it = node.target, node.iter
        parts = dotted(it.func) if isinstance(it, gast.Call) else None
        call = it if isinstance(it, gast.Call) else None
        resolved = self.resolver.call(call) if call is not None and parts else None
        label = resolved.label if resolved is not None else ""
        reverse = False
        if call is not None and label == "reversed" and len(call.args) == 1 and isinstance(
                call.args[0], gast.Call) and dotted(call.args[0].func) == ["range"]:
            call, label, reverse = call.args[0], "range", True
        if call is not None and label == "range" and isinstance(target, gast.Name):
            return target.id, [self.inline(a) for a in call.args], [], reverse
        if call is not None and label == "enumerate" and (call.keywords or len(call.args) > 1):
            raise self.parsed.error(
                "enumerate with a start: gradlab counts from 0; write enumerate(xs) and use "
                "k + start where the count is read", node, "enumerate start")
        if call is not None and label == "enumerate" and isinstance(target, gast.Tuple) \
                and len(target.elts) == 2 and isinstance(target.elts[0], gast.Name) \
                and _row_target(target.elts[1]) and len(call.args) == 1:
            inner = call.args[0]
            inner_label = self.resolver.call(inner).label if isinstance(
                inner, gast.Call) and dotted(inner.func) else ""
            row = target.elts[1]
            if inner_label == "zip" and isinstance(row, gast.Tuple) and len(row.elts) == len(
                    inner.args):     # for i, (u, v) in enumerate(zip(a, b))
                seqs = [self.atom(a) for a in inner.args]    # type: ignore[attr-defined]
                return target.elts[0].id, self._shortest(seqs), list(zip(row.elts, seqs)), \
                    reverse
            if inner_label in _ITERATORS:
                raise self.parsed.error("gradlab loops over range(...), over an array's rows, "
                                        "enumerate(...) or zip(...)", node, "for loop")
            seq = self.atom(inner)
            return target.elts[0].id, [_len_of(seq)], [(row, seq)], reverse
        if call is not None and label == "zip" and isinstance(target, gast.Tuple) \
                and all(_row_target(e) for e in target.elts):
            seqs = [self.atom(a) for a in call.args]
            return self.names.fresh("i"), self._shortest(seqs), list(zip(target.elts, seqs)), \
                reverse
        if _row_target(target) and not (call is not None and label in _ITERATORS):
            seq = self.atom(it)
            named = target.id if isinstance(target, gast.Name) else "row"
            index = self.names.fresh(f"{named}_index" if len(named) > 1 else "i")
            return index, [_len_of(seq)], [(target, seq)], reverse
        raise self.parsed.error("gradlab loops over range(...), over an array's rows, "
                                "enumerate(...) or zip(...)", node, "for loop")

    @staticmethod
    def _shortest(seqs: list[ir.Atom]) -> list[gast.expr]:
        """The ``range`` argument of a loop over ``zip(*seqs)``: the shortest length."""
        lengths = [_len_of(s) for s in seqs]
        return [lengths[0] if len(lengths) == 1 else gast.Call(
            func=gast.Name("min", gast.Load(), None, None), args=lengths, keywords=[])]

    def _insert_grad_of(self, node: gast.With) -> None:
        item = node.items[0]
        call = item.context_expr
        if len(node.items) != 1 or not isinstance(call, gast.Call) or len(call.args) != 1 or \
                not isinstance(call.args[0], gast.Name) or not isinstance(
                    item.optional_vars, gast.Name):
            raise self.parsed.error("write `with gradlab.insert_grad_of(x) as dx:` with a "
                                    "variable x", node, "insert_grad_of")
        self.emit(ir.GradOf(self.origin, call.args[0].id, item.optional_vars.id, node.body))

    # --- expressions --------------------------------------------------------------------------
    def assign_to(self, target: str, value: gast.expr) -> None:
        self.partials.pop(target, None)
        self.lambdas.pop(target, None)
        if isinstance(value, gast.Lambda):
            self._assigned_once(target, value, "lambda")
            self.lambdas[target] = value
            return
        if self._partial(target, value):
            return
        op, _ = self.op(value)
        self.emit(Assign(self.origin, self._targets(target, op), op))
        self._note_kind(target, op)

    def _targets(self, target: str, op: Op) -> list[str]:
        """An opaque call's statement also names the framework's backward for it."""
        if op.kind is OpKind.OPAQUE:
            return [target, self.names.fresh(f"{target}_vjp")]
        return [target]

    def _literal_item(self, op: Op) -> ir.Atom | None:
        """The item ``xs[k]`` reads, for a constant ``k`` and a list written out and not
        changed since (``p = [x, m]``; ``p[-1]`` is ``m``), else None."""
        xs, index = op.args[0], op.args[1]
        literal = index if isinstance(index, Const) else _literal(index) if isinstance(
            index, gast.expr) else None
        k = literal.value if literal is not None else None
        items = self.items.get(xs) if isinstance(xs, str) else None
        if items is None or type(k) is not int or not -len(items) <= k < len(items):
            return None
        return items[k]

    def _boolean(self, atom: ir.Atom | None) -> bool:
        """A value that is a boolean (array) by how it was made: a comparison, ``np.isfinite``,
        ``np.logical_and``..."""
        if isinstance(atom, str):
            return atom in self.booleans
        return isinstance(atom, gast.Compare) or (
            isinstance(atom, gast.UnaryOp) and isinstance(atom.op, gast.Not))

    def _as_number(self, atom: ir.Atom, other: ir.Atom) -> ir.Atom:
        """NumPy computes with a boolean as 0 and 1 in the other operand's dtype (``(x > 0) *
        x``); TensorFlow's arithmetic refuses a boolean, so the cast is written out."""
        if not self._boolean(atom) or self._boolean(other) or isinstance(other, Const) and (
                isinstance(other.value, bool)):
            return atom
        return self._cast_like(atom, other, f"{_hint(atom) or 'mask'}_as_number")

    def _cast_like(self, atom: ir.Atom, other: ir.Atom, hint: str) -> str:
        """``atom`` cast to ``other``'s dtype, on a line of its own."""
        like = as_expr(other) if isinstance(other, (str, Const)) else other
        dtype = gast.Call(func=gast.Attribute(value=gast.Name("gl", gast.Load(), None, None),
                                              attr="dtype", ctx=gast.Load()),
                          args=[trees.clone(like)], keywords=[])
        return self._bind_temp(hint, Op(OpKind.PRIM, "astype", [atom, dtype]))

    def _truth_as(self, atom: ir.Atom, dtype: str) -> ir.Atom:
        """A truth value as the number the called function makes of it, the cast written out:
        torch and JAX compute their float functions of one in float32, where NumPy (and so
        gradlab's backends) compute them in float16 (``torch.tanh(m)`` of a mask ``m``);
        ``math.floor`` of one is an int, NumPy's ``floor`` the bool itself."""
        if not self._boolean(atom):
            return atom
        return self._bind_temp(f"{_hint(atom) or 'mask'}_as_{dtype}", Op(
            OpKind.PRIM, "astype", [atom, gast.Constant(value=dtype, kind=None)]))

    def _count_as_float(self, atom: ir.Atom, other: ir.Atom, prim: str) -> ir.Atom:
        """NumPy computes a count (``np.sum(mask)``, an int) times a Python float, or divided
        by anything, in float64; torch in float32. In code written for NumPy the count is
        cast first, as NumPy promotes it (in torch code, torch's float32 is what the function
        computes)."""
        if self.dialect == "torch" or not (isinstance(atom, str) and atom in self.counts):
            return atom
        if prim == "divide":
            return self._cast_like(atom, Const(1.0), f"{atom}_as_float")
        if not (isinstance(other, Const) and type(other.value) is float):
            return atom
        return self._cast_like(atom, other, f"{atom}_as_float")

    def _list_operand(self, atom: ir.Atom, prim: str, node: gast.BinOp) -> ir.Atom:
        """A Python list in arithmetic: ``+`` joins two lists and ``*`` repeats one, which
        gradlab does not differentiate (refused); any other operator is NumPy's, on the
        array it makes of the list (stacked). Only a name sure to hold a list: an argument
        unpacked into names (``x1, y1 = p``) may be an array, whose ``p + q`` is a sum."""
        if not (isinstance(atom, str) and atom in self.sure_lists):
            return atom
        if prim in ("add", "multiply"):
            sign, does = ("+", "joins lists") if prim == "add" else ("*", "repeats a list")
            raise self.parsed.error(
                f"{sign} with a Python list {does} (beside an array, it is NumPy's arithmetic "
                f"on the list made an array): gradlab differentiates neither; build the new "
                f"list item by item (append, a comprehension), or stack the list first "
                f"(np.stack(xs)) for arithmetic", node, f"list {sign}")
        return self._stacked(atom, node)

    def _stacked(self, xs: str, node: gast.AST) -> str:
        """A list made the array NumPy makes of it (``np.sum(xs)``, ``xs - x``), where the
        code reads it as a list."""
        self._refuse_checked_list(xs, node)
        return self._bind_temp(f"stack_{xs}", Op(OpKind.PRIM, "stack", [xs]))

    def _refuse_checked_list(self, xs: str, node: gast.AST) -> None:
        """A helper's parameter that a caller gives a list is checked, not written
        (:func:`_check_list_arguments`): the helper's code reads it as whatever it gets, so a
        line whose meaning for a list is not its meaning for an array is refused."""
        if xs in self.checked_lists:
            raise self.parsed.error(
                f"{xs} is given a Python list, and this line means something else for a list "
                f"than for an array (np.sum({xs}) stacks the list, sum({xs}) adds its items): "
                f"gradlab's code for {self.parsed.node.name} reads {xs} as it comes; pass it "
                f"an array (np.stack(...)), or stack it first inside (np.stack({xs}))", node,
                "list used as an array")

    def _note_kind(self, target: str, op: Op) -> None:
        """Whether ``target`` now holds a Python list (items read with ``list_getitem``) and
        whether its items have names (``.values`` of ``torch.max(x, 1)``)."""
        copied = op.kind is OpKind.COPY and isinstance(op.args[0], str)
        # a slice of a list sure to be one (xs[1:]; a name unpacked, a, b = p, may be an array)
        sliced = op.prim == "list_getitem" and isinstance(op.args[1], gast.Slice) and (
            op.args[0] in self.sure_lists)
        returned = _returns_containers(op.callee) if op.kind is OpKind.USER else None
        sure = op.kind is OpKind.LIST or op.prim in ir.LIST_RESULTS or sliced or (
            copied and op.args[0] in self.sure_lists) or returned == "always"
        if sure or op.fields or (copied and op.args[0] in self.lists) or returned:
            self.lists.add(target)
        else:
            self.lists.discard(target)
        if sure:
            self.sure_lists.add(target)
        else:
            self.sure_lists.discard(target)
        if op.kind in (OpKind.LIST, OpKind.TUPLE) and not op.fields:
            self.items[target] = list(op.args)     # [x, m]: m[-1] is m, a boolean maybe
        else:
            self.items.pop(target, None)
        boolean = (op.kind is OpKind.PRIM and (NONDIFFERENTIABLE.get(op.prim) == BOOLEAN or (
            op.prim in KEEPS_BOOLEANS and self._boolean(op.args[0])) or (
            op.prim == "list_getitem" and self._boolean(self._literal_item(op))) or (
            op.prim in BOOLEAN_PAIRS and len(op.args) == 2 and all(
                self._boolean(a) for a in op.args)))) or (
            op.kind is OpKind.STATIC and self._boolean(op.node)) or (  # type: ignore[arg-type]
            copied and op.args[0] in self.booleans)
        if boolean:
            self.booleans.add(target)
        else:
            self.booleans.discard(target)
        counted = (op.kind is OpKind.PRIM and op.prim in _COUNTING and bool(op.args) and (
            self._boolean(op.args[0]) or op.args[0] in self.counts)) or (
            copied and op.args[0] in self.counts)
        if counted:
            self.counts.add(target)
        else:
            self.counts.discard(target)
        fields = op.fields or (self.fields.get(op.args[0], ()) if copied else ())  # type: ignore[arg-type]
        if fields:
            self.fields[target] = fields
        else:
            self.fields.pop(target, None)

    def atom(self, node: gast.expr) -> ir.Atom:
        """The value of ``node`` as a name, a literal, or an inline expression."""
        if isinstance(node, gast.Name):
            if node.id in self.partials or node.id in self.lambdas:
                what = "functools.partial(...)" if node.id in self.partials else "lambda ..."
                raise self.parsed.error(
                    f"{node.id} = {what} is used here as a value: gradlab reads it where it is "
                    f"called (as what it computes); call it, or write a def and call that",
                    node, what.split("(")[0].replace(" ...", ""))
            return node.id
        literal = _literal(node)
        if literal is not None:
            return literal
        op, hint = self.op(node)
        if op.kind is OpKind.STATIC and _inline_ok(op):
            return op.node  # type: ignore[return-value]
        if op.kind is OpKind.COPY:
            return op.args[0]
        return self._bind_temp(hint, op)

    def _bind_temp(self, hint: str, op_or_atom: Any) -> str:
        op = op_or_atom if isinstance(op_or_atom, Op) else Op(OpKind.COPY, args=[op_or_atom])
        key = _memo_key(op)
        memo = getattr(self, "memo", {})
        if key is not None and key in memo:   # the same computation twice in one line
            return memo[key]
        name = self.names.fresh(hint)
        self.temporaries.add(name)
        if key is not None:
            memo[key] = name
        self.emit(Assign(self.origin, self._targets(name, op), op))
        self._note_kind(name, op)
        return name

    def inline(self, node: gast.expr) -> gast.expr:
        """An expression kept as written (tests, indices, options): checked, not flattened."""
        for sub in trees.walk(node):
            if isinstance(sub, gast.IfExp):
                raise self.parsed.error("a conditional expression inside a condition or an "
                                        "index is not supported: compute it on its own line",
                                        sub, "conditional expression")
        return node

    def op(self, node: gast.expr) -> tuple[Op, str]:
        """One operation whose operands are atoms, and a name hint for its result."""
        if isinstance(node, gast.Name):
            return Op(OpKind.COPY, args=[node.id]), node.id
        literal = _literal(node)
        if literal is not None:
            return Op(OpKind.COPY, args=[literal]), "const"
        if isinstance(node, gast.BinOp):
            prim = _BINOPS.get(type(node.op))
            if prim is None:
                return Op(OpKind.STATIC, node=node), "value"
            left, right = self.atom(node.left), self.atom(node.right)
            if prim == "add" and self.generated and any(
                    isinstance(a, str) and a in self.lists for a in (left, right)):
                # gradient code adds a list's gradients item by item (gradlab.tensor.gradlist)
                return Op(OpKind.PRIM, "add_lists", [left, right]), "total"
            if prim != "matmul":
                left, right = self._list_operand(left, prim, node), self._list_operand(
                    right, prim, node)
            hint = binop_hint(node.op, _hint(left), _hint(right))
            if prim in _ARITHMETIC:
                left, right = self._as_number(left, right), self._as_number(right, left)
                left, right = (self._count_as_float(left, right, prim),
                               self._count_as_float(right, left, prim))
            style = "call" if prim == "matmul" else "binop"
            return Op(OpKind.PRIM, prim, [left, right], style=style), hint
        if isinstance(node, gast.UnaryOp):
            if isinstance(node.op, gast.USub):
                x = self.atom(node.operand)
                return Op(OpKind.PRIM, "negative", [x], style="unary"), f"neg_{_hint(x)}"
            if isinstance(node.op, gast.UAdd):
                return Op(OpKind.COPY, args=[self.atom(node.operand)]), "value"
            return Op(OpKind.STATIC, node=node), "flag"
        if isinstance(node, (gast.Compare, gast.BoolOp, gast.JoinedStr, gast.Dict)):
            return Op(OpKind.STATIC, node=node), "flag" if not isinstance(node, gast.JoinedStr) else "text"
        if isinstance(node, gast.Call):
            return self._call(node)
        if isinstance(node, gast.Attribute):
            return self._attribute(node)
        if isinstance(node, gast.Subscript):
            return self._subscript(node)
        if isinstance(node, gast.IfExp):
            return self._ifexp(node)
        if isinstance(node, (gast.Tuple, gast.List)):
            atoms = [self.atom(e) for e in node.elts]
            kind = OpKind.LIST if isinstance(node, gast.List) else OpKind.TUPLE
            if all(isinstance(a, Const) for a in atoms) and kind is OpKind.TUPLE:
                values = tuple(a.value for a in atoms if isinstance(a, Const))
                return Op(OpKind.COPY, args=[Const(values)]), "const"
            return Op(kind, args=atoms), "_".join(_hint(a) for a in atoms)[:20] or "items"
        raise self.parsed.error(f"{type(node).__name__} expressions are not supported",
                                node, type(node).__name__)

    def _call(self, node: gast.Call) -> tuple[Op, str]:
        spelled = self._partial_call(node)
        if spelled is not None:
            return self._call(spelled)
        body = self._lambda_call(node)
        if body is not None:
            try:
                return self.op(body)
            finally:
                self.expanding.discard(node.func.id)  # type: ignore[attr-defined]
        updated = self._indexed_update(node)
        if updated is not None:
            return updated
        res = self.resolver.call(node)
        if res.kind == "prim":
            if res.prim == "copy" and any(isinstance(a, gast.Constant) and isinstance(
                    a.value, str) for a in node.args):
                # float('inf'), float('nan'): a number read from text, not a copy of a value
                return Op(OpKind.STATIC, node=node, source=res.label), "number"
            return self._prim(res, node)
        indexed = self._size_of_dim(node)
        if indexed is not None:
            return self.op(indexed)
        if res.kind == "user":
            if res.receiver is not None:      # x.trace(): the definition takes x first
                node = gast.Call(func=node.func, args=[res.receiver] + node.args,
                                 keywords=node.keywords)
            return self._user_call(res, node)
        if res.kind == "opaque":
            return self._opaque_call(res, node)
        if res.kind == "append":
            raise self.parsed.error("append returns None; call it on a line of its own", node,
                                    "append")
        if res.kind == "pop":
            receiver = node.func.value  # type: ignore[attr-defined]
            if not isinstance(receiver, gast.Name):
                raise self.parsed.error("pop() works on a list variable", node, "pop")
            self.lists.add(receiver.id)
            return Op(OpKind.POP, args=[receiver.id]), f"{receiver.id}_item"
        if res.kind == "static":
            return Op(OpKind.STATIC, node=node, source=res.label), res.label.split(".")[-1]
        root = res.label.split(".")[0]
        if res.callee is None and root.isidentifier() and root not in self.locals and not (
                self.parsed.scope.lookup(root)[0]):
            raise self.parsed.error(f"name {root!r} is not defined", node, "unknown name")
        return (Op(OpKind.STATIC, node=node, source=res.label, callee=res.callee, unknown=True),
                res.label.split(".")[-1])

    def _size_of_dim(self, node: gast.Call) -> gast.expr | None:
        """torch's ``x.size(d)``: the shape's entry ``d``, as ``x.size()[d]`` (where
        ``x.size()`` means the shape; NumPy's ``x.size`` is not called)."""
        func = node.func
        if not (isinstance(func, gast.Attribute) and func.attr == "size" and len(node.args) == 1
                and not node.keywords):
            return None
        whole = gast.Call(func=func, args=[], keywords=[])
        res = self.resolver.call(whole)
        if res.kind != "prim" or res.prim != "shape":
            return None
        return gast.copy_location(gast.Subscript(value=gast.copy_location(whole, node),
                                                 slice=node.args[0], ctx=gast.Load()), node)

    def _prim(self, res: Resolution, node: gast.Call) -> tuple[Op, str]:
        prim, bound = res.prim, res.args
        if prim == "array":
            prim, bound = _conversion(bound, self.lists)
            if prim == "copy" and res.conversion in ("same", "lists_detached"):
                return Op(OpKind.COPY, args=[self.atom(bound["x"])], style="conversion"), \
                    "array"
            if prim == "copy" and res.conversion == "detached":
                prim = "stop_gradient"
            elif res.conversion == "detached" and prim in ("stack", "astype") or (
                    res.conversion == "lists_detached" and prim == "stack"):
                # torch.tensor([w[1], w[0] * 2.0]), torch.as_tensor of the list too: a new
                # tensor of the values, which torch's autograd cuts from them (as it does a
                # tensor's copy): no gradient flows back
                made = self._prim(dataclasses.replace(res, conversion="same"), node)[0]
                inner = self._bind_temp("values", made)
                return Op(OpKind.PRIM, "stop_gradient", [inner], source=res.label), "array"
        word = _prim_word(prim) if prim != "copy" else "array"
        custom = is_custom(prim)
        args, kwargs = self._operands(prim, bound, res, node, custom)
        if prim in _FLOAT_OF_TRUTH and _framework_of(res) in ("torch", "jax"):
            args = [self._truth_as(a, "float32") for a in args]
        elif prim == "copy" and res.module == "builtins":
            args = [self._truth_as(a, "float64") for a in args]  # float(m[0]) is 1.0, a number
        if prim == "sum_list" and isinstance(args[0], str):
            self._refuse_checked_list(args[0], node)   # (the generic code sums over axis 0)
        if prim == "sum_list" and not (isinstance(args[0], str) and args[0] in self.lists) and (
                not self.generated):   # (gradient code writes sum(xs) of a list alone)
            # builtin sum of an array adds up its rows: NumPy's sum over the first axis
            prim, kwargs = "sum", {"axis": gast.Constant(value=0, kind=None)}
        first = args[0] if args else ""
        hint = f"{word}_{_hint(first)}" if _hint(first) else word
        if prim in ("max_list", "min_list"):
            return self._extreme_item(prim, args[0], res.label), hint
        if res.with_indices:
            values_name = self._bind_temp(hint, Op(OpKind.PRIM, prim, args, kwargs,
                                                   source=res.label))
            indices = self._bind_temp(f"{res.with_indices}_{_hint(first)}", Op(
                OpKind.PRIM, res.with_indices, args, kwargs, source=res.label))
            return Op(OpKind.TUPLE, args=[values_name, indices], fields=("values", "indices")), \
                hint
        if _keepdims_decides(kwargs) and not custom:
            return self._keepdims_at_run_time(prim, args, kwargs, res.label, hint), hint
        option = _none_decides(prim, kwargs) if not custom else None
        if option is not None:
            return self._none_at_run_time(prim, args, kwargs, option, res.label, hint), hint
        expanded = None if custom else expand(prim, self._bind_temp, args, kwargs)
        if expanded is not None:
            return expanded, hint
        style = "conversion" if res.prim == "array" and prim == "copy" else "call"
        if prim == "astype" and res.conversion in ("same", "lists_detached"):
            # np.asarray(x, dtype=...), torch.as_tensor(x, dtype=...): x itself where it has
            # that dtype already, so it may share x's memory (see aliasing.memory_links)
            style = "may_alias"
        return Op(OpKind.PRIM, prim, args, kwargs, style=style, source=res.label), hint

    def _indexed_update(self, node: gast.Call) -> tuple[Op, str] | None:
        """JAX's ``x.at[index].set(v)`` and ``.add(v)``: a new array, ``x`` with ``v`` written
        into (added at) ``index``, as NumPy's ``y = x.copy(); y[index] = v`` and
        ``np.add.at(y, index, v)`` (repeated positions add up)."""
        func = node.func
        if not (isinstance(func, gast.Attribute) and isinstance(func.value, gast.Subscript)
                and isinstance(func.value.value, gast.Attribute)
                and func.value.value.attr == "at"):
            return None
        if func.attr not in _AT_UPDATES:
            raise self.parsed.error(
                f"x.at[...].{func.attr}(...): gradlab differentiates JAX's .at[...].set(v) and "
                f".add(v); write x.at[i].set(x[i] * v) for .multiply(v), and likewise for the "
                f"others", node, f"at[].{func.attr}")
        if len(node.args) != 1 or node.keywords:
            raise self.parsed.error(
                f"x.at[...].{func.attr}(...) with other than one value (JAX's mode= and "
                f"indices_are_sorted= options): gradlab differentiates .{func.attr}(v) alone",
                node, f"at[].{func.attr}")
        base = self.atom(func.value.value.value)
        if not isinstance(base, str):
            base = self._bind_temp("updated", Op(OpKind.COPY, args=[base]))
        index = self.inline(func.value.slice)
        value = self.atom(node.args[0])
        return Op(OpKind.PRIM, _AT_UPDATES[func.attr], [base, index, value], style="new_array",
                  source=f"at[].{func.attr}"), f"{base}_{func.attr}"

    def _extreme_item(self, prim: str, xs: ir.Atom, label: str) -> Op:
        """The builtin ``max(xs)`` (``min(xs)``) of one list or array is the item it picks:
        ``xs[index_of_max(xs)]``, the index by Python's own comparisons (the first of equal
        items, as the builtin). The gradient flows to that item alone, as through
        ``max(a, b)``, and the generated code shows which one."""
        word = prim.split("_")[0]
        if not isinstance(xs, str):
            xs = self._bind_temp("items", Op(OpKind.COPY, args=[xs]))
        index = self._bind_temp(f"i_{word}_{xs}", Op(OpKind.PRIM, f"index_of_{word}", [xs],
                                                     source=label))
        item = "list_getitem" if xs in self.lists else "getitem"
        return Op(OpKind.PRIM, item, [xs, index], style="subscript", source=label)

    def _keepdims_at_run_time(self, prim: str, args: list[ir.Atom], kwargs: dict[str, ir.Atom],
                              label: str, hint: str) -> Op:
        """``keepdims=flag`` with a variable flag: the result's shape depends on it, and so does
        the rule, so the code branches on it, with each branch's call written for its value."""
        kept, dropped = (Op(OpKind.PRIM, prim, args, {**kwargs, "keepdims": gast.Constant(
            value, None)}, source=label) for value in (True, False))
        return Op(OpKind.COPY, args=[self._branch(kwargs["keepdims"], hint, kept, dropped)])

    def _none_at_run_time(self, prim: str, args: list[ir.Atom], kwargs: dict[str, ir.Atom],
                          option: str, label: str, hint: str) -> Op:
        """``axis=axis`` with a variable that may be None (a helper's ``axis=None`` default):
        the rule differs for None, so the code branches on it, the call written with None in
        one branch and known not to get None in the other."""
        given = kwargs[option]
        whole = Op(OpKind.PRIM, prim, args, {**kwargs, option: gast.Constant(None, None)},
                   source=label)
        along = Op(OpKind.PRIM, prim, args, kwargs, source=label,
                   not_none=frozenset({option}))
        test = gast.Compare(left=trees.clone(given), ops=[gast.Is()],
                            comparators=[gast.Constant(None, None)])
        return Op(OpKind.COPY, args=[self._branch(test, hint, whole, along)])

    def _branch(self, test: gast.expr, hint: str, when_true: Op, when_false: Op) -> str:
        """A fresh temporary assigned ``when_true`` or ``when_false`` in an ``if`` on ``test``
        (an option the user gave as a variable, read at run time)."""
        name = self.names.fresh(hint)
        self.temporaries.add(name)
        for op in (when_true, when_false):
            self._note_kind(name, op)
        self.emit(ir.If(self.origin, test, [Assign(self.origin, [name], when_true)],
                        [Assign(self.origin, [name], when_false)]))
        return name

    def _operands(self, prim: str, bound: dict[str, Any], res: Resolution, node: gast.Call,
                  custom: bool) -> tuple[list[ir.Atom], dict[str, ir.Atom]]:
        """A primitive call's arguments as operands, in its canonical signature's order: values
        flattened to atoms (a list given for an array stacked), options kept inline; the
        required ones positional, the others by keyword."""
        sig = signature(prim) if not custom else custom_signature(prim)
        values = set(sig.parameters) if custom else set(value_params(prim))
        args: list[ir.Atom] = []
        kwargs: dict[str, ir.Atom] = {}
        for pname, param in sig.parameters.items():
            if pname not in bound:
                continue
            value = bound[pname]
            if isinstance(value, tuple) or param.kind is param.VAR_POSITIONAL:
                raise self.parsed.error(f"{res.label}: variable arguments are not supported",
                                        node, "varargs")
            if pname == "xs":
                atom = self._list_atom(value)
            elif pname in values:
                folded = _number_arithmetic(value)   # np.clip(p, 1e-7, 1 - 1e-7): a number
                atom = Const(folded) if folded is not None else self.atom(value)
                if not custom and prim != "array":
                    atom = self._numbers_as_array(atom)
                if isinstance(atom, str) and atom in self.lists and not custom and (
                        not self.generated):
                    # NumPy makes an array of a list it is given: np.sum([a, b]) (gradient
                    # code, which hvp reads, hands its lists to helpers that take lists)
                    atom = self._stacked(atom, node)
            else:
                atom = self._option(value)
            if pname in res.transforms:
                atom = self._transformed(atom, res.transforms[pname])
            if param.default is param.empty and param.kind is not param.KEYWORD_ONLY:
                args.append(atom)
            else:
                kwargs[pname] = atom
        return args, kwargs

    def _option(self, node: gast.expr) -> gast.expr:
        """An option kept as written, except infinity (``np.inf``, ``-math.inf``,
        ``float('inf')``), written ``float('inf')``: the literal the rules read it as
        (``np.linalg.norm(x, np.inf)`` is the maximum's rule, not the p-norm's)."""
        node = self.inline(node)
        inner = node.operand if isinstance(node, gast.UnaryOp) and isinstance(
            node.op, gast.USub) else node
        negated = inner is not node
        sign = self.resolver.infinity(inner)
        if not sign:
            return node
        infinity = gast.Call(func=gast.Name("float", gast.Load(), None, None),
                             args=[gast.Constant(value="inf", kind=None)], keywords=[])
        negative = (sign < 0) != negated
        return gast.UnaryOp(op=gast.USub(), operand=infinity) if negative else infinity

    def _transformed(self, atom: ir.Atom, transform: Transform) -> ir.Atom:
        """``tf.matmul(a, b, transpose_a=True)``: ``a`` transposed first, on a line of its own;
        with a flag that is a variable, in an ``if`` on it (``a`` itself in the ``else``)."""
        options = [gast.Constant(value=v, kind=None) for v in transform.extra]
        op = Op(OpKind.PRIM, transform.prim, [atom, *options])
        hint = f"{_prim_word(transform.prim)}_{_hint(atom)}"
        if transform.flag is None:
            return self._bind_temp(hint, op)
        return self._branch(self.inline(transform.flag), hint, op, Op(OpKind.COPY, args=[atom]))

    def _numbers_as_array(self, atom: ir.Atom) -> ir.Atom:
        """A list of numbers written where an array goes (``np.maximum(x, [0.1, 0.2])``,
        ``np.concatenate([x, [1.0]])``) as the constant array NumPy makes of it: torch's,
        TensorFlow's and JAX's functions take no Python list, and forward mode needs its
        tangent shaped like it."""
        if isinstance(atom, Const) and isinstance(atom.value, (list, tuple)):
            return self._bind_temp("values", Op(OpKind.PRIM, "array", [atom]))
        if isinstance(atom, (gast.List, gast.Tuple)) and atom.elts and all(
                _literal(e) is not None for e in atom.elts):
            return self._bind_temp("values", Op(OpKind.PRIM, "array", [atom]))
        return atom

    def _list_atom(self, value: gast.expr) -> ir.Atom:
        if isinstance(value, (gast.List, gast.Tuple)):
            atoms = [self._numbers_as_array(self.atom(e)) for e in value.elts]
            name = self._bind_temp("parts", Op(OpKind.LIST, args=atoms))
            return name
        return self.atom(value)

    def _opaque_call(self, res: Any, node: gast.Call) -> tuple[Op, str]:
        """``model(x)``: one operation whose operands are the call's arguments (see
        :mod:`.opaque`); the callable itself is kept as written."""
        if any(isinstance(a, gast.Starred) for a in node.args) or any(
                k.arg is None for k in node.keywords):
            raise self.parsed.error(f"{res.label}(*...) / (**...): pass arguments one by one",
                                    node, "varargs")
        args = [self.atom(a) for a in node.args]
        kwargs = {k.arg: self.atom(k.value) for k in node.keywords if k.arg is not None}
        word = res.label.split(".")[-1]
        # the callable stays an expression: the IR is copied per variant, and a model is not
        return Op(OpKind.OPAQUE, args=args, kwargs=kwargs, node=self.inline(node.func),
                  source=res.label), f"{word}_out"

    def _user_call(self, res: Any, node: gast.Call) -> tuple[Op, str]:
        fn = res.callee
        sig = inspect.signature(fn)
        for p in sig.parameters.values():
            if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
                raise self.parsed.error(f"{res.label} takes *args/**kwargs, which gradlab cannot "
                                        f"differentiate through", node, "varargs")
        if any(isinstance(a, gast.Starred) for a in node.args) or any(
                k.arg is None for k in node.keywords):
            raise self.parsed.error(f"{res.label}(*...) / (**...): pass arguments one by one",
                                    node, "varargs")
        try:
            bound = sig.bind(*node.args, **{k.arg: k.value for k in node.keywords})
        except TypeError as e:
            raise self.parsed.error(f"{res.label}: {e}", node, "call") from None
        args: list[ir.Atom] = []
        for pname, p in sig.parameters.items():
            if pname in bound.arguments:
                args.append(self.atom(bound.arguments[pname]))
            else:
                default = p.default
                if not _is_literal_value(default):
                    raise self.parsed.error(
                        f"{res.label}: the default of parameter {pname!r} is not a literal; "
                        f"pass it explicitly", node, "default argument")
                args.append(Const(default))
        lists = frozenset(p for p, a in zip(sig.parameters, args)
                          if isinstance(a, str) and a in self.lists)
        if lists:        # (checked once the function is read: see program.normalize_function)
            self.lists_passed.append((fn, lists))
        return Op(OpKind.USER, args=args, callee=fn, source=res.label), f"{fn.__name__}_out"

    def _attribute(self, node: gast.Attribute) -> tuple[Op, str]:
        base = node.value
        if isinstance(base, gast.Name) and (base.id in self.locals or
                                            base.id in self.temporaries):
            if node.attr in self.fields.get(base.id, ()):
                index = self.fields[base.id].index(node.attr)
                return Op(OpKind.PRIM, "list_getitem", [base.id, Const(index)], style="subscript"), \
                    f"{base.id}_{node.attr}"
            meaning = ATTRIBUTES.get(node.attr)
            if meaning is None:
                return Op(OpKind.STATIC, node=node, attribute=node.attr), node.attr
            record = PRIMITIVES[meaning.prim]
            if record.nondifferentiable and "inspection" in record.kinds:
                return Op(OpKind.STATIC, node=node), f"{base.id}_{node.attr}"
            if meaning.prim == "copy":
                return Op(OpKind.COPY, args=[base.id]), base.id
            params = list(signature(meaning.prim).parameters)
            args: list[ir.Atom] = [base.id] + [
                gast.Constant(value=meaning.defaults[p], kind=None) for p in params[1:]
                if p in meaning.defaults]
            return Op(OpKind.PRIM, meaning.prim, args, style="attribute"), \
                f"{base.id}{node.attr}"
        if self.resolver.is_module_constant(node):
            return Op(OpKind.STATIC, node=node), node.attr
        if not isinstance(base, gast.Name):
            inner = self.atom(base)
            if isinstance(inner, str) and (node.attr in ATTRIBUTES or node.attr in
                                           self.fields.get(inner, ())):
                return self._attribute(gast.Attribute(value=gast.Name(inner, gast.Load(), None,
                                                                      None), attr=node.attr,
                                                      ctx=gast.Load()))
        return Op(OpKind.STATIC, node=node), node.attr

    def _subscript(self, node: gast.Subscript) -> tuple[Op, str]:
        value = node.value
        if isinstance(value, gast.Attribute) and value.attr in ("shape",):
            if not isinstance(value.value, gast.Name):   # x[idx].shape[0]: x[idx] on its own
                inner = self.atom(value.value)           # line (TensorFlow's [] takes no
                if isinstance(inner, str):               # array index; gl.getitem does)
                    node = gast.Subscript(value=gast.Attribute(
                        value=gast.Name(inner, gast.Load(), None, None), attr="shape",
                        ctx=gast.Load()), slice=node.slice, ctx=gast.Load())
            return Op(OpKind.STATIC, node=node), "size"
        base = self.atom(value)
        index = self.inline(node.slice)
        if not isinstance(base, str):
            return Op(OpKind.STATIC, node=node), "item"
        prim = "list_getitem" if base in self.lists else "getitem"
        return Op(OpKind.PRIM, prim, [base, index], style="subscript"), f"{base}_{_index_hint(index)}"

    def _ifexp(self, node: gast.IfExp) -> tuple[Op, str]:
        name = self.names.fresh("choice")
        test = self.inline(node.test)
        body = self._capture(lambda: self.assign_to(name, node.body))
        orelse = self._capture(lambda: self.assign_to(name, node.orelse))
        self.emit(ir.If(self.origin, test, body, orelse))
        return Op(OpKind.COPY, args=[name]), name

    def _capture(self, fn: Any) -> list[ir.Stmt]:
        """Statements ``fn`` emits, as a separate block (a branch): computations memoized
        before it stay usable, those made inside it stay inside it."""
        saved, saved_memo = self.out, getattr(self, "memo", {})
        self.out = []
        self.memo = dict(saved_memo)
        fn()
        out, self.out = self.out, saved
        self.memo = saved_memo
        return out


def _keepdims_decides(kwargs: dict[str, ir.Atom]) -> bool:
    """``keepdims`` given as a variable, where it changes the result's shape (an axis is
    given: over every axis, the rules read the same either way)."""
    flag, axis = kwargs.get("keepdims"), kwargs.get("axis")
    return flag is not None and not isinstance(flag, gast.Constant) and axis is not None and not (
        isinstance(axis, gast.Constant) and axis.value is None)


def _none_decides(prim: str, kwargs: dict[str, ir.Atom]) -> str | None:
    """An option given as a variable (``axis=axis``) that the primitive's rules compare with
    None (``keepdims=True`` settles sum's ``axis is None or keepdims`` but not mean's
    ``if axis is None ... elif keepdims``: branched on at run time either way)."""
    if not any(isinstance(v, gast.Name) for v in kwargs.values()):
        return None       # (the common case, decided without reading the rules)
    tested: set[str] = set()
    for table in (ADJOINTS, TANGENTS):
        if prim in table:
            tested |= tested_for_none(table[prim])
    if not tested:
        return None
    return next((p for p in sorted(tested) if isinstance(kwargs.get(p), gast.Name)), None)


#: what NumPy computes as ints from booleans (or from such ints)
_COUNTING = frozenset({"sum", "prod", "cumsum", "cumprod", "count_nonzero"})

#: float functions that NumPy computes of a truth value in float16, torch and JAX in float32
#: JAX's indexed updates gradlab differentiates: x.at[i].set(v), x.at[i].add(v)
_AT_UPDATES = {"set": "index_update", "add": "index_add"}

_FLOAT_OF_TRUTH = frozenset(FLOAT_FUNCTIONS) | {"arctan2", "hypot"}


def _framework_of(res: Resolution) -> str:
    """``torch`` or ``jax`` for a call of that framework's function (``torch.tanh``,
    ``jnp.tanh``), else ``""``."""
    root = res.module.split(".")[0]
    return {"torch": "torch", "jax": "jax", "jaxlib": "jax"}.get(root, "")


def _conversion(bound: dict[str, gast.expr], lists: set[str]) -> tuple[str, dict[str, Any]]:
    """``np.array``/``np.asarray``/``torch.as_tensor``... as what they compute: of a list of
    values, a stack; of one array, the array itself (``astype`` when a dtype is given); of
    literal numbers, a new constant array."""
    values, dtype = bound.get("values"), bound.get("dtype")
    if isinstance(values, (gast.List, gast.Tuple)):
        if all(_literal(e) is not None for e in values.elts):
            return "array", bound
        return "stack", {"xs": values}
    if isinstance(values, gast.Name) and values.id in lists:
        return "stack", {"xs": values}
    if values is None or _literal(values) is not None:
        return "array", bound
    if dtype is None or (isinstance(dtype, gast.Constant) and dtype.value is None):
        return "copy", {"x": values}
    return "astype", {"x": values, "dtype": dtype}


def _memo_key(op: Op) -> str | None:
    """A key for pure operations repeated within one statement (``np.sin(x[i]) * x[i]``)."""
    if op.kind is not OpKind.PRIM or op.prim in ("uniform", "normal"):
        return None
    parts = [op.prim]
    for a in list(op.args) + list(op.kwargs.items()):
        parts.append(ast.dump(gast.gast_to_ast(a)) if isinstance(a, gast.AST) else repr(a))
    return "|".join(parts)


#: Iterators a loop cannot index (``enumerate(map(f, xs))``).
_ITERATORS = ("reversed", "zip", "enumerate", "iter", "map", "filter")


def _row_target(target: gast.expr) -> bool:
    """What a loop may bind a row to: a name, or a tuple of names (``for W, b in params``)."""
    return isinstance(target, gast.Name) or isinstance(target, gast.Tuple) and all(
        isinstance(e, gast.Name) for e in target.elts)


_INLINE_CALLS = {"len", "range", "int", "bool", "str", "round", "isinstance", "min", "max", "abs"}


def _inline_ok(op: Op) -> bool:
    """Static code that may stay inside another expression: comparisons, constants, lengths
    and shapes. Anything else gets a line of its own, where analysis can see and check it."""
    node = op.node
    if op.unknown or op.attribute:
        return False
    if isinstance(node, (gast.Compare, gast.JoinedStr, gast.Constant)):
        return True
    if isinstance(node, gast.Call):
        return (op.source or "").split(".")[-1] in _INLINE_CALLS
    if isinstance(node, (gast.Attribute, gast.Subscript, gast.BinOp, gast.UnaryOp)):
        return True
    return False


def assigned_names(fn: gast.FunctionDef) -> set[str]:
    names = {a.id for a in fn.args.posonlyargs + fn.args.args + fn.args.kwonlyargs}
    for node in trees.walk(fn):
        if isinstance(node, gast.Name) and isinstance(node.ctx, (gast.Store, gast.Param)):
            names.add(node.id)
    return names


def _defaults(fn: Any) -> dict[str, Any]:
    sig = inspect.signature(fn)
    return {n: p.default for n, p in sig.parameters.items() if p.default is not p.empty}


def _literal(node: gast.expr) -> Const | None:
    if isinstance(node, gast.Constant):
        return Const(node.value)
    if isinstance(node, gast.List) and node.elts:
        items = [_literal(e) for e in node.elts]
        if all(i is not None and isinstance(i.value, (int, float, bool)) for i in items):
            return Const([i.value for i in items])  # type: ignore[union-attr]
    if (isinstance(node, gast.UnaryOp) and isinstance(node.op, gast.USub)
            and isinstance(node.operand, gast.Constant)
            and isinstance(node.operand.value, (int, float))):
        return Const(-node.operand.value)
    return None


_FOLDED = {gast.Add: lambda a, b: a + b, gast.Sub: lambda a, b: a - b,
           gast.Mult: lambda a, b: a * b, gast.Div: lambda a, b: a / b}


def _number_arithmetic(node: gast.expr) -> float | int | None:
    """The value of arithmetic on number literals (``1 - 1e-7``, ``1 / 3``), which a rule's
    option (``a_max is None``) may then read as the literal it is; None for anything else."""
    literal = _literal(node)
    if literal is not None:
        value = literal.value
        return value if type(value) in (int, float) else None
    if isinstance(node, gast.BinOp) and type(node.op) in _FOLDED:
        a, b = _number_arithmetic(node.left), _number_arithmetic(node.right)
        if a is None or b is None or isinstance(node.op, gast.Div) and b == 0:
            return None
        return _FOLDED[type(node.op)](a, b)  # type: ignore[no-any-return]
    return None


def _is_literal_value(v: Any) -> bool:
    if v is None or isinstance(v, (bool, int, float, str)):
        return True
    return isinstance(v, tuple) and all(_is_literal_value(e) for e in v)


_RETURNS: dict[Any, str] = {}


def _returns_containers(fn: Any) -> str:
    """Whether a helper of the user's returns a tuple or list written out (``return a, b``):
    ``"always"``, ``"sometimes"`` or ``""``. Its result is then a list to the caller:
    ``np.prod(pair(x))`` stacks it, as NumPy does (it crashed, and TensorFlow added the pair
    into the gradient of each item)."""
    code = getattr(fn, "__code__", None)
    if code is None:
        return ""
    if code not in _RETURNS:
        try:
            tree = ast.parse(textwrap.dedent(inspect.getsource(fn)))
        except (OSError, TypeError, SyntaxError):
            _RETURNS[code] = ""
            return ""
        top = tree.body[0] if tree.body else None
        returns = [n.value for n in _own_returns(top)] if top is not None else []
        written = [isinstance(v, (ast.Tuple, ast.List)) for v in returns if v is not None]
        _RETURNS[code] = "always" if written and all(written) else (
            "sometimes" if any(written) else "")
    return _RETURNS[code]


def _own_returns(fn: ast.AST) -> list[ast.Return]:
    """The return statements of ``fn`` itself, not of functions defined inside it."""
    out: list[ast.Return] = []
    todo = list(ast.iter_child_nodes(fn))
    while todo:
        n = todo.pop()
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            continue
        if isinstance(n, ast.Return):
            out.append(n)
        todo.extend(ast.iter_child_nodes(n))
    return out


def _len_of(seq: ir.Atom) -> gast.expr:
    return gast.Call(func=gast.Name("len", gast.Load(), None, None), args=[as_expr(seq)],
                     keywords=[])


def _hint(atom: ir.Atom) -> str:
    if isinstance(atom, str):
        return atom
    if isinstance(atom, Const):
        return describe(gast.Constant(value=atom.value, kind=None))
    return ""


def _index_hint(index: gast.expr) -> str:
    if isinstance(index, (gast.Name, gast.Constant)):
        return describe(index)
    return "part"


def _prim_word(prim: str) -> str:
    return {"getitem": "item", "list_getitem": "item", "max_list": "max",
            "min_list": "min"}.get(prim, prim)


def _is_insert_grad_of(node: gast.With, parsed: ParsedFunction) -> bool:
    if len(node.items) != 1 or not isinstance(node.items[0].context_expr, gast.Call):
        return False
    parts = dotted(node.items[0].context_expr.func)
    if not parts:
        return False
    found, obj = parsed.scope.lookup(parts[0])
    for attr in parts[1:]:
        obj = getattr(obj, attr, None)
    return getattr(obj, "__name__", "") == "insert_grad_of" and (
        getattr(obj, "__module__", "") or "").startswith("gradlab")
