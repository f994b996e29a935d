"""The primal code: each statement of the normalized program as the gast it runs as, calling the
tensor layer ``gl`` where it computes on arrays.

Reverse mode writes it as its forward pass, forward mode interleaves it with tangent lines, and
a user function called by the differentiated one gets a portable copy of it (see
:meth:`Program.portable`). Calls on plain Python numbers keep the user's spelling
(``np.sqrt(n)``): a framework function would refuse a bare number.
"""
from __future__ import annotations

import builtins
import types
from dataclasses import dataclass, field
from typing import Any, Callable

import gast

from . import ir, trees
from .analyze import ARRAY_RESULTS, ARRAYS_FROM_NUMBERS, CREATION, Activity, array_arguments
from .build import assign, attr, call, comment, const, expr_stmt, for_, if_, index_value, name, \
    expanding_index, indexes_by_array, not_plain_index, while_
from .ir import Assign, Const, EffectKind, Op, OpKind
from .primitives import signature
from .resolve import Resolver, dotted
from .rules import custom_function, is_custom

_OPERATORS = {"add": gast.Add, "subtract": gast.Sub, "multiply": gast.Mult, "divide": gast.Div,
              "power": gast.Pow, "floor_divide": gast.FloorDiv, "mod": gast.Mod}


@dataclass
class Emitter:
    """Writes forward statements of the normalized program as gast, calling ``gl``."""

    gl: str
    activity: Activity
    resolver: Resolver
    portable_name: Callable[..., str]   # (user function, which args are arrays) -> its copy
    last_origin: list[Any] = field(default_factory=lambda: [None])

    def atom(self, a: Any) -> gast.expr:
        if isinstance(a, str):
            return name(a)
        if isinstance(a, Const):
            return const(a.value)
        return self.inline(a)

    def uses_arrays(self, op: Op) -> bool:
        return bool(ir.op_reads(op) & self.activity.arrays)

    def op_expr(self, op: Op) -> gast.expr:
        if op.kind is OpKind.COPY:
            return self._converted(op) or self.atom(op.args[0])
        if op.kind in (OpKind.TUPLE, OpKind.LIST):
            elts = [self.atom(a) for a in op.args]
            return gast.Tuple(elts=elts, ctx=gast.Load()) if op.kind is OpKind.TUPLE else gast.List(
                elts=elts, ctx=gast.Load())
        if op.kind is OpKind.STATIC:
            return self.inline(op.node)  # type: ignore[arg-type]
        if op.kind is OpKind.USER:
            copy_name = self.portable_name(op.callee, array_arguments(op, self.activity.arrays))
            return call(name(copy_name), [self.atom(a) for a in op.args])
        if op.kind is OpKind.POP:
            return call(attr(str(op.args[0]), "pop"), [])
        if op.kind is OpKind.OPAQUE:
            func = self.inline(op.node)  # type: ignore[arg-type]
            args = [self.atom(a) for a in op.args]
            kwargs = {k: self.atom(v) for k, v in op.kwargs.items()}
            if self.torch_function(op.node):   # F.gelu(v): v may be held as a number
                return call(attr(self.gl, "torch_call"), [func] + args, kwargs)
            return call(func, args, kwargs)
        return self.prim_expr(op)

    def torch_function(self, func: Any, callee: Any = None) -> bool:
        """Whether ``func`` (``F.gelu``, ``torch.logit``), which resolved to ``callee``, is a
        function of torch's."""
        if (getattr(callee, "__module__", None) or "").split(".")[0] == "torch":
            return True
        parts = dotted(func) if isinstance(func, gast.expr) else None
        return bool(parts) and self._module_root(parts[0]) == "torch"   # type: ignore[index]

    def _module_root(self, name: str) -> str:
        """The top package of the module the user's global ``name`` is (``np``: numpy,
        ``F``: torch); "" where it is not a module."""
        found, module = self.resolver.scope.lookup(name)
        if not found or not isinstance(module, types.ModuleType):
            return ""
        return module.__name__.split(".")[0]

    def opaque_recorded(self, s: Assign, wrt: list[int], params: bool = False) -> gast.stmt:
        """``y, y_vjp = gl.vjp_of(model, x)``: the call made under the framework's autodiff,
        differentiated with respect to the arguments at ``wrt`` (all, unless it says), and
        with ``params``, the callable's own parameters."""
        op = s.op
        keywords: dict[str, gast.expr] = {}
        if op.kwargs:
            keywords["keywords"] = gast.Dict(keys=[const(k) for k in op.kwargs],
                                             values=[self.atom(v) for v in op.kwargs.values()])
        if len(wrt) < len(op.args):
            keywords["wrt"] = gast.Tuple(elts=[const(i) for i in wrt], ctx=gast.Load())
        if params:
            keywords["params"] = const(True)
        value = call(attr(self.gl, "vjp_of"),
                     [self.inline(op.node)] + [self.atom(a) for a in op.args],  # type: ignore[arg-type]
                     keywords)
        return assign(s.targets, value)

    def prim_expr(self, op: Op) -> gast.expr:
        prim = op.prim
        if op.style == "binop" and prim in _OPERATORS:
            return gast.BinOp(left=self.atom(op.args[0]), op=_OPERATORS[prim](),
                              right=self.atom(op.args[1]))
        if op.style == "unary" and prim == "negative":
            return gast.UnaryOp(op=gast.USub(), operand=self.atom(op.args[0]))
        if prim in ("getitem", "list_getitem"):
            index = op.args[1]
            if prim == "getitem" and (indexes_by_array(index, self.activity.counters,
                                                       self.activity.arrays) or
                                      not_plain_index(index) or
                                      self._held_as_number(op.args[0], index)):
                # an array of indices (TensorFlow's [] takes only ints and slices: an index
                # naming other than a loop's counter may be one), a list of them, a negative
                # step (torch's [] refuses one), or a value gradlab may hold as a Python number
                # where NumPy has a NumPy scalar (np.less(w, w)[None] of a float w): the
                # layer's getitem
                return self.gl_call("getitem", op.args, {})
            return gast.Subscript(value=self.atom(op.args[0]), slice=self.atom(index),
                                  ctx=gast.Load())
        if prim == "copy":
            return self._converted(op) or self.atom(op.args[0])
        if prim == "sum_list":
            return call(name("sum"), [self.atom(op.args[0])])
        spelled = self._as_written(op)
        if spelled is not None:
            return spelled
        if is_custom(prim):
            fn = custom_function(prim)
            return call(name(self.portable_name(fn)), [self.atom(a) for a in op.args],
                        {k: self.atom(v) for k, v in op.kwargs.items()})
        return self.gl_call(prim, op.args, op.kwargs)

    def _held_as_number(self, atom: Any, index: Any) -> bool:
        """Whether ``atom[index]`` may index a Python number: ``atom`` is a value a primitive
        computed (from numbers, on torch, TensorFlow and JAX, gradlab holds it as one), and
        the index is one a 0-d array takes (None, ``...``, ``()``)."""
        return isinstance(atom, str) and atom in self.activity.computed and expanding_index(index)

    def _converted(self, op: Op) -> gast.expr | None:
        """``np.array(v)``/``np.asarray(v)`` of a value no gradient flows through (a list made
        by ``x.tolist()``, a count): a new array of the backend's, as the call makes (kept as
        the value itself, a list stays a list, which torch or TensorFlow cannot compute with).
        A value that carries a gradient is already an array: the conversion is the identity."""
        value = op.args[0]
        if op.style != "conversion" or not isinstance(value, str) or self.activity.active(value):
            return None
        return self.gl_call("array", [value], {})

    def _as_written(self, op: Op) -> gast.expr | None:
        """A NumPy or ``math`` call on plain numbers keeps its own spelling (``np.sin(c)``):
        a framework's function would refuse a bare Python number."""
        if op.prim in ARRAY_RESULTS or self.uses_arrays(op) or not op.source:
            return None
        parts = str(op.source).split(".")
        if not all(part.isidentifier() for part in parts):
            return None     # a method of an expression (``np.arcsin(c).round()``), no module's
        root = self._module_root(parts[0])
        if root not in ("numpy", "math"):
            return None
        func: gast.expr = name(parts[0])
        for part in parts[1:]:
            func = gast.Attribute(value=func, attr=part, ctx=gast.Load())
        args = [self.atom(a) for a in op.args]
        kwargs = {k: self.atom(v) for k, v in op.kwargs.items()}
        if root == "numpy" and (op.prim in ARRAYS_FROM_NUMBERS or op.prim == "where"):
            # np.stack of a list of numbers (np.where of numbers, a 0-d one): a NumPy
            # array, which a torch tensor will not meet in arithmetic; NumPy computes it,
            # the backend gets it as its own array
            return call(attr(self.gl, "numpy_call"), [func] + args, kwargs)
        return call(func, args, kwargs)

    def gl_call(self, prim: str, args: list[Any], kwargs: dict[str, Any]) -> gast.Call:
        sig = signature(prim)
        if "index" in sig.parameters:
            names = [p for p in sig.parameters]
            position = names.index("index")
            if position < len(args):
                args = list(args)
                args[position] = index_value(self.atom(args[position]))
        shown = {}
        for k, v in kwargs.items():
            param = sig.parameters.get(k)
            if param is not None and isinstance(v, Const) and param.default is not param.empty \
                    and _same(param.default, v.value):
                continue
            shown[k] = self.atom(v)
        return call(attr(self.gl, prim), [self.atom(a) for a in args], shown)

    # --- inline expressions ----------------------------------------------------------------------
    def inline(self, node: gast.AST, force: bool = False) -> Any:
        """An expression kept as written, with calls on arrays routed through ``gl`` (all of
        them with ``force``: code that handles gradients, which are arrays)."""
        return _InlineRewriter(self, force).visit(trees.clone(node))

    def loop_range(self, s: ir.For, backward: bool = False) -> gast.expr:
        """The iterable of a ``for`` loop: ``range(...)`` as the user wrote it, ``reversed(...)``
        around it for a loop written over ``reversed(range(...))``; the backward pass visits
        the same indices in the opposite order."""
        rng: gast.expr = call(name("range"), [self.inline(a) for a in s.range_args])
        return call(name("reversed"), [rng]) if s.reverse != backward else rng

    # --- statements ------------------------------------------------------------------------------
    def forward(self, s: ir.Stmt) -> list[gast.stmt]:
        if isinstance(s, Assign) and s.op.kind is OpKind.OPAQUE:
            return [assign(s.targets[0], self.op_expr(s.op))]   # as written: no backward kept
        if isinstance(s, Assign):
            return [assign(s.targets, self.op_expr(s.op))]
        if isinstance(s, ir.Effect):
            if s.kind is EffectKind.APPEND:
                return [expr_stmt(call(attr(s.target, "append"), [self.atom(s.value)]))]
            if s.kind is EffectKind.LIST_SET:
                target = gast.Subscript(value=name(s.target), slice=self.atom(s.node),
                                        ctx=gast.Store())
                return [gast.Assign(targets=[target], value=self.atom(s.value),
                                    type_comment=None)]
            node = s.node
            if isinstance(node, gast.Expr):
                return [expr_stmt(self.inline(node.value))]
            return [node]  # type: ignore[list-item]
        if isinstance(s, ir.Break):
            return [gast.Break()]
        if isinstance(s, ir.Continue):
            return [gast.Continue()]
        return []

    def with_comment(self, s: ir.Stmt, out: list[gast.stmt], lines: list[gast.stmt]) -> None:
        """Append ``lines`` to ``out`` under a comment quoting ``s``'s origin when it changes."""
        if not lines:
            return
        origin = s.origin
        if origin is not None and origin != self.last_origin[0] and not isinstance(
                s, (ir.If, ir.For, ir.While, ir.Break, ir.Continue)):
            out.append(comment(origin.text, origin.lineno))
            self.last_origin[0] = origin
        out.extend(lines)


def _numpy_spelled(res: Any) -> bool:
    """Whether a call resolved as ``res`` is NumPy's or SciPy's (``np.unique``)."""
    return (getattr(res.callee, "__module__", None) or "").split(".")[0] in (
        "numpy", "scipy") or res.label.split(".")[0] in ("np", "numpy", "scipy")


#: Builtins a kept call may take as a function argument (``key=abs``) that ``gl`` has too.
_BUILTINS_WITH_PORTABLE_VERSIONS = frozenset({"abs"})


def _same(a: Any, b: Any) -> bool:
    try:
        return type(a) is type(b) and a == b
    except Exception:
        return False


class _InlineRewriter(gast.NodeTransformer):
    def __init__(self, emitter: Emitter, force: bool = False) -> None:
        self.e = emitter
        self.force = force
        self.user_calls: set[int] = set()   # ids of calls to the user's (transformed) functions

    def _dynamic(self, node: gast.AST) -> bool:
        """Whether ``node`` computes on arrays: it names one, or it contains a call already
        routed through ``gl`` (``np.sum(np.ones(4))``: the inner call makes an array) or a call
        to one of the user's functions (their copies compute with ``gl`` on the backend of
        the call, so ``np.sum(h(0.5))`` may meet a torch tensor)."""
        if self.force:
            return True
        for n in trees.walk(node):
            if isinstance(n, gast.Name) and n.id in self.e.activity.arrays:
                return True
            if id(n) in self.user_calls:
                return True
            if (isinstance(n, gast.Call) and isinstance(n.func, gast.Attribute)
                    and isinstance(n.func.value, gast.Name) and n.func.value.id == self.e.gl):
                return True
        return False

    def visit_BinOp(self, node: gast.BinOp) -> gast.expr:
        self.generic_visit(node)
        if isinstance(node.op, gast.MatMult) and self._dynamic(node):
            return call(attr(self.e.gl, "matmul"), [node.left, node.right])
        return node

    def visit_Call(self, node: gast.Call) -> gast.expr:
        func = node.func
        if isinstance(func, gast.Attribute) and func.attr == "size" and isinstance(
                func.value, gast.Name) and func.value.id in self.e.activity.arrays and len(
                node.args) == 1 and not node.keywords:
            # torch's x.size(d) inside an option (x.view(x.size(0), -1)): the shape's entry,
            # not NumPy's count x.size called
            return gast.copy_location(gast.Subscript(
                value=call(attr(self.e.gl, "shape"), [func.value]),
                slice=self.visit(node.args[0]), ctx=gast.Load()), node)
        self.generic_visit(node)
        try:
            res = self.e.resolver.call(node)
        except Exception:
            return node
        if res.kind == "user":
            if res.receiver is not None:      # x.trace() as np_trace(x)
                node.args = [res.receiver] + node.args
            node.func = name(self.e.portable_name(res.callee))
            self.user_calls.add(id(node))
            return node
        if res.kind == "prim" and res.as_written and (res.prim in CREATION or
                                                      self._dynamic(node)):
            if is_custom(res.prim):
                return node
            sig = signature(res.prim)
            args, kwargs = [], {}
            for pname, param in sig.parameters.items():
                if pname not in res.args:
                    continue
                value = res.args[pname]
                if param.default is param.empty and param.kind is not param.KEYWORD_ONLY:
                    args.append(value)
                else:
                    kwargs[pname] = value
            if res.prim == "copy":
                return args[0]
            return call(attr(self.e.gl, res.prim), args, kwargs)
        if res.kind in ("static", "unknown", "prim") and self._dynamic(node):
            return self._kept(node, res)     # (a primitive kept with its own options too)
        return node

    def _kept(self, node: gast.Call, res: Any) -> gast.expr:
        """A call kept as written (no gradient through it) on the backend's values: a NumPy
        or SciPy function runs on NumPy arrays, its arrays come back as the backend's
        (``gl.numpy_call(np.unique, b)``); ``v.tolist()`` and ``v.numpy()`` read a NumPy copy
        (TensorFlow's tensors have no ``tolist``, and where the user's framework made a tensor
        gradlab may hold a Python or NumPy number, which has no ``numpy``: ``tf.greater(x, x)``
        of a float ``x``). Any other call is left to the value's own methods."""
        func = node.func
        if isinstance(func, gast.Attribute) and func.attr in ("tolist", "numpy") \
                and not node.args and not node.keywords:
            copy = call(attr(self.e.gl, "to_numpy"), [func.value])
            if func.attr == "numpy":
                return copy
            return call(gast.Attribute(value=copy, attr="tolist", ctx=gast.Load()), [])
        if self.e.torch_function(func, res.callee):   # torch.logit(v): v may be a number
            return gast.Call(func=attr(self.e.gl, "torch_call"), args=[func] + node.args,
                             keywords=node.keywords)
        if not _numpy_spelled(res):
            return self._with_portable_functions(node)
        return gast.Call(func=attr(self.e.gl, "numpy_call"), args=[func] + node.args,
                         keywords=node.keywords)

    def _with_portable_functions(self, node: gast.Call) -> gast.Call:
        """``min(m[0], b, key=abs)``: a builtin passed as a function to a kept call meets the
        backend's values, which gradlab may hold where NumPy holds others (torch has no abs of
        a truth value, NumPy has); ``gl``'s own version is passed instead."""
        def portable(arg: gast.expr) -> gast.expr:
            if isinstance(arg, gast.Name) and arg.id in _BUILTINS_WITH_PORTABLE_VERSIONS:
                found, value = self.e.resolver.scope.lookup(arg.id)
                if found and value is getattr(builtins, arg.id):
                    return attr(self.e.gl, arg.id)
            return arg
        node.args = [portable(a) for a in node.args]
        for keyword in node.keywords:
            keyword.value = portable(keyword.value)
        return node

    def visit_Attribute(self, node: gast.Attribute) -> gast.expr:
        self.generic_visit(node)
        if isinstance(node.value, gast.Name) and node.value.id in self.e.activity.arrays:
            if node.attr == "T":
                return call(attr(self.e.gl, "transpose"), [node.value])
            if node.attr == "size":
                return call(attr(self.e.gl, "size"), [node.value])
            if node.attr == "shape":
                return call(attr(self.e.gl, "shape"), [node.value])
        activity = self.e.activity
        if node.attr in ("ndim", "dtype") and (
                node.value.id in activity.varied or node.value.id in activity.arrays
                or node.value.id in activity.computed
                if isinstance(node.value, gast.Name) else self._dynamic(node.value)) or (
                node.attr in ("size", "shape") and isinstance(node.value, gast.Name)
                and node.value.id in activity.computed):
            # a value gradlab may hold as a Python number where NumPy has a NumPy scalar
            # (np.tanh of a float, np.less(x, x).dtype, abs(mask[0]).size): its rank, 0, its
            # dtype, size and shape from gl
            return call(attr(self.e.gl, node.attr), [node.value])
        return node


def structured(emitter: Emitter, stmts: list[ir.Stmt],
               lines_of: Callable[[ir.Stmt], list[gast.stmt]]) -> list[gast.stmt]:
    """The code of a block with its ifs and loops kept as they are: each other statement's
    ``lines_of(s)`` under a comment quoting its line (the primal lines alone for a portable
    copy; the primal lines then the tangent lines in forward mode)."""
    out: list[gast.stmt] = []
    for s in stmts:
        if isinstance(s, ir.If):
            body = structured(emitter, s.body, lines_of)
            orelse = structured(emitter, s.orelse, lines_of)
            out.extend(if_(emitter.inline(s.test), body or [gast.Pass()], orelse))
        elif isinstance(s, ir.For):
            iterable = emitter.loop_range(s)
            out.append(for_(s.target, iterable, structured(emitter, s.body, lines_of)))
        elif isinstance(s, ir.While):
            test = emitter.inline(s.test)
            out.append(while_(test, structured(emitter, s.body, lines_of)))
        else:
            emitter.with_comment(s, out, lines_of(s))
    return out
