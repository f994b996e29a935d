"""The chainable ``Tensor`` wrapper: ``astensor(x).square().sum().sqrt().raw``.

One class, written once against the flat namespace of :mod:`gradlab.tensor.backends`; each
framework gets a tiny subclass that names its namespace and binds that namespace's functions into
its hottest methods. A method is one namespace call plus one object creation, which is why the
wrapper stays within a few percent of raw calls (``bench/overhead.py`` measures it).
"""
from __future__ import annotations

import builtins
import types
from typing import TYPE_CHECKING, Any, Callable, ClassVar, Iterator, Sequence, Union

from ..errors import BackendError
from . import dtypes as _dtypes
from .detect import PYTHON, framework_of, require_framework
from .devices import device_label, device_of
from .registry import backend, get

Axis = Union[int, Sequence[int], None]
Shape = Union[int, Sequence[int]]
Other = Union["Tensor", float, int, bool, Any]

#: Methods build results with ``_new`` and a slot assignment rather than calling the class: it
#: skips a Python-level ``__init__`` frame, a third of the wrapper's cost on small tensors.
_new = object.__new__


class Tensor:
    """A framework value with one method set on every backend. ``.raw`` is the native value."""

    __slots__ = ("raw",)
    framework: ClassVar[str] = ""
    ops: ClassVar[types.ModuleType]
    #: NumPy defers to our reflected operators (``array + tensor`` calls ``__radd__``) instead of
    #: iterating the Tensor into an object array.
    __array_ufunc__ = None

    def __init__(self, raw: Any) -> None:
        self.raw = raw

    # --- identity, printing, conversion ----------------------------------------------------
    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.raw!r})"

    def __len__(self) -> int:
        shape = self.shape
        if not shape:
            raise TypeError("len() of a 0-d tensor")
        return int(shape[0])

    def __iter__(self) -> Iterator[Tensor]:
        for i in range(len(self)):
            yield self[i]

    def __bool__(self) -> bool:
        return bool(self.item())

    def __float__(self) -> float:
        return float(self.item())

    def __int__(self) -> int:
        return int(self.item())

    def __tf_tensor__(self, dtype: Any = None, name: Any = None) -> Any:
        # TensorFlow converts operands with this. Refusing makes ``tf_value + tensor`` fall back
        # to our ``__radd__`` (a Tensor, as with the other frameworks) instead of TensorFlow
        # iterating the Tensor element by element. TensorFlow's comparison operators have no
        # such fallback: ``tf_value < tensor`` raises this error.
        if self.framework != "tensorflow":
            raise BackendError(f"cannot combine a tensorflow value with a {self.framework} "
                               "tensor; convert one explicitly with gradlab.tensor.convert")
        raise BackendError(f"TensorFlow cannot take a gradlab {type(self).__name__} as an "
                           "operand; put the gradlab Tensor on the left, or pass tensor.raw")

    def numpy(self) -> Any:
        return self.ops.to_numpy(self.raw)

    def item(self) -> Any:
        return self.ops.item(self.raw)

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(self.ops.shape(self.raw))

    @property
    def ndim(self) -> int:
        return int(self.ops.ndim(self.raw))

    @property
    def size(self) -> int:
        return int(self.ops.size(self.raw))

    @property
    def dtype(self) -> _dtypes.DType:
        return self.ops.dtype(self.raw)  # type: ignore[no-any-return]

    @property
    def device(self) -> Any:
        return device_of(self.raw)

    @property
    def device_label(self) -> str:
        return device_label(self.raw, self.framework)

    def astype(self, dtype: Any) -> Tensor:
        t = _new(self.__class__)
        t.raw = self.ops.astype(self.raw, dtype)
        return t

    def float32(self) -> Tensor:
        return self.astype(_dtypes.float32)

    def float64(self) -> Tensor:
        return self.astype(_dtypes.float64)

    def bool(self) -> Tensor:
        return self.astype(_dtypes.bool_)

    # --- operands --------------------------------------------------------------------------
    def _other(self, other: Other) -> Any:
        """The raw value of the other operand; refuses a value from another framework."""
        if isinstance(other, Tensor):
            if other.__class__ is not self.__class__:
                raise BackendError(f"cannot combine a {self.framework} tensor with a "
                                   f"{other.framework} tensor; convert one explicitly")
            return other.raw
        t = type(other)
        if t is float or t is int or t is bool:
            return other
        fw = framework_of(other)
        if fw != self.framework and fw != PYTHON:
            raise BackendError(f"cannot combine a {self.framework} tensor with "
                               f"{t.__module__}.{t.__qualname__} ({fw or 'unsupported'})")
        return other

    def __add__(self, other: Other) -> Tensor:
        t = _new(self.__class__)
        t.raw = self.raw + self._other(other)
        return t

    def __radd__(self, other: Other) -> Tensor:
        t = _new(self.__class__)
        t.raw = self._other(other) + self.raw
        return t

    def __sub__(self, other: Other) -> Tensor:
        t = _new(self.__class__)
        t.raw = self.raw - self._other(other)
        return t

    def __rsub__(self, other: Other) -> Tensor:
        t = _new(self.__class__)
        t.raw = self._other(other) - self.raw
        return t

    def __mul__(self, other: Other) -> Tensor:
        t = _new(self.__class__)
        t.raw = self.raw * self._other(other)
        return t

    def __rmul__(self, other: Other) -> Tensor:
        t = _new(self.__class__)
        t.raw = self._other(other) * self.raw
        return t

    def __truediv__(self, other: Other) -> Tensor:
        t = _new(self.__class__)
        t.raw = self.raw / self._other(other)
        return t

    def __rtruediv__(self, other: Other) -> Tensor:
        t = _new(self.__class__)
        t.raw = self._other(other) / self.raw
        return t

    def __floordiv__(self, other: Other) -> Tensor:
        t = _new(self.__class__)
        t.raw = self.ops.floor_divide(self.raw, self._other(other))
        return t

    def __rfloordiv__(self, other: Other) -> Tensor:
        t = _new(self.__class__)
        t.raw = self.ops.floor_divide(self._other(other), self.raw)
        return t

    def __mod__(self, other: Other) -> Tensor:
        t = _new(self.__class__)
        t.raw = self.ops.mod(self.raw, self._other(other))
        return t

    def __rmod__(self, other: Other) -> Tensor:
        t = _new(self.__class__)
        t.raw = self.ops.mod(self._other(other), self.raw)
        return t

    def __pow__(self, other: Other) -> Tensor:
        t = _new(self.__class__)
        t.raw = self.raw ** self._other(other)
        return t

    def __rpow__(self, other: Other) -> Tensor:
        t = _new(self.__class__)
        t.raw = self._other(other) ** self.raw
        return t

    def __matmul__(self, other: Other) -> Tensor:
        t = _new(self.__class__)
        t.raw = self.ops.matmul(self.raw, self._other(other))
        return t

    def __rmatmul__(self, other: Other) -> Tensor:
        t = _new(self.__class__)
        t.raw = self.ops.matmul(self._other(other), self.raw)
        return t

    def __neg__(self) -> Tensor:
        t = _new(self.__class__)
        t.raw = -self.raw
        return t

    def __pos__(self) -> Tensor:
        return self

    def __abs__(self) -> Tensor:
        t = _new(self.__class__)
        t.raw = self.ops.abs(self.raw)
        return t

    def __lt__(self, other: Other) -> Tensor:
        t = _new(self.__class__)
        t.raw = self.ops.less(self.raw, self._other(other))
        return t

    def __le__(self, other: Other) -> Tensor:
        t = _new(self.__class__)
        t.raw = self.ops.less_equal(self.raw, self._other(other))
        return t

    def __gt__(self, other: Other) -> Tensor:
        t = _new(self.__class__)
        t.raw = self.ops.greater(self.raw, self._other(other))
        return t

    def __ge__(self, other: Other) -> Tensor:
        t = _new(self.__class__)
        t.raw = self.ops.greater_equal(self.raw, self._other(other))
        return t

    def __eq__(self, other: Other) -> Tensor:  # type: ignore[override]
        t = _new(self.__class__)
        t.raw = self.ops.equal(self.raw, self._other(other))
        return t

    def __ne__(self, other: Other) -> Tensor:  # type: ignore[override]
        t = _new(self.__class__)
        t.raw = self.ops.not_equal(self.raw, self._other(other))
        return t

    __hash__ = None  # type: ignore[assignment]

    def __getitem__(self, index: Any) -> Tensor:
        if isinstance(index, Tensor):
            index = index.raw
        elif isinstance(index, tuple):
            index = tuple(i.raw if isinstance(i, Tensor) else i for i in index)
        t = _new(self.__class__)
        t.raw = self.ops.getitem(self.raw, index)
        return t

    # --- one namespace call each (elementwise, reductions, inv, det): declared for type
    # checkers only, since tensor_class() gives each framework's class its own copies with the
    # function bound in (see _UNARY_METHODS) ---------------------------------------------------
    if TYPE_CHECKING:
        def abs(self) -> Tensor: ...
        def sign(self) -> Tensor: ...
        def sqrt(self) -> Tensor: ...
        def square(self) -> Tensor: ...
        def exp(self) -> Tensor: ...
        def expm1(self) -> Tensor: ...
        def log(self) -> Tensor: ...
        def log1p(self) -> Tensor: ...
        def log2(self) -> Tensor: ...
        def log10(self) -> Tensor: ...
        def sin(self) -> Tensor: ...
        def cos(self) -> Tensor: ...
        def tan(self) -> Tensor: ...
        def arcsin(self) -> Tensor: ...
        def arccos(self) -> Tensor: ...
        def arctan(self) -> Tensor: ...
        def sinh(self) -> Tensor: ...
        def cosh(self) -> Tensor: ...
        def tanh(self) -> Tensor: ...
        def arcsinh(self) -> Tensor: ...
        def arccosh(self) -> Tensor: ...
        def arctanh(self) -> Tensor: ...
        def sigmoid(self) -> Tensor: ...
        def softplus(self) -> Tensor: ...
        def relu(self) -> Tensor: ...
        def erf(self) -> Tensor: ...
        def floor(self) -> Tensor: ...
        def ceil(self) -> Tensor: ...
        def round(self) -> Tensor: ...
        def reciprocal(self) -> Tensor: ...
        def rsqrt(self) -> Tensor: ...
        def real(self) -> Tensor: ...
        def imag(self) -> Tensor: ...
        def conj(self) -> Tensor: ...
        def angle(self) -> Tensor: ...
        def isnan(self) -> Tensor: ...
        def isinf(self) -> Tensor: ...
        def isfinite(self) -> Tensor: ...
        def logical_not(self) -> Tensor: ...
        def inv(self) -> Tensor: ...
        def det(self) -> Tensor: ...
        def sum(self, axis: Axis = None, keepdims: builtins.bool = False) -> Tensor: ...
        def mean(self, axis: Axis = None, keepdims: builtins.bool = False) -> Tensor: ...
        def prod(self, axis: Axis = None, keepdims: builtins.bool = False) -> Tensor: ...
        def max(self, axis: Axis = None, keepdims: builtins.bool = False) -> Tensor: ...
        def min(self, axis: Axis = None, keepdims: builtins.bool = False) -> Tensor: ...
        def all(self, axis: Axis = None, keepdims: builtins.bool = False) -> Tensor: ...
        def any(self, axis: Axis = None, keepdims: builtins.bool = False) -> Tensor: ...
        def logsumexp(self, axis: Axis = None, keepdims: builtins.bool = False) -> Tensor: ...
        def argmax(self, axis: int | None = None, keepdims: builtins.bool = False) -> Tensor: ...
        def argmin(self, axis: int | None = None, keepdims: builtins.bool = False) -> Tensor: ...

    def logical_and(self, other: Other) -> Tensor:
        t = _new(self.__class__)
        t.raw = self.ops.logical_and(self.raw, self._other(other))
        return t

    def logical_or(self, other: Other) -> Tensor:
        t = _new(self.__class__)
        t.raw = self.ops.logical_or(self.raw, self._other(other))
        return t

    def pow(self, exponent: Other) -> Tensor:
        t = _new(self.__class__)
        t.raw = self.ops.power(self.raw, self._other(exponent))
        return t

    def maximum(self, other: Other) -> Tensor:
        t = _new(self.__class__)
        t.raw = self.ops.maximum(self.raw, self._other(other))
        return t

    def minimum(self, other: Other) -> Tensor:
        t = _new(self.__class__)
        t.raw = self.ops.minimum(self.raw, self._other(other))
        return t

    def arctan2(self, other: Other) -> Tensor:
        t = _new(self.__class__)
        t.raw = self.ops.arctan2(self.raw, self._other(other))
        return t

    def clip(self, a_min: Other, a_max: Other) -> Tensor:
        t = _new(self.__class__)
        t.raw = self.ops.clip(self.raw, self._other(a_min), self._other(a_max))
        return t

    def where(self, x: Other, y: Other) -> Tensor:
        """``x`` where this boolean tensor is true, else ``y``."""
        t = _new(self.__class__)
        t.raw = self.ops.where(self.raw, self._other(x), self._other(y))
        return t

    # --- reductions that take more than (axis, keepdims) ------------------------------------
    def var(self, axis: Axis = None, keepdims: builtins.bool = False, ddof: int = 0) -> Tensor:
        t = _new(self.__class__)
        t.raw = self.ops.var(self.raw, axis, keepdims=keepdims, ddof=ddof)
        return t

    def std(self, axis: Axis = None, keepdims: builtins.bool = False, ddof: int = 0) -> Tensor:
        t = _new(self.__class__)
        t.raw = self.ops.std(self.raw, axis, keepdims=keepdims, ddof=ddof)
        return t

    def cumsum(self, axis: int | None = None) -> Tensor:
        t = _new(self.__class__)
        t.raw = self.ops.cumsum(self.raw, axis)
        return t

    def norm(self, ord: Any = None, axis: Axis = None, keepdims: builtins.bool = False) -> Tensor:
        t = _new(self.__class__)
        t.raw = (self.ops.norm(self.raw, ord, axis, keepdims=True) if keepdims else
                 self.ops.norm(self.raw, ord, axis))
        return t

    @property
    def norms(self) -> _Norms:
        """EagerPy-style ``x.norms.l2(axis)``, ``.l1``, ``.linf``, ``.l0``, ``.lp(p)``."""
        return _Norms(self)

    # --- shapes and indexing ---------------------------------------------------------------
    def reshape(self, shape: Shape) -> Tensor:
        t = _new(self.__class__)
        t.raw = self.ops.reshape(self.raw, shape)
        return t

    def transpose(self, axes: Sequence[int] | None = None) -> Tensor:
        t = _new(self.__class__)
        t.raw = self.ops.transpose(self.raw, axes)
        return t

    @property
    def T(self) -> Tensor:
        return self.transpose()

    def swapaxes(self, axis1: int, axis2: int) -> Tensor:
        t = _new(self.__class__)
        t.raw = self.ops.swapaxes(self.raw, axis1, axis2)
        return t

    def moveaxis(self, source: int, destination: int) -> Tensor:
        t = _new(self.__class__)
        t.raw = self.ops.moveaxis(self.raw, source, destination)
        return t

    def expand_dims(self, axis: Axis) -> Tensor:
        t = _new(self.__class__)
        t.raw = self.ops.expand_dims(self.raw, axis)
        return t

    def squeeze(self, axis: Axis = None) -> Tensor:
        t = _new(self.__class__)
        t.raw = self.ops.squeeze(self.raw, axis)
        return t

    def flatten(self, start: int = 0, end: int = -1) -> Tensor:
        t = _new(self.__class__)
        t.raw = self.ops.flatten(self.raw, start, end)
        return t

    def broadcast_to(self, shape: Shape) -> Tensor:
        t = _new(self.__class__)
        t.raw = self.ops.broadcast_to(self.raw, shape)
        return t

    def sum_to(self, shape: Shape) -> Tensor:
        t = _new(self.__class__)
        t.raw = self.ops.sum_to(self.raw, shape)
        return t

    def tile(self, reps: Shape) -> Tensor:
        t = _new(self.__class__)
        t.raw = self.ops.tile(self.raw, reps)
        return t

    def flip(self, axis: Axis = None) -> Tensor:
        t = _new(self.__class__)
        t.raw = self.ops.flip(self.raw, axis)
        return t

    def pad(self, pad_width: Any, mode: str = "constant", value: float = 0) -> Tensor:
        t = _new(self.__class__)
        t.raw = self.ops.pad(self.raw, pad_width, mode, value)
        return t

    def split(self, indices_or_sections: Any, axis: int = 0) -> list[Tensor]:
        return [self.__class__(p) for p in self.ops.split(self.raw, indices_or_sections, axis)]

    def unstack(self, axis: int = 0) -> list[Tensor]:
        return [self.__class__(p) for p in self.ops.unstack(self.raw, axis)]

    def take(self, indices: Other, axis: int | None = None) -> Tensor:
        t = _new(self.__class__)
        t.raw = self.ops.take(self.raw, self._other(indices), axis)
        return t

    def take_along_axis(self, indices: Other, axis: int) -> Tensor:
        t = _new(self.__class__)
        t.raw = self.ops.take_along_axis(self.raw, self._other(indices), axis)
        return t

    def index_update(self, index: Any, values: Other) -> Tensor:
        return self.__class__(self.ops.index_update(self.raw, _raw_index(index),
                                                    self._other(values)))

    def index_add(self, index: Any, values: Other) -> Tensor:
        return self.__class__(self.ops.index_add(self.raw, _raw_index(index),
                                                 self._other(values)))

    def sort(self, axis: int = -1) -> Tensor:
        t = _new(self.__class__)
        t.raw = self.ops.sort(self.raw, axis)
        return t

    def argsort(self, axis: int = -1) -> Tensor:
        t = _new(self.__class__)
        t.raw = self.ops.argsort(self.raw, axis)
        return t

    def topk(self, k: int, sorted: builtins.bool = True) -> tuple[Tensor, Tensor]:
        values, indices = self.ops.topk(self.raw, k, sorted)
        return self.__class__(values), self.__class__(indices)

    # --- linear algebra --------------------------------------------------------------------
    def matmul(self, other: Other) -> Tensor:
        t = _new(self.__class__)
        t.raw = self.ops.matmul(self.raw, self._other(other))
        return t

    def dot(self, other: Other) -> Tensor:
        t = _new(self.__class__)
        t.raw = self.ops.dot(self.raw, self._other(other))
        return t

    def outer(self, other: Other) -> Tensor:
        t = _new(self.__class__)
        t.raw = self.ops.outer(self.raw, self._other(other))
        return t

    def slogdet(self) -> tuple[Tensor, Tensor]:
        sign, logabsdet = self.ops.slogdet(self.raw)
        return self.__class__(sign), self.__class__(logabsdet)

    # --- neural-network helpers ------------------------------------------------------------
    def softmax(self, axis: int = -1) -> Tensor:
        t = _new(self.__class__)
        t.raw = self.ops.softmax(self.raw, axis)
        return t

    def log_softmax(self, axis: int = -1) -> Tensor:
        t = _new(self.__class__)
        t.raw = self.ops.log_softmax(self.raw, axis)
        return t

    def crossentropy(self, labels: Other) -> Tensor:
        """Per-example cross-entropy of these logits against integer ``labels``."""
        t = _new(self.__class__)
        t.raw = self.ops.crossentropy(self.raw, self._other(labels))
        return t

    def onehot_like(self, indices: Other, *, value: float = 1) -> Tensor:
        """A tensor shaped like this one: ``value`` at ``indices`` along the last axis, else 0."""
        hot = self.ops.one_hot(self._other(indices), self.shape[-1], self.dtype)
        t = _new(self.__class__)
        t.raw = hot * value
        return t

    # --- creation in this tensor's framework -----------------------------------------------
    def zeros_like(self) -> Tensor:
        t = _new(self.__class__)
        t.raw = self.ops.zeros_like(self.raw)
        return t

    def ones_like(self) -> Tensor:
        t = _new(self.__class__)
        t.raw = self.ops.ones_like(self.raw)
        return t

    def full_like(self, fill_value: float) -> Tensor:
        t = _new(self.__class__)
        t.raw = self.ops.full_like(self.raw, fill_value)
        return t

    def zeros(self, shape: Shape) -> Tensor:
        t = _new(self.__class__)
        t.raw = self.ops.zeros(shape, self.dtype)
        return t

    def ones(self, shape: Shape) -> Tensor:
        t = _new(self.__class__)
        t.raw = self.ops.ones(shape, self.dtype)
        return t

    def full(self, shape: Shape, fill_value: float) -> Tensor:
        t = _new(self.__class__)
        t.raw = self.ops.full(shape, fill_value, self.dtype)
        return t

    def arange(self, start: int, stop: int | None = None, step: int = 1) -> Tensor:
        t = _new(self.__class__)
        t.raw = self.ops.arange(start, stop, step)
        return t

    def uniform(self, shape: Shape, low: float = 0.0, high: float = 1.0, *,
                seed: int = 0) -> Tensor:
        t = _new(self.__class__)
        t.raw = self.ops.uniform(shape, low, high, seed=seed, dtype=self.dtype)
        return t

    def normal(self, shape: Shape, mean: float = 0.0, std: float = 1.0, *,
               seed: int = 0) -> Tensor:
        t = _new(self.__class__)
        t.raw = self.ops.normal(shape, mean, std, seed=seed, dtype=self.dtype)
        return t

    def meshgrid(self, *others: Other, indexing: str = "xy") -> list[Tensor]:
        raws = [self.raw] + [self._other(o) for o in others]
        return [self.__class__(g) for g in self.ops.meshgrid(*raws, indexing=indexing)]

    # --- gradients through the framework's own autodiff ------------------------------------
    def value_and_grad(self, f: Callable[..., Any], *args: Any) -> tuple[Any, Any]:
        """Value and gradient of ``f(self, *args)`` with respect to this tensor, computed by the
        framework's own autodiff (``f`` takes and returns raw values)."""
        from .autodiff import value_and_grad
        value, grad = value_and_grad(f, self.raw, *[native(a) for a in args], wrt=0)
        return value, self.__class__(grad)


class _Norms:
    __slots__ = ("t",)

    def __init__(self, t: Tensor) -> None:
        self.t = t

    def l0(self, axis: Axis = None, keepdims: builtins.bool = False) -> Tensor:
        return self.t.norm(0, axis, keepdims)

    def l1(self, axis: Axis = None, keepdims: builtins.bool = False) -> Tensor:
        return self.t.norm(1, axis, keepdims)

    def l2(self, axis: Axis = None, keepdims: builtins.bool = False) -> Tensor:
        return self.t.norm(2, axis, keepdims)

    def linf(self, axis: Axis = None, keepdims: builtins.bool = False) -> Tensor:
        return self.t.norm(float("inf"), axis, keepdims)

    def lp(self, p: float, axis: Axis = None, keepdims: builtins.bool = False) -> Tensor:
        return self.t.norm(p, axis, keepdims)


def _raw_index(index: Any) -> Any:
    if isinstance(index, Tensor):
        return index.raw
    if isinstance(index, tuple):
        return tuple(i.raw if isinstance(i, Tensor) else i for i in index)
    return index


_classes: dict[str, type[Tensor]] = {}

#: Methods that are one namespace call on ``self.raw`` (unary) or on ``(self.raw, axis)``
#: (reductions). Each framework's class gets copies with its namespace's function bound in, which
#: saves the ``self.ops.<name>`` lookups on chains of small-tensor calls (bench/HISTORY.md).
_UNARY_METHODS = """abs sign sqrt square exp expm1 log log1p log2 log10 sin cos tan arcsin arccos
arctan sinh cosh tanh arcsinh arccosh arctanh sigmoid softplus relu erf floor ceil round reciprocal
rsqrt isnan isinf isfinite logical_not inv det real imag conj angle""".split()
_REDUCTION_METHODS = "sum mean prod max min all any logsumexp argmax argmin".split()


def _bind_unary(fn: Callable[[Any], Any]) -> Callable[[Tensor], Tensor]:
    def method(self: Tensor) -> Tensor:
        t = _new(self.__class__)
        t.raw = fn(self.raw)
        return t
    return method


def _bind_reduction(fn: Callable[..., Any], whole: Callable[[Any], Any] | None = None
                    ) -> Callable[..., Tensor]:
    """``keepdims`` is passed only when true: an explicit ``keepdims=False`` costs NumPy's and
    PyTorch's argument parsing (bench/HISTORY.md). ``whole``: the framework's own function where
    its one-argument call reduces every axis (``torch.sum``), called directly then: the adapter's
    frame is a fifth of a small sum."""
    if whole is not None:
        def fast(self: Tensor, axis: Any = None, keepdims: builtins.bool = False) -> Tensor:
            t = _new(self.__class__)
            if axis is None and not keepdims:
                t.raw = whole(self.raw)
            else:
                t.raw = fn(self.raw, axis, keepdims=True) if keepdims else fn(self.raw, axis)
            return t
        return fast

    def method(self: Tensor, axis: Any = None, keepdims: builtins.bool = False) -> Tensor:
        t = _new(self.__class__)
        t.raw = fn(self.raw, axis, keepdims=True) if keepdims else fn(self.raw, axis)
        return t
    return method


def tensor_class(framework: str) -> type[Tensor]:
    """The ``Tensor`` subclass of one framework (made on first use)."""
    try:
        return _classes[framework]
    except KeyError:
        pass
    title = get(framework).title
    ops = backend(framework)
    namespace: dict[str, Any] = {"__slots__": (), "framework": framework, "ops": ops}
    whole = getattr(ops, "WHOLE_REDUCTIONS", {})
    tensor_only = getattr(ops, "TENSOR_ONLY", {})
    for names, bind in ((_UNARY_METHODS, _bind_unary), (_REDUCTION_METHODS, _bind_reduction)):
        for name in names:
            fn = tensor_only.get(name) or getattr(ops, name)
            method = bind(fn) if name not in whole else _bind_reduction(fn, whole[name])
            method.__name__ = name
            method.__qualname__ = f"{title}Tensor.{name}"
            namespace[name] = method
    cls = type(f"{title}Tensor", (Tensor,), namespace)
    _classes[framework] = cls
    return cls


#: The Tensor class that wraps values of each type seen (None for Tensors themselves): the hot
#: path of astensor is one dictionary lookup.
_class_of_type: dict[type, type[Tensor] | None] = {}


def astensor(x: Any) -> Tensor:
    """Wrap a native value (a Tensor is returned as it is). Python numbers become NumPy."""
    try:
        cls = _class_of_type[type(x)]
    except KeyError:
        return _astensor_first_of_type(x)
    if cls is None:
        return x  # type: ignore[no-any-return]  # a Tensor already
    t = _new(cls)
    t.raw = x
    return t


def _astensor_first_of_type(x: Any) -> Tensor:
    if isinstance(x, Tensor):
        _class_of_type[type(x)] = None
        return x
    fw = require_framework(x)
    if fw == PYTHON:  # not cached: Python numbers are converted
        import numpy as np
        return tensor_class("numpy")(np.asarray(x))
    cls = _class_of_type[type(x)] = tensor_class(fw)
    return cls(x)


def astensors(*xs: Any) -> tuple[Tensor, ...]:
    return tuple(astensor(x) for x in xs)


def native(x: Any) -> Any:
    """The inverse of :func:`astensor`: the raw value of a Tensor, anything else unchanged
    (lists, tuples and dicts are looked into)."""
    if isinstance(x, Tensor):
        return x.raw
    if isinstance(x, (list, tuple)):
        return type(x)(native(v) for v in x)
    if isinstance(x, dict):
        return {k: native(v) for k, v in x.items()}
    return x


def istensor(x: Any) -> bool:
    return isinstance(x, Tensor)
