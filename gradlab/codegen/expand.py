"""Primitives written out as their definition, so the backward pass can reuse the forward's work.

``logsumexp`` has a rule (``dx = exp(x - y) * dy``), and it is correct, but it runs ``exp`` over
the whole array a second time: the forward pass already did, hidden inside ``logsumexp``. On a
large array ``exp`` is most of the cost, so the gradient took 1.6x a hand-written one (the W4b
benchmark). Written out as the max-shifted formula a person would write,

    shift = gl.logsumexp_shift(x)          # the maximum (0 where it is infinite): no gradient
    x_minus_shift = x - shift
    exp_x_minus_shift = gl.exp(x_minus_shift)
    sum_exp_x_minus_shift = gl.sum(exp_x_minus_shift)
    log_sum_exp_x_minus_shift = gl.log(sum_exp_x_minus_shift)
    y = shift + log_sum_exp_x_minus_shift

the backward pass is ``exp_x_minus_shift * (dy / sum_exp_x_minus_shift)``: one pass, reusing the
forward's exponentials, as the hand-written softmax does. The shift carries no gradient because
logsumexp does not depend on it (``c + log(sum(exp(x - c)))`` is the same for every ``c``), which
is also why JAX's own logsumexp stops its gradient. ``logsumexp_shift`` is the backends' own
shift, so infinities and empty arrays give what ``gl.logsumexp`` gives.

An expansion needs its options as literals (``keepdims=True``), to know which formula applies;
otherwise the primitive stays one call and its rule differentiates it.
"""
from __future__ import annotations

from typing import Any, Callable

import gast

from .ir import Atom, Const, Op, OpKind

#: ``bind(hint, op)`` emits ``name = op`` before the statement being normalized, returns ``name``.
Bind = Callable[[str, Op], str]


def _flag(kwargs: dict[str, Atom], key: str) -> bool | None:
    """A literal boolean option (absent means False), or None when it is not a literal."""
    value = kwargs.get(key)
    if value is None:
        return False
    if isinstance(value, gast.Constant) and isinstance(value.value, bool):
        return value.value
    if isinstance(value, Const) and isinstance(value.value, bool):
        return value.value
    return None


def _is_none(value: Atom | None) -> bool:
    return value is None or (isinstance(value, gast.Constant) and value.value is None) or (
        isinstance(value, Const) and value.value is None)


def _true() -> gast.expr:
    return gast.Constant(value=True, kind=None)


def logsumexp(bind: Bind, args: list[Atom], kwargs: dict[str, Atom]) -> Op | None:
    keepdims = _flag(kwargs, "keepdims")
    if keepdims is None or len(args) != 1:
        return None
    x = args[0]
    axis = kwargs.get("axis")
    whole = _is_none(axis) and not keepdims
    reduce_over = {} if _is_none(axis) else {"axis": axis}
    shift = bind("shift", Op(OpKind.PRIM, "logsumexp_shift", [x],
                             {} if whole else {**reduce_over, "keepdims": _true()}))
    shifted = bind(f"{_name(x)}_minus_{shift}", Op(OpKind.PRIM, "subtract", [x, shift],
                                                  style="binop"))
    exps = bind(f"exp_{shifted}", Op(OpKind.PRIM, "exp", [shifted]))
    total = bind(f"sum_{exps}", Op(OpKind.PRIM, "sum", [exps],
                                   {**reduce_over, "keepdims": _true()} if keepdims
                                   else dict(reduce_over)))
    log_total = bind(f"log_{total}", Op(OpKind.PRIM, "log", [total]))
    if not whole and not keepdims:   # the shift kept the reduced axes for broadcasting: drop them
        shift = bind(f"squeeze_{shift}", Op(OpKind.PRIM, "squeeze", [shift], {"axis": axis}))
    return Op(OpKind.PRIM, "add", [shift, log_total], style="binop")


def divmod_(bind: Bind, args: list[Atom], kwargs: dict[str, Atom]) -> Op | None:
    """``divmod(x, y)`` is the pair ``(x // y, x % y)``; the remainder carries x's gradient."""
    x, y = args
    quotient = bind(f"{_name(x)}_div_{_name(y)}", Op(OpKind.PRIM, "floor_divide", [x, y],
                                                      style="binop"))
    remainder = bind(f"{_name(x)}_mod_{_name(y)}", Op(OpKind.PRIM, "mod", [x, y], style="binop"))
    return Op(OpKind.TUPLE, args=[quotient, remainder])


def _name(atom: Atom) -> str:
    return atom if isinstance(atom, str) else "x"


#: primitive -> its expansion (None when this call cannot be expanded)
EXPANSIONS: dict[str, Callable[[Bind, list[Atom], dict[str, Atom]], Op | None]] = {
    "logsumexp": logsumexp,
    "divmod": divmod_,
}


def expand(prim: str, bind: Bind, args: list[Atom], kwargs: dict[str, Any]) -> Op | None:
    """The last operation of ``prim``'s expansion (its steps already bound), or None."""
    expansion = EXPANSIONS.get(prim)
    return expansion(bind, args, kwargs) if expansion is not None else None
