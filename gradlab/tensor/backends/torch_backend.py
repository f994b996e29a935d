"""PyTorch primitives: ``torch``'s own functions where they take NumPy's arguments, adapters where
they differ (``dim``/``keepdim``, functions that refuse Python numbers). Creation functions
place new tensors on the namespace's ``DEVICE``: :class:`TorchBackend` (``BACKEND``) makes one
namespace per device, and answers for devices, conversions, the seed and ``torch.autograd``."""
from __future__ import annotations

import builtins
import functools
import operator
from typing import Any, Callable, Hashable

import numpy as _np
import torch
import torch.nn.functional as F

from .. import dtypes as _dtypes, einsum_terms
from ...errors import GradlabError
from ..detect import call_recorded, require_callable_of
from .base import Backend
from .common import NUMBERS, PadMode, is_basic_index, normalize_axes, pad_indices, pad_pairs

#: where creation functions put new tensors; None is torch's default (set per namespace)
DEVICE: Any = None


def native_dtype(dtype: Any) -> Any:
    if dtype is None or isinstance(dtype, torch.dtype):
        return dtype
    name = _dtypes.neutral(dtype).name
    return getattr(torch, name)


def _as_tensor(v: Any, like: Any) -> Any:
    if isinstance(v, torch.Tensor):
        return v
    if isinstance(like, torch.Tensor):
        return torch.as_tensor(v, dtype=like.dtype if isinstance(v, float) and
                               like.is_floating_point() else None, device=like.device)
    if type(v) is float:       # with nothing to follow, a Python float is NumPy's float64
        return torch.as_tensor(v, dtype=torch.float64)
    return torch.as_tensor(v)


def _dims(axis: Any) -> Any:
    return tuple(axis) if isinstance(axis, list) else axis


# --- elementwise ---------------------------------------------------------------------------
abs, sqrt, square, exp, expm1 = torch.abs, torch.sqrt, torch.square, torch.exp, torch.expm1
log, log1p, log2, log10 = torch.log, torch.log1p, torch.log2, torch.log10
sin, cos, tan, arcsin, arccos, arctan = (torch.sin, torch.cos, torch.tan, torch.arcsin,
                                         torch.arccos, torch.arctan)
sinh, cosh, tanh, arcsinh, arccosh, arctanh = (torch.sinh, torch.cosh, torch.tanh, torch.arcsinh,
                                               torch.arccosh, torch.arctanh)
sigmoid, softplus, relu, erf = torch.sigmoid, F.softplus, torch.relu, torch.erf
floor, ceil, negative, reciprocal = torch.floor, torch.ceil, torch.negative, torch.reciprocal
isnan, isinf, isfinite, logical_not = torch.isnan, torch.isinf, torch.isfinite, torch.logical_not
add, subtract, multiply, divide, power = operator.add, operator.sub, operator.mul, \
    operator.truediv, operator.pow
equal, not_equal, less, less_equal = operator.eq, operator.ne, operator.lt, operator.le
greater, greater_equal = operator.gt, operator.ge
floor_divide, mod = operator.floordiv, operator.mod


real = torch.real


def angle(x: Any) -> Any:
    """Of ints and bools in float64, as NumPy's (torch's: its default float32)."""
    return torch.angle(_as_float(x))


def imag(x: Any) -> Any:
    """NumPy's: zeros for a real tensor (torch refuses one)."""
    return torch.imag(x) if x.is_complex() else torch.zeros_like(x)


def conj(x: Any) -> Any:
    return torch.conj(x).resolve_conj() if x.is_complex() else x


def sign(x: Any) -> Any:
    if x.is_complex():
        return torch.sgn(x)    # NumPy's sign of a complex value: x / |x|
    s = torch.sign(x)  # torch.sign(nan) is 0; NumPy's is nan
    return torch.where(torch.isnan(x), x, s) if x.is_floating_point() else s


def maximum(x: Any, y: Any) -> Any:
    return torch.maximum(_as_tensor(x, y), _as_tensor(y, x))


def minimum(x: Any, y: Any) -> Any:
    return torch.minimum(_as_tensor(x, y), _as_tensor(y, x))


def arctan2(x: Any, y: Any) -> Any:
    """Of ints or bools in float64, as NumPy computes them (torch: float32)."""
    return torch.atan2(_as_float(_as_tensor(x, y)), _as_float(_as_tensor(y, x)))


def logical_and(x: Any, y: Any) -> Any:
    return torch.logical_and(_as_tensor(x, y), _as_tensor(y, x))


def logical_or(x: Any, y: Any) -> Any:
    return torch.logical_or(_as_tensor(x, y), _as_tensor(y, x))


def where(condition: Any, x: Any, y: Any) -> Any:
    return torch.where(_as_tensor(condition, x), x, y)


def clip(x: Any, a_min: Any, a_max: Any) -> Any:
    return torch.clamp(x, a_min, a_max)


def _promoted(x: Any, y: Any) -> tuple[Any, Any]:
    """Two tensors of different dtypes in NumPy's common one (float32 with float64 gives
    float64): torch's matmul, unlike its elementwise operators, does not promote."""
    common = torch.promote_types(x.dtype, y.dtype)
    return x.to(common), y.to(common)


def matmul(x: Any, y: Any) -> Any:
    try:
        return torch.matmul(x, y)
    except (RuntimeError, NotImplementedError):
        if not (isinstance(x, torch.Tensor) and isinstance(y, torch.Tensor)):
            raise
        if x.dtype == y.dtype == torch.bool:    # NumPy's: any(x[i, k] and y[k, j])
            return torch.matmul(x.to(torch.int64), y.to(torch.int64)) != 0
        if x.dtype != y.dtype:
            return torch.matmul(*_promoted(x, y))
        raise


def dot(x: Any, y: Any) -> Any:
    if not isinstance(x, torch.Tensor) or not isinstance(y, torch.Tensor) or \
            x.dim() == 0 or y.dim() == 0:
        return x * y
    if y.dim() <= 2:  # matmul agrees with np.dot when y is a vector or a matrix
        return matmul(x, y)
    if x.dtype != y.dtype:
        x, y = _promoted(x, y)
    # np.dot of N-d arrays: sum over the last axis of x and the second-to-last of y
    return torch.tensordot(x, y, dims=([x.dim() - 1], [y.dim() - 2]))


def outer(x: Any, y: Any) -> Any:
    if not isinstance(x, torch.Tensor) and not isinstance(y, torch.Tensor):
        x = torch.as_tensor(x, dtype=torch.float64)    # two numbers: NumPy's float64
    x, y = _as_tensor(x, y), _as_tensor(y, x)      # a Python number: the other's dtype
    if x.dim() == 1 and y.dim() == 1:
        return torch.outer(x, y)
    return torch.outer(x.reshape(-1), y.reshape(-1))


# --- reductions ----------------------------------------------------------------------------
# Reductions pass ``keepdim`` only when true: an explicit ``keepdim=False`` costs torch's argument
# parser a noticeable part of a small reduction (bench/HISTORY.md). ``axis=()`` reduces nothing,
# as in NumPy (torch reads an empty ``dim`` as every axis).
def sum(x: Any, axis: Any = None, *, keepdims: bool = False) -> Any:
    if axis is None:
        return torch.sum(x, None, keepdim=True) if keepdims else torch.sum(x)
    if type(axis) is int:     # the common call, first: no tuple compare, no _dims frame
        return torch.sum(x, axis, keepdim=True) if keepdims else torch.sum(x, axis)
    if axis == ():
        return torch.sum(x[None], 0)
    return torch.sum(x, _dims(axis), keepdim=True) if keepdims else torch.sum(x, _dims(axis))


def _as_float(x: Any) -> Any:
    """Integers and booleans as NumPy averages them: in float64 (torch refuses a mean of
    ints); a NumPy value as a tensor first (``np.stack`` of Python numbers kept as written)."""
    if not isinstance(x, torch.Tensor):
        if not isinstance(x, _np.ndarray):
            return x
        x = _tensor(x)
    if not (x.is_floating_point() or x.is_complex()):
        return x.to(torch.float64)
    return x


def mean(x: Any, axis: Any = None, *, keepdims: bool = False) -> Any:
    x = _as_float(x)
    if axis is None:
        return torch.mean(x, None, keepdim=True) if keepdims else torch.mean(x)
    if axis == ():
        return torch.mean(x[None], 0)
    return torch.mean(x, _dims(axis), keepdim=True) if keepdims else torch.mean(x, _dims(axis))


#: Reductions whose one-argument torch call is the adapter's ``axis=None`` case: the Tensor
#: wrapper's methods call these directly when no axis is given.
WHOLE_REDUCTIONS = {"sum": torch.sum, "mean": torch.mean, "prod": torch.prod, "max": torch.max,
                    "min": torch.min, "all": torch.all}


def prod(x: Any, axis: Any = None, *, keepdims: bool = False) -> Any:
    if axis is None and not keepdims:
        return torch.prod(x)
    for a in reversed(normalize_axes(axis, x.dim())):  # torch.prod takes one dim at a time
        x = torch.prod(x, dim=a, keepdim=True)
    return x if keepdims else x.squeeze(_dims(axis) if axis is not None else None)


def max(x: Any, axis: Any = None, *, keepdims: bool = False) -> Any:
    if axis is None and not keepdims:
        return torch.max(x)
    if axis == ():
        return x.clone()
    return torch.amax(x, dim=() if axis is None else _dims(axis), keepdim=keepdims)


def min(x: Any, axis: Any = None, *, keepdims: bool = False) -> Any:
    if axis is None and not keepdims:
        return torch.min(x)
    if axis == ():
        return x.clone()
    return torch.amin(x, dim=() if axis is None else _dims(axis), keepdim=keepdims)


def all(x: Any, axis: Any = None, *, keepdims: bool = False) -> Any:
    if axis is None and not keepdims:
        return torch.all(x)
    return torch.all(x, dim=normalize_axes(axis, x.dim()), keepdim=keepdims)


def any(x: Any, axis: Any = None, *, keepdims: bool = False) -> Any:
    if axis is None and not keepdims:
        return torch.any(x)
    return torch.any(x, dim=normalize_axes(axis, x.dim()), keepdim=keepdims)


def round(x: Any, decimals: int = 0) -> Any:
    """torch takes ``decimals`` by keyword only; passed only when not 0 (the common call).
    An int tensor rounds to itself (torch rounds no ints), or to tens with negative
    ``decimals``, as NumPy does."""
    if isinstance(x, torch.Tensor) and not (x.is_floating_point() or x.is_complex()):
        return x if decimals >= 0 else torch.round(x.double(), decimals=decimals).to(x.dtype)
    return torch.round(x, decimals=decimals) if decimals else torch.round(x)


def logsumexp(x: Any, axis: Any = None, *, keepdims: bool = False) -> Any:
    if axis == ():
        return x.clone()
    return torch.logsumexp(x, dim=normalize_axes(axis, x.dim()), keepdim=keepdims)


def var(x: Any, axis: Any = None, *, keepdims: bool = False, ddof: int = 0) -> Any:
    return torch.var(_as_float(x), dim=_dims(axis), correction=ddof, keepdim=keepdims)


def std(x: Any, axis: Any = None, *, keepdims: bool = False, ddof: int = 0) -> Any:
    return torch.std(_as_float(x), dim=_dims(axis), correction=ddof, keepdim=keepdims)


def _tensor(x: Any) -> Any:
    """A NumPy array or number as a tensor of NumPy's dtype (``torch.as_tensor(0.5)`` alone
    is float32): a value gradlab keeps as NumPy computed it (``np.average`` kept as written)
    meeting a function that takes tensors only."""
    return x if isinstance(x, torch.Tensor) else torch.as_tensor(_np.asarray(x), device=DEVICE)


def _ordered(x: Any) -> Any:
    """``x`` as a tensor torch's argmax and argmin take: bools as 0 and 1, as NumPy orders
    them (torch refuses bool input)."""
    x = _tensor(x)
    return x.to(torch.uint8) if x.dtype == torch.bool else x


def argmax(x: Any, axis: Any = None, *, keepdims: bool = False) -> Any:
    x = _ordered(x)
    if axis is None and keepdims:
        return torch.argmax(x).reshape((1,) * x.dim())
    return torch.argmax(x, dim=axis, keepdim=keepdims)


def argmin(x: Any, axis: Any = None, *, keepdims: bool = False) -> Any:
    x = _ordered(x)
    if axis is None and keepdims:
        return torch.argmin(x).reshape((1,) * x.dim())
    return torch.argmin(x, dim=axis, keepdim=keepdims)


def cumsum(x: Any, axis: Any = None) -> Any:
    return torch.cumsum(x.reshape(-1) if axis is None else x, dim=0 if axis is None else axis)


def cumprod(x: Any, axis: Any = None) -> Any:
    x = _tensor(x)
    return torch.cumprod(x.reshape(-1) if axis is None else x, dim=0 if axis is None else axis)


# --- shapes and indexing -------------------------------------------------------------------
def reshape(x: Any, shape: Any) -> Any:
    return torch.reshape(_as_tensor(x, None), (shape,) if isinstance(shape, int) else shape)


def transpose(x: Any, axes: Any = None) -> Any:
    if type(x) is float or type(x) is int:
        return x                # a number is its own transpose (NumPy: of every axis order)
    if not isinstance(x, torch.Tensor):
        x = _tensor(x)          # a NumPy scalar or array (np.log10 of a count kept as written)
    if axes is None:
        if x.dim() < 2:
            return x            # NumPy's .T of a number or a vector is itself
        return x.permute(*reversed(range(x.dim())))
    return torch.permute(x, tuple(axes))   # () for a 0-d tensor, which permute(*()) refuses


def swapaxes(x: Any, axis1: int, axis2: int) -> Any:
    """Of a number too, as torch's of a 0-d tensor (axes 0 and -1): gradlab may hold one
    where the user's code had a tensor (``torch.divide(2, v)`` of a float ``v``)."""
    return torch.swapaxes(_tensor(x), axis1, axis2)


def moveaxis(x: Any, source: Any, destination: Any) -> Any:
    return torch.moveaxis(_tensor(x), source, destination)


def broadcast_to(x: Any, shape: Any) -> Any:
    """Of a NumPy value or a Python number too (``np.broadcast_to(np.nansum(x), (2,))``)."""
    return torch.broadcast_to(_tensor(x), shape)


def repeat(x: Any, repeats: Any, axis: Any = None) -> Any:
    return torch.repeat_interleave(_as_tensor(x, None), repeats, dim=axis)


def tile(x: Any, reps: Any) -> Any:
    return torch.tile(x, (reps,) if isinstance(reps, int) else tuple(reps))


def expand_dims(x: Any, axis: Any) -> Any:
    if isinstance(axis, int):
        return torch.unsqueeze(x, axis)
    for a in normalize_axes(axis, x.dim() + len(axis)):
        x = torch.unsqueeze(x, a)
    return x


def squeeze(x: Any, axis: Any = None) -> Any:
    return torch.squeeze(x) if axis is None else torch.squeeze(x, _dims(axis))


def concatenate(xs: Any, axis: int = 0) -> Any:
    return torch.cat(tuple(xs), dim=axis)


def stack(xs: Any, axis: int = 0) -> Any:
    """``torch.stack`` that also takes Python numbers beside tensors and lists of lists (as
    ``np.array(rows)`` does: each inner list is stacked first)."""
    items = tuple(stack(x) if type(x) in (list, tuple) else x for x in xs)
    if not builtins.all(type(x) is torch.Tensor for x in items):   # numbers beside tensors
        like = next((x for x in items if isinstance(x, torch.Tensor)), None)
        if like is None:      # Python (or NumPy) values alone: NumPy's dtype (float64)
            import numpy as np
            return torch.as_tensor(np.stack([np.asarray(x) for x in items], axis=axis),
                                   device=DEVICE)
        items = tuple(x if isinstance(x, torch.Tensor) else torch.as_tensor(
            x, dtype=like.dtype, device=like.device) for x in items)
    return torch.stack(items, dim=axis)


def unstack(x: Any, axis: int = 0) -> list[Any]:
    return list(torch.unbind(x, dim=axis))


def split(x: Any, indices_or_sections: Any, axis: int = 0) -> list[Any]:
    if isinstance(indices_or_sections, int) and x.shape[axis] % indices_or_sections:
        raise ValueError("array split does not result in an equal division")
    return list(torch.tensor_split(x, indices_or_sections, dim=axis))


def flip(x: Any, axis: Any = None) -> Any:
    if x.dim() == 0:          # torch flips a 0-d tensor over dims 0 or -1: itself
        return x.clone()
    dims = tuple(range(x.dim())) if axis is None else (
        (axis,) if isinstance(axis, int) else tuple(axis))
    return torch.flip(x, dims)


def pad(x: Any, pad_width: Any, mode: PadMode = "constant", constant_values: Any = 0) -> Any:
    x = _tensor(x)
    widths = pad_pairs(pad_width, x.dim())
    if mode == "constant":
        flat: list[int] = []
        for before, after in reversed(widths):
            flat += [before, after]
        return F.pad(x, flat, mode="constant", value=constant_values)
    # F.pad's other modes only pad the last 1-3 axes of a batched input: gather instead
    for axis, (before, after) in enumerate(widths):
        if before or after:
            index = pad_indices(x.shape[axis], before, after, mode)
            x = torch.index_select(x, axis, torch.as_tensor(index, device=x.device))
    return x


def take(x: Any, indices: Any, axis: Any = None) -> Any:
    x = _tensor(x)
    indices = _as_tensor(indices, None).to(x.device)
    if axis is None:
        return torch.take(x, indices)
    return x[(slice(None),) * (axis % x.dim()) + (indices,)]


def take_along_axis(x: Any, indices: Any, axis: int) -> Any:
    return torch.take_along_dim(x, indices, dim=axis)


def getitem(x: Any, index: Any) -> Any:
    if not isinstance(x, torch.Tensor) and isinstance(x, NUMBERS):
        x = _tensor(x)    # a number gradlab holds where NumPy has a NumPy scalar: v[None]
    if type(index) is tuple:
        index = _numpy_index(index)
    try:
        return x[index]
    except ValueError:  # torch refuses negative slice steps: index the flipped tensor instead
        flips, index = _positive_steps(x, index)
        if not flips:
            raise
        return torch.flip(x, flips)[index]


def _numpy_index(index: tuple[Any, ...]) -> tuple[Any, ...]:
    """NumPy counts the ints of an index that also holds integer arrays as arrays, which decides
    where the indexed axes go (``x[1, :, idx]`` puts them first); torch does not. Such ints
    become arrays here; any other index is returned as it is."""
    ints = False
    arrays: list[Any] = []
    for i in index:
        if type(i) is int:
            ints = True
        elif isinstance(i, torch.Tensor) and i.dtype != torch.bool and i.dim():
            arrays.append(i.shape)
        elif isinstance(i, list):
            arrays.append((len(i),))
    if not (ints and arrays):
        return index
    shape = torch.broadcast_shapes(*arrays)
    device = next(i.device for i in index if isinstance(i, torch.Tensor))
    return tuple(torch.full(shape, i, dtype=torch.long, device=device) if type(i) is int else i
                 for i in index)


def _positive_steps(x: Any, index: Any) -> tuple[list[int], Any]:
    """The axes to flip and an index without negative steps that selects, from ``x`` flipped
    along those axes, the elements ``x[index]`` selects, in the same order."""
    items = list(index) if type(index) is tuple else [index]
    dims = [_dims_taken(i) for i in items]
    for k, i in enumerate(items):
        if i is Ellipsis:
            items[k:k + 1] = [slice(None)] * (x.dim() - builtins.sum(dims))
            break
    flips, out, axis = [], [], 0
    for i in items:
        if type(i) is slice and i.step is not None and i.step < 0:
            n = x.shape[axis]
            start, stop, step = i.indices(n)
            flips.append(axis)
            i = slice(n - 1 - start, n - 1 - stop, -step)
        out.append(i)
        axis += _dims_taken(i)
    return flips, tuple(out)


def _dims_taken(i: Any) -> int:
    if i is None or i is Ellipsis:
        return 0
    if isinstance(i, torch.Tensor) and i.dtype == torch.bool:
        return i.dim()
    return 1


def index_update(x: Any, index: Any, values: Any) -> Any:
    x = _tensor(x)        # (the gradient of a number gradlab holds: s[None] of s = np.sin(w))
    if type(index) is tuple:
        index = _numpy_index(index)
    out = x.clone()
    try:
        out[index] = values
    except ValueError:  # negative slice steps
        flips, index = _positive_steps(x, index)
        if not flips:
            raise
        out = torch.flip(x, flips)
        out[index] = values
        out = torch.flip(out, flips)
    return out


def index_add(x: Any, index: Any, values: Any) -> Any:
    if is_basic_index(index):
        return index_update(x, index, getitem(x, index) + values)
    # repeated positions accumulate (like np.add.at): index_add over flat positions
    flat = getitem(torch.arange(x.numel(), device=x.device).reshape(x.shape), index)
    vals = torch.broadcast_to(_as_tensor(values, x), flat.shape).reshape(-1)
    if vals.dtype != x.dtype:      # into x's dtype, as np.add.at adds (torch mixes none)
        vals = vals.to(x.dtype)
    return x.reshape(-1).index_add(0, flat.reshape(-1), vals).reshape(x.shape)


def sort(x: Any, axis: int = -1) -> Any:
    return torch.sort(_tensor(x), dim=axis).values


def argsort(x: Any, axis: int = -1) -> Any:
    x = _as_tensor(x, None)
    # NumPy sorts a number as a one-element vector: [0]
    return torch.argsort(x.reshape(1) if x.dim() == 0 else x, dim=axis, stable=True)


def topk(x: Any, k: int, sorted: bool = True) -> tuple[Any, Any]:
    values, indices = torch.topk(_tensor(x), k, sorted=sorted)
    return values, indices


def meshgrid(*xs: Any, indexing: str = "xy") -> list[Any]:
    return list(torch.meshgrid(*[_tensor(x) for x in xs], indexing=indexing))


# --- linear algebra ------------------------------------------------------------------------


def einsum(subscripts: Any, xs: Any) -> Any:
    return torch.einsum(einsum_terms.checked(subscripts), *xs)


def inv(x: Any) -> Any:
    """Of ints or bools too: in float64, as NumPy inverts them (torch refuses them)."""
    return torch.linalg.inv(_as_float(x))


def det(x: Any) -> Any:
    return torch.linalg.det(_as_float(x))


def svd(x: Any) -> tuple[Any, Any, Any]:
    """``(u, s, vh)`` with ``x = u @ diag(s) @ vh`` (for :func:`adjoint_helpers.adjugate`)."""
    u, s, vh = torch.linalg.svd(_as_float(x))
    return u, s, vh


def slogdet(x: Any) -> tuple[Any, Any]:
    sign_, logabsdet = torch.linalg.slogdet(_as_float(x))
    return sign_, logabsdet


def solve(a: Any, b: Any) -> Any:
    """Of ints or bools too: in float64, as NumPy solves them (torch refuses them); of two
    float dtypes, in their common one (NumPy's float32 matrix with a float64 right side)."""
    a, b = _as_float(a), _as_float(b)
    if isinstance(b, torch.Tensor) and a.dtype != b.dtype:
        a, b = _promoted(a, b)
    return torch.linalg.solve(a, b)


# --- matmul's adjoint, one kernel each for matrices and vectors ----------------------------
# In eager mode every call is paid in dispatch: the generic halves (adjoint_helpers) check for
# a zero gradient and ranks, then call ``outer`` (which checks ranks again) or ``swapaxes`` and
# ``matmul``; these are one kernel each, which a recurrent step calls twice (bench/HISTORY.md).
# Other ranks, and a gradient that is still the number 0.0, fall back on the generic halves,
# which the namespace holds as generic_matmul_grad_x/y (see namespace.py).
generic_matmul_grad_x: Any
generic_matmul_grad_y: Any


def matmul_grad_x(dz: Any, x: Any, y: Any) -> Any:
    """d(x @ y)/dx applied to ``dz``: the outer product for ``W @ h``, else ``dz @ y.T``
    (one dtype: the generic halves promote mixed ones as NumPy does)."""
    if isinstance(dz, torch.Tensor) and isinstance(x, torch.Tensor) and x.dim() == 2 and (
            dz.dtype == y.dtype):
        if dz.dim() == 1 and y.dim() == 1:
            return torch.outer(dz, y)
        if dz.dim() == 2 and y.dim() == 2:
            return torch.matmul(dz, y.mT)
    return generic_matmul_grad_x(dz, x, y)


def matmul_grad_y(dz: Any, x: Any, y: Any) -> Any:
    """d(x @ y)/dy applied to ``dz``: ``x.T @ dz``, as ``dz @ x`` for a vector (no transpose;
    one dtype, as above)."""
    if isinstance(dz, torch.Tensor) and isinstance(x, torch.Tensor) and x.dim() == 2 and (
            dz.dtype == x.dtype):
        if dz.dim() == 1 and y.dim() == 1:
            return torch.matmul(dz, x)
        if dz.dim() == 2 and y.dim() == 2:
            return torch.matmul(x.mT, dz)
    return generic_matmul_grad_y(dz, x, y)


# --- creation (on DEVICE) ------------------------------------------------------------------
# With dtype=None, NumPy's dtypes: float64 for floats (not torch's default float32: generated
# code builds constants next to the user's float64 values), int64 for ints.
def _float(dtype: Any) -> Any:
    return native_dtype(dtype) or torch.float64


def _dtype_of_python(value: Any, dtype: Any) -> Any:
    """``dtype`` for torch, or NumPy's dtype for a Python float/complex value when it is None."""
    if dtype is not None:
        return native_dtype(dtype)
    t = type(value)
    return torch.float64 if t is float else torch.complex128 if t is complex else None


def zeros(shape: Any, dtype: Any = None) -> Any:
    return torch.zeros(shape, dtype=_float(dtype), device=DEVICE)


def ones(shape: Any, dtype: Any = None) -> Any:
    return torch.ones(shape, dtype=_float(dtype), device=DEVICE)


def full(shape: Any, fill_value: Any, dtype: Any = None) -> Any:
    return torch.full((shape,) if isinstance(shape, int) else shape, fill_value,
                      dtype=_dtype_of_python(fill_value, dtype), device=DEVICE)


def zeros_like(x: Any, dtype: Any = None) -> Any:
    return torch.zeros_like(_tensor(x), dtype=native_dtype(dtype))


def ones_like(x: Any, dtype: Any = None) -> Any:
    return torch.ones_like(_tensor(x), dtype=native_dtype(dtype))


def full_like(x: Any, fill_value: Any, dtype: Any = None) -> Any:
    return torch.full_like(_tensor(x), fill_value, dtype=native_dtype(dtype))


def arange(start: Any, stop: Any = None, step: Any = 1, dtype: Any = None) -> Any:
    if stop is None:
        start, stop = 0, start
    if dtype is None and builtins.any(type(v) is float for v in (start, stop, step)):
        dtype = torch.float64
    return torch.arange(start, stop, step, dtype=native_dtype(dtype), device=DEVICE)


def linspace(start: Any, stop: Any, num: int = 50, dtype: Any = None) -> Any:
    return torch.linspace(start, stop, num, dtype=_float(dtype), device=DEVICE)


def eye(n: int, m: Any = None, dtype: Any = None) -> Any:
    return torch.eye(n, n if m is None else m, dtype=_float(dtype), device=DEVICE)


def array(values: Any, dtype: Any = None) -> Any:
    if isinstance(values, torch.Tensor):
        return values if dtype is None else values.to(native_dtype(dtype))
    if isinstance(values, (list, tuple)) and values and isinstance(values[0], torch.Tensor):
        return torch.stack(list(values)).to(native_dtype(dtype) or values[0].dtype)
    if dtype is None:  # NumPy decides: float64 for Python floats, int64 for ints
        import numpy as np
        values = np.asarray(values)
    try:
        return torch.as_tensor(values, dtype=native_dtype(dtype), device=DEVICE)
    except ValueError:  # a NumPy view with negative strides (np.fliplr, x[::-1]): a copy
        import numpy as np
        return torch.as_tensor(np.array(values, order="C"), dtype=native_dtype(dtype),
                               device=DEVICE)


def one_hot(indices: Any, num_classes: int, dtype: Any = None) -> Any:
    return F.one_hot(torch.as_tensor(indices, device=DEVICE).long(), num_classes).to(
        _float(dtype))


def _generator(seed: int) -> Any:
    return torch.Generator(device=DEVICE or "cpu").manual_seed(seed)


def uniform(shape: Any, low: float = 0.0, high: float = 1.0, *, seed: int = 0,
            dtype: Any = None) -> Any:
    u = torch.rand(shape, generator=_generator(seed), dtype=_float(dtype), device=DEVICE)
    return u * (high - low) + low


def normal(shape: Any, mean: float = 0.0, std: float = 1.0, *, seed: int = 0,
           dtype: Any = None) -> Any:
    n = torch.randn(shape, generator=_generator(seed), dtype=_float(dtype), device=DEVICE)
    return n * std + mean


# --- inspection and conversion ---------------------------------------------------------------
def shape(x: Any) -> tuple[int, ...]:
    return tuple(x.shape) if isinstance(x, torch.Tensor) else ()


def size(x: Any) -> int:
    return x.numel() if isinstance(x, torch.Tensor) else 1


def ndim(x: Any) -> int:
    return x.dim() if isinstance(x, torch.Tensor) else 0


#: What ``x.to(...)`` may be given besides a dtype: a device moves the tensor, a tensor gives
#: its dtype and device. Neither changes a value, so the gradient flows through unchanged.
_DEVICE_NAMES = ("cpu", "cuda", "mps", "xpu", "meta")


def astype(x: Any, dtype: Any) -> Any:
    x = _as_tensor(x, None)
    if isinstance(dtype, (torch.device, torch.Tensor)) or (
            isinstance(dtype, str) and dtype.split(":")[0] in _DEVICE_NAMES):
        return x.to(dtype)
    return x.to(native_dtype(dtype))


def to_numpy(x: Any) -> Any:
    return x.detach().cpu().numpy() if isinstance(x, torch.Tensor) else __import__("numpy").asarray(x)


def item(x: Any) -> Any:
    return x.item() if isinstance(x, torch.Tensor) else x


def stop_gradient(x: Any) -> Any:
    """``torch.tensor(v)``: of a list (``w.tolist()``), the new tensor torch makes of it."""
    if isinstance(x, (list, tuple)):
        return torch.tensor(x, device=DEVICE)
    return x.detach() if isinstance(x, torch.Tensor) else x


class TorchBackend(Backend):
    name, title, reference = "torch", "PyTorch", "torch.autograd"
    wraps_python_numbers = True     # torch.sin(0.5) raises
    casts_like_numpy = True         # exp of ints: float32 (NumPy: float64)
    binds_device = True             # creation functions read the namespace's DEVICE
    updates_in_place = True         # du[t] += du_t (not while autograd records the call)

    def devices(self) -> list[str]:
        return ["cpu"] + [f"cuda:{i}" for i in range(torch.cuda.device_count())]

    def device_of(self, x: Any) -> Any:
        return str(x.device)

    def device_label(self, device: Any) -> str:
        text = str(device)
        return f"{text} · {_gpu_name(text)}" if text.startswith("cuda") else text

    def spell_device(self, device: str) -> str:
        return device.replace("gpu", "cuda")

    def synchronize(self, x: Any) -> None:
        if x.is_cuda:
            torch.cuda.synchronize(x.device)

    def updates_functionally(self, args: tuple[Any, ...]) -> bool:
        """While autograd records the call (an input requires grad: a gradient of gradlab's
        gradient) or inside a ``torch.func`` transform, no tensor is changed in place: autograd
        refuses changes to tensors it saved, and a transform's wrapped tensors cannot be added
        into a plain one."""
        if torch._C._functorch.peek_interpreter_stack() is not None:
            return True
        if not torch.is_grad_enabled():
            return False
        for a in args:      # (this module's `any` is the tensor primitive)
            if getattr(a, "requires_grad", False):
                return True
        return False

    def call_device(self, args: tuple[Any, ...]) -> Any:
        """The CUDA device of the first tensor among ``args`` (None: the CPU)."""
        for a in args:
            if type(a).__module__ == "torch" or hasattr(a, "is_cuda"):
                return str(a.device) if getattr(a, "is_cuda", False) else None
        return None

    def device_key(self, device: Any) -> Hashable | None:
        text = str(device)
        if text == "cpu":
            return None
        return "cuda:0" if text == "cuda" else text

    def native_device(self, key: Hashable) -> Any:
        return torch.device(str(key))

    def to_numpy(self, x: Any) -> Any:
        return x.detach().cpu().numpy()

    def from_numpy(self, array: Any) -> Any:
        return torch.as_tensor(array)

    def to_device(self, x: Any, device: Any) -> Any:
        text = str(device)
        return x.to("cuda:0" if text in ("cuda", "gpu") else text.replace("gpu", "cuda"))

    def dlpack_view(self, x: Any) -> Any:
        return x.detach()

    def from_dlpack(self, view: Any) -> Any:
        return torch.from_dlpack(view)

    def one(self, sample: Any) -> Any:
        return torch.ones((), dtype=sample.dtype, device=sample.device)

    def value_and_grad(self, f: Callable[..., Any], args: tuple[Any, ...],
                       indices: tuple[int, ...]) -> tuple[Any, tuple[Any, ...]]:
        args_ = list(args)
        for i in indices:
            args_[i] = args[i].detach().clone().requires_grad_(True)
        with torch.enable_grad():
            value = f(*args_)
            grads = torch.autograd.grad(value, [args_[i] for i in indices], allow_unused=True)
        grads = tuple(torch.zeros_like(args[i]) if g is None else g
                      for i, g in zip(indices, grads))
        return value.detach(), grads


@functools.lru_cache(maxsize=None)
def _gpu_name(device: str) -> str:
    return torch.cuda.get_device_name(int(device.partition(":")[2] or 0))


BACKEND = TorchBackend()


# --- calls gradlab cannot read (codegen/opaque.py): torch.autograd --------------------------------
def vjp_of(fn: Any, *args: Any, wrt: Any = None, keywords: Any = None,
           params: bool = False) -> Any:
    """``fn(*args)``, and its vector-Jacobian product with respect to the arguments at
    ``wrt`` (all by default) and, with ``params``, to the parameters of ``fn`` (a
    ``torch.nn.Module``: a dict keyed like ``named_parameters()``, first): ``backward(g)``
    returns those gradients (one, or a tuple). The call runs under autograd once, and the
    result is handed on detached: the rest of the generated code builds no graph."""
    require_callable_of(fn, "torch", "PyTorch")
    wrt = tuple(range(len(args))) if wrt is None else tuple(wrt)
    inputs = list(args)
    for i in wrt:
        inputs[i] = torch.as_tensor(args[i]).detach().requires_grad_(True)
    named = _named_parameters(fn) if params else []
    with torch.enable_grad():
        out = call_recorded(fn, "PyTorch", *inputs, **(keywords or {}))
    _one_tensor(fn, out)
    leaves = [p for _, p in named] + [inputs[i] for i in wrt]

    def backward(g: Any) -> Any:
        if not out.requires_grad:        # nothing in the call depends on them
            grads: Any = [torch.zeros_like(x) for x in leaves]
        else:
            seed = g if isinstance(g, torch.Tensor) else torch.full_like(out, float(g))
            grads = torch.autograd.grad(out, leaves, seed.expand_as(out), allow_unused=True)
            grads = [torch.zeros_like(x) if d is None else d for d, x in zip(grads, leaves)]
        if params:
            grads = [dict(zip([n for n, _ in named], grads[:len(named)]))] + grads[len(named):]
        return grads[0] if len(grads) == 1 else tuple(grads)
    return out.detach(), backward


def _named_parameters(fn: Any) -> list[tuple[str, Any]]:
    if not isinstance(fn, torch.nn.Module):
        raise GradlabError(
            f"a gradient with respect to {getattr(fn, '__name__', type(fn).__name__)}, a "
            f"callable: gradlab gives one for a torch.nn.Module (its parameters, keyed like "
            f"named_parameters()); pass the arrays it computes with as arguments instead")
    return [(n, p) for n, p in fn.named_parameters() if p.requires_grad]


def zeros_like_params(model: Any) -> dict[str, Any]:
    """A model's gradient that nothing flowed into: a zero per parameter."""
    return {n: torch.zeros_like(p) for n, p in _named_parameters(model)}


def add_params(a: Any, b: Any) -> Any:
    """Two gradients of one model's parameters added (a number is a zero)."""
    if not isinstance(a, dict):
        return b
    return {n: a[n] + b[n] for n in a}


def jvp_of(fn: Any, primals: tuple[Any, ...], tangents: tuple[Any, ...],
           keywords: Any = None) -> Any:
    """``fn(*primals)`` and its tangent along ``tangents`` (None: that argument is fixed), by
    ``torch.func.jvp``."""
    require_callable_of(fn, "torch", "PyTorch")
    moving = [i for i, t in enumerate(tangents) if t is not None]

    def of(*values: Any) -> Any:
        full = list(primals)
        for i, v in zip(moving, values):
            full[i] = v
        return _one_tensor(fn, call_recorded(fn, "PyTorch", *full, **(keywords or {})))
    points = tuple(torch.as_tensor(primals[i]) for i in moving)
    directions = tuple(torch.as_tensor(tangents[i]).to(p.dtype).expand_as(p)
                       for i, p in zip(moving, points))
    value, tangent = torch.func.jvp(of, points, directions)[:2]   # (has_aux=False: two)
    return value.detach(), tangent.detach()


def _one_tensor(fn: Any, out: Any) -> Any:
    if not isinstance(out, torch.Tensor):
        raise GradlabError(
            f"{getattr(fn, '__name__', type(fn).__name__)} returned a {type(out).__name__}: "
            f"gradlab differentiates a call it cannot read when it returns one tensor")
    return out
