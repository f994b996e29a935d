"""TensorFlow primitives: ``tf.math``/``tf.reduce_*`` where they match NumPy's arguments (most
reductions do), adapters for the rest (NumPy-style ``split``, indexed updates, ``matmul`` of
vectors). Works eagerly and inside ``tf.function``. :class:`TensorFlowBackend` (``BACKEND``)
answers for devices, conversions, the seed and ``tf.GradientTape``."""
from __future__ import annotations

import builtins
import functools
import math as _math
import operator
from typing import Any, Callable

import numpy as np
import tensorflow as tf

from .. import dtypes as _dtypes, einsum_terms
from ...errors import GradlabError
from ..detect import call_recorded, require_callable_of
from .base import Backend
from .common import NUMBERS, PadMode, is_basic_index, normalize_axes, pad_indices, pad_pairs


def native_dtype(dtype: Any) -> Any:
    if dtype is None or isinstance(dtype, tf.dtypes.DType):
        return dtype
    return tf.as_dtype(_dtypes.neutral(dtype).name)


def _t(x: Any) -> Any:
    if isinstance(x, (tf.Tensor, tf.Variable)):
        return x
    if type(x) is float:       # NumPy's reading of a Python float: float64 (TF's is float32)
        return tf.constant(x, tf.float64)
    return tf.convert_to_tensor(x)


def _pair(x: Any, y: Any) -> tuple[Any, Any]:
    """Two operands as tensors, a Python number in the other's dtype (float64 when both are
    numbers, as NumPy reads them)."""
    if isinstance(x, (int, float)) and not isinstance(y, (int, float)):
        y = _t(y)
        return tf.constant(x, y.dtype), y
    if isinstance(y, (int, float)) and not isinstance(x, (int, float)):
        x = _t(x)
        return x, tf.constant(y, x.dtype)
    x, y = _t(x), _t(y)
    if x.dtype != y.dtype:   # NumPy's common dtype (float32 with float64: float64)
        common = tf.as_dtype(np.result_type(x.dtype.as_numpy_dtype, y.dtype.as_numpy_dtype))
        x, y = tf.cast(x, common), tf.cast(y, common)
    return x, y


def _axis(axis: Any) -> Any:
    return list(axis) if isinstance(axis, tuple) else axis


# --- elementwise ---------------------------------------------------------------------------
abs, sign, sqrt, square, exp, expm1 = (tf.math.abs, tf.math.sign, tf.math.sqrt, tf.math.square,
                                       tf.math.exp, tf.math.expm1)
log, log1p = tf.math.log, tf.math.log1p
sin, cos, tan, arcsin, arccos, arctan = (tf.math.sin, tf.math.cos, tf.math.tan, tf.math.asin,
                                         tf.math.acos, tf.math.atan)
sinh, cosh, tanh, arcsinh, arccosh, arctanh = (tf.math.sinh, tf.math.cosh, tf.math.tanh,
                                               tf.math.asinh, tf.math.acosh, tf.math.atanh)
sigmoid, softplus, relu, erf = tf.math.sigmoid, tf.math.softplus, tf.nn.relu, tf.math.erf
floor, ceil, negative, reciprocal = (tf.math.floor, tf.math.ceil, tf.math.negative,
                                     tf.math.reciprocal)
logical_not = tf.math.logical_not


def _of_numbers(test: Any, whole: bool) -> Any:
    """``test`` of a float tensor; of an int or bool one (``np.isfinite(v.argmax())``), what
    NumPy answers for whole numbers: ``whole`` everywhere (TensorFlow takes floats only)."""
    def op(x: Any) -> Any:
        dtype = getattr(x, "dtype", None)
        if dtype is None or tf.as_dtype(dtype).is_floating:
            return test(x)
        return tf.fill(tf.shape(x), whole)
    op.__name__ = test.__name__
    return op


isnan, isinf = _of_numbers(tf.math.is_nan, False), _of_numbers(tf.math.is_inf, False)
isfinite = _of_numbers(tf.math.is_finite, True)
add, subtract, multiply, divide, power = operator.add, operator.sub, operator.mul, \
    operator.truediv, operator.pow


def arctan2(x: Any, y: Any) -> Any:
    """Of int or bool tensors too: in float64, as NumPy computes them (TensorFlow takes
    floats); numbers as they are (the other operand's dtype decides)."""
    return tf.math.atan2(_whole_as_float(x), _whole_as_float(y))


def _whole_as_float(v: Any) -> Any:
    """A tensor of ints or bools in float64 (:func:`_as_float`); a number as it is."""
    return v if getattr(v, "dtype", None) is None else _as_float(v)


def maximum(x: Any, y: Any) -> Any:
    """In NumPy's common dtype (a bool or int array against floats: the floats')."""
    return tf.math.maximum(*_pair(x, y))


def minimum(x: Any, y: Any) -> Any:
    return tf.math.minimum(*_pair(x, y))


equal, not_equal, less, less_equal = (tf.math.equal, tf.math.not_equal, tf.math.less,
                                      tf.math.less_equal)
greater, greater_equal = tf.math.greater, tf.math.greater_equal
logical_and, logical_or = tf.math.logical_and, tf.math.logical_or
floor_divide, mod = tf.math.floordiv, tf.math.floormod
where = tf.where


imag = tf.math.imag


def real(x: Any) -> Any:
    """NumPy's: a real, int or bool tensor is its own real part (TensorFlow refuses bools)."""
    x = _t(x)
    return tf.math.real(x) if x.dtype.is_complex else x


def conj(x: Any) -> Any:
    """NumPy's: a real, int or bool tensor is its own conjugate (TensorFlow refuses bools)."""
    x = _t(x)
    return tf.math.conj(x) if x.dtype.is_complex else x


def angle(x: Any) -> Any:
    """NumPy's: of a real tensor, pi where it is negative (TensorFlow's is zero)."""
    x = _t(x)
    if x.dtype.is_complex:
        return tf.math.angle(x)
    if not x.dtype.is_floating:      # of ints and bools: float64, as NumPy's
        x = tf.cast(x, tf.float64)
    return tf.where(x < 0, tf.constant(_math.pi, x.dtype), tf.zeros((), x.dtype))


def round(x: Any, decimals: int = 0) -> Any:
    """``tf.math.round`` has no ``decimals``: scaled as NumPy does (half to even)."""
    if not decimals:
        return tf.math.round(x)
    scale = 10.0 ** decimals
    return tf.math.round(x * scale) / scale


def clip(x: Any, a_min: Any, a_max: Any) -> Any:
    if a_min is None:
        return tf.minimum(x, a_max)
    if a_max is None:
        return tf.maximum(x, a_min)
    return tf.clip_by_value(x, a_min, a_max)


def log2(x: Any) -> Any:
    return tf.math.log(x) / _math.log(2.0)


def log10(x: Any) -> Any:
    return tf.math.log(x) / _math.log(10.0)


#: Integer dtypes TensorFlow's MatMul does not take (NumPy's products of squared masks are
#: int8): multiplied as int64 and cast back, wrapping around as NumPy's do.
_NARROW_INTS = (tf.int8, tf.int16, tf.uint8, tf.uint16, tf.uint32)


def matmul(x: Any, y: Any) -> Any:
    x, y = _pair(x, y)
    if x.dtype in _NARROW_INTS:
        return tf.cast(matmul(tf.cast(x, tf.int64), tf.cast(y, tf.int64)), x.dtype)
    if x.shape.rank >= 2 and y.shape.rank >= 2:
        return tf.linalg.matmul(x, y)
    if x.shape.rank == 1 and y.shape.rank == 1:
        return tf.reduce_sum(x * y)
    if x.shape.rank == 1 and y.shape.rank == 2:   # a (1, n) @ (n, m) MatMul: see matmul_grad_y
        return tf.reshape(tf.linalg.matmul(tf.reshape(x, (1, -1)), y), (-1,))
    if x.shape.rank == 1:
        return tf.linalg.matvec(y, x, transpose_a=True)
    return tf.linalg.matvec(x, y)


def dot(x: Any, y: Any) -> Any:
    x, y = _pair(x, y)
    if x.shape.rank == 0 or y.shape.rank == 0:
        return x * y
    if y.shape.rank <= 2:  # matmul agrees with np.dot when y is a vector or a matrix
        return matmul(x, y)
    # np.dot of N-d arrays: sum over the last axis of x and the second-to-last of y
    return tf.tensordot(x, y, axes=[[x.shape.rank - 1], [y.shape.rank - 2]])


def outer(x: Any, y: Any) -> Any:
    """A (n, 1) @ (1, m) ``MatMul`` for floats (see matmul_grad_x: ~8% faster in tf.function
    than the broadcast product, which integers still take)."""
    x, y = _pair(x, y)
    if _floating(x, y):
        return tf.linalg.matmul(tf.reshape(x, (-1, 1)), tf.reshape(y, (1, -1)))
    return tf.reshape(x, (-1, 1)) * tf.reshape(y, (1, -1))


# --- reductions: tf.reduce_* already take (x, axis, keepdims) ------------------------------
logsumexp = tf.reduce_logsumexp


def _counted(x: Any) -> Any:
    """Booleans as NumPy sums or multiplies them: as int64 (TensorFlow takes no bools)."""
    return tf.cast(x, tf.int64) if getattr(x, "dtype", None) == tf.bool else x


def sum(x: Any, axis: Any = None, *, keepdims: bool = False) -> Any:
    return tf.reduce_sum(_counted(x), axis, keepdims)


def prod(x: Any, axis: Any = None, *, keepdims: bool = False) -> Any:
    return tf.reduce_prod(_counted(x), axis, keepdims)


def max(x: Any, axis: Any = None, *, keepdims: bool = False) -> Any:
    """The largest of booleans is whether any is true, as NumPy's (a bool)."""
    if getattr(x, "dtype", None) == tf.bool:
        return tf.reduce_any(x, axis, keepdims)
    return tf.reduce_max(x, axis, keepdims)


def min(x: Any, axis: Any = None, *, keepdims: bool = False) -> Any:
    if getattr(x, "dtype", None) == tf.bool:
        return tf.reduce_all(x, axis, keepdims)
    return tf.reduce_min(x, axis, keepdims)


def all(x: Any, axis: Any = None, *, keepdims: bool = False) -> Any:
    return tf.reduce_all(_truth(x), axis=axis, keepdims=keepdims)


def any(x: Any, axis: Any = None, *, keepdims: bool = False) -> Any:
    return tf.reduce_any(_truth(x), axis=axis, keepdims=keepdims)


def _truth(x: Any) -> Any:
    """Numbers as NumPy reads them in all/any (nonzero is true): TensorFlow takes bools only."""
    x = _t(x)
    return x if x.dtype == tf.bool else tf.not_equal(x, tf.zeros((), x.dtype))


def _as_float(x: Any) -> Any:
    """Integers and booleans as NumPy averages them: in float64 (TensorFlow's mean of ints is
    an int, rounded down)."""
    x = _t(x)
    if not (x.dtype.is_floating or x.dtype.is_complex):
        return tf.cast(x, tf.float64)
    return x


def mean(x: Any, axis: Any = None, *, keepdims: bool = False) -> Any:
    return tf.reduce_mean(_as_float(x), axis=axis, keepdims=keepdims)


def var(x: Any, axis: Any = None, *, keepdims: bool = False, ddof: int = 0) -> Any:
    x = _as_float(x)
    v = tf.math.reduce_variance(x, axis=axis, keepdims=keepdims)
    if ddof:
        n = _count(x, axis)
        v = v * (n / (n - ddof))
    return v


def std(x: Any, axis: Any = None, *, keepdims: bool = False, ddof: int = 0) -> Any:
    return tf.math.sqrt(var(x, axis, keepdims=keepdims, ddof=ddof))


def _count(x: Any, axis: Any) -> int:
    dims = x.shape.as_list()
    n = 1
    for a in normalize_axes(axis, len(dims)):
        n *= dims[a]
    return n


def argmax(x: Any, axis: Any = None, *, keepdims: bool = False) -> Any:
    return _arg(tf.math.argmax, x, axis, keepdims)


def argmin(x: Any, axis: Any = None, *, keepdims: bool = False) -> Any:
    return _arg(tf.math.argmin, x, axis, keepdims)


def _arg(fn: Any, x: Any, axis: Any, keepdims: bool) -> Any:
    x = _t(x)
    if axis is None:
        out = fn(tf.reshape(x, (-1,)), axis=0)
        return tf.reshape(out, (1,) * x.shape.rank) if keepdims else out
    out = fn(x, axis=axis)
    return tf.expand_dims(out, axis) if keepdims else out


def cumsum(x: Any, axis: Any = None) -> Any:
    x = _counted(x)
    if axis is None:
        return tf.math.cumsum(tf.reshape(x, (-1,)), axis=0)
    return tf.math.cumsum(x, axis=axis)


def cumprod(x: Any, axis: Any = None) -> Any:
    x = _counted(x)
    if axis is None:
        return tf.math.cumprod(tf.reshape(x, (-1,)), axis=0)
    return tf.math.cumprod(x, axis=axis)


# --- shapes and indexing -------------------------------------------------------------------
def reshape(x: Any, shape: Any) -> Any:
    return tf.reshape(_t(x), (shape,) if isinstance(shape, int) else shape)


def transpose(x: Any, axes: Any = None) -> Any:
    if type(x) is float or type(x) is int:
        return x     # a number is its own transpose, and tf.transpose would make it float32
    return tf.transpose(x, perm=axes)


def swapaxes(x: Any, axis1: int, axis2: int) -> Any:
    perm = list(range(_t(x).shape.rank))
    perm[axis1], perm[axis2] = perm[axis2], perm[axis1]
    return tf.transpose(x, perm)


def moveaxis(x: Any, source: int, destination: int) -> Any:
    n = _t(x).shape.rank
    perm = [a for a in range(n) if a != source % n]
    perm.insert(destination % n, source % n)
    return tf.transpose(x, perm)


def expand_dims(x: Any, axis: Any) -> Any:
    if isinstance(axis, int):
        return tf.expand_dims(x, axis)
    for a in normalize_axes(axis, _t(x).shape.rank + len(axis)):
        x = tf.expand_dims(x, a)
    return x


def squeeze(x: Any, axis: Any = None) -> Any:
    return tf.squeeze(x, axis=_axis(axis))


def concatenate(xs: Any, axis: int = 0) -> Any:
    return tf.concat(list(xs), axis=axis)


def stack(xs: Any, axis: int = 0) -> Any:
    items = list(xs)
    like = next((x for x in items if isinstance(x, (tf.Tensor, tf.Variable))), None)
    if like is None:       # Python (or NumPy) values alone: NumPy's dtype (float64 for floats)
        import numpy as np
        return _constant(np.stack([np.asarray(x) for x in items], axis=axis), None)
    # Python numbers beside tensors take the tensors' dtype
    items = [x if isinstance(x, (tf.Tensor, tf.Variable)) else tf.constant(x, like.dtype)
             for x in items]
    return tf.stack(items, axis=axis)


def unstack(x: Any, axis: int = 0) -> list[Any]:
    return tf.unstack(x, axis=axis)


def split(x: Any, indices_or_sections: Any, axis: int = 0) -> list[Any]:
    if isinstance(indices_or_sections, int):
        return tf.split(x, indices_or_sections, axis=axis)
    n = _t(x).shape[axis]
    bounds = [0] + [int(i) for i in indices_or_sections] + [n]
    return tf.split(x, [b - a for a, b in zip(bounds[:-1], bounds[1:])], axis=axis)


broadcast_to = tf.broadcast_to


def repeat(x: Any, repeats: Any, axis: Any = None) -> Any:
    return tf.repeat(x, repeats, axis=axis)


def tile(x: Any, reps: Any) -> Any:
    x = _t(x)
    reps = (reps,) if isinstance(reps, int) else tuple(reps)
    if len(reps) < x.shape.rank:
        reps = (1,) * (x.shape.rank - len(reps)) + reps
    elif len(reps) > x.shape.rank:
        x = tf.reshape(x, (1,) * (len(reps) - x.shape.rank) + tuple(x.shape))
    return tf.tile(x, reps)


def flip(x: Any, axis: Any = None) -> Any:
    x = _t(x)
    if x.shape.rank == 0:     # itself, as torch flips one (see the NumPy backend's)
        return x
    axes = list(range(x.shape.rank)) if axis is None else (
        [axis] if isinstance(axis, int) else list(axis))
    return tf.reverse(x, axes)


def pad(x: Any, pad_width: Any, mode: PadMode = "constant", constant_values: Any = 0) -> Any:
    x = _t(x)
    widths = pad_pairs(pad_width, x.shape.rank)
    if mode in ("constant", "reflect", "symmetric"):
        return tf.pad(x, widths, mode=mode.upper(), constant_values=constant_values)
    for axis, (before, after) in enumerate(widths):  # 'edge', 'wrap': one gather per axis
        if before or after:
            x = tf.gather(x, pad_indices(x.shape[axis], before, after, mode), axis=axis)
    return x


def _wrap(indices: Any, n: Any) -> Any:
    """Integer indices with NumPy's negative ones (-1 is the last) made non-negative."""
    i = tf.cast(indices, tf.int64)
    return tf.where(i < 0, i + tf.cast(n, tf.int64), i)


def take(x: Any, indices: Any, axis: Any = None) -> Any:
    x = _t(x)
    if axis is None:
        x, axis = tf.reshape(x, (-1,)), 0
    return tf.gather(x, _wrap(indices, tf.shape(x, out_type=tf.int64)[axis]), axis=axis)


def take_along_axis(x: Any, indices: Any, axis: int) -> Any:
    x = _t(x)
    if axis is None:     # of the flattened array, as NumPy's
        x, indices, axis = tf.reshape(x, (-1,)), tf.reshape(indices, (-1,)), 0
    rank = x.shape.rank
    axis %= rank
    idx = _wrap(indices, tf.shape(x, out_type=tf.int64)[axis])
    last = rank - 1
    if axis != last:  # gather with batch_dims works on the last axis: move ``axis`` there
        perm = [a for a in range(rank) if a != axis] + [axis]
        x, idx = tf.transpose(x, perm), tf.transpose(idx, perm)
    xs, ids = tf.shape(x, out_type=tf.int64), tf.shape(idx, out_type=tf.int64)
    lead = tf.broadcast_dynamic_shape(xs[:-1], ids[:-1])  # NumPy broadcasts the other axes
    x = tf.broadcast_to(x, tf.concat([lead, xs[-1:]], 0))
    idx = tf.broadcast_to(idx, tf.concat([lead, ids[-1:]], 0))
    out = tf.gather(x, idx, axis=last, batch_dims=last)
    if axis != last:
        out = tf.transpose(out, list(range(axis)) + [last] + list(range(axis, last)))
    return out


def getitem(x: Any, index: Any) -> Any:
    """``x[index]`` with NumPy's semantics: TensorFlow's own indexing for ints, slices, None and
    Ellipsis; integer arrays (negative ones too) and boolean masks through gathers."""
    if not isinstance(x, (tf.Tensor, tf.Variable)) and isinstance(x, NUMBERS):
        x = array(x)      # a number gradlab holds where NumPy has a NumPy scalar: v[None]
    if type(index) is tuple:
        if is_basic_index(index):
            return x[index]
    elif index is None or index is Ellipsis or type(index) in (int, slice):
        return x[index]
    x = _t(x)
    if not type(index) is tuple:
        i = _t(index)
        if i.dtype != tf.bool:  # the common case: one integer array along the first axis
            return tf.gather(x, _wrap(i, tf.shape(x, out_type=tf.int64)[0]))
        index = (index,)
    return _advanced_getitem(x, index)


def _advanced_getitem(x: Any, index: tuple[Any, ...]) -> Any:
    rank = x.shape.rank
    items: list[Any] = []
    for i in index:
        if isinstance(i, (list, tf.Tensor, tf.Variable)) or hasattr(i, "__array__"):
            i = _t(i)
            if i.dtype == tf.bool:  # a mask of k axes is k integer arrays: mask.nonzero()
                items += tf.unstack(tf.where(i), num=i.shape.rank, axis=1)
                continue
        items.append(i)
    if builtins.any(i is None for i in items):
        raise IndexError("gradlab's TensorFlow backend does not combine None (np.newaxis) with "
                         "array indices; index in two steps")
    taken = builtins.sum(1 for i in items if i is not Ellipsis)
    if taken > rank:
        raise IndexError(f"too many indices for a tensor of rank {rank}")
    k = next((k for k, i in enumerate(items) if i is Ellipsis), len(items))
    items[k:k + 1] = [slice(None)] * (rank - taken)
    # 1. the slices; 2. every array (and int: with arrays present they index like arrays) in
    # one gather_nd over those axes moved to the front; 3. NumPy puts the indexed axes where
    # the arrays stood if they are adjacent, else first.
    x = x[tuple(i if type(i) is slice else slice(None) for i in items)]
    arrays = [a for a, i in enumerate(items) if type(i) is not slice]
    rest = [a for a in range(rank) if a not in arrays]
    shape = tf.shape(x, out_type=tf.int64)
    parts = [_wrap(items[a], shape[a]) for a in arrays]
    common = tf.shape(parts[0], out_type=tf.int64)
    for p in parts[1:]:
        common = tf.broadcast_dynamic_shape(common, tf.shape(p, out_type=tf.int64))
    coords = tf.stack([tf.broadcast_to(p, common) for p in parts], axis=-1)
    if arrays + rest != list(range(rank)):
        x = tf.transpose(x, arrays + rest)
    out = tf.gather_nd(x, coords)
    first = arrays[0]
    if first and arrays == list(range(first, first + len(arrays))):
        nb = coords.shape.rank - 1
        perm = list(range(nb, nb + first)) + list(range(nb)) + list(
            range(nb + first, nb + len(rest)))
        out = tf.transpose(out, perm)
    return out


def _flat_positions(x: Any, index: Any) -> Any:
    """Flat positions that ``x[index]`` selects, shaped like the selection (NumPy indexing)."""
    x = _t(x)
    positions = tf.reshape(tf.range(tf.size(x, out_type=tf.int64)), tf.shape(x))
    return getitem(positions, index)


def _as(values: Any, dtype: Any) -> Any:
    """``values`` in ``dtype``; Python numbers directly (a cast would go through float32)."""
    if isinstance(values, (tf.Tensor, tf.Variable)):
        return tf.cast(values, dtype)
    return tf.convert_to_tensor(values, dtype=dtype)


def index_update(x: Any, index: Any, values: Any) -> Any:
    x = _t(x)
    pos = _flat_positions(x, index)
    vals = tf.broadcast_to(_as(values, x.dtype), tf.shape(pos))
    flat = tf.tensor_scatter_nd_update(tf.reshape(x, (-1,)), tf.reshape(pos, (-1, 1)),
                                       tf.reshape(vals, (-1,)))
    return tf.reshape(flat, tf.shape(x))


def index_add(x: Any, index: Any, values: Any) -> Any:
    x = _t(x)
    pos = _flat_positions(x, index)
    vals = tf.broadcast_to(_as(values, x.dtype), tf.shape(pos))
    flat = tf.tensor_scatter_nd_add(tf.reshape(x, (-1,)), tf.reshape(pos, (-1, 1)),
                                    tf.reshape(vals, (-1,)))
    return tf.reshape(flat, tf.shape(x))


def sort(x: Any, axis: int = -1) -> Any:
    return tf.sort(x, axis=axis)


def argsort(x: Any, axis: int = -1) -> Any:
    x = _t(x)
    if x.shape.rank == 0:       # NumPy sorts a number as a one-element vector: [0]
        x = tf.reshape(x, [1])
    return tf.cast(tf.argsort(x, axis=axis, stable=True), tf.int64)  # int32 otherwise


def topk(x: Any, k: int, sorted: bool = True) -> tuple[Any, Any]:
    values, indices = tf.math.top_k(x, k, sorted=sorted, index_type=tf.int64)
    return values, indices


def meshgrid(*xs: Any, indexing: str = "xy") -> list[Any]:
    return tf.meshgrid(*xs, indexing=indexing)


# --- linear algebra ------------------------------------------------------------------------


def einsum(subscripts: Any, xs: Any) -> Any:
    return tf.einsum(einsum_terms.with_output(subscripts), *xs)


def inv(x: Any) -> Any:
    """Of ints or bools too: in float64, as NumPy inverts them (TensorFlow refuses them)."""
    return tf.linalg.inv(_as_float(x))


def det(x: Any) -> Any:
    return tf.linalg.det(_as_float(x))


def svd(x: Any) -> tuple[Any, Any, Any]:
    """``(u, s, vh)`` with ``x = u @ diag(s) @ vh`` (TensorFlow gives ``s, u, v``)."""
    s, u, v = tf.linalg.svd(_as_float(x))
    return u, s, tf.linalg.adjoint(v)


def slogdet(x: Any) -> tuple[Any, Any]:
    sign_, logabsdet = tf.linalg.slogdet(_as_float(x))
    return sign_, logabsdet


def solve(a: Any, b: Any) -> Any:
    b = _t(b)
    if b.shape.rank == 1:
        return tf.linalg.solve(a, b[:, None])[:, 0]
    return tf.linalg.solve(a, b)


# --- creation ------------------------------------------------------------------------------
# With dtype=None, NumPy's dtypes: float64 for floats and int64 for ints, not TensorFlow's
# float32 and int32 (generated code builds constants next to the user's float64 values).
def _float(dtype: Any) -> Any:
    return native_dtype(dtype) or tf.float64


def zeros(shape: Any, dtype: Any = None) -> Any:
    return tf.zeros(shape, dtype=_float(dtype))


def ones(shape: Any, dtype: Any = None) -> Any:
    return tf.ones(shape, dtype=_float(dtype))


def _constant(value: Any, dtype: Any) -> Any:
    """tf.constant, with NumPy's dtype for Python values when ``dtype`` is None."""
    if dtype is not None:
        return tf.constant(value, dtype=native_dtype(dtype))
    if isinstance(value, (tf.Tensor, tf.Variable)):
        return value
    import numpy as np
    return tf.constant(np.asarray(value))


def _shape(shape: Any) -> Any:
    return (shape,) if isinstance(shape, int) else shape


def full(shape: Any, fill_value: Any, dtype: Any = None) -> Any:
    return tf.fill(_shape(shape), _constant(fill_value, dtype))


def zeros_like(x: Any, dtype: Any = None) -> Any:
    return tf.zeros_like(x, dtype=native_dtype(dtype))


def ones_like(x: Any, dtype: Any = None) -> Any:
    return tf.ones_like(x, dtype=native_dtype(dtype))


def full_like(x: Any, fill_value: Any, dtype: Any = None) -> Any:
    """A float filling an int tensor's shape is cast to its dtype, as NumPy's (TensorFlow
    refuses to make an int64 constant of 0.0: a zero tangent of an int input)."""
    x = _t(x)
    dt = native_dtype(dtype) or x.dtype
    if type(fill_value) is float and not (dt.is_floating or dt.is_complex):
        return tf.fill(tf.shape(x), tf.cast(fill_value, dt))
    return tf.fill(tf.shape(x), tf.constant(fill_value, dtype=dt))


def arange(start: Any, stop: Any = None, step: Any = 1, dtype: Any = None) -> Any:
    if stop is None:
        start, stop = 0, start
    if dtype is None:
        floats = builtins.any(isinstance(v, float) for v in (start, stop, step))
        dtype = tf.float64 if floats else tf.int64
    return tf.range(start, stop, step, dtype=native_dtype(dtype))


def linspace(start: Any, stop: Any, num: int = 50, dtype: Any = None) -> Any:
    d = _float(dtype)
    return tf.linspace(tf.constant(start, d), tf.constant(stop, d), num)


def eye(n: int, m: Any = None, dtype: Any = None) -> Any:
    return tf.eye(n, m, dtype=_float(dtype))


def array(values: Any, dtype: Any = None) -> Any:
    if isinstance(values, (list, tuple)) and values and isinstance(values[0], tf.Tensor):
        out = tf.stack(list(values))
        return tf.cast(out, native_dtype(dtype)) if dtype is not None else out
    return _constant(values, dtype)


def one_hot(indices: Any, num_classes: int, dtype: Any = None) -> Any:
    return tf.one_hot(indices, num_classes, dtype=_float(dtype))


def uniform(shape: Any, low: float = 0.0, high: float = 1.0, *, seed: int = 0,
            dtype: Any = None) -> Any:
    return tf.random.stateless_uniform(_shape(shape), seed=[seed, 0], minval=low, maxval=high,
                                       dtype=_float(dtype))


def normal(shape: Any, mean: float = 0.0, std: float = 1.0, *, seed: int = 0,
           dtype: Any = None) -> Any:
    return tf.random.stateless_normal(_shape(shape), seed=[seed, 0], mean=mean, stddev=std,
                                      dtype=_float(dtype))


# --- inspection and conversion ---------------------------------------------------------------
# Besides tensors, these see Python and NumPy numbers (code kept as written on constants):
# their ``shape`` is a plain tuple, or missing.
def shape(x: Any) -> tuple[Any, ...]:
    s = getattr(x, "shape", None)
    if s is None or type(s) is tuple:
        return s or ()
    return tuple(s.as_list())


def size(x: Any) -> Any:
    s = getattr(x, "shape", None)
    if s is None or type(s) is tuple:
        return _math.prod(s or ())
    n = s.num_elements()
    return tf.size(x) if n is None else n


def ndim(x: Any) -> int:
    s = getattr(x, "shape", None)
    if s is None or type(s) is tuple:
        return len(s or ())
    return s.rank


def astype(x: Any, dtype: Any) -> Any:
    return tf.cast(x, native_dtype(dtype))


def to_numpy(x: Any) -> Any:
    return x.numpy() if hasattr(x, "numpy") else __import__("numpy").asarray(x)


def item(x: Any) -> Any:
    return x.numpy().item() if hasattr(x, "numpy") else x


stop_gradient = tf.stop_gradient



# --- matmul's adjoint with MatMul's transpose flags ----------------------------------------
# The generic halves (adjoint_helpers) transpose with an op of their own; inside tf.function
# every op is a step of the graph executor, which dominates on small matrices (bench/HISTORY.md).
# Other ranks fall back on the generic halves (generic_matmul_grad_x/y in the namespace).
generic_matmul_grad_x: Any
generic_matmul_grad_y: Any


def _floating(*values: Any) -> bool:
    """MatMul takes floats of one dtype; the generic outer product also multiplies integers."""
    if builtins.any(not hasattr(v, "dtype") for v in values):   # a list: the generic path
        return False
    dtypes = {tf.as_dtype(v.dtype) for v in values}
    return len(dtypes) == 1 and dtypes.pop().is_floating


def matmul_grad_x(dz: Any, x: Any, y: Any) -> Any:
    """d(x @ y)/dx applied to ``dz``: ``dz @ y.T`` by the transpose flag.

    For ``W @ h`` (vectors dz and h) the outer product is a (n, 1) @ (1, m) ``MatMul``: inside
    ``tf.function`` that is one kernel on two free reshapes, where a broadcast multiply of
    expanded vectors measured ~8% slower over the 40 steps of the W3 benchmark's loop.
    """
    if ndim(x) == 2 and ndim(y) == 2 and ndim(dz) == 2:
        return tf.linalg.matmul(dz, y, transpose_b=True)
    if ndim(x) == 2 and ndim(y) == 1 and ndim(dz) == 1 and _floating(dz, y):
        return tf.linalg.matmul(tf.reshape(dz, (-1, 1)), tf.reshape(y, (1, -1)))
    return generic_matmul_grad_x(dz, x, y)


def matmul_grad_y(dz: Any, x: Any, y: Any) -> Any:
    """d(x @ y)/dy applied to ``dz``: ``x.T @ dz`` without transposing ``x``.

    For a vector ``dz`` it is the row ``dz @ x``: a (1, n) @ (n, m) ``MatMul``, cheaper than
    ``matvec`` with ``transpose_a``, which expands, transposes and squeezes around the product.
    """
    if ndim(x) == 2 and ndim(y) == 1 and ndim(dz) == 1:
        return tf.reshape(tf.linalg.matmul(tf.reshape(dz, (1, -1)), x), (-1,))
    if ndim(x) == 2 and ndim(y) == 2 and ndim(dz) == 2:
        return tf.linalg.matmul(x, dz, transpose_a=True)
    return generic_matmul_grad_y(dz, x, y)


class TensorFlowBackend(Backend):
    name, title, reference = "tensorflow", "TensorFlow", "tf.GradientTape"
    wraps_python_numbers = True     # tf.math.sin(0.5) makes a float32 tensor
    casts_like_numpy = True         # exp of ints: float32 (NumPy: float64)
    updates_in_place = False        # tensors never change (tensor_scatter_nd_add makes a new one)

    def is_traced(self, value: Any) -> bool:
        return not hasattr(value, "numpy")   # a symbolic tensor inside tf.function

    def devices(self) -> list[str]:
        return ["cpu"] + [f"gpu:{i}" for i, _ in enumerate(tf.config.list_physical_devices("GPU"))]

    def device_of(self, x: Any) -> Any:
        # '/job:localhost/replica:0/task:0/device:GPU:0' -> 'gpu:0'
        tail = (getattr(x, "device", "") or "").rpartition("device:")[2]
        if not tail:
            return "cpu"
        kind, _, index = tail.partition(":")
        return "cpu" if kind == "CPU" else f"{kind.lower()}:{index or 0}"

    def device_label(self, device: Any) -> str:
        text = str(device)
        return f"{text} · {_gpu_name(text)}" if text.startswith("gpu") else text

    def synchronize(self, x: Any) -> None:
        if hasattr(x, "numpy"):
            x.numpy()

    def to_numpy(self, x: Any) -> Any:
        return x.numpy()

    def dlpack_view(self, x: Any) -> Any:
        return None

    def from_value(self, x: Any, source: Backend, device: Any = None) -> Any:
        """A copy through NumPy, made on ``device``."""
        with tf.device(_device_spec(device)):
            return tf.convert_to_tensor(source.to_numpy(x))

    def value_and_grad(self, f: Callable[..., Any], args: tuple[Any, ...],
                       indices: tuple[int, ...]) -> tuple[Any, tuple[Any, ...]]:
        with tf.GradientTape() as tape:
            for i in indices:
                tape.watch(args[i])
            value = f(*args)
        grads = tape.gradient(value, [args[i] for i in indices],
                              unconnected_gradients=tf.UnconnectedGradients.ZERO)
        return value, tuple(grads)


def _device_spec(device: Any) -> str:
    if device is None:
        return ""
    kind, _, index = str(device).partition(":")
    return f"/{'GPU' if kind in ('cuda', 'gpu') else 'CPU'}:{index or 0}"


@functools.lru_cache(maxsize=None)
def _gpu_name(device: str) -> str:
    index = int(device.partition(":")[2] or 0)
    gpus = tf.config.list_physical_devices("GPU")
    if index < len(gpus):
        details = tf.config.experimental.get_device_details(gpus[index])
        return str(details.get("device_name", "GPU"))
    return "GPU"


BACKEND = TensorFlowBackend()


# --- calls gradlab cannot read (codegen/opaque.py): tf.GradientTape, ForwardAccumulator ----------
def vjp_of(fn: Any, *args: Any, wrt: Any = None, keywords: Any = None,
           params: bool = False) -> Any:
    """``fn(*args)`` recorded on a tape, and ``backward(g)``: its vector-Jacobian product with
    respect to the arguments at ``wrt`` (all by default) and, with ``params``, to the
    ``trainable_variables`` of ``fn`` (a Keras layer or model: a list in that order, first),
    one gradient or a tuple."""
    require_callable_of(fn, "tensorflow", "TensorFlow")
    wrt = tuple(range(len(args))) if wrt is None else tuple(wrt)
    inputs = list(args)
    for i in wrt:
        inputs[i] = tf.convert_to_tensor(args[i])
    variables = _trainable(fn) if params else []
    watched = [inputs[i] for i in wrt]
    with tf.GradientTape() as tape:
        tape.watch(watched)
        out = _one_tensor(fn, call_recorded(fn, "TensorFlow", *inputs, **(keywords or {})))

    def backward(g: Any) -> Any:
        seed = tf.broadcast_to(tf.cast(g, out.dtype), tf.shape(out))
        grads = tape.gradient(out, variables + watched, output_gradients=seed,
                              unconnected_gradients=tf.UnconnectedGradients.ZERO)
        if params:
            grads = [list(grads[:len(variables)])] + list(grads[len(variables):])
        return grads[0] if len(grads) == 1 else tuple(grads)
    return out, backward


def _trainable(fn: Any) -> list[Any]:
    variables = getattr(fn, "trainable_variables", None)
    if variables is None:
        raise GradlabError(
            f"a gradient with respect to {getattr(fn, '__name__', type(fn).__name__)}, a "
            f"callable: gradlab gives one for a Keras layer or model (its trainable_variables, "
            f"in order); pass the tensors it computes with as arguments instead")
    return list(variables)


def zeros_like_params(model: Any) -> list[Any]:
    """A model's gradient that nothing flowed into: a zero per trainable variable."""
    return [tf.zeros_like(v) for v in _trainable(model)]


def add_params(a: Any, b: Any) -> Any:
    """Two gradients of one model's variables added (a number is a zero)."""
    if not isinstance(a, list):
        return b
    return [x + y for x, y in zip(a, b)]


def jvp_of(fn: Any, primals: tuple[Any, ...], tangents: tuple[Any, ...],
           keywords: Any = None) -> Any:
    """``fn(*primals)`` and its tangent along ``tangents`` (None: that argument is fixed)."""
    require_callable_of(fn, "tensorflow", "TensorFlow")
    full = [tf.convert_to_tensor(p) if t is not None else p for p, t in zip(primals, tangents)]
    moving = [i for i, t in enumerate(tangents) if t is not None]
    points = [full[i] for i in moving]
    directions = [tf.broadcast_to(tf.cast(tangents[i], p.dtype), tf.shape(p))
                  for i, p in zip(moving, points)]
    with tf.autodiff.ForwardAccumulator(points, directions) as acc:
        out = _one_tensor(fn, call_recorded(fn, "TensorFlow", *full, **(keywords or {})))
    return out, acc.jvp(out, unconnected_gradients=tf.UnconnectedGradients.ZERO)


def _one_tensor(fn: Any, out: Any) -> Any:
    if not isinstance(out, (tf.Tensor, tf.Variable)):
        raise GradlabError(
            f"{getattr(fn, '__name__', type(fn).__name__)} returned a {type(out).__name__}: "
            f"gradlab differentiates a call it cannot read when it returns one tensor")
    return out
