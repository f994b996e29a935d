"""Programs gradlab must refuse (used by ``test_refusals.py``): each is ordinary Python/NumPy
whose gradient gradlab cannot follow. Kept in their own module so line numbers are stable."""
# flake8: noqa
from __future__ import annotations

import math
import operator

import numpy as np
import scipy.special

COUNTER = 0
OPS = {"sin": np.sin}


class Scaler:
    def __init__(self, k):
        self.k = k

    def apply(self, x):
        return x * self.k


SCALER = Scaler(2.0)


# --- unsupported syntax ------------------------------------------------------------------------
def uses_yield_from(x):
    yield from [np.sum(x)]


def uses_set_comprehension(x):
    s = {float(v) for v in x}
    return np.sum(x) * len(s)


def uses_dict_comprehension(x):
    d = {i: x[i] for i in range(3)}
    return d[0] + np.sum(x)


def uses_dict_iterated(x):
    d = {}
    d["a"] = x
    s = 0.0
    for k in d:
        s = s + np.sum(d[k])
    return s


def uses_dict_written_at_computed_key(x):
    d = {"a": 1.0}
    k = "a"
    d[k] = x
    return np.sum(d["a"])


def uses_while_else(x):
    i = 0
    s = 0.0
    while i < 3:
        s = s + x[i]
        i += 1
    else:
        s = s * 2.0
    return s


def uses_match(x):
    match x.ndim:
        case 1:
            y = x * 2.0
        case _:
            y = x
    return np.sum(y)


async def uses_async(x):
    return np.sum(x)


def uses_star_unpacking(x):        # (of a variable, first, *rest = ws, it is read)
    a, *rest = x * 2.0
    return a * np.sum(np.stack(rest))


def uses_nested_subscript_store(x):
    y = np.zeros((3, 4))
    y[0][1] = x[0]
    return np.sum(y * 2.0)


def uses_attribute_subscript_store(x):
    y = np.zeros((4, 3))
    y.T[0] = x[:3]
    return np.sum(y)


def uses_attribute_augassign(x):
    SCALER.k += 1.0
    return np.sum(x)


def uses_iter_loop(x):
    s = 0.0
    for v in iter(x):
        s = s + v * v
    return s


def uses_map_loop(x):
    s = 0.0
    for v in map(np.sin, x):
        s = s + v
    return s


def uses_ifexp_in_condition(x):
    if (x[0] if x[1] > 0 else x[2]) > 0.0:
        return np.sum(x * 2.0)
    return np.sum(x)


def uses_with_errstate(x):
    with np.errstate(divide="ignore"):
        y = np.log(x * x + 1.0)
    return np.sum(y)


def uses_lambda_default(x, f=lambda v: v):
    return np.sum(f(x))


# --- mutations the transformer cannot follow -----------------------------------------------
def uses_augassign_on_alias(x):
    y = x * 2.0
    z = y
    y += x
    return np.sum(z * x)


def uses_augassign_on_view(x):
    y = x * 2.0
    z = y[1:]
    y += x
    return np.sum(z * z)


def uses_augassign_on_parameter(x):
    y = x
    y *= 2.0
    return np.sum(x * x)


def uses_index_write_into_view(x):
    y = x * 2.0
    z = y[1:]
    z[0] = 0.0
    return np.sum(y * x)


def uses_fill(x):
    y = x * 2.0
    y.fill(1.0)
    return np.sum(y)


def uses_out_argument(x):
    a = x * 2.0
    np.add(a, x, out=a)
    return np.sum(a * a)


def uses_out_argument_unary(x):
    y = x * 2.0
    np.sin(x, out=y)
    return np.sum(y * x)


def uses_copyto(x):
    y = np.zeros(4)
    np.copyto(y, x * x)
    return np.sum(y)


def uses_put(x):
    y = x * 1.0
    np.put(y, [0], x[1] ** 2)
    return np.sum(y * y)


def uses_ufunc_at(x):
    y = np.zeros(4)
    np.add.at(y, [0, 0, 1], x[:3])
    return np.sum(y * y)


def uses_dunder_iadd(x):
    y = x * 2.0
    y.__iadd__(x)
    return np.sum(y * y)


def uses_operator_iadd(x):
    y = x * 2.0
    z = y
    operator.iadd(y, x)
    return np.sum(z * z)


def uses_torch_style_inplace(x):
    y = x * 2.0
    y.add_(x)
    return np.sum(y)


def uses_fill_diagonal(x):
    y = np.outer(x, x)
    np.fill_diagonal(y, 0.0)
    return np.sum(y)


def uses_inplace_on_parameter(x):
    x.sort()
    return np.sum(x * np.arange(4.0))


def uses_resize(x):
    y = x * 1.0
    y.resize((2, 2))
    return np.sum(y)


# --- calls with no rule, closures and names that cannot be resolved ----------------------
def uses_no_rule_scipy(x):
    return np.sum(scipy.special.gamma(x * x + 1.0))


def uses_no_rule_cbrt(x):
    return np.sum(np.cbrt(x * 2.0))


def uses_no_rule_math(x):
    return math.gamma(x * x + 1.0)


def uses_math_without_rule(x):
    return math.gamma(x) * 2.0


def uses_math_radians(x):       # (math.radians itself is written out: definitions.py)
    return math.lgamma(x) * x


def uses_method_of_object(x):
    return np.sum(SCALER.apply(x))


def uses_dict_of_functions(x):
    return np.sum(OPS["sin"](x))


def uses_getattr_dispatch(x):
    return np.sum(getattr(np, "sin")(x))


def uses_eval(x):
    y = eval("x * 2.0")
    return np.sum(y)


def _varargs_helper(*parts):
    return parts[0] * 2.0


def uses_varargs_helper(x):
    return np.sum(_varargs_helper(x))


def _array_default(x, w=np.ones(4)):
    return x * w


def uses_non_literal_default(x):
    return np.sum(_array_default(x))


def _make_unresolved_closure():
    def uses_unbound_closure(x):
        return np.sum(x * k)
    return uses_unbound_closure
    k = 2.0


uses_unbound_closure = _make_unresolved_closure()


def _make_nonlocal():
    n = 0

    def uses_nonlocal(x):
        nonlocal n
        n += 1
        return np.sum(x)
    return uses_nonlocal


uses_nonlocal = _make_nonlocal()


def uses_undefined_name(x):
    return np.sum(x * UNDEFINED_SCALE)  # noqa: F821


# --- accepted: names that only annotations use are never looked up -------------------------
def annotated_with_a_type_only_a_checker_knows(x: ArrayLike) -> ArrayLike:  # noqa: F821
    return np.sum(x * x)


def _zero_first(a):
    a[0] = 0.0
    return np.sum(a)


def uses_helper_writing_its_argument(x):
    y = x * 2.0
    s = _zero_first(y)
    return s + np.sum(y ** 2)


def _scaled_sum(a):
    a *= 2.0
    return np.sum(a)


def uses_helper_scaling_its_argument(x):
    y = x * 1.0
    return _scaled_sum(y) + np.sum(y ** 2)
