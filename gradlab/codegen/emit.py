"""The normalized program back to Python: gast nodes, then source a person reads, then code.

Comments quoting the user's lines are statements while the tree is built (``__comment__(...)``)
and become real ``#`` comments in the text; the text is what gets compiled, so a traceback
through generated code shows exactly the lines the user was shown (registered with linecache).
"""
from __future__ import annotations

import ast
import itertools
import linecache
import re
import types
import weakref
from dataclasses import dataclass, field
from typing import Any, Callable

import gast

from . import ir, trees
from .analyze import ARRAY_RESULTS, CREATION, Activity, array_arguments
from .ir import Assign, Const, Op
from .resolve import Resolver, bindings, signature

COMMENT = "__comment__"
_counter = itertools.count(1)


def name(n: str) -> gast.Name:
    return gast.Name(n, gast.Load(), None, None)


def store(n: str) -> gast.Name:
    return gast.Name(n, gast.Store(), None, None)


def const(v: Any) -> gast.expr:
    if isinstance(v, (int, float)) and not isinstance(v, bool) and v < 0:
        return gast.UnaryOp(op=gast.USub(), operand=gast.Constant(value=-v, kind=None))
    if isinstance(v, tuple):
        return gast.Tuple(elts=[const(e) for e in v], ctx=gast.Load())
    if isinstance(v, list):
        return gast.List(elts=[const(e) for e in v], ctx=gast.Load())
    return gast.Constant(value=v, kind=None)


def call(func: gast.expr, args: list[gast.expr], kwargs: dict[str, gast.expr] | None = None
         ) -> gast.Call:
    return gast.Call(func=func, args=args,
                     keywords=[gast.keyword(arg=k, value=v) for k, v in (kwargs or {}).items()])


def attr(base: str, field_: str) -> gast.Attribute:
    return gast.Attribute(value=name(base), attr=field_, ctx=gast.Load())


def assign(target: str | list[str], value: gast.expr) -> gast.Assign:
    if isinstance(target, list):
        tgt: gast.expr = gast.Tuple(elts=[store(t) for t in target], ctx=gast.Store()) \
            if len(target) > 1 else store(target[0])
    else:
        tgt = store(target)
    return gast.Assign(targets=[tgt], value=value, type_comment=None)


def expr_stmt(value: gast.expr) -> gast.Expr:
    return gast.Expr(value=value)


def comment(text: str, lineno: int = 0) -> gast.Expr:
    return expr_stmt(call(name(COMMENT), [const(lineno), const(text)]))


#: The line number of a :func:`note`: an explanation, not a quote of the user's code.
NOTE = -1


def note(text: str) -> gast.Expr:
    """A comment that explains the code below it; the lines under it keep mapping to the user
    line quoted before it."""
    return comment(text, NOTE)


def index_value(index: gast.expr) -> gast.expr:
    """An index written for a subscript (``1:, ::2``) as a value that can be passed to a
    function (``(slice(1, None), slice(None, None, 2))``)."""
    if isinstance(index, gast.Slice):
        parts = [index.lower, index.upper, index.step]
        while len(parts) > 2 and parts[-1] is None:
            parts.pop()
        return call(name("slice"), [p if p is not None else const(None) for p in parts])
    if isinstance(index, gast.Tuple):
        return gast.Tuple(elts=[index_value(e) for e in index.elts], ctx=gast.Load())
    return index



def not_plain_index(index: Any) -> bool:
    """An index some framework's ``[]`` does not take as NumPy does: a list of indices
    (``x[[0, 2]]``) or a slice whose step is not a positive literal (``x[::-1]``)."""
    if not isinstance(index, gast.AST):
        return False
    for n in trees.walk(index):
        if isinstance(n, gast.List):
            return True
        step = n.step if isinstance(n, gast.Slice) else (
            n.args[2] if isinstance(n, gast.Call) and isinstance(n.func, gast.Name)
            and n.func.id == "slice" and len(n.args) == 3 else None)   # slice(a, b, step)
        if step is not None and not (isinstance(step, gast.Constant) and (
                step.value is None or isinstance(step.value, int) and step.value > 0)):
            return True
    return False


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
        if op.kind == "copy":
            return self.atom(op.args[0])
        if op.kind in ("tuple", "list"):
            elts = [self.atom(a) for a in op.args]
            return gast.Tuple(elts=elts, ctx=gast.Load()) if op.kind == "tuple" else gast.List(
                elts=elts, ctx=gast.Load())
        if op.kind == "static":
            return self.inline(op.node)  # type: ignore[arg-type]
        if op.kind == "user":
            copy_name = self.portable_name(op.callee, array_arguments(op, self.activity.arrays))
            return call(name(copy_name), [self.atom(a) for a in op.args])
        if op.kind == "pop":
            return call(attr(str(op.args[0]), "pop"), [])
        return self.prim_expr(op)

    def prim_expr(self, op: Op) -> gast.expr:
        prim = op.prim
        if op.style == "binop" and prim in _OPERATORS:
            return gast.BinOp(left=self.atom(op.args[0]), op=_OPERATORS[prim](),
                              right=self.atom(op.args[1]))
        if op.style == "unary" and prim == "negative":
            return gast.UnaryOp(op=gast.USub(), operand=self.atom(op.args[0]))
        if prim in ("getitem", "list_getitem"):
            index = op.args[1]
            if prim == "getitem" and (ir.atom_names(index) & self.activity.arrays or
                                      not_plain_index(index)):
                # an array of indices (TensorFlow's [] takes only ints and slices), a list of
                # them, or a negative step (torch's [] refuses one): the layer's getitem
                return self.gl_call("getitem", op.args, {})
            return gast.Subscript(value=self.atom(op.args[0]), slice=self.atom(index),
                                  ctx=gast.Load())
        if prim == "copy":
            return self.atom(op.args[0])
        if prim == "sum_list":
            return call(name("sum"), [self.atom(op.args[0])])
        from .rules import custom_function, is_custom
        spelled = self._as_written(op)
        if spelled is not None:
            return spelled
        if is_custom(prim):
            fn = custom_function(prim)
            return call(name(self.portable_name(fn)), [self.atom(a) for a in op.args],
                        {k: self.atom(v) for k, v in op.kwargs.items()})
        return self.gl_call(prim, op.args, op.kwargs)

    def _as_written(self, op: Op) -> gast.expr | None:
        """A NumPy or ``math`` call on plain numbers keeps its own spelling (``np.sin(c)``):
        a framework's function would refuse a bare Python number."""
        if op.prim in ARRAY_RESULTS or self.uses_arrays(op) or not op.source:
            return None
        parts = str(op.source).split(".")
        found, module = self.resolver.scope.lookup(parts[0])
        root = getattr(module, "__name__", "").split(".")[0] if found else ""
        if root not in ("numpy", "math"):
            return None
        func: gast.expr = name(parts[0])
        for part in parts[1:]:
            func = gast.Attribute(value=func, attr=part, ctx=gast.Load())
        return call(func, [self.atom(a) for a in op.args],
                    {k: self.atom(v) for k, v in op.kwargs.items()})

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

    # --- statements ------------------------------------------------------------------------------
    def forward(self, s: ir.Stmt) -> list[gast.stmt]:
        if isinstance(s, Assign):
            return [assign(s.targets, self.op_expr(s.op))]
        if isinstance(s, ir.Effect):
            if s.kind == "append":
                return [expr_stmt(call(attr(s.target, "append"), [self.atom(s.value)]))]
            if s.kind == "list_set":
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
        self.generic_visit(node)
        try:
            res = self.e.resolver.call(node)
        except Exception:
            return node
        if res.kind == "user":
            node.func = name(self.e.portable_name(res.callee))
            self.user_calls.add(id(node))
            return node
        if res.kind == "prim" and res.as_written and (res.prim in CREATION or
                                                      self._dynamic(node)):
            from .rules import is_custom
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
        return node


# --- text ------------------------------------------------------------------------------------------
_COMMENT_LINE = re.compile(r"^(\s*)" + COMMENT + r"\((-?\d+), (.*)\)$")


@dataclass
class Source:
    text: str
    line_map: dict[int, int]      # generated line -> user's line (0 where none)
    line_text: dict[int, str]     # generated line -> the quoted user line


def to_source(functions: list[gast.FunctionDef]) -> Source:
    module = gast.Module(body=functions, type_ignores=[])
    tree = gast.gast_to_ast(module)
    ast.fix_missing_locations(tree)
    raw = ast.unparse(tree)
    lines, line_map, line_text = [], {}, {}
    current, current_text = 0, ""
    for line in raw.splitlines():
        m = _COMMENT_LINE.match(line)
        if m:
            indent, lineno, text = m.group(1), int(m.group(2)), ast.literal_eval(m.group(3))
            lines.append(f"{indent}# {text}")
            if lineno != NOTE:
                current, current_text = lineno, text if lineno else ""
        else:
            if line.lstrip().startswith("def "):
                current, current_text = 0, ""
                if lines:
                    lines.append("")
            lines.append(line)
        line_map[len(lines)] = current
        line_text[len(lines)] = current_text
    return Source("\n".join(lines) + "\n", line_map, line_text)


def compile_source(text: str, main: str, user_globals: dict[str, Any],
                   free: dict[str, Any], label: str,
                   transform: Callable[[ast.Module], None] | None = None
                   ) -> tuple[Callable[..., dict[str, Any]], str]:
    """Compile ``text`` (one or more defs) into a factory of functions whose globals are the
    user's module.

    The factory takes the names in ``free`` (``gl``, closed-over values, helpers from other
    modules) as parameters, so nothing is written into the user's namespace and one compiled
    text serves every backend: call it with each backend's ``gl``. Returns the factory and the
    file name the text was registered under in linecache.
    """
    filename = f"<gradlab:{label}:{next(_counter)}>"
    tree = ast.parse(text, filename)
    if transform is not None:
        transform(tree)
    defs = [n for n in tree.body if isinstance(n, ast.FunctionDef)]
    factory = ast.FunctionDef(
        name="__gradlab_factory__",
        args=ast.arguments(posonlyargs=[], args=[ast.arg(arg=k) for k in free],
                           kwonlyargs=[], kw_defaults=[], defaults=[]),
        body=defs + [ast.Return(value=ast.Dict(keys=[ast.Constant(d.name) for d in defs],
                                               values=[ast.Name(d.name, ast.Load())
                                                       for d in defs]))],
        decorator_list=[], returns=None)
    if "type_params" in ast.FunctionDef._fields:
        setattr(factory, "type_params", [])
    factory.lineno = 1
    module = ast.Module(body=[factory], type_ignores=[])
    ast.fix_missing_locations(module)
    code = compile(module, filename, "exec")
    scratch: dict[str, Any] = {}
    exec(code, scratch)
    made = scratch["__gradlab_factory__"]
    made = types.FunctionType(made.__code__, user_globals, made.__name__)
    register_lines(filename, text, made.__code__)
    return _named_as_shown(made), filename


def _named_as_shown(factory: Callable[..., dict[str, Any]]) -> Callable[..., dict[str, Any]]:
    """The factory, making functions whose ``__qualname__`` is the name the user reads
    (``dloss_dW``), so that Python's own messages (``dloss_dW() takes 2 positional arguments
    but 3 were given``) name them as shown, not ``__gradlab_factory__.<locals>.dloss_dW``."""
    def make(**free: Any) -> dict[str, Any]:
        functions = factory(**free)
        for fn in functions.values():
            fn.__qualname__ = fn.__name__
        return functions
    return make


# --- linecache: generated text stays readable in tracebacks while its code is alive ------------
#: How many generated texts linecache keeps before the dead ones are swept out. Entries whose
#: code is still alive (a gradient in use, a frame in a stored traceback) are never removed.
LINECACHE_LIMIT = 256
_registered: dict[str, list[weakref.ref[types.CodeType]]] = {}
_sweep_at = [LINECACHE_LIMIT]


def register_lines(filename: str, text: str, code: types.CodeType) -> None:
    """Register ``text`` in linecache under ``filename`` for as long as ``code`` (or any code
    object compiled with it) is alive; beyond :data:`LINECACHE_LIMIT` entries, the entries of
    code that no longer exists are dropped."""
    linecache.cache[filename] = (len(text), None, text.splitlines(True), filename)
    _registered[filename] = [weakref.ref(c) for c in _code_objects(code)]
    if len(_registered) > _sweep_at[0]:
        _sweep()


def _sweep() -> None:
    for filename, refs in list(_registered.items()):
        if all(r() is None for r in refs):
            del _registered[filename]
            entry: Any = linecache.cache.get(filename)
            if entry is not None and len(entry) == 4 and entry[1] is None:
                del linecache.cache[filename]    # (not a file linecache read itself)
    # live entries past the limit are kept; sweep again once as many more have been added
    _sweep_at[0] = max(LINECACHE_LIMIT, 2 * len(_registered))


def registered_texts() -> int:
    """How many generated texts are registered in linecache now (for tests and diagnostics)."""
    return sum(1 for name in _registered if name in linecache.cache)


def _code_objects(code: types.CodeType) -> list[types.CodeType]:
    found = [code]
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            found.extend(_code_objects(const))
    return found
