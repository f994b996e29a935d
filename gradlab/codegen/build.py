"""Small builders of gast nodes: what every stage that writes code (the primal code, reverse and
forward mode, the optimizer) writes with, so that a generated line reads the same whoever made it.

Comments quoting the user's lines are statements while the tree is built (``__comment__(...)``)
and become real ``#`` comments when the text is made (:mod:`.emit`).
"""
from __future__ import annotations

from typing import Any

import gast

from ..errors import GradlabError
from . import trees

#: The name of the call a comment is while the tree is built.
COMMENT = "__comment__"
#: The line number of a :func:`note`: an explanation, not a quote of the user's code.
NOTE = -1


def name(n: str) -> gast.Name:
    return gast.Name(n, gast.Load(), None, None)


def store(n: str) -> gast.Name:
    return gast.Name(n, gast.Store(), None, None)


def param(n: str) -> gast.Name:
    return gast.Name(n, gast.Param(), None, None)


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
    """A comment quoting the user's line ``lineno`` (0: a line of no user's)."""
    return expr_stmt(call(name(COMMENT), [const(lineno), const(text)]))


def note(text: str) -> gast.Expr:
    """A comment that explains the code below it; the lines under it keep mapping to the user
    line quoted before it."""
    return comment(text, NOTE)


def is_comment(s: gast.stmt) -> bool:
    return (isinstance(s, gast.Expr) and isinstance(s.value, gast.Call)
            and isinstance(s.value.func, gast.Name) and s.value.func.id == COMMENT)


def quotes_line(s: gast.Expr) -> bool:
    """Whether comment ``s`` quotes a line of the user's (its line number is positive)."""
    args = s.value.args  # type: ignore[attr-defined]
    return bool(args) and isinstance(args[0], gast.Constant) and args[0].value > 0


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


def subscript_index(index: gast.expr) -> gast.expr:
    """The inverse of :func:`index_value`: ``slice(1, None)`` back to ``1:``."""
    if isinstance(index, gast.Call) and isinstance(index.func, gast.Name) and (
            index.func.id == "slice"):
        parts = list(index.args) + [None] * (3 - len(index.args))
        return gast.Slice(*[None if isinstance(p, gast.Constant) and p.value is None else p
                            for p in parts])
    if isinstance(index, gast.Tuple):
        return gast.Tuple(elts=[subscript_index(e) for e in index.elts], ctx=gast.Load())
    return index


def expanding_index(index: Any) -> bool:
    """An index a 0-d array takes: ``None``, ``...``, ``()`` or a tuple of them (``v[None]``).
    A value gradlab holds as a Python number (NumPy has a NumPy scalar there) takes none."""
    parts = index.elts if isinstance(index, gast.Tuple) else [index]
    return all(isinstance(p, gast.Constant) and (p.value is None or p.value is Ellipsis)
               for p in parts)


def not_plain_index(index: Any) -> bool:
    """An index some framework's ``[]`` does not take as NumPy does: a list of indices
    (``x[[0, 2]]``), an array made in the index (``A[np.arange(n), np.arange(n)]``: a call
    of a module's function or a method; TensorFlow's ``[]`` takes no array) or a slice whose
    step is not a positive literal (``x[::-1]``)."""
    if not isinstance(index, gast.AST):
        return False
    for n in trees.walk(index):
        if isinstance(n, gast.List) or isinstance(n, gast.Call) and isinstance(
                n.func, gast.Attribute):
            return True
        step = n.step if isinstance(n, gast.Slice) else (
            n.args[2] if isinstance(n, gast.Call) and isinstance(n.func, gast.Name)
            and n.func.id == "slice" and len(n.args) == 3 else None)   # slice(a, b, step)
        if step is not None and not (isinstance(step, gast.Constant) and (
                step.value is None or isinstance(step.value, int) and step.value > 0)):
            return True
    return False


def indexes_by_array(index: Any, counters: set[str] | frozenset[str],
                     arrays: set[str] | frozenset[str]) -> bool:
    """Whether ``index`` may hold an array of indices, which TensorFlow's ``[]`` takes no more
    than a list: it names an array, or, outside a slice's bounds (``x[:half]``: ints), a
    name other than a loop's counter (``rows, cols = np.triu_indices(n, 1)``)."""
    if isinstance(index, str):
        return index in arrays or index not in counters
    if isinstance(index, gast.AST) and any(isinstance(n, gast.Name) and n.id in arrays
                                           for n in trees.walk(index)):
        return True
    if isinstance(index, gast.Tuple):
        return any(indexes_by_array(e, counters, arrays) for e in index.elts)
    if isinstance(index, gast.Slice) or isinstance(index, gast.Call) and isinstance(
            index.func, gast.Name) and index.func.id == "slice":
        return False
    return isinstance(index, gast.AST) and any(
        isinstance(n, gast.Name) and n.id not in counters for n in trees.walk(index))


def if_(test: gast.expr, body: list[gast.stmt], orelse: list[gast.stmt]) -> list[gast.stmt]:
    """An if, written the way a person would: no empty branch, and no ``else`` after a branch
    that ends in ``break``/``continue``."""
    if not body and not orelse:
        return []
    if not body:
        return [gast.If(test=gast.UnaryOp(op=gast.Not(), operand=test), body=orelse, orelse=[])]
    if body and isinstance(body[-1], (gast.Break, gast.Continue)) and orelse:
        return [gast.If(test=test, body=body, orelse=[])] + orelse
    return [gast.If(test=test, body=body, orelse=orelse)]


def for_(target: str, iterable: gast.expr, body: list[gast.stmt]) -> gast.For:
    """A for loop; an empty body gets ``pass``."""
    return gast.For(target=store(target), iter=iterable, body=body or [gast.Pass()], orelse=[],
                    type_comment=None)


def while_(test: gast.expr, body: list[gast.stmt]) -> gast.While:
    """A while loop; an empty body gets ``pass``."""
    return gast.While(test=test, body=body or [gast.Pass()], orelse=[])


class Required:
    """The default of a parameter that has none: generated callers always pass it (the seed of
    a vjp, the tangents of a jvp called by generated code)."""

    def __repr__(self) -> str:
        return "REQUIRED"


REQUIRED: Any = Required()


def function_def(fname: str, user_args: gast.arguments, extra: list[str],
                 extra_defaults: list[Any], body: list[gast.stmt], keep_defaults: bool = True,
                 keyword_only: bool = False) -> gast.FunctionDef:
    """A def with the user's parameters ``user_args`` (and their default values, as written,
    unless the function is only called by generated code, which passes every argument) plus
    ``extra``, each with its default from ``extra_defaults`` (:data:`REQUIRED`: none).

    With ``keyword_only`` (the gradient the user calls) the parameters keep the user's own
    ``*`` and ``extra`` come after it, each with its default: ``def dloss_dW(W, x, *,
    dloss=1.0)``."""
    if keyword_only:
        args = gast.arguments(
            args=[param(a.id) for a in user_args.posonlyargs + user_args.args],
            posonlyargs=[], vararg=None,
            kwonlyargs=[param(a.id) for a in user_args.kwonlyargs] + [param(n) for n in extra],
            kw_defaults=[trees.clone(d) if d is not None else None
                         for d in user_args.kw_defaults] + [const(d) for d in extra_defaults],
            kwarg=None, defaults=[trees.clone(d) for d in user_args.defaults])
    else:
        params = [param(a.id)
                  for a in user_args.posonlyargs + user_args.args + user_args.kwonlyargs]
        user_defaults = list(user_args.defaults) + [d for d in user_args.kw_defaults
                                                    if d is not None]
        defaults = [trees.clone(d) for d in user_defaults] if keep_defaults else []
        for n, d in zip(extra, extra_defaults):
            params.append(param(n))
            if d is not REQUIRED:
                defaults.append(const(d))
            elif defaults:
                raise GradlabError("a required parameter after defaults")  # pragma: no cover
        args = gast.arguments(args=params, posonlyargs=[], vararg=None, kwonlyargs=[],
                              kw_defaults=[], kwarg=None, defaults=defaults)
    node = gast.FunctionDef(name=fname, args=args, body=body, decorator_list=[], returns=None,
                            type_comment=None)
    if "type_params" in gast.FunctionDef._fields:
        node.type_params = []
    return node
