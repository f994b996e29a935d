"""The reverse-mode corpus: functions covering every construct and rule gradlab supports.

Each function is ordinary NumPy/``math`` code. ``@case`` says how to make its inputs; the
conformance test runs every case on every backend against central finite differences.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np
import scipy.special

import gradlab
from gradlab.tensor import FRAMEWORKS
from tests.conftest import to_numpy

CORPUS: list["Case"] = []


@dataclass
class Case:
    fn: Callable[..., Any]
    shapes: tuple[Any, ...]
    wrt: Any = 0
    domain: str = "normal"          # normal | positive | unit (inside (-0.9, 0.9)) | wide
    scalars: tuple[int, ...] = ()   # argument positions passed as Python numbers
    ints: dict[int, int] = field(default_factory=dict)   # position -> fixed int value
    frameworks: tuple[str, ...] = FRAMEWORKS     # every registered backend, unless narrowed
    tol: float = 1e-5

    @property
    def name(self) -> str:
        return self.fn.__name__

    def inputs(self, seed: int = 0) -> list[Any]:
        rng = np.random.default_rng(seed + sum(map(ord, self.name)))
        out: list[Any] = []
        for i, shape in enumerate(self.shapes):
            if i in self.ints:
                out.append(self.ints[i])
                continue
            if isinstance(shape, np.ndarray):
                out.append(shape)
                continue
            size = shape if isinstance(shape, tuple) else ()
            if self.domain == "positive":
                v = rng.uniform(0.5, 2.0, size)
            elif self.domain == "unit":
                v = rng.uniform(-0.9, 0.9, size)
            elif self.domain == "wide":
                v = rng.uniform(-3.0, 3.0, size)
            else:
                v = rng.normal(size=size)
            out.append(float(v) if i in self.scalars else np.asarray(v, dtype=np.float64))
        return out


#: A subset with at least one case of every section (operators, elementwise functions, reductions,
#: shapes, indexing, assignment forms, branches, loops, returns, the user's functions, lists,
#: Python numbers): forward over reverse mode (hvp) is checked on the whole corpus on NumPy and
#: torch, on these on TensorFlow and JAX, whose eager op-by-op dispatch makes the whole corpus
#: a minute or more each.
REPRESENTATIVE = frozenset({
    "op_matmul", "op_broadcast_col", "op_scalar_array", "op_augassign",
    "f_trig", "f_maximum_minimum", "f_where", "f_clip",
    "r_sum_axes", "r_max_min", "r_var_std", "r_logsumexp_by_hand",
    "la_reshape", "la_concat_stack", "la_inv_det",
    "ix_read", "ix_write_loop", "ix_add_into",
    "a_tuple_unpack", "b_if_elif", "l_for_rows", "l_while", "l_break", "l_rnn_all",
    "r_return_in_loop", "u_call", "u_call_in_loop", "li_append_index",
    "c_integer_argument", "m_methods", "s_simulation",
})


def case(*shapes: Any, **kw: Any) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    def register(fn: Callable[..., Any]) -> Callable[..., Any]:
        CORPUS.append(Case(fn, shapes, **kw))
        return fn
    return register


V = (5,)
M = (3, 4)

# --- arithmetic operators ---------------------------------------------------------------------
@case(V, V)
def op_add_sub(x, y):
    return np.sum(x + y - 2.0 * x - (y - 1.0))


@case(V, V)
def op_mul_div(x, y):
    return np.sum(x * y / (y * y + 1.0))


@case(V, domain="positive")
def op_pow_const(x):
    return np.sum(x ** 3 + x ** 0.5 + 2.0 ** x)


@case(V, V, wrt=(0, 1), domain="positive")
def op_pow_both(x, y):
    return np.sum(x ** y)


@case(V)
def op_neg_pos(x):
    return np.sum(-x * +x)


@case((3, 4), (4, 2), wrt=(0, 1))
def op_matmul(a, b):
    return np.sum(np.tanh(a @ b))


@case((4, 4), V[:0] + (4,), wrt=(0, 1))
def op_matvec(W, h):
    return np.sum((W @ h) ** 2) + np.sum((h @ W) ** 2) + h @ h


@case(M, (4,), wrt=(0, 1))
def op_broadcast_add(x, b):
    return np.sum((x + b) ** 2)


@case(M, (3, 1), wrt=(0, 1))
def op_broadcast_col(x, c):
    return np.sum(x * c + c)


@case((), M, wrt=(0, 1), scalars=(0,))
def op_scalar_array(s, x):
    return np.sum(s * x + x / (s + 3.0))


@case(V)
def op_augassign(x):
    y = x * 1.0
    y += x
    y *= 2.0
    y -= 0.5 * x
    y /= 3.0
    y **= 2
    return np.sum(y)


# --- elementwise functions ----------------------------------------------------------------------
@case(V)
def f_exp_log(x):
    return np.sum(np.log(np.exp(x) + 1.0))


@case(V, domain="positive")
def f_log_family(x):
    return np.sum(np.log(x) + np.log1p(x) + np.log2(x) + np.log10(x))


@case(V)
def f_expm1_sqrt_square(x):
    return np.sum(np.expm1(x) + np.sqrt(np.square(x) + 1.0))


@case(V)
def f_abs_sign(x):
    return np.sum(np.abs(x) * 2.0 + np.sign(x) * x)


@case(V)
def f_trig(x):
    return np.sum(np.sin(x) * np.cos(x) + np.tan(0.3 * x))


@case(V, domain="unit")
def f_inverse_trig(x):
    return np.sum(np.arcsin(x) + np.arccos(x) * 2.0 + np.arctan(x))


@case(V)
def f_hyperbolic(x):
    return np.sum(np.sinh(x) + np.cosh(x) + np.tanh(x))


@case(V, domain="unit")
def f_inverse_hyperbolic(x):
    return np.sum(np.arcsinh(x) + np.arctanh(x) + np.arccosh(x * x + 1.5))


@case(V)
def f_erf(x):
    return np.sum(scipy.special.erf(x))


@case(V)
def f_sigmoid_relu(x):
    return np.sum(scipy.special.expit(x) + np.maximum(x, 0.0))


@case(V, V, wrt=(0, 1), domain="wide")
def f_maximum_minimum(x, y):
    return np.sum(np.maximum(x, y) * 2.0 + np.minimum(x, y))


@case(V, domain="wide")
def f_clip(x):
    return np.sum(np.clip(x, -1.0, 1.0) ** 2)


@case(V, V, wrt=(0, 1))
def f_where(x, y):
    return np.sum(np.where(x > y, x * y, x + y))


@case(V)
def f_reciprocal(x):
    return np.sum(np.reciprocal(x * x + 1.0))


@case(V, V, wrt=(0, 1))
def f_arctan2(x, y):
    return np.sum(np.arctan2(x, y * y + 1.0))


# --- reductions ---------------------------------------------------------------------------------
@case(M)
def r_sum_axes(x):
    return np.sum(np.sum(x, axis=0) ** 2) + np.sum(np.sum(x, axis=1, keepdims=True) * x)


@case(M)
def r_mean_axes(x):
    return np.mean(np.mean(x, axis=0) ** 2) + np.mean(x.mean(axis=-1, keepdims=True) * x)


@case(M, domain="positive")
def r_prod(x):
    return np.prod(x) + np.sum(np.prod(x, axis=1))


@case(M)
def r_max_min(x):
    return np.max(x) + np.sum(np.min(x, axis=0)) + np.sum(np.max(x, axis=1, keepdims=True))


@case(M)
def r_logsumexp(x):
    return scipy.special.logsumexp(x) + np.sum(scipy.special.logsumexp(x, axis=1))


@case(M)
def r_logsumexp_keepdims(x):
    """Written out with the reduced axis kept, and along a negative axis."""
    return np.sum(scipy.special.logsumexp(x, axis=0, keepdims=True) * x) + np.sum(
        scipy.special.logsumexp(x * x, axis=-1) ** 2)


def _keep(flag):
    return flag


@case(M)
def r_logsumexp_by_rule(x):
    """``keepdims`` is not a literal here, so logsumexp stays one call, and its rule applies."""
    keep = _keep(True)
    return np.sum(scipy.special.logsumexp(x, keepdims=keep) * x)


@case(M)
def r_var_std(x):
    return np.var(x) + np.sum(np.std(x, axis=0)) + np.sum(np.var(x, axis=1, keepdims=True))


@case(M)
def r_norm(x):
    return np.linalg.norm(x) + np.sum(np.linalg.norm(x, axis=1))


@case(V)
def r_cumsum(x):
    return np.sum(np.cumsum(x) ** 2)


@case(M)
def r_softmax_logsoftmax(x):
    m = np.max(x, axis=1, keepdims=True)
    e = np.exp(x - m)
    p = e / np.sum(e, axis=1, keepdims=True)
    return np.sum(p * np.arange(4.0)) + np.sum(np.log(p)) * 0.1


@case(M)
def r_logsumexp_by_hand(x):
    m = np.max(x)
    rows = np.max(x, axis=1, keepdims=True)
    whole = m + np.log(np.sum(np.exp(x - m)))
    by_row = np.log(np.sum(np.exp(x - rows), axis=1, keepdims=True)) + rows
    return whole + np.sum(by_row * np.arange(3.0)[:, None])


@case(M)
def r_log_softmax_by_hand(x):
    m = np.max(x, axis=-1, keepdims=True)
    log_p = x - m - np.log(np.sum(np.exp(x - m), axis=-1, keepdims=True))
    return np.sum(log_p * np.arange(4.0))


@case(M)
def r_shift_near_misses(x):
    """Shapes of the logsumexp/softmax identity that do not cancel, or that gradlab cannot
    prove cancel: the gradient of the shift must be kept in each."""
    m0 = np.max(x, axis=0, keepdims=True)
    e = np.exp(x - m0)
    across = e / np.sum(e, axis=1, keepdims=True)            # shift along the other axis
    m = np.max(x)
    f = np.exp(x - m)
    reused = m + np.log(np.sum(f)) + np.sum(f) * 0.1         # exp(x - m) read twice
    doubled = 2.0 * m + np.log(np.sum(np.exp(x - m)))         # not the identity
    lifted = np.sum(x, axis=1, keepdims=True)
    g = np.exp(x - lifted)
    lifted = lifted * 0.5
    moved = lifted + np.log(np.sum(g, axis=1, keepdims=True))  # shift reassigned in between
    return np.sum(across * np.arange(4.0)) + reused + doubled + np.sum(moved)


@case(M)
def r_logsumexp_in_loop(x):
    s = 0.0
    for i in range(3):
        y = x * (i + 1.0)
        m = np.max(y, axis=1, keepdims=True)
        s = s + np.sum(m + np.log(np.sum(np.exp(y - m), axis=1, keepdims=True)))
    return s


# --- linear algebra and shapes ------------------------------------------------------------------
@case(V, V, wrt=(0, 1))
def la_dot(x, y):
    return np.dot(x, y) + np.sum(np.outer(x, y) ** 2)


@case(M)
def la_transpose(x):
    return np.sum(x.T @ x) + np.sum(np.transpose(x) * 2.0)


@case(M)
def la_reshape(x):
    return np.sum(np.reshape(x, (4, 3)) @ x) + np.sum(x.reshape(2, 6) ** 2)


@case(M)
def la_expand_squeeze(x):
    y = np.expand_dims(x, 0)
    return np.sum(np.squeeze(y, axis=0) * x) + np.sum(np.expand_dims(x, -1) ** 2)


@case(M, M, wrt=(0, 1))
def la_concat_stack(x, y):
    c = np.concatenate([x, y * 2.0], axis=0)
    s = np.stack([x, y], axis=1)
    return np.sum(c ** 2) + np.sum(s * np.arange(2.0).reshape(1, 2, 1))


@case((6,))
def la_split(x):
    a, b, c = np.split(x, 3)
    return np.sum(a * b + c)


@case(V)
def la_broadcast_to_tile(x):
    return np.sum(np.broadcast_to(x, (3, 5)) ** 2) + np.sum(np.tile(x, 2) * np.arange(10.0))


@case(M)
def la_flip_swap(x):
    return np.sum(np.flip(x, axis=1) * x) + np.sum(np.swapaxes(x, 0, 1) ** 2)


@case((3, 3))
def la_inv_det(x):
    a = x + 3.0 * np.eye(3)
    return np.sum(np.linalg.inv(a)) + np.linalg.det(a)


# --- indexing ------------------------------------------------------------------------------------
@case(M)
def ix_read(x):
    return x[0, 1] * x[2, 3] + np.sum(x[1]) + np.sum(x[:, 2] ** 2) + np.sum(x[1:, ::2])


@case(V)
def ix_negative_and_slices(x):
    return x[-1] * x[0] + np.sum(x[1:-1] * x[:-2])


@case(V)
def ix_write(x):
    y = np.zeros(5)
    y[0] = x[1] * 2.0
    y[2:4] = x[3:5] ** 2
    return np.sum(y * x)


@case(M)
def ix_write_loop(x):
    out = np.zeros((3, 4))
    for i in range(3):
        out[i] = np.tanh(x[i]) * (i + 1)
    return np.sum(out ** 2)


@case(V)
def ix_add_into(x):
    acc = np.zeros(3)
    for i in range(5):
        acc[i % 3] += x[i] ** 2
    return np.sum(acc * np.arange(1.0, 4.0))


@case(V)
def ix_integer_array(x):
    idx = np.array([0, 2, 2, 4])
    return np.sum(x[idx] ** 2)


# --- assignment forms ----------------------------------------------------------------------------
@case(V)
def a_reassign(x):
    y = np.sin(x)
    y = np.sin(y) * y
    y = y + x
    return np.sum(y)


@case(V, V, wrt=(0, 1))
def a_tuple_unpack(x, y):
    a, b = x * 2.0, y - 1.0
    a, b = b, a
    return np.sum(a * b + a)


@case(V)
def a_chain(x):
    a = b = x * 2.0
    return np.sum(a * b)


@case(V)
def a_conditional_expression(x):
    s = np.sum(x)
    y = x * 2.0 if s > 0 else x ** 3
    return np.sum(y)


# --- branches ------------------------------------------------------------------------------------
@case(V)
def b_if_else(x):
    if np.sum(x) > 0:
        y = np.sin(x)
    else:
        y = np.cos(x)
    return np.sum(y * x)


@case(V)
def b_if_elif(x):
    s = np.sum(x)
    if s > 1.0:
        y = x * 3.0
    elif s > -1.0:
        y = x ** 2
    else:
        y = -x
    return np.sum(y)


@case(V)
def b_if_no_else(x):
    y = x * 1.0
    if np.max(x) > 0.0:
        y = y * 2.0
    return np.sum(y * x)


@case(V)
def b_bool_logic(x):
    s, m = np.sum(x), np.max(x)
    if (s > -10 and m < 10) or not s > 100:
        y = np.exp(x)
    else:
        y = x
    return np.sum(y)


@case(V)
def b_nested(x):
    y = x
    if np.sum(x) > -100:
        if np.min(x) < 100:
            y = x * x
        else:
            y = x + 1.0
    return np.sum(y)


# --- loops ---------------------------------------------------------------------------------------
@case(V)
def l_for_range(x):
    s = 0.0
    for i in range(5):
        s = s + np.sin(x[i]) * x[i]
    return s


@case(V)
def l_for_range_args(x):
    s = x * 0.0
    for i in range(1, 5, 2):
        s = s + x * i
    return np.sum(s ** 2)


@case(M)
def l_for_rows(x):
    total = 0.0
    for row in x:
        total = total + np.sum(np.tanh(row) ** 2)
    return total


@case(M)
def l_enumerate(x):
    total = 0.0
    for i, row in enumerate(x):
        total = total + (i + 1) * np.sum(row * row)
    return total


@case(M, M, wrt=(0, 1))
def l_zip(x, y):
    total = 0.0
    for a, b in zip(x, y):
        total = total + np.dot(a, b)
    return total


@case(V)
def l_while(x):
    y = x
    i = 0
    while i < 4:
        y = np.sin(y) + x
        i += 1
    return np.sum(y)


@case(V)
def l_while_data(x):
    y = x * 0.1
    while np.sum(y * y) < 10.0:
        y = y * 1.5 + 0.1
    return np.sum(y)


@case(V, domain="positive")
def l_break(x):
    y = x
    for i in range(20):
        y = y * 1.3
        if np.sum(y) > 30.0:
            break
    return np.sum(y * y)


@case(V)
def l_continue(x):
    s = 0.0
    for i in range(5):
        if i % 2 == 1:
            continue
        s = s + np.exp(x[i])
    return s


@case(V)
def l_nested(x):
    s = x * 0.0
    for i in range(3):
        for j in range(2):
            s = s + np.sin(x * (i + 1)) * (j + 1)
    return np.sum(s)


@case((4, 4), (6, 4), (4,), wrt=0)
def l_rnn(W, xs, h0):
    h = h0
    for t in range(xs.shape[0]):
        if t % 3 == 0:
            continue
        h = np.tanh(W @ h * 0.5 + xs[t])
    return np.sum(h ** 2)


@case((4, 4), (6, 4), (4,), wrt=(0, 1, 2))
def l_rnn_all(W, xs, h0):
    h = h0
    for t in range(6):
        h = np.tanh(W @ h * 0.5 + xs[t])
    return np.sum(h ** 2)


@case(V)
def l_break_in_nested(x):
    s = x * 0.0
    for i in range(4):
        for j in range(4):
            if j > i:
                break
            s = s + x * (i - j)
    return np.sum(s * s)


@case(V)
def l_loop_swap(x):
    a, b = x * 1.0, x * 0.5
    for i in range(3):
        a, b = b, a * b + 1.0
    return np.sum(a + b)


# --- returns -------------------------------------------------------------------------------------
@case(V)
def r_early_return(x):
    if np.sum(x) > 100.0:
        return np.sum(x)
    y = np.tanh(x)
    return np.sum(y * y)


@case(V)
def r_return_in_loop(x):
    y = x
    for i in range(10):
        y = y * 1.2
        if np.max(y) > 50.0:
            return np.sum(y)
    return np.sum(y * 2.0)


@case(V)
def r_return_both_branches(x):
    if np.sum(x) > 0:
        return np.sum(x ** 2)
    else:
        return np.sum(np.exp(x))


# --- the user's own functions --------------------------------------------------------------------
def _layer(x, W, scale=1.0):
    return np.tanh(x @ W) * scale


def _pair(a):
    return a * 2.0, np.sin(a)


def _recurse(x, n):
    if n == 0:
        return x
    return _recurse(np.sin(x) + x * 0.5, n - 1)


@case((2, 3), (3, 3), wrt=(0, 1))
def u_call(x, W):
    h = _layer(x, W)
    return np.sum(_layer(h, W, scale=2.0) ** 2)


@case(V)
def u_tuple_return(x):
    a, b = _pair(x)
    return np.sum(a * b)


@case(V)
def u_recursion(x):
    return np.sum(_recurse(x, 3))


@case(V)
def u_call_in_loop(x):
    y = x
    for i in range(3):
        a, b = _pair(y)
        y = a * 0.3 + b
    return np.sum(y)


# --- lists ---------------------------------------------------------------------------------------
@case(V)
def li_append_stack(x):
    ys = []
    for i in range(3):
        ys.append(np.sin(x * (i + 1)))
    return np.sum(np.stack(ys) ** 2)


@case(V)
def li_append_index(x):
    hs = []
    h = x
    for i in range(3):
        h = np.tanh(h) + x
        hs.append(h)
    return np.sum(hs[-1] * hs[0])


@case(V)
def li_concatenate(x):
    parts = []
    for i in range(2):
        parts.append(x * (i + 1.0))
    return np.sum(np.concatenate(parts) ** 2)


@case(V)
def li_literal(x):
    items = [x, x * 2.0, np.sin(x)]
    return np.sum(np.stack(items, axis=1) ** 2) + np.sum(np.array([x[0], x[1]]) ** 2)


@case(V)
def li_builtin_sum(x):
    return sum([np.sum(x), np.sum(x * x)])


# --- constants, closures, integers ---------------------------------------------------------------
SCALE = 2.5
OFFSET = np.arange(5.0)


@case(V)
def c_module_constants(x):
    return np.sum((x + OFFSET) * SCALE) + np.sum(x * np.pi)


def _make_closure(k):
    def inner(x):
        return np.sum(np.sin(x * k))
    return inner


c_closure = case(V)(_make_closure(1.7))


@case(V, (), ints={1: 3})
def c_integer_argument(x, n):
    y = x
    for i in range(n):
        y = y * (i + 1) + np.cos(y)
    return np.sum(y)


@case(V)
def c_integer_arithmetic(x):
    n = x.shape[0]
    half = n // 2
    k = n - half
    return np.sum(x[:half] * k) + np.sum(x[half:]) / n


# --- array methods and properties ----------------------------------------------------------------
@case(M)
def m_methods(x):
    return x.sum() + x.mean(axis=0).sum() + (x.T @ x).sum() + x.max() + x.reshape(-1).dot(
        x.reshape(-1))


@case(M)
def m_shape_property(x):
    rows, cols = x.shape
    return np.sum(x * rows) + x.ndim * np.sum(x) / cols


@case(M)
def m_chained(x):
    return (x * x).sum(axis=1).mean() + np.tanh(x).std()


# --- math module (Python numbers) ----------------------------------------------------------------
@case((), scalars=(0,))
def s_math(x):
    return math.sin(x) * math.exp(x) + math.sqrt(x * x + 1.0) + math.tanh(x) * math.cos(x)


@case((), scalars=(0,), domain="positive")
def s_math_log_pow(x):
    return math.log(x) + math.pow(x, 2.5) + math.log1p(x) + abs(x) + math.atan(x)


@case((), (), wrt=(0, 1), scalars=(0, 1))
def s_simulation(k, c):
    x, v, dt = 1.0, 0.0, 0.01
    for i in range(50):
        a = -k * x - c * v
        v = v + dt * a
        x = x + dt * v
    return x * x + v


@case((), scalars=(0,))
def s_builtin_max_min(x):
    return max(x, 0.3) * min(x, 2.0) + abs(x)


# --- regressions ---------------------------------------------------------------------------------
def _triple(h):
    return h * 3.0


@case(V, (), (), ints={1: 2, 2: 1})
def reg_helper_reassigns_in_loop(x, n, flag):
    """z = helper(z) inside a loop's branch: the call's result replaces z's gradient."""
    h = x * 0.1
    for i in range(n):
        z = h * 2.0
        if flag:
            z = _triple(z)
        h = np.tanh(z)
    return np.sum(h)


@case((2, 3), (3,))
def reg_list_parameter_indexed(x, w):
    layers = [x, x * 2.0]
    total = 0.0
    for i in range(2):
        total = total + np.sum(layers[i] @ w)
    return total


def same_meaning(case: Case, args: list, converted: list) -> bool:
    """Whether the function gives the same value on the framework's arrays as on NumPy's."""
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            there = np.asarray(to_numpy(case.fn(*converted)), dtype=np.float64)
        except Exception:      # it does not run on them as written: gradlab's reading counts
            return True
        here = np.asarray(case.fn(*args), dtype=np.float64)
    return np.allclose(there, here, rtol=1e-6, atol=1e-9, equal_nan=True)
