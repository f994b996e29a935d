"""NumPy primitives. Most names are NumPy's own ufuncs and functions, bound directly.

:class:`NumPyBackend` (``BACKEND``) is the backend object: everything runs on the CPU, values are
NumPy's own, and the reference autodiff is HIPS autograd (NumPy has none of its own)."""
from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np

from .. import dtypes as _dtypes, einsum_terms
from ..swap import with_module_swapped
from ...errors import GradlabError
from .base import Backend
from .common import PadMode, is_basic_index

float32, float64 = np.float32, np.float64


def native_dtype(dtype: Any) -> Any:
    """NumPy's dtype for a neutral dtype, a name, or a NumPy dtype (None stays None)."""
    if dtype is None:
        return None
    if isinstance(dtype, _dtypes.DType):
        if dtype.name == "bfloat16":
            import ml_dtypes
            return ml_dtypes.bfloat16
        return np.dtype(dtype.name)
    try:
        return np.dtype(dtype)
    except TypeError:
        # torch.float64 or tf.float64: torch or TF code called with Python numbers runs here
        return native_dtype(_dtypes.neutral(dtype))


# --- elementwise: NumPy's ufuncs ------------------------------------------------------------
abs, sign, sqrt, square, exp, expm1 = np.abs, np.sign, np.sqrt, np.square, np.exp, np.expm1
log, log1p, log2, log10 = np.log, np.log1p, np.log2, np.log10
sin, cos, tan, arcsin, arccos, arctan = np.sin, np.cos, np.tan, np.arcsin, np.arccos, np.arctan
sinh, cosh, tanh, arcsinh, arccosh, arctanh = (np.sinh, np.cosh, np.tanh, np.arcsinh, np.arccosh,
                                               np.arctanh)
floor, ceil, round, negative, reciprocal = np.floor, np.ceil, np.round, np.negative, np.reciprocal
isnan, isinf, isfinite, logical_not = np.isnan, np.isinf, np.isfinite, np.logical_not
add, subtract, multiply, divide, power = np.add, np.subtract, np.multiply, np.divide, np.power
maximum, minimum, arctan2 = np.maximum, np.minimum, np.arctan2
equal, not_equal, less, less_equal = np.equal, np.not_equal, np.less, np.less_equal
greater, greater_equal, logical_and, logical_or = (np.greater, np.greater_equal, np.logical_and,
                                                   np.logical_or)
floor_divide, mod = np.floor_divide, np.mod
dot, outer = np.dot, np.outer
_ndarray = np.ndarray


def matmul(x: Any, y: Any) -> Any:
    """``np.matmul``; for arrays of rank <= 2, where the two agree, ``ndarray.dot``: the same
    BLAS call with less dispatch, which is most of the cost at the size of a recurrent step
    (bench/HISTORY.md)."""
    if type(x) is _ndarray and type(y) is _ndarray and x.ndim <= 2 and y.ndim <= 2 and (
            x.ndim and y.ndim):
        return x.dot(y)
    return np.matmul(x, y)
where, clip = np.where, np.clip


def softplus(x: Any) -> Any:
    return np.logaddexp(0.0, x)


_erf_vectorized = np.frompyfunc(math.erf, 1, 1)


def erf(x: Any) -> Any:
    try:
        from scipy.special import erf as scipy_erf
    except ImportError:  # exact but slow: math.erf element by element
        a = np.asarray(x)
        return _erf_vectorized(a).astype(a.dtype if a.dtype.kind == "f" else np.float64)
    return scipy_erf(x)


# --- reductions ----------------------------------------------------------------------------
prod, all, any = np.prod, np.all, np.any

# np.sum/np.mean/np.max go through a Python-level dispatcher that costs three times the
# reduction itself on small arrays; the ufunc's own reduce is the same computation (same
# dtypes, same results), so these adapters call it directly.
_add_reduce: Any = np.add.reduce
_max_reduce: Any = np.maximum.reduce
_min_reduce: Any = np.minimum.reduce


def sum(x: Any, axis: Any = None, *, keepdims: bool = False) -> Any:
    if keepdims:
        return _add_reduce(x, axis, keepdims=True)
    return _add_reduce(x, axis)


def mean(x: Any, axis: Any = None, *, keepdims: bool = False) -> Any:
    a = np.asarray(x)
    if a.dtype.kind not in "fc" or a.size == 0:
        return np.mean(a, axis, keepdims=keepdims)
    total = _add_reduce(a, axis, keepdims=True) if keepdims else _add_reduce(a, axis)
    if axis is None:
        count = a.size
    else:
        count = 1
        for ax in ((axis,) if type(axis) is int else axis):
            count *= a.shape[ax]
    return total / count if count else total


def logsumexp(x: Any, axis: Any = None, *, keepdims: bool = False) -> Any:
    """Shifted by the maximum, computed in place on one temporary: four passes over ``x``."""
    a = np.asarray(x)
    if a.dtype.kind not in "fc":
        a = a.astype(np.float64)
    if a.size == 0:
        return np.log(_add_reduce(np.exp(a), axis, keepdims=keepdims))
    if a.ndim == 0:   # one number is its own logsumexp (and NumPy ufuncs return scalars)
        return a[()] + 0.0
    m = logsumexp_shift(a, axis, keepdims=True)
    t = np.subtract(a, m)
    np.exp(t, out=t)
    s = _add_reduce(t, axis, keepdims=True)
    np.log(s, out=s)
    s += m
    if keepdims:
        return s
    return s.reshape(()) if axis is None else np.squeeze(s, axis=axis)


def logsumexp_shift(x: Any, axis: Any = None, *, keepdims: bool = False) -> Any:
    """The maximum, or 0 where it is infinite (so a row of -inf gives -inf, not nan), or 0
    for an empty array: what logsumexp subtracts before ``exp``."""
    a = np.asarray(x)
    if a.size == 0:
        return _add_reduce(np.zeros_like(a), axis, keepdims=keepdims)
    m = _max_reduce(a, axis, keepdims=keepdims)
    if a.dtype.kind in "biu":        # of bools or ints: float64, as scipy's (bool - bool fails)
        return np.asarray(m, np.float64) if keepdims or axis is not None else np.float64(m)
    finite = np.isfinite(m)
    if finite.all():
        return m
    return np.where(finite, m, 0).astype(a.dtype, copy=False)


def max(x: Any, axis: Any = None, *, keepdims: bool = False) -> Any:
    return _max_reduce(x, axis, keepdims=keepdims)


def min(x: Any, axis: Any = None, *, keepdims: bool = False) -> Any:
    return _min_reduce(x, axis, keepdims=keepdims)
var, std, cumsum, cumprod = np.var, np.std, np.cumsum, np.cumprod


def argmax(x: Any, axis: Any = None, *, keepdims: bool = False) -> Any:
    return np.argmax(x, axis=axis, keepdims=keepdims)


def argmin(x: Any, axis: Any = None, *, keepdims: bool = False) -> Any:
    return np.argmin(x, axis=axis, keepdims=keepdims)


# --- shapes and indexing -------------------------------------------------------------------
reshape, transpose, swapaxes, moveaxis = np.reshape, np.transpose, np.swapaxes, np.moveaxis
expand_dims, squeeze, concatenate, stack = np.expand_dims, np.squeeze, np.concatenate, np.stack
split, broadcast_to, tile = np.split, np.broadcast_to, np.tile


def flip(x: Any, axis: Any = None) -> Any:
    """NumPy's; a 0-d value is itself (torch flips one over dim 0 or -1, NumPy refuses: code
    written for torch, run on Python numbers)."""
    return x if np.ndim(x) == 0 else np.flip(x, axis)


def repeat(x: Any, repeats: Any, axis: Any = None) -> Any:
    return np.repeat(x, repeats, axis)
take, take_along_axis, sort, meshgrid = np.take, np.take_along_axis, np.sort, np.meshgrid


def getitem(x: Any, index: Any) -> Any:
    """``x[index]``, of a Python number too (the tangent of a value NumPy holds as a NumPy
    scalar, ``(np.zeros(()) - w)[None]`` of a float ``w``, is a Python float)."""
    if type(x) in _PYTHON_SCALARS:
        x = np.asarray(x)
    return x[index]


_PYTHON_SCALARS = frozenset({float, int, bool, complex})


def argsort(x: Any, axis: int = -1) -> Any:
    return np.argsort(x, axis=axis, kind="stable")  # NumPy's default quicksort is not stable


def pad(x: Any, pad_width: Any, mode: PadMode = "constant", constant_values: Any = 0) -> Any:
    # np.pad takes constant_values by keyword only, and only for mode='constant'
    if mode == "constant":
        return np.pad(x, pad_width, mode, constant_values=constant_values)
    return np.pad(x, pad_width, mode)


def unstack(x: Any, axis: int = 0) -> list[Any]:
    return list(np.moveaxis(x, axis, 0)) if axis else list(x)


def index_update(x: Any, index: Any, values: Any) -> Any:
    out = np.array(x, copy=True)
    out[index] = values
    return out


def index_add(x: Any, index: Any, values: Any) -> Any:
    out = np.array(x, copy=True)
    if is_basic_index(index):
        out[index] += values
    else:
        np.add.at(out, index, values)
    return out


def topk(x: Any, k: int, sorted: bool = True) -> tuple[Any, Any]:
    idx = np.argpartition(-x, k - 1, axis=-1)[..., :k]
    values = np.take_along_axis(x, idx, axis=-1)
    if sorted:
        order = np.argsort(-values, axis=-1, kind="stable")
        idx = np.take_along_axis(idx, order, axis=-1)
        values = np.take_along_axis(values, order, axis=-1)
    return values, idx


# --- linear algebra ------------------------------------------------------------------------
inv, det, slogdet, solve = (np.linalg.inv, np.linalg.det, np.linalg.slogdet,
                             np.linalg.solve)


def einsum(subscripts: Any, xs: Any) -> Any:
    return np.einsum(einsum_terms.checked(subscripts), *xs)


def svd(x: Any) -> tuple[Any, Any, Any]:
    """``(u, s, vh)`` with ``x = u @ diag(s) @ vh`` (for :func:`adjoint_helpers.adjugate`)."""
    u, s, vh = np.linalg.svd(x)
    return u, s, vh


# --- creation ------------------------------------------------------------------------------
def zeros(shape: Any, dtype: Any = None) -> Any:
    return np.zeros(shape, native_dtype(dtype))


def ones(shape: Any, dtype: Any = None) -> Any:
    return np.ones(shape, native_dtype(dtype))


def full(shape: Any, fill_value: Any, dtype: Any = None) -> Any:
    return np.full(shape, fill_value, native_dtype(dtype))


def zeros_like(x: Any, dtype: Any = None) -> Any:
    return np.zeros_like(x, native_dtype(dtype))


def ones_like(x: Any, dtype: Any = None) -> Any:
    return np.ones_like(x, native_dtype(dtype))


def full_like(x: Any, fill_value: Any, dtype: Any = None) -> Any:
    return np.full_like(x, fill_value, native_dtype(dtype))


def arange(start: Any, stop: Any = None, step: Any = 1, dtype: Any = None) -> Any:
    if stop is None:
        start, stop = 0, start
    return np.arange(start, stop, step, dtype=native_dtype(dtype))


def linspace(start: Any, stop: Any, num: int = 50, dtype: Any = None) -> Any:
    return np.linspace(start, stop, num, dtype=native_dtype(dtype))


def eye(n: int, m: Any = None, dtype: Any = None) -> Any:
    return np.eye(n, m, dtype=native_dtype(dtype) or np.float64)


def array(values: Any, dtype: Any = None) -> Any:
    return np.asarray(values, native_dtype(dtype))


def one_hot(indices: Any, num_classes: int, dtype: Any = None) -> Any:
    return (np.asarray(indices)[..., None] == np.arange(num_classes)).astype(
        native_dtype(dtype) or np.float64)


def uniform(shape: Any, low: float = 0.0, high: float = 1.0, *, seed: int = 0,
            dtype: Any = None) -> Any:
    out = np.random.default_rng(seed).uniform(low, high, shape)
    return out.astype(native_dtype(dtype)) if dtype is not None else out


def normal(shape: Any, mean: float = 0.0, std: float = 1.0, *, seed: int = 0,
           dtype: Any = None) -> Any:
    out = np.random.default_rng(seed).normal(mean, std, shape)
    return out.astype(native_dtype(dtype)) if dtype is not None else out


# --- inspection and conversion ---------------------------------------------------------------
shape, size, ndim = np.shape, np.size, np.ndim


def astype(x: Any, dtype: Any) -> Any:
    return np.asarray(x).astype(native_dtype(dtype))


real, imag, conj, angle = np.real, np.imag, np.conj, np.angle


def numpy_call(fn: Any, *args: Any, **kwargs: Any) -> Any:
    """A NumPy function kept as written, on NumPy's own values: the call itself."""
    return fn(*args, **kwargs)


def to_numpy(x: Any) -> Any:
    return np.asarray(x)


def item(x: Any) -> Any:
    return np.asarray(x).item()


def stop_gradient(x: Any) -> Any:
    return x


# --- a helper of gradient code, NumPy's own form -------------------------------------------------
def broadcast_like(g: Any, x: Any) -> Any:
    """``g`` spread to ``x``'s shape and dtype; a Python number stays a number, and so does
    a gradient of a NumPy scalar (``u[t]`` in a loop: a 0-d array made at every step would
    slow every later operation on it, as the generic helper knows)."""
    dt = getattr(x, "dtype", None)
    if dt is None or isinstance(x, np.generic):   # a Python number, a NumPy scalar
        return g
    if type(g) is np.ndarray and g.dtype == dt and g.shape == x.shape:
        return g
    if not isinstance(dt, np.dtype):    # another framework's value (tf.nn.elu kept as written
        x = np.asarray(x)               # in code a Python number runs): its NumPy copy's
        dt = x.dtype
    if dt.kind not in "fc":
        dt = np.result_type(g, 1.0)
    if isinstance(g, (int, float)):
        return np.full(x.shape, g, dtype=dt)
    if not x.shape and np.size(g) == 1:    # a 0-d value reduced over axis 0 or -1 (see the
        return np.reshape(np.asarray(g, dtype=dt), ())     # generic broadcast_like)
    return np.broadcast_to(np.asarray(g, dtype=dt), np.shape(x))


class NumPyBackend(Backend):
    name, title, reference = "numpy", "NumPy", "HIPS autograd"
    typed_seed = False               # NumPy takes Python numbers everywhere
    numpy_scalars_are_constants = False
    updates_in_place = True          # du[t] += du_t

    def from_numpy(self, array: Any) -> Any:
        return array

    def from_value(self, x: Any, source: Backend, device: Any = None) -> Any:
        return source.to_numpy(x)

    def value_and_grad(self, f: Callable[..., Any], args: tuple[Any, ...],
                       indices: tuple[int, ...]) -> tuple[Any, tuple[Any, ...]]:
        """Through HIPS autograd: ``f``'s references to the ``numpy`` module are pointed at
        ``autograd.numpy`` for the duration of the call."""
        try:
            import autograd
            import autograd.numpy as anp
        except ImportError:
            raise GradlabError("NumPy has no autodiff of its own; install HIPS autograd "
                               "(`pip install autograd`) for reference gradients") from None
        traced = with_module_swapped(f, "numpy", anp)
        return autograd.value_and_grad(traced, indices)(*args)  # type: ignore[no-any-return]


BACKEND = NumPyBackend()


# --- calls gradlab cannot read (codegen/opaque.py) ----------------------------------------------
def vjp_of(fn: Any, *args: Any, wrt: Any = None, keywords: Any = None,
           params: bool = False) -> Any:
    """NumPy has no autodiff of its own to differentiate a call gradlab cannot read."""
    raise GradlabError(
        f"{getattr(fn, '__name__', type(fn).__name__)} is a call gradlab cannot read (no rule, "
        f"no Python source), and NumPy has no autodiff of its own to differentiate it: pass "
        f"torch, JAX or TensorFlow arrays, whose framework differentiates the call")


jvp_of = zeros_like_params = add_params = vjp_of
