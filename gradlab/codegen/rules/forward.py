"""Forward-mode templates: how a small change of the arguments (their tangents, ``x_dot``)
changes the result (``y_dot``). Linear primitives (sums, reshapes, indexing) apply themselves to
the tangents. The tangent of a value that carries no gradient is zero and folds away, so
``z_dot = x_dot * y + x * y_dot`` becomes ``z_dot = x_dot * y`` when only ``x`` varies.

The helpers that reverse-mode code calls (``unbroadcast``, ``matmul_grad_x``...) have templates
here too: that is what lets ``hvp`` run forward mode over generated backward code.
"""
# flake8: noqa: F821
from __future__ import annotations

from typing import Any

from .templates import tangent

gl: Any = None  # the namespace in generated code; templates are never executed


# --- arithmetic ---------------------------------------------------------------------------------
@tangent("add")
def add(z, x, y):
    z_dot = x_dot + y_dot


@tangent("subtract")
def subtract(z, x, y):
    z_dot = x_dot - y_dot


@tangent("multiply")
def multiply(z, x, y):
    z_dot = x_dot * y + x * y_dot


@tangent("divide")
def divide(z, x, y):
    z_dot = (x_dot - z * y_dot) / y


@tangent("power")
def power(z, x, y):
    z_dot = y * x ** (y - 1) * x_dot + z * gl.log(gl.or_one(x)) * y_dot   # 0 ** y: z is 0


@tangent("negative")
def negative(y, x):
    y_dot = -x_dot


@tangent("copy")
def copy(y, x):
    y_dot = x_dot


@tangent("real")
def real(y, x):
    y_dot = gl.real(x_dot)


@tangent("imag")
def imag(y, x):
    y_dot = gl.imag(x_dot)


@tangent("conj")
def conj(y, x):
    y_dot = gl.conj(x_dot)


@tangent("angle")
def angle(y, x):
    y_dot = gl.imag(x_dot / x)


@tangent("matmul")
def matmul(z, x, y):
    z_dot = gl.matmul(x_dot, y) + gl.matmul(x, y_dot)


@tangent("dot")
def dot(z, x, y):
    z_dot = gl.dot(x_dot, y) + gl.dot(x, y_dot)


@tangent("outer")
def outer(z, x, y):
    z_dot = gl.outer(x_dot, y) + gl.outer(x, y_dot)


# --- elementwise functions ----------------------------------------------------------------------
@tangent("exp")
def exp(y, x):
    y_dot = y * x_dot


@tangent("expm1")
def expm1(y, x):
    y_dot = (y + 1.0) * x_dot


@tangent("log")
def log(y, x):
    y_dot = x_dot / x


@tangent("log1p")
def log1p(y, x):
    y_dot = x_dot / (1.0 + x)


@tangent("log2")
def log2(y, x):
    y_dot = x_dot / (x * 0.6931471805599453)


@tangent("log10")
def log10(y, x):
    y_dot = x_dot / (x * 2.302585092994046)


@tangent("rsqrt")
def rsqrt(y, x):
    y_dot = -0.5 * y ** 3 * x_dot


@tangent("sqrt")
def sqrt(y, x):
    y_dot = x_dot / (2.0 * y)


@tangent("square")
def square(y, x):
    y_dot = 2.0 * x * x_dot


@tangent("reciprocal")
def reciprocal(y, x):
    y_dot = -y * y * x_dot


@tangent("abs")
def abs(y, x):
    y_dot = gl.sign(x) * x_dot


@tangent("sin")
def sin(y, x):
    y_dot = gl.cos(x) * x_dot


@tangent("cos")
def cos(y, x):
    y_dot = -gl.sin(x) * x_dot


@tangent("tan")
def tan(y, x):
    y_dot = (1.0 + y * y) * x_dot


@tangent("arcsin")
def arcsin(y, x):
    y_dot = x_dot / gl.sqrt(1.0 - x * x)


@tangent("arccos")
def arccos(y, x):
    y_dot = -x_dot / gl.sqrt(1.0 - x * x)


@tangent("arctan")
def arctan(y, x):
    y_dot = x_dot / (1.0 + x * x)


@tangent("sinh")
def sinh(y, x):
    y_dot = gl.cosh(x) * x_dot


@tangent("cosh")
def cosh(y, x):
    y_dot = gl.sinh(x) * x_dot


@tangent("tanh")
def tanh(y, x):
    y_dot = (1.0 - y * y) * x_dot


@tangent("arcsinh")
def arcsinh(y, x):
    y_dot = x_dot / gl.sqrt(x * x + 1.0)


@tangent("arccosh")
def arccosh(y, x):
    y_dot = x_dot / gl.sqrt(x * x - 1.0)


@tangent("arctanh")
def arctanh(y, x):
    y_dot = x_dot / (1.0 - x * x)


@tangent("sigmoid")
def sigmoid(y, x):
    y_dot = y * (1.0 - y) * x_dot


@tangent("softplus")
def softplus(y, x):
    y_dot = gl.sigmoid(x) * x_dot


@tangent("relu")
def relu(y, x):
    y_dot = x_dot * gl.astype(x > 0, gl.dtype(y))


@tangent("erf")
def erf(y, x):
    y_dot = 1.1283791670955126 * gl.exp(-x * x) * x_dot


@tangent("maximum")
def maximum(z, x, y):
    # half each at a tie (x == y), as the reverse rule
    share = gl.astype(x > y, gl.dtype(z)) + 0.5 * gl.astype(x == y, gl.dtype(z))
    z_dot = share * x_dot + (1.0 - share) * y_dot


@tangent("minimum")
def minimum(z, x, y):
    share = gl.astype(x < y, gl.dtype(z)) + 0.5 * gl.astype(x == y, gl.dtype(z))
    z_dot = share * x_dot + (1.0 - share) * y_dot


@tangent("arctan2")
def arctan2(z, x, y):
    # hypot(x, y) ** 2: x * x + y * y in the wider dtype of the two; 0 at the origin
    z_dot = (y * x_dot - x * y_dot) / gl.or_one(gl.hypot(x, y) ** 2)


@tangent("logaddexp")
def logaddexp(z, x, y):
    z_dot = gl.exp(x - z) * x_dot + gl.exp(y - z) * y_dot


@tangent("squared_difference")
def squared_difference(z, x, y):
    z_dot = 2.0 * (x - y) * (x_dot - y_dot)


@tangent("hypot")
def hypot(z, x, y):
    z_dot = (x * x_dot + y * y_dot) / gl.or_one(z)     # 0 at the origin, as the norm's


@tangent("where")
def where(z, condition, x, y):
    mask = gl.astype(condition, gl.dtype(z))
    z_dot = mask * x_dot + (1.0 - mask) * y_dot


@tangent("clip")
def clip(y, x, a_min, a_max):
    if a_min is None:
        y_dot = x_dot * gl.astype(x <= a_max, gl.dtype(y)) + (
            a_max_dot * gl.astype(x > a_max, gl.dtype(y)))
    elif a_max is None:
        y_dot = x_dot * gl.astype(x >= a_min, gl.dtype(y)) + (
            a_min_dot * gl.astype(x < a_min, gl.dtype(y)))
    else:
        y_dot = x_dot * gl.astype(gl.logical_and(x >= a_min, x <= a_max), gl.dtype(y)) + (
            a_min_dot * gl.astype(x < a_min, gl.dtype(y))) + (
            a_max_dot * gl.astype(x > a_max, gl.dtype(y)))


@tangent("stop_gradient")
def stop_gradient(y, x):
    y_dot = 0.0


# --- reductions ---------------------------------------------------------------------------------
@tangent("sum")
def sum(y, x, axis=None, keepdims=False):
    y_dot = gl.sum(x_dot, axis=axis, keepdims=keepdims)


@tangent("mean")
def mean(y, x, axis=None, keepdims=False):
    y_dot = gl.mean(x_dot, axis=axis, keepdims=keepdims)


@tangent("prod")
def prod(y, x, axis=None, keepdims=False):
    y_dot = gl.sum(gl.prod_others(x, axis=axis) * x_dot, axis=axis, keepdims=keepdims)


@tangent("max")
def max(y, x, axis=None, keepdims=False):
    if axis is None or keepdims:
        mask = gl.astype(gl.equal(x, y), gl.dtype(x))
    else:
        mask = gl.astype(gl.equal(x, gl.expand_dims(y, axis)), gl.dtype(x))
    y_dot = gl.sum(mask * x_dot, axis=axis, keepdims=keepdims) / gl.sum(
        mask, axis=axis, keepdims=keepdims)


@tangent("min")
def min(y, x, axis=None, keepdims=False):
    if axis is None or keepdims:
        mask = gl.astype(gl.equal(x, y), gl.dtype(x))
    else:
        mask = gl.astype(gl.equal(x, gl.expand_dims(y, axis)), gl.dtype(x))
    y_dot = gl.sum(mask * x_dot, axis=axis, keepdims=keepdims) / gl.sum(
        mask, axis=axis, keepdims=keepdims)


@tangent("logsumexp")
def logsumexp(y, x, axis=None, keepdims=False):
    if axis is None or keepdims:
        y_dot = gl.sum(gl.exp(x - y) * x_dot, axis=axis, keepdims=keepdims)
    else:
        y_dot = gl.sum(gl.exp(x - gl.expand_dims(y, axis)) * x_dot, axis=axis)


@tangent("var")
def var(y, x, axis=None, keepdims=False, ddof=0):
    y_dot = 2.0 * gl.sum((x - gl.mean(x, axis=axis, keepdims=True)) * x_dot, axis=axis,
                         keepdims=keepdims) / (gl.size(x) / gl.size(y) - ddof)


@tangent("std")
def std(y, x, axis=None, keepdims=False, ddof=0):
    # y is 0 only where x - mean is: the tangent there is 0, where a division by y is NaN
    y_or_1 = gl.where(gl.equal(y, 0.0), gl.ones_like(y), y)
    y_dot = gl.sum((x - gl.mean(x, axis=axis, keepdims=True)) * x_dot, axis=axis,
                   keepdims=keepdims) / ((gl.size(x) / gl.size(y) - ddof) * y_or_1)


@tangent("norm")
def norm(y, x, ord=None, axis=None, keepdims=False):
    if ord == 1:
        y_dot = gl.sum(gl.sign(x) * x_dot, axis=axis, keepdims=keepdims)
    elif ord is None or ord == 2 or ord == "fro":
        # y is 0 only where x is: the tangent there is 0 (as the reverse rule's subgradient)
        y_or_1 = gl.where(gl.equal(y, 0.0), gl.ones_like(y), y)
        y_dot = gl.sum(x * x_dot, axis=axis, keepdims=keepdims) / y_or_1
    elif ord == inf or ord == -inf:
        if axis is None or keepdims:
            mask = gl.astype(gl.equal(gl.abs(x), y), gl.dtype(x))
        else:
            mask = gl.astype(gl.equal(gl.abs(x), gl.expand_dims(y, axis)), gl.dtype(x))
        y_dot = gl.sum(gl.sign(x) * mask * x_dot, axis=axis, keepdims=keepdims) / gl.sum(
            mask, axis=axis, keepdims=keepdims)
    elif ord == 0:
        y_dot = gl.zeros_like(y)
    elif ord == "nuc":
        pass
    else:
        y_dot = gl.sum(gl.sign(x) * gl.abs(x) ** (ord - 1) * x_dot, axis=axis,
                       keepdims=keepdims) / y ** (ord - 1)


@tangent("linalg_norm")
def linalg_norm(y, x, ord=None, axis=None, keepdims=False, vector_without_axis=False):
    if ord is None or ord == 2 or ord == "fro":
        y_or_1 = gl.where(gl.equal(y, 0.0), gl.ones_like(y), y)
        y_dot = gl.sum(x * x_dot, axis=axis, keepdims=keepdims) / y_or_1
    elif ord == 1 or ord == inf or ord == -inf:
        weights = gl.linalg_norm_weights(x, ord, axis=axis,
                                         vector_without_axis=vector_without_axis)
        y_dot = gl.sum(weights * x_dot, axis=axis, keepdims=keepdims)
    elif ord == 0:
        y_dot = gl.zeros_like(y)
    elif ord == "nuc":
        pass
    else:
        y_dot = gl.sum(gl.sign(x) * gl.abs(x) ** (ord - 1) * x_dot, axis=axis,
                       keepdims=keepdims) / y ** (ord - 1)


@tangent("cumsum")
def cumsum(y, x, axis=None):
    y_dot = gl.cumsum(x_dot, axis)


@tangent("softmax")
def softmax(y, x, axis=-1):
    y_dot = y * (x_dot - gl.sum(y * x_dot, axis=axis, keepdims=True))


@tangent("log_softmax")
def log_softmax(y, x, axis=-1):
    y_dot = x_dot - gl.sum(gl.exp(y) * x_dot, axis=axis, keepdims=True)


# --- shapes (linear: the same operation on the tangent) -----------------------------------------
@tangent("reshape")
def reshape(y, x, shape):
    y_dot = gl.reshape(x_dot, shape)


@tangent("flatten")
def flatten(y, x, start=0, end=-1):
    y_dot = gl.flatten(x_dot, start, end)


@tangent("expand_dims")
def expand_dims(y, x, axis):
    y_dot = gl.expand_dims(x_dot, axis)


@tangent("squeeze")
def squeeze(y, x, axis=None):
    y_dot = gl.squeeze(x_dot, axis)


@tangent("transpose")
def transpose(y, x, axes=None):
    y_dot = gl.transpose(x_dot, axes)


@tangent("matrix_transpose")
def matrix_transpose(y, x):
    y_dot = gl.matrix_transpose(x_dot)


@tangent("swapaxes")
def swapaxes(y, x, axis1, axis2):
    y_dot = gl.swapaxes(x_dot, axis1, axis2)


@tangent("take")
def take(y, x, indices, axis=None):
    y_dot = gl.take(x_dot, indices, axis)


@tangent("take_along_axis")
def take_along_axis(y, x, indices, axis):
    y_dot = gl.take_along_axis(x_dot, indices, axis)


@tangent("moveaxis")
def moveaxis(y, x, source, destination):
    y_dot = gl.moveaxis(x_dot, source, destination)


@tangent("broadcast_to")
def broadcast_to(y, x, shape):
    y_dot = gl.broadcast_to(x_dot, shape)


@tangent("tile")
def tile(y, x, reps):
    y_dot = gl.tile(x_dot, reps)


@tangent("repeat")
def repeat(y, x, repeats, axis=None):
    y_dot = gl.repeat(x_dot, repeats, axis)


@tangent("flip")
def flip(y, x, axis=None):
    y_dot = gl.flip(x_dot, axis)


@tangent("atleast_1d")
@tangent("atleast_2d")
@tangent("atleast_3d")
def atleast_nd(y, x):
    y_dot = gl.reshape(x_dot, gl.shape(y))


@tangent("getitem")
def getitem(y, x, index):
    y_dot = gl.getitem(x_dot, index)


@tangent("index_update")
def index_update(y, x, index, values):
    y_dot = gl.index_update(gl.broadcast_like(x_dot, x), index, values_dot)


@tangent("index_add")
def index_add(y, x, index, values):
    y_dot = gl.index_add(gl.broadcast_like(x_dot, x), index, values_dot)


@tangent("concatenate")
def concatenate(y, xs, axis=0):
    y_dot = gl.concatenate(xs_dot, axis)


@tangent("stack")
def stack(y, xs, axis=0):
    y_dot = gl.stack(xs_dot, axis)


@tangent("unstack")
def unstack(ys, x, axis=0):
    ys_dot = gl.unstack(x_dot, axis)


@tangent("split")
def split(ys, x, indices_or_sections, axis=0):
    ys_dot = gl.split(x_dot, indices_or_sections, axis)


@tangent("sum_list")
def sum_list(y, xs):
    y_dot = sum(xs_dot)


@tangent("unbroadcast_each")
def unbroadcast_each(y, g, xs):
    y_dot = gl.unbroadcast_each(g_dot, xs)


@tangent("astype")
def astype(y, x, dtype):
    y_dot = gl.astype(x_dot, dtype)


# --- linear algebra -----------------------------------------------------------------------------
@tangent("inv")
def inv(y, x):
    y_dot = -gl.matmul(y, gl.matmul(x_dot, y))


@tangent("det")
def det(y, x):
    y_dot = gl.sum(gl.swapaxes(gl.adjugate(x), -1, -2) * x_dot, axis=(-2, -1))


@tangent("array")
def array(y, values, dtype=None):
    y_dot = values_dot


@tangent("full")
def full(y, shape, fill_value, dtype=None):
    y_dot = gl.broadcast_like(fill_value_dot, y)


@tangent("full_like")
def full_like(y, x, fill_value, dtype=None):
    y_dot = gl.broadcast_like(fill_value_dot, y)


@tangent("mod")
def mod(z, x, y):
    z_dot = x_dot - gl.floor_divide(x, y) * y_dot


@tangent("prod_others")
def prod_others(y, x, axis=None):
    y_dot = gl.prod_others_jvp(x, x_dot, axis=axis)


@tangent("einsum")
def einsum(y, subscripts, xs):
    y_dot = gl.einsum_tangent(subscripts, xs, xs_dot)


@tangent("einsum_adjoint")
def einsum_adjoint(dxs, g, subscripts, xs):
    dxs_dot = gl.einsum_adjoint_tangent(g, g_dot, subscripts, xs, xs_dot)


@tangent("solve")
def solve(z, a, b):
    z_dot = gl.solve(a, b_dot - gl.matmul(a_dot, z))


# --- helpers that reverse-mode code calls (for forward-over-reverse) ---------------------------
@tangent("unbroadcast")
def unbroadcast(y, x, like):
    y_dot = gl.unbroadcast(x_dot, like)


@tangent("unbroadcast_to")
def unbroadcast_to(y, x, shape):
    y_dot = gl.unbroadcast_to(x_dot, shape)


@tangent("adjugate")
def adjugate(y, x):
    # d adj(x) = (tr(adj(x) dx) adj(x) - adj(x) dx adj(x)) / det(x), where x is invertible
    trace = gl.expand_dims(gl.expand_dims(gl.sum(gl.swapaxes(y, -1, -2) * x_dot, axis=(-2, -1)),
                                          -1), -1)
    y_dot = (trace * y - gl.matmul(gl.matmul(y, x_dot), y)) / gl.expand_dims(
        gl.expand_dims(gl.det(x), -1), -1)


@tangent("or_one")
def or_one(y, x):
    y_dot = x_dot


@tangent("broadcast_like")
def broadcast_like(y, g, x):
    y_dot = gl.broadcast_like(g_dot, x)


@tangent("matmul_grad_x")
def matmul_grad_x(r, dz, x, y):
    r_dot = gl.matmul_grad_x(dz_dot, x, y) + gl.matmul_grad_x(dz, x, y_dot)


@tangent("matmul_grad_y")
def matmul_grad_y(r, dz, x, y):
    r_dot = gl.matmul_grad_y(dz_dot, x, y) + gl.matmul_grad_y(dz, x_dot, y)


@tangent("untile")
def untile(y, g, x, reps):
    y_dot = gl.untile(g_dot, x, reps)


@tangent("unrepeat")
def unrepeat(y, g, x, repeats, axis=None):
    y_dot = gl.unrepeat(g_dot, x, repeats, axis)


@tangent("index_written")
def index_written(y, g, index):
    y_dot = gl.index_written(g_dot, index)


@tangent("untake")
def untake(y, g, x, indices, axis=None):
    y_dot = gl.untake(g_dot, x, indices, axis)


@tangent("untake_along_axis")
def untake_along_axis(y, g, x, indices, axis):
    y_dot = gl.untake_along_axis(g_dot, x, indices, axis)


@tangent("unconcatenate")
def unconcatenate(ys, g, xs, axis=0):
    ys_dot = gl.unconcatenate(g_dot, xs, axis)


@tangent("add_lists")
def add_lists(c, a, b):
    c_dot = gl.add_lists(a_dot, b_dot)


@tangent("as_list")
def as_list(ys, g):
    ys_dot = gl.as_list(g_dot)


@tangent("imag_adjoint")
def imag_adjoint(dx, dy, x):
    dx_dot = gl.imag_adjoint(dy_dot, x)


@tangent("angle_adjoint")
def angle_adjoint(dx, dy, x):
    dx_dot = gl.angle_adjoint(dy_dot, x) - gl.angle_adjoint(dy * x_dot / x, x)
