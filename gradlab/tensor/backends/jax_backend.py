"""JAX primitives: ``jax.numpy`` already speaks NumPy's signatures, so nearly every name is JAX's
own function; indexed updates use ``x.at[...]``. Works eagerly and under ``jax.jit``.
:class:`JaxBackend` (``BACKEND``) answers for devices, conversions, the seed and ``jax.grad``."""
from __future__ import annotations

import builtins
import operator
from typing import Any, Callable

import jax
import jax.numpy as jnp
import jax.scipy.special as jsp
import numpy as np

from .. import dtypes as _dtypes, einsum_terms
from ...errors import GradlabError
from ..detect import call_recorded, require_callable_of
from .base import Backend
from .common import NUMBERS, PadMode


def native_dtype(dtype: Any) -> Any:
    if dtype is None:
        return None
    if isinstance(dtype, _dtypes.DType):
        return jnp.bfloat16 if dtype.name == "bfloat16" else jnp.dtype(dtype.name)
    return jnp.dtype(dtype)


# --- elementwise ---------------------------------------------------------------------------
abs, sign, sqrt, square, exp, expm1 = jnp.abs, jnp.sign, jnp.sqrt, jnp.square, jnp.exp, jnp.expm1
log, log1p, log2, log10 = jnp.log, jnp.log1p, jnp.log2, jnp.log10
sin, cos, tan, arcsin, arccos, arctan = (jnp.sin, jnp.cos, jnp.tan, jnp.arcsin, jnp.arccos,
                                         jnp.arctan)
sinh, cosh, tanh, arcsinh, arccosh, arctanh = (jnp.sinh, jnp.cosh, jnp.tanh, jnp.arcsinh,
                                               jnp.arccosh, jnp.arctanh)
sigmoid, softplus, relu, erf = jax.nn.sigmoid, jax.nn.softplus, jax.nn.relu, jsp.erf
floor, ceil, round, negative, reciprocal = (jnp.floor, jnp.ceil, jnp.round, jnp.negative,
                                            jnp.reciprocal)
isnan, isinf, isfinite, logical_not = jnp.isnan, jnp.isinf, jnp.isfinite, jnp.logical_not
add, subtract, multiply, divide, power = operator.add, operator.sub, operator.mul, \
    operator.truediv, operator.pow
arctan2 = jnp.arctan2


def _ints_stay_ints(array_fn: Callable[[Any, Any], Any], of_ints: Callable[[int, int], int]
                    ) -> Callable[[Any, Any], Any]:
    """``array_fn``, except that two Python ints give a Python int, as the builtin they stand
    for does: ``n = max(len(x) - 2, 1)`` is a count the code goes on to use as one
    (``[0.0] * n``, which no JAX array can repeat)."""
    def op(x: Any, y: Any) -> Any:
        if type(x) is int and type(y) is int:
            return of_ints(x, y)
        return array_fn(x, y)
    op.__name__ = op.__qualname__ = array_fn.__name__
    op.__doc__ = array_fn.__doc__
    return op


maximum = _ints_stay_ints(jnp.maximum, builtins.max)
minimum = _ints_stay_ints(jnp.minimum, builtins.min)
equal, not_equal, less, less_equal = jnp.equal, jnp.not_equal, jnp.less, jnp.less_equal
greater, greater_equal, logical_and, logical_or = (jnp.greater, jnp.greater_equal,
                                                   jnp.logical_and, jnp.logical_or)
floor_divide, mod = jnp.floor_divide, jnp.mod
real, imag, conj, angle = jnp.real, jnp.imag, jnp.conj, jnp.angle
matmul, dot, outer = jnp.matmul, jnp.dot, jnp.outer
where, clip = jnp.where, jnp.clip

# --- reductions ----------------------------------------------------------------------------
sum, mean, prod, max, min, all, any = (jnp.sum, jnp.mean, jnp.prod, jnp.max, jnp.min, jnp.all,
                                       jnp.any)
var, std, cumsum, argmax, argmin = jnp.var, jnp.std, jnp.cumsum, jnp.argmax, jnp.argmin
cumprod = jnp.cumprod


def logsumexp(x: Any, axis: Any = None, *, keepdims: bool = False) -> Any:
    return jsp.logsumexp(x, axis=axis, keepdims=keepdims)


# --- shapes and indexing -------------------------------------------------------------------
reshape, transpose, swapaxes, moveaxis = jnp.reshape, jnp.transpose, jnp.swapaxes, jnp.moveaxis
expand_dims, squeeze, concatenate = jnp.expand_dims, jnp.squeeze, jnp.concatenate
split, broadcast_to, tile = jnp.split, jnp.broadcast_to, jnp.tile


def flip(x: Any, axis: Any = None) -> Any:
    """jnp.flip; a 0-d value is itself (as torch flips one, see the NumPy backend's)."""
    return x if jnp.ndim(x) == 0 else jnp.flip(x, axis)


def repeat(x: Any, repeats: Any, axis: Any = None) -> Any:
    return jnp.repeat(x, repeats, axis)


def take(x: Any, indices: Any, axis: Any = None) -> Any:
    return jnp.take(x, jnp.asarray(indices), axis)   # (NumPy's takes a list of indices too)
take_along_axis, sort = jnp.take_along_axis, jnp.sort


def argsort(x: Any, axis: int = -1) -> Any:
    x = jnp.asarray(x)
    # NumPy sorts a number as a one-element vector: [0]
    return jnp.argsort(x.reshape(1) if x.ndim == 0 else x, axis=axis, stable=True)
meshgrid = jnp.meshgrid
softmax, log_softmax = jax.nn.softmax, jax.nn.log_softmax


def pad(x: Any, pad_width: Any, mode: PadMode = "constant", constant_values: Any = 0) -> Any:
    # jnp.pad takes constant_values by keyword only, and only for mode='constant'
    if mode == "constant":
        return jnp.pad(x, pad_width, mode, constant_values=constant_values)
    return jnp.pad(x, pad_width, mode)


def _index(index: Any) -> Any:
    """JAX refuses lists and ranges as indices (``p[range(n), labels]``); NumPy reads them as
    integer (or boolean) arrays."""
    if type(index) in (list, range):
        return jnp.asarray(index)
    if type(index) is tuple and builtins.any(type(i) in (list, range) for i in index):
        return tuple(jnp.asarray(i) if type(i) in (list, range) else i for i in index)
    return index


def getitem(x: Any, index: Any) -> Any:
    if isinstance(x, NUMBERS):
        x = array(x)      # a number gradlab holds where NumPy has a NumPy scalar: v[None]
    return x[_index(index)]


def stack(xs: Any, axis: int = 0) -> Any:
    """``jnp.stack`` that also takes lists of lists, as ``np.array(rows)`` does: each inner list
    is stacked first."""
    return jnp.stack([stack(x) if type(x) in (list, tuple) else x for x in xs], axis)


def unstack(x: Any, axis: int = 0) -> list[Any]:
    return list(jnp.moveaxis(x, axis, 0)) if axis else list(x)


def index_update(x: Any, index: Any, values: Any) -> Any:
    return jnp.asarray(x).at[_index(index)].set(values)


def index_add(x: Any, index: Any, values: Any) -> Any:
    # JAX reads an index past the end as the last entry (x[5] of 4 entries is x[3]): the
    # gradient goes back there too, where .add's default would drop it
    return jnp.asarray(x).at[_index(index)].add(values, mode="clip")


def topk(x: Any, k: int, sorted: bool = True) -> tuple[Any, Any]:
    values, indices = jax.lax.top_k(x, k)  # always sorted; int32 indices
    return values, indices.astype(_default_int())


def _default_int() -> Any:
    return jax.dtypes.canonicalize_dtype(np.int64)  # int64, or int32 without jax_enable_x64


def _default_float() -> Any:
    return jax.dtypes.canonicalize_dtype(np.float64)


# --- linear algebra ------------------------------------------------------------------------
svd = jnp.linalg.svd     # (u, s, vh), for adjoint_helpers.adjugate
inv, det, slogdet, solve = (jnp.linalg.inv, jnp.linalg.det, jnp.linalg.slogdet,
                             jnp.linalg.solve)


def einsum(subscripts: Any, xs: Any) -> Any:
    return jnp.einsum(einsum_terms.checked(subscripts), *xs)


# --- creation ------------------------------------------------------------------------------
def zeros(shape: Any, dtype: Any = None) -> Any:
    return jnp.zeros(shape, native_dtype(dtype))


def ones(shape: Any, dtype: Any = None) -> Any:
    return jnp.ones(shape, native_dtype(dtype))


def full(shape: Any, fill_value: Any, dtype: Any = None) -> Any:
    return jnp.full(shape, fill_value, native_dtype(dtype))


def zeros_like(x: Any, dtype: Any = None) -> Any:
    return jnp.zeros_like(x, native_dtype(dtype))


def ones_like(x: Any, dtype: Any = None) -> Any:
    return jnp.ones_like(x, native_dtype(dtype))


def full_like(x: Any, fill_value: Any, dtype: Any = None) -> Any:
    return jnp.full_like(x, fill_value, native_dtype(dtype))


def arange(start: Any, stop: Any = None, step: Any = 1, dtype: Any = None) -> Any:
    return jnp.arange(start, stop, step, native_dtype(dtype))


def linspace(start: Any, stop: Any, num: int = 50, dtype: Any = None) -> Any:
    return jnp.linspace(start, stop, num, dtype=native_dtype(dtype))


def eye(n: int, m: Any = None, dtype: Any = None) -> Any:
    return jnp.eye(n, m, dtype=native_dtype(dtype))


def array(values: Any, dtype: Any = None) -> Any:
    return jnp.asarray(values, native_dtype(dtype))


def one_hot(indices: Any, num_classes: int, dtype: Any = None) -> Any:
    return jax.nn.one_hot(indices, num_classes, dtype=native_dtype(dtype) or _default_float())


def uniform(shape: Any, low: float = 0.0, high: float = 1.0, *, seed: int = 0,
            dtype: Any = None) -> Any:
    return jax.random.uniform(jax.random.PRNGKey(seed), shape, native_dtype(dtype) or float,
                              low, high)


def normal(shape: Any, mean: float = 0.0, std: float = 1.0, *, seed: int = 0,
           dtype: Any = None) -> Any:
    return jax.random.normal(jax.random.PRNGKey(seed), shape,
                             native_dtype(dtype) or float) * std + mean


# --- inspection and conversion ---------------------------------------------------------------
shape, size, ndim = jnp.shape, jnp.size, jnp.ndim


def astype(x: Any, dtype: Any) -> Any:
    return jnp.asarray(x).astype(native_dtype(dtype))


def to_numpy(x: Any) -> Any:
    return np.asarray(x)


def item(x: Any) -> Any:
    return np.asarray(x).item()


stop_gradient = jax.lax.stop_gradient


# --- matmul's adjoint as dot_general, which contracts any axis ------------------------------
# The generic halves (adjoint_helpers) transpose, and write the outer product as a broadcast
# multiply; XLA keeps both as they are. As one dot_general each, a recurrent step under jax.jit
# compiles to what jax.grad's own program does (bench/HISTORY.md). Other ranks fall back on the
# generic halves (generic_matmul_grad_x/y in the namespace).
generic_matmul_grad_x: Any
generic_matmul_grad_y: Any
_NO_BATCH = ((), ())


def _dot(a: Any, b: Any, contract: tuple[tuple[int, ...], tuple[int, ...]]) -> Any:
    dt = jnp.result_type(a, b)      # lax, unlike jnp, does not promote mixed dtypes
    return jax.lax.dot_general(jnp.asarray(a, dt), jnp.asarray(b, dt), (contract, _NO_BATCH))


def matmul_grad_x(dz: Any, x: Any, y: Any) -> Any:
    """d(x @ y)/dx applied to ``dz``: ``dz @ y.T``, or the outer product for a vector y."""
    nx, ny, nz = jnp.ndim(x), jnp.ndim(y), jnp.ndim(dz)
    if nx == 2 and ny == 2 and nz == 2:
        return _dot(dz, y, ((1,), (1,)))
    if nx == 2 and ny == 1 and nz == 1:
        return _dot(dz, y, ((), ()))
    return generic_matmul_grad_x(dz, x, y)


def matmul_grad_y(dz: Any, x: Any, y: Any) -> Any:
    """d(x @ y)/dy applied to ``dz``: ``x.T @ dz`` without the transpose."""
    if jnp.ndim(x) == 2 and jnp.ndim(dz) == jnp.ndim(y) and jnp.ndim(y) in (1, 2):
        return _dot(x, dz, ((0,), (0,)))
    return generic_matmul_grad_y(dz, x, y)


class JaxBackend(Backend):
    name, title, reference = "jax", "JAX", "jax.grad"
    updates_in_place = False        # JAX arrays never change (under jit, XLA updates in place)
    casts_like_numpy = True         # exp of a bool: float32 (NumPy: float16)

    def is_traced(self, value: Any) -> bool:
        return type(value).__module__.startswith("jax._src")   # a tracer inside jax.jit

    def devices(self) -> list[str]:
        try:
            gpus = jax.devices("gpu")
        except RuntimeError:
            gpus = []
        return ["cpu"] + [f"gpu:{d.id}" for d in gpus if d.platform != "cpu"]

    def device_of(self, x: Any) -> Any:
        try:
            devices = x.devices()
        except Exception:  # a tracer inside jax.jit has no device yet
            return "traced"
        return next(iter(devices))

    def device_label(self, device: Any) -> str:
        if isinstance(device, str):
            return device
        platform = getattr(device, "platform", "cpu")
        if platform == "cpu":
            return "cpu"
        return f"{platform}:{getattr(device, 'id', 0)} · {getattr(device, 'device_kind', '')}"

    def synchronize(self, x: Any) -> None:
        x.block_until_ready()

    def from_numpy(self, array: Any) -> Any:
        return jnp.asarray(array)

    def to_device(self, x: Any, device: Any) -> Any:
        if isinstance(device, str):
            kind, _, index = device.partition(":")
            device = jax.devices("gpu" if kind in ("cuda", "gpu") else kind)[int(index or 0)]
        return jax.device_put(x, device)

    def from_dlpack(self, view: Any) -> Any:
        return jnp.from_dlpack(view)

    def value_and_grad(self, f: Callable[..., Any], args: tuple[Any, ...],
                       indices: tuple[int, ...]) -> tuple[Any, tuple[Any, ...]]:
        return jax.value_and_grad(f, argnums=indices)(*args)  # type: ignore[no-any-return]


BACKEND = JaxBackend()


# --- calls gradlab cannot read (codegen/opaque.py): jax.vjp, jax.jvp -----------------------------
def vjp_of(fn: Any, *args: Any, wrt: Any = None, keywords: Any = None,
           params: bool = False) -> Any:
    """``fn(*args)``, and ``backward(g)``: its vector-Jacobian product with respect to the
    arguments at ``wrt`` (all by default) and, with ``params``, to ``fn`` itself (a pytree of
    arrays, as an Equinox module: its gradient is a pytree of the same structure, first), one
    gradient or a tuple, by ``jax.vjp``."""
    require_callable_of(fn, "jax", "JAX")
    wrt = tuple(range(len(args))) if wrt is None else tuple(wrt)
    if params and not jax.tree_util.tree_leaves(fn):
        raise GradlabError(
            f"a gradient with respect to {getattr(fn, '__name__', type(fn).__name__)}, which "
            f"holds no arrays: gradlab gives one for a callable pytree (an Equinox or Flax NNX "
            f"module); for a Flax linen module call model.apply(params, x) with params as an "
            f"argument")

    leaves, tree = jax.tree_util.tree_flatten(fn) if params else ([], None)
    moving = [i for i, leaf in enumerate(leaves) if _inexact_array(leaf)]

    def of(*values: Any) -> Any:
        full = list(args)
        call = fn
        if params:       # the module with its float arrays from values[0], the rest as it is
            held = list(leaves)
            for i, v in zip(moving, values[0]):
                held[i] = v
            call = jax.tree_util.tree_unflatten(tree, held)
        for i, v in zip(wrt, values[1:] if params else values):
            full[i] = v
        return _one_array(fn, call_recorded(call, "JAX", *full, **(keywords or {})))
    out, pullback = jax.vjp(of, *([[leaves[i] for i in moving]] if params else []),
                            *[args[i] for i in wrt])

    def backward(g: Any) -> Any:
        grads = list(pullback(jnp.broadcast_to(jnp.asarray(g, dtype=out.dtype),
                                               jnp.shape(out))))
        if params:       # a gradient of the module's structure: None where no array is
            held: list[Any] = [None] * len(leaves)
            for i, d in zip(moving, grads[0]):
                held[i] = d
            grads[0] = jax.tree_util.tree_unflatten(tree, held)
        return grads[0] if len(grads) == 1 else tuple(grads)
    return out, backward


def _inexact_array(leaf: Any) -> bool:
    """A leaf a gradient flows to: a float or complex array (an Equinox module also holds
    functions, ints and flags, which ``jax.vjp`` would refuse)."""
    return hasattr(leaf, "dtype") and hasattr(leaf, "shape") and (
        jnp.issubdtype(leaf.dtype, jnp.inexact))


def jvp_of(fn: Any, primals: tuple[Any, ...], tangents: tuple[Any, ...],
           keywords: Any = None) -> Any:
    """``fn(*primals)`` and its tangent along ``tangents`` (None: that argument is fixed)."""
    require_callable_of(fn, "jax", "JAX")
    moving = [i for i, t in enumerate(tangents) if t is not None]

    def of(*values: Any) -> Any:
        full = list(primals)
        for i, v in zip(moving, values):
            full[i] = v
        return _one_array(fn, call_recorded(fn, "JAX", *full, **(keywords or {})))
    points = tuple(jnp.asarray(primals[i]) for i in moving)
    directions = tuple(jnp.broadcast_to(jnp.asarray(tangents[i], dtype=p.dtype), p.shape)
                       for i, p in zip(moving, points))
    return jax.jvp(of, points, directions)


def zeros_like_params(model: Any) -> Any:
    """A model's gradient that nothing flowed into: zeros of its pytree's structure (None
    where it holds no float array, as :func:`vjp_of` gives)."""
    return jax.tree_util.tree_map(
        lambda leaf: jnp.zeros_like(leaf) if _inexact_array(leaf) else None, model)


def add_params(a: Any, b: Any) -> Any:
    """Two gradients of one model added, leaf by leaf (a number is a zero)."""
    if isinstance(a, (int, float)):
        return b
    return jax.tree_util.tree_map(operator.add, a, b)


def _one_array(fn: Any, out: Any) -> Any:
    if not hasattr(out, "shape") or isinstance(out, (tuple, list, dict)):
        raise GradlabError(
            f"{getattr(fn, '__name__', type(fn).__name__)} returned a {type(out).__name__}: "
            f"gradlab differentiates a call it cannot read when it returns one array")
    return out
