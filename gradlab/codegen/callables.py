"""Names bound to callables inside the function: ``g = functools.partial(h, a, k=b)`` and
``loss = lambda p: ...``, read where they are called.

Neither has source of its own that gradlab could read as a helper, but both stand for code
gradlab can read: a partial's call is a call of its function with the bound values first (taken
where the partial is made), a lambda's call is its expression of the call's values (its outer
names read where it is called, as Python does). A name that holds one must hold only that one
(assigned once), and may only be called: used as a value it is refused at its line.
"""
from __future__ import annotations

import copy
import functools
from typing import Any, Callable

import gast

from . import trees
from .ir import Const, Op, OpKind, as_expr
from .resolve import dotted, getattr_chain


class CallableNames:
    """The Normalizer's reading of partials and lambdas (a mixin: it uses the Normalizer's
    ``parsed``, ``locals``, ``atom`` and ``_bind_temp``)."""

    parsed: Any
    locals: set[str]
    #: g = functools.partial(h, a, k=b): g's calls spelled out, h(a, ..., k=b, ...)
    partials: dict[str, tuple[gast.expr, list[gast.expr], list[gast.keyword]]]
    #: loss = lambda p: ...: loss's calls read as the lambda's expression of their arguments
    lambdas: dict[str, gast.Lambda]
    expanding: set[str]          # the lambdas whose bodies are being read

    atom: Callable[[gast.expr], Any]              # the Normalizer's
    _bind_temp: Callable[[str, Any], str]        # the Normalizer's

    def _partial(self, target: str, value: gast.expr) -> bool:
        """``g = functools.partial(h, a, k=b)``, assigned once: each call ``g(x)`` is read as
        ``h(a, x, k=b)`` (the bound values taken where the partial is made), so gradlab reads
        ``h`` as it would be called directly; a partial used otherwise than called is refused
        (see :meth:`atom`)."""
        if not (isinstance(value, gast.Call) and value.args and not any(
                isinstance(a, gast.Starred) for a in value.args) and all(
                    k.arg is not None for k in value.keywords)):
            return False
        parts = dotted(value.func)
        if parts is None or parts[0] in self.locals:
            return False
        found, obj = self.parsed.scope.lookup(parts[0])
        if not found or getattr_chain(obj, parts[1:]) is not functools.partial:
            return False
        self._assigned_once(target, value, "functools.partial")

        def held(expr: gast.expr) -> gast.expr:    # the value bound now, whatever changes later
            atom = self.atom(expr)
            if isinstance(atom, Const):
                return as_expr(atom)
            return gast.Name(self._bind_temp(f"{target}_arg", Op(OpKind.COPY, args=[atom])),
                             gast.Load(), None, None)
        bound = [held(a) for a in value.args[1:]]
        keywords = [gast.keyword(arg=k.arg, value=held(k.value)) for k in value.keywords]
        self.partials[target] = (value.args[0], bound, keywords)
        return True

    def _assigned_once(self, target: str, value: gast.expr, what: str) -> None:
        """A name whose calls are read as what it holds (a partial, a lambda) must hold that
        one value wherever it is called."""
        stores = sum(isinstance(n, gast.Name) and n.id == target and isinstance(
            n.ctx, gast.Store) for n in trees.walk(self.parsed.node))
        if stores != 1:
            raise self.parsed.error(
                f"{target} is a {what} here and is assigned elsewhere too: gradlab reads a "
                f"{what}'s calls as what it computes where the name holds one {what}; give "
                f"each {what} a name of its own", value, what)

    def _lambda_call(self, node: gast.Call) -> gast.expr | None:
        """``loss(w)`` of ``loss = lambda p: np.sum(p ** 2)``: the lambda's expression with
        its parameters replaced by the call's arguments (each evaluated once, first), read
        where the call is, as Python evaluates a lambda's body when it is called."""
        if not (isinstance(node.func, gast.Name) and node.func.id in self.lambdas):
            return None
        name, lam = node.func.id, self.lambdas[node.func.id]
        spec = lam.args
        if spec.vararg is not None or spec.kwarg is not None or spec.kwonlyargs or \
                spec.posonlyargs or any(isinstance(a, gast.Starred) for a in node.args) or \
                any(k.arg is None for k in node.keywords):
            raise self.parsed.error(f"{name}: a lambda with *args, **kwargs or keyword-only "
                                    f"parameters, or a call of one with * or **, is not "
                                    f"supported: write a def", node, "lambda")
        if any(not isinstance(d, gast.Constant) for d in spec.defaults):
            raise self.parsed.error(f"{name}: a lambda's default that is not a literal is "
                                    f"evaluated where the lambda is made: write a def", node,
                                    "lambda")
        if name in self.expanding:
            raise self.parsed.error(f"{name} calls itself: write a def", node, "lambda")
        params = [a.id for a in spec.args]
        given: dict[str, gast.expr] = dict(zip(params, node.args))
        for k in node.keywords:
            given[k.arg] = k.value  # type: ignore[index]
        defaults = dict(zip(params[len(params) - len(spec.defaults):], spec.defaults))
        if len(node.args) > len(params) or set(given) - set(params) or (
                set(params) - set(given) - set(defaults)):
            raise self.parsed.error(f"{name} takes ({', '.join(params)}): the call does not "
                                    f"match", node, "lambda")
        values = {p: as_expr(self.atom(given[p])) if p in given else defaults[p]
                  for p in params}
        self.expanding.add(name)         # (until the body is read: see _call)
        return _Substituted(values).visit(copy.deepcopy(lam.body))

    def _partial_call(self, node: gast.Call) -> gast.Call | None:
        """``g(x)`` of a partial (see :meth:`_partial`) as the call of its function."""
        if not (isinstance(node.func, gast.Name) and node.func.id in self.partials):
            return None
        func, bound, keywords = self.partials[node.func.id]
        given = {k.arg for k in node.keywords}
        return gast.Call(func=func, args=bound + list(node.args),
                         keywords=[k for k in keywords if k.arg not in given] + list(
                             node.keywords))


class _Substituted(gast.NodeTransformer):
    """A lambda's body with its parameters replaced by the expressions of a call's values."""

    def __init__(self, values: dict[str, gast.expr]) -> None:
        self.values = values

    def visit_Name(self, node: gast.Name) -> gast.expr:
        if node.id in self.values and isinstance(node.ctx, gast.Load):
            return copy.deepcopy(self.values[node.id])
        return node
