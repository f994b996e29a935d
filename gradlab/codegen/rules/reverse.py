"""Reverse-mode templates: how each primitive sends its result's gradient back to its arguments.

Read a template as maths: in ``def tanh(y, x)``, ``y = tanh(x)`` and ``dx = (1 - y*y) * dy`` is
the chain rule. ``dy`` is the gradient arriving at the result; each ``dx = ...`` is added to the
argument's gradient. ``gl`` is the tensor layer the generated code runs on; ``unbroadcast``
sums a gradient back to the shape of an argument that was broadcast (it disappears when the
other operand is a literal number). Templates are parsed, never run.
"""
# flake8: noqa: F821
from __future__ import annotations

from typing import Any

from .templates import adjoint

gl: Any = None  # the namespace in generated code; templates are never executed


# --- arithmetic ---------------------------------------------------------------------------------
@adjoint("add")
def add(z, x, y):
    dx = gl.unbroadcast(dz, x)
    dy = gl.unbroadcast(dz, y)


@adjoint("subtract")
def subtract(z, x, y):
    dx = gl.unbroadcast(dz, x)
    dy = -gl.unbroadcast(dz, y)


@adjoint("multiply")
def multiply(z, x, y):
    dx = gl.unbroadcast(dz * y, x)
    dy = gl.unbroadcast(x * dz, y)


@adjoint("divide")
def divide(z, x, y):
    dx = gl.unbroadcast(dz / y, x)
    dy = gl.unbroadcast(-dz * z / y, y)


@adjoint("power")
def power(z, x, y):
    dx = gl.unbroadcast(y * x ** (y - 1) * dz, x)
    dy = gl.unbroadcast(dz * z * gl.log(gl.or_one(x)), y)   # 0 ** y: z is 0, and so is dy


@adjoint("mod")
def mod(z, x, y):
    dx = gl.unbroadcast(dz, x)
    dy = gl.unbroadcast(-dz * gl.floor_divide(x, y), y)


@adjoint("negative")
def negative(y, x):
    dx = -dy


@adjoint("copy")
def copy(y, x):
    dx = dy


# Parts of complex values. A real gradient d reaching a complex w stands for Re(d * dw)
# (multiply's adjoint carries it on unconjugated, as for holomorphic functions), so that
# Re(w) sends d itself back, Im(w) -1j * d, conj(w) conj(d) and angle(w) = Im(log w)
# -1j * d / w. A gradient that reaches a real input through a complex value is refused
# (api.conform_gradients): abs and the other rules are not written for complex arguments.
@adjoint("real")
def real(y, x):
    dx = dy


@adjoint("imag")
def imag(y, x):
    dx = gl.imag_adjoint(dy, x)


@adjoint("conj")
def conj(y, x):
    dx = gl.conj(dy)


@adjoint("angle")
def angle(y, x):
    dx = gl.angle_adjoint(dy, x)


@adjoint("matmul")
def matmul(z, x, y):
    dx = gl.matmul_grad_x(dz, x, y)
    dy = gl.matmul_grad_y(dz, x, y)


@adjoint("dot")
def dot(z, x, y):
    dx = gl.matmul_grad_x(dz, x, y)
    dy = gl.matmul_grad_y(dz, x, y)


@adjoint("outer")
def outer(z, x, y):
    dx = gl.reshape(gl.matmul(dz, gl.reshape(y, (-1,))), gl.shape(x))
    dy = gl.reshape(gl.matmul(gl.reshape(x, (-1,)), dz), gl.shape(y))


# --- elementwise functions ----------------------------------------------------------------------
@adjoint("exp")
def exp(y, x):
    dx = y * dy


@adjoint("expm1")
def expm1(y, x):
    dx = (y + 1.0) * dy


@adjoint("log")
def log(y, x):
    dx = dy / x


@adjoint("log1p")
def log1p(y, x):
    dx = dy / (1.0 + x)


@adjoint("log2")
def log2(y, x):
    dx = dy / (x * 0.6931471805599453)


@adjoint("log10")
def log10(y, x):
    dx = dy / (x * 2.302585092994046)


@adjoint("rsqrt")
def rsqrt(y, x):
    dx = -0.5 * y ** 3 * dy


@adjoint("sqrt")
def sqrt(y, x):
    dx = dy / (2.0 * y)


@adjoint("square")
def square(y, x):
    dx = 2.0 * x * dy


@adjoint("reciprocal")
def reciprocal(y, x):
    dx = -y * y * dy


@adjoint("abs")
def abs(y, x):
    dx = gl.sign(x) * dy


@adjoint("sin")
def sin(y, x):
    dx = gl.cos(x) * dy


@adjoint("cos")
def cos(y, x):
    dx = -gl.sin(x) * dy


@adjoint("tan")
def tan(y, x):
    dx = (1.0 + y * y) * dy


@adjoint("arcsin")
def arcsin(y, x):
    dx = dy / gl.sqrt(1.0 - x * x)


@adjoint("arccos")
def arccos(y, x):
    dx = -dy / gl.sqrt(1.0 - x * x)


@adjoint("arctan")
def arctan(y, x):
    dx = dy / (1.0 + x * x)


@adjoint("sinh")
def sinh(y, x):
    dx = gl.cosh(x) * dy


@adjoint("cosh")
def cosh(y, x):
    dx = gl.sinh(x) * dy


@adjoint("tanh")
def tanh(y, x):
    dx = (1.0 - y * y) * dy


@adjoint("arcsinh")
def arcsinh(y, x):
    dx = dy / gl.sqrt(x * x + 1.0)


@adjoint("arccosh")
def arccosh(y, x):
    dx = dy / gl.sqrt(x * x - 1.0)


@adjoint("arctanh")
def arctanh(y, x):
    dx = dy / (1.0 - x * x)


@adjoint("sigmoid")
def sigmoid(y, x):
    dx = y * (1.0 - y) * dy


@adjoint("softplus")
def softplus(y, x):
    dx = gl.sigmoid(x) * dy


@adjoint("relu")
def relu(y, x):
    dx = dy * gl.astype(x > 0, gl.dtype(y))


@adjoint("erf")
def erf(y, x):
    dx = 1.1283791670955126 * gl.exp(-x * x) * dy


@adjoint("maximum")
def maximum(z, x, y):
    # at a tie (x == y) each operand gets half, as np.max shares among equal entries (and as
    # the symmetric difference quotient, torch and JAX have it)
    share = gl.astype(x > y, gl.dtype(z)) + 0.5 * gl.astype(x == y, gl.dtype(z))
    dx = gl.unbroadcast(dz * share, x)
    dy = gl.unbroadcast(dz * (1.0 - share), y)


@adjoint("minimum")
def minimum(z, x, y):
    share = gl.astype(x < y, gl.dtype(z)) + 0.5 * gl.astype(x == y, gl.dtype(z))
    dx = gl.unbroadcast(dz * share, x)      # half each at a tie, as maximum
    dy = gl.unbroadcast(dz * (1.0 - share), y)


@adjoint("arctan2")
def arctan2(z, x, y):
    # hypot(x, y) ** 2 is x * x + y * y in the wider dtype of the two (x * x of a float16
    # beside a float64 would round in float16); 0 at the origin
    dx = gl.unbroadcast(dz * y / gl.or_one(gl.hypot(x, y) ** 2), x)
    dy = gl.unbroadcast(-dz * x / gl.or_one(gl.hypot(x, y) ** 2), y)


@adjoint("logaddexp")
def logaddexp(z, x, y):
    dx = gl.unbroadcast(dz * gl.exp(x - z), x)      # each operand's share of the sum
    dy = gl.unbroadcast(dz * gl.exp(y - z), y)


@adjoint("squared_difference")
def squared_difference(z, x, y):
    dx = gl.unbroadcast(2.0 * (x - y) * dz, x)
    dy = gl.unbroadcast(-2.0 * (x - y) * dz, y)


@adjoint("hypot")
def hypot(z, x, y):
    dx = gl.unbroadcast(dz * x / gl.or_one(z), x)      # 0 at the origin, as the norm's
    dy = gl.unbroadcast(dz * y / gl.or_one(z), y)


@adjoint("where")
def where(z, condition, x, y):
    dx = gl.unbroadcast(dz * gl.astype(condition, gl.dtype(z)), x)
    dy = gl.unbroadcast(dz * gl.astype(gl.logical_not(condition), gl.dtype(z)), y)


@adjoint("clip")
def clip(y, x, a_min, a_max):
    if a_min is None:
        dx = dy * gl.astype(x <= a_max, gl.dtype(y))
        da_max = gl.unbroadcast(dy * gl.astype(x > a_max, gl.dtype(y)), a_max)
    elif a_max is None:
        dx = dy * gl.astype(x >= a_min, gl.dtype(y))
        da_min = gl.unbroadcast(dy * gl.astype(x < a_min, gl.dtype(y)), a_min)
    else:
        dx = dy * gl.astype(gl.logical_and(x >= a_min, x <= a_max), gl.dtype(y))
        da_min = gl.unbroadcast(dy * gl.astype(x < a_min, gl.dtype(y)), a_min)
        da_max = gl.unbroadcast(dy * gl.astype(x > a_max, gl.dtype(y)), a_max)


@adjoint("stop_gradient")
def stop_gradient(y, x):
    pass


# --- reductions ---------------------------------------------------------------------------------
@adjoint("sum")
def sum(y, x, axis=None, keepdims=False):
    if axis is None or keepdims:
        dx = gl.broadcast_like(dy, x)
    else:
        dx = gl.broadcast_like(gl.expand_dims(dy, axis), x)


@adjoint("mean")
def mean(y, x, axis=None, keepdims=False):
    if axis is None:
        dx = gl.broadcast_like(dy / gl.size(x), x)
    elif keepdims:
        dx = gl.broadcast_like(dy * (gl.size(y) / gl.size(x)), x)
    else:
        dx = gl.broadcast_like(gl.expand_dims(dy, axis) * (gl.size(y) / gl.size(x)), x)


@adjoint("prod")
def prod(y, x, axis=None, keepdims=False):
    # prod_others: each entry's partner, the product of the other entries (y / x without
    # dividing by a zero entry)
    if axis is None or keepdims:
        dx = gl.prod_others(x, axis=axis) * dy
    else:
        dx = gl.prod_others(x, axis=axis) * gl.expand_dims(dy, axis)


@adjoint("max")
def max(y, x, axis=None, keepdims=False):
    if axis is None or keepdims:
        mask = gl.astype(gl.equal(x, y), gl.dtype(x))
        dx = mask * (dy / gl.sum(mask, axis=axis, keepdims=True))
    else:
        mask = gl.astype(gl.equal(x, gl.expand_dims(y, axis)), gl.dtype(x))
        dx = mask * (gl.expand_dims(dy, axis) / gl.sum(mask, axis=axis, keepdims=True))


@adjoint("min")
def min(y, x, axis=None, keepdims=False):
    if axis is None or keepdims:
        mask = gl.astype(gl.equal(x, y), gl.dtype(x))
        dx = mask * (dy / gl.sum(mask, axis=axis, keepdims=True))
    else:
        mask = gl.astype(gl.equal(x, gl.expand_dims(y, axis)), gl.dtype(x))
        dx = mask * (gl.expand_dims(dy, axis) / gl.sum(mask, axis=axis, keepdims=True))


@adjoint("logsumexp")
def logsumexp(y, x, axis=None, keepdims=False):
    if axis is None or keepdims:
        dx = gl.exp(x - y) * dy
    else:
        dx = gl.exp(x - gl.expand_dims(y, axis)) * gl.expand_dims(dy, axis)


@adjoint("var")
def var(y, x, axis=None, keepdims=False, ddof=0):
    if axis is None or keepdims:
        dx = 2.0 * (x - gl.mean(x, axis=axis, keepdims=True)) * dy / (
            gl.size(x) / gl.size(y) - ddof)
    else:
        dx = 2.0 * (x - gl.mean(x, axis=axis, keepdims=True)) * gl.expand_dims(dy, axis) / (
            gl.size(x) / gl.size(y) - ddof)


@adjoint("std")
def std(y, x, axis=None, keepdims=False, ddof=0):
    # y is 0 only where every x equals the mean: x - mean is 0 there, and so is the gradient
    # (a subgradient; the exact one for a single entry), where dy / y would make it NaN
    y_or_1 = gl.where(gl.equal(y, 0.0), gl.ones_like(y), y)
    if axis is None or keepdims:
        dx = (x - gl.mean(x, axis=axis, keepdims=True)) * (dy / y_or_1) / (
            gl.size(x) / gl.size(y) - ddof)
    else:
        dx = (x - gl.mean(x, axis=axis, keepdims=True)) * gl.expand_dims(dy / y_or_1, axis) / (
            gl.size(x) / gl.size(y) - ddof)


@adjoint("norm")
def norm(y, x, ord=None, axis=None, keepdims=False):
    if ord == 1:
        if axis is None or keepdims:
            dx = gl.sign(x) * dy
        else:
            dx = gl.sign(x) * gl.expand_dims(dy, axis)
    elif ord is None or ord == 2 or ord == "fro":
        # y is 0 only where x is: the gradient there is 0 (a subgradient), not NaN
        y_or_1 = gl.where(gl.equal(y, 0.0), gl.ones_like(y), y)
        if axis is None or keepdims:
            dx = x * (dy / y_or_1)
        else:
            dx = x * gl.expand_dims(dy / y_or_1, axis)
    elif ord == inf or ord == -inf:
        # the entries of the largest (smallest) magnitude, sharing the gradient as max's do
        if axis is None or keepdims:
            mask = gl.astype(gl.equal(gl.abs(x), y), gl.dtype(x))
            dx = gl.sign(x) * mask * (dy / gl.sum(mask, axis=axis, keepdims=True))
        else:
            mask = gl.astype(gl.equal(gl.abs(x), gl.expand_dims(y, axis)), gl.dtype(x))
            dx = gl.sign(x) * mask * (gl.expand_dims(dy, axis) / gl.sum(
                mask, axis=axis, keepdims=True))
    elif ord == 0:
        dx = gl.zeros_like(x)    # a count of the nonzero entries: piecewise constant
    elif ord == "nuc":
        pass                     # the singular values: no rule (refused)
    else:
        if axis is None or keepdims:
            dx = gl.sign(x) * gl.abs(x) ** (ord - 1) * (dy / y ** (ord - 1))
        else:
            dx = gl.sign(x) * gl.abs(x) ** (ord - 1) * gl.expand_dims(dy / y ** (ord - 1), axis)


@adjoint("linalg_norm")
def linalg_norm(y, x, ord=None, axis=None, keepdims=False, vector_without_axis=False):
    # a vector or a matrix norm, as x's rank says at run time: the orders whose derivative is
    # piecewise constant either way (1, inf, -inf) take it from linalg_norm_weights, which
    # tells the two apart; the matrix norms of other orders are refused by the forward pass
    if ord is None or ord == 2 or ord == "fro":
        y_or_1 = gl.where(gl.equal(y, 0.0), gl.ones_like(y), y)
        if axis is None or keepdims:
            dx = x * (dy / y_or_1)
        else:
            dx = x * gl.expand_dims(dy / y_or_1, axis)
    elif ord == 1 or ord == inf or ord == -inf:
        weights = gl.linalg_norm_weights(x, ord, axis=axis,
                                         vector_without_axis=vector_without_axis)
        if axis is None or keepdims:
            dx = weights * dy
        else:
            dx = weights * gl.expand_dims(dy, axis)
    elif ord == 0:
        dx = gl.zeros_like(x)
    elif ord == "nuc":
        pass
    else:
        if axis is None or keepdims:
            dx = gl.sign(x) * gl.abs(x) ** (ord - 1) * (dy / y ** (ord - 1))
        else:
            dx = gl.sign(x) * gl.abs(x) ** (ord - 1) * gl.expand_dims(dy / y ** (ord - 1), axis)


@adjoint("cumsum")
def cumsum(y, x, axis=None):
    if axis is None:
        dx = gl.reshape(gl.flip(gl.cumsum(gl.flip(dy, 0), 0), 0), gl.shape(x))
    else:
        dx = gl.flip(gl.cumsum(gl.flip(dy, axis), axis), axis)


@adjoint("softmax")
def softmax(y, x, axis=-1):
    dx = y * (dy - gl.sum(dy * y, axis=axis, keepdims=True))


@adjoint("log_softmax")
def log_softmax(y, x, axis=-1):
    dx = dy - gl.exp(y) * gl.sum(dy, axis=axis, keepdims=True)


# --- shapes ------------------------------------------------------------------------------------
@adjoint("reshape")
def reshape(y, x, shape):
    dx = gl.reshape(dy, gl.shape(x))


@adjoint("flatten")
def flatten(y, x, start=0, end=-1):
    dx = gl.reshape(dy, gl.shape(x))


@adjoint("expand_dims")
def expand_dims(y, x, axis):
    dx = gl.reshape(dy, gl.shape(x))


@adjoint("squeeze")
def squeeze(y, x, axis=None):
    dx = gl.reshape(dy, gl.shape(x))


@adjoint("transpose")
def transpose(y, x, axes=None):
    if axes is None:
        dx = gl.transpose(dy)
    else:
        dx = gl.transpose(dy, gl.inverse_axes(axes))


@adjoint("matrix_transpose")
def matrix_transpose(y, x):
    dx = gl.matrix_transpose(dy)


@adjoint("swapaxes")
def swapaxes(y, x, axis1, axis2):
    dx = gl.swapaxes(dy, axis1, axis2)


@adjoint("moveaxis")
def moveaxis(y, x, source, destination):
    dx = gl.moveaxis(dy, destination, source)


@adjoint("broadcast_to")
def broadcast_to(y, x, shape):
    dx = gl.unbroadcast(dy, x)


@adjoint("tile")
def tile(y, x, reps):
    dx = gl.untile(dy, x, reps)


@adjoint("repeat")
def repeat(y, x, repeats, axis=None):
    dx = gl.unrepeat(dy, x, repeats, axis)


@adjoint("flip")
def flip(y, x, axis=None):
    dx = gl.flip(dy, axis)


@adjoint("atleast_1d")
@adjoint("atleast_2d")
@adjoint("atleast_3d")
def atleast_nd(y, x):
    dx = gl.reshape(dy, gl.shape(x))


@adjoint("take")
def take(y, x, indices, axis=None):
    dx = gl.untake(dy, x, indices, axis)     # dy added back where each entry was taken from


@adjoint("take_along_axis")
def take_along_axis(y, x, indices, axis):
    dx = gl.untake_along_axis(dy, x, indices, axis)


@adjoint("getitem")
def getitem(y, x, index):
    dx = gl.index_add(gl.zeros_like(x), index, dy)


@adjoint("index_update")
def index_update(y, x, index, values):
    dx = gl.index_update(dy, index, 0.0)
    dvalues = gl.unbroadcast(gl.index_written(dy, index), values)  # (of an entry written twice:
                                                                   # the last write's)


@adjoint("index_add")
def index_add(y, x, index, values):
    dx = dy
    dvalues = gl.unbroadcast(dy[index], values)


@adjoint("concatenate")
def concatenate(y, xs, axis=0):
    dxs = gl.unconcatenate(dy, xs, axis)


@adjoint("stack")
def stack(y, xs, axis=0):
    dxs = gl.unstack(dy, axis)


@adjoint("unstack")
def unstack(ys, x, axis=0):
    dx = gl.stack(dys, axis)


@adjoint("split")
def split(ys, x, indices_or_sections, axis=0):
    dx = gl.concatenate(dys, axis)


@adjoint("sum_list")
def sum_list(y, xs):
    dxs = gl.unbroadcast_each(dy, xs)


@adjoint("astype")
def astype(y, x, dtype):
    dx = gl.astype(dy, gl.dtype(x))


# --- values made into arrays ---------------------------------------------------------------------
@adjoint("array")
def array(y, values, dtype=None):
    dvalues = dy


@adjoint("full")
def full(y, shape, fill_value, dtype=None):
    dfill_value = gl.unbroadcast(dy, fill_value)


@adjoint("full_like")
def full_like(y, x, fill_value, dtype=None):
    dfill_value = gl.unbroadcast(dy, fill_value)


# --- linear algebra -----------------------------------------------------------------------------
@adjoint("inv")
def inv(y, x):
    dx = -gl.matmul(gl.swapaxes(y, -1, -2), gl.matmul(dy, gl.swapaxes(y, -1, -2)))


@adjoint("det")
def det(y, x):
    # the adjugate (det * inv where x is invertible), finite at a singular x too
    dx = gl.expand_dims(gl.expand_dims(dy, -1), -1) * gl.swapaxes(gl.adjugate(x), -1, -2)


@adjoint("einsum")
def einsum(y, subscripts, xs):
    dxs = gl.einsum_adjoint(dy, subscripts, xs)   # each operand's: an einsum of dy and the others


@adjoint("solve")
def solve(z, a, b):
    dz_solved = gl.solve(gl.swapaxes(a, -1, -2), dz)
    db = dz_solved
    da = -gl.matmul_grad_x(dz_solved, a, z)
