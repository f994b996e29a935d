"""Primitives written once against a namespace's own operations, and small helpers the backends
share.

Frameworks differ in what they ship (NumPy has no ``logsumexp``, TensorFlow no ``flatten``...).
The generic formulas below (the table :data:`GENERIC`) fill those gaps from a namespace's other
primitives, so each formula exists in one place. They are templates: written against ``gl``, as
generated code is, and bound to each backend's namespace when it is made (see
:mod:`.namespace`), where ``gl`` is that namespace. A backend that defines a primitive itself
(the framework has a faster or more accurate one) keeps its own. Called from this module
directly, a template has no ``gl`` and fails.
"""
from __future__ import annotations

import math
from typing import Any, Callable, Literal

import numpy as _numpy

from ...errors import GradlabError
from .. import dtypes as _dtypes

#: The namespace a template is bound to (set in each bound copy, never here).
gl: Any

#: NumPy's ``pad`` modes that every backend implements.
PadMode = Literal["constant", "edge", "reflect", "symmetric", "wrap"]


def is_basic_index(index: Any) -> bool:
    """True for indices made of ints, slices, None and Ellipsis (no arrays, no duplicates)."""
    items = index if type(index) is tuple else (index,)
    return all(i is None or i is Ellipsis or type(i) in (int, slice) for i in items)


def normalize_axes(axis: Any, ndim: int) -> tuple[int, ...]:
    """Axes as a sorted tuple of non-negative ints; ``None`` means every axis. A 0-d value has
    none, whichever it is reduced over (NumPy reduces one over axis 0 or -1)."""
    if axis is None or ndim == 0:
        return tuple(range(ndim))
    if isinstance(axis, (tuple, list)):
        return tuple(sorted(a % ndim for a in axis))
    return (axis % ndim,)


def pad_pairs(pad_width: Any, ndim: int) -> list[tuple[int, int]]:
    """NumPy's ``pad_width`` forms (n, (b, a), ((b, a),), per-axis pairs) as one pair per axis."""
    if isinstance(pad_width, int):
        return [(pad_width, pad_width)] * ndim
    pw = list(pad_width)
    if len(pw) == 2 and isinstance(pw[0], int):
        return [(pw[0], pw[1])] * ndim
    if len(pw) == 1:
        first = pw[0]
        pair = (first, first) if isinstance(first, int) else (first[0], first[1])
        return [pair] * ndim
    return [(int(p[0]), int(p[1])) for p in pw]


def pad_indices(n: int, before: int, after: int, mode: PadMode) -> list[int]:
    """Which of an axis' ``n`` positions each position of the padded axis copies, for NumPy's
    non-constant modes ('edge', 'reflect', 'symmetric', 'wrap'). Shapes are static, so this is
    plain Python; a backend turns it into one gather along the axis."""
    import numpy as np
    return [int(i) for i in np.pad(np.arange(n), (before, after), mode=mode)]


# --- generic formulas (templates: ``gl`` is the namespace they are bound to) -------------------
def logsumexp_shift(x: Any, axis: Any = None, *, keepdims: bool = False) -> Any:
    """The maximum, or 0 where it is infinite (a row of -inf must give -inf, not nan), or 0
    for an empty array: what logsumexp subtracts before ``exp``. A Python number (a loop
    counter) is its own maximum, in float64 as NumPy reads it (torch's max and TensorFlow's
    isfinite take no int)."""
    if type(x) is int or type(x) is float:
        return float(x) if math.isfinite(x) else 0.0
    if 0 in tuple(gl.shape(x)):
        return gl.sum(gl.zeros_like(x), axis=axis, keepdims=keepdims)
    m = gl.stop_gradient(_inexact(gl.max(x, axis=axis, keepdims=keepdims)))
    return gl.where(gl.isfinite(m), m, gl.zeros_like(m))     # (bool - bool fails: float64)


def _inexact(x: Any) -> Any:
    """``x``, in float64 where it holds bools or ints, as NumPy computes with them."""
    if getattr(x, "dtype", None) is None or is_inexact(x):
        return x
    return gl.astype(x, gl.dtype(1.0))


def is_inexact(x: Any) -> bool:
    """Whether ``x`` is an array (or NumPy scalar) of floats or complex numbers."""
    return any(kind in str(getattr(x, "dtype", "")) for kind in ("float", "complex"))


_PYTHON_NUMBERS = (int, float, bool)
#: A value gradlab may hold as a number where the user's code had an array of the framework's.
NUMBERS = (bool, int, float, complex, _numpy.generic)


def logsumexp(x: Any, axis: Any = None, *, keepdims: bool = False) -> Any:
    x = _inexact(x)
    m = gl.logsumexp_shift(x, axis=axis, keepdims=True)
    out = gl.log(gl.sum(gl.exp(x - m), axis=axis, keepdims=True)) + m
    return out if keepdims else _drop(out, axis)


def _drop(x: Any, axis: Any) -> Any:
    if axis is None:
        return gl.reshape(x, ())
    return gl.squeeze(x, axis=axis)


def builtin_round(x: Any, ndigits: int | None = None) -> Any:
    """Python's ``round(x, ndigits)``: for a number or a NumPy value, what its own
    ``__round__`` gives (``round(x)`` an int; a NumPy array of several entries has none and
    fails, as the user's NumPy code does); torch's tensors have no ``__round__`` and
    TensorFlow's one fails, so framework values are rounded as arrays (half to even, as
    everywhere), ``round(v)`` of a 0-d one to an int."""
    if isinstance(x, _numpy.ndarray) and x.ndim == 0:
        x = x[()]        # a 0-d array where NumPy's code has a scalar (a generated temporary)
    if isinstance(x, (int, float, _numpy.generic, _numpy.ndarray)):
        return round(x, ndigits)  # type: ignore[arg-type]  # an ndarray: TypeError
    if ndigits is not None:
        return gl.round(x, ndigits)
    rounded = gl.round(x)
    return int(rounded) if gl.ndim(rounded) == 0 else rounded


def matrix_transpose(x: Any) -> Any:
    """``x.mT``: the last two axes swapped. A 0-d value is its own transpose, as torch's
    ``mT`` gives it (NumPy's ``.T`` of a number too); a vector has no matrix transpose, and
    NumPy, torch and JAX raise: refused here with what to write instead."""
    n = gl.ndim(x)
    if n == 0:
        return x
    if n == 1:
        raise GradlabError("x.mT of a vector: a 1-d array has no matrix transpose (NumPy, torch "
                           "and JAX raise); write x itself, or x[:, None] for a column")
    return gl.swapaxes(x, -2, -1)


def rsqrt(x: Any) -> Any:
    return 1.0 / gl.sqrt(x)


def logaddexp(x: Any, y: Any) -> Any:
    """log(exp(x) + exp(y)), shifted by the larger operand so that neither exponential
    overflows (as NumPy's own is); an infinite larger operand shifts by 0 (no inf - inf).
    Of truth values or ints, in the float NumPy computes them in (bools subtract nowhere)."""
    x, y = _in_floats(x), _in_floats(y)
    m = gl.maximum(x, y)
    shift = gl.where(gl.isinf(m), gl.zeros_like(m), m)
    return shift + gl.log(gl.exp(x - shift) + gl.exp(y - shift))


def _in_floats(x: Any) -> Any:
    if not hasattr(x, "dtype") or is_inexact(x):
        return x
    return gl.astype(x, _numpy.promote_types(gl.dtype(x).name, _numpy.float16).name)


def squared_difference(x: Any, y: Any) -> Any:
    d = x - y                # (a Python number where both are: torch's square takes none)
    return d * d


def softmax(x: Any, axis: int = -1) -> Any:
    x = _inexact(x)      # (scipy's softmax of counts: float64, where TensorFlow's exp refuses)
    e = gl.exp(x - gl.stop_gradient(gl.max(x, axis=axis, keepdims=True)))
    return e / gl.sum(e, axis=axis, keepdims=True)


def log_softmax(x: Any, axis: int = -1) -> Any:
    # (x - m) - log(sum(exp(x - m))), not x - logsumexp(x): for large x the latter rounds
    # the result to the precision of x itself (an ulp of 1000.0 is 6e-5 in float32).
    x = _inexact(x)
    shifted = x - gl.stop_gradient(gl.max(x, axis=axis, keepdims=True))
    return shifted - gl.log(gl.sum(gl.exp(shifted), axis=axis, keepdims=True))


def hypot(x: Any, y: Any) -> Any:
    """sqrt(x² + y²), scaled by the larger magnitude so that it neither overflows nor
    underflows where the squares would (as NumPy's own hypot does). A Python number takes the
    other operand's float dtype, as NumPy's scalars do; a truth value or an int beside a float
    array takes its dtype, two of them compute in NumPy's dtype (torch takes no ``abs`` of a
    bool: ``math.hypot(x, mask[0])``)."""
    if type(y) in _PYTHON_NUMBERS and is_inexact(x):
        y = gl.full_like(x, y)
    elif type(x) in _PYTHON_NUMBERS and is_inexact(y):
        x = gl.full_like(y, x)
    elif is_inexact(x) and not is_inexact(y) and hasattr(y, "dtype"):
        y = gl.astype(y, gl.dtype(x))          # a truth value beside a float: the float's
    elif is_inexact(y) and not is_inexact(x) and hasattr(x, "dtype"):
        x = gl.astype(x, gl.dtype(y))
    elif not is_inexact(x) and not is_inexact(y):   # NumPy: float16 of two truth values
        both_bools = all(type(v) is bool or "bool" in str(getattr(v, "dtype", ""))
                         for v in (x, y))
        to = "float16" if both_bools else "float64"
        x, y = (gl.astype(v, to) if hasattr(v, "dtype") else float(v) for v in (x, y))
    if type(x) is float and hasattr(y, "dtype"):   # a number beside a truth array, made
        x = gl.full_like(y, x)                     # float64 (math.hypot(mask[0], 1.5))
    elif type(y) is float and hasattr(x, "dtype"):
        y = gl.full_like(x, y)
    big = gl.maximum(gl.abs(x), gl.abs(y))
    scale = gl.where(big > 0, big, gl.ones_like(big))
    return scale * gl.sqrt((x / scale) ** 2 + (y / scale) ** 2)


def sigmoid(x: Any) -> Any:
    return 0.5 * (gl.tanh(0.5 * x) + 1.0)


def softplus(x: Any) -> Any:
    return gl.maximum(x, 0.0) + gl.log1p(gl.exp(-gl.abs(x)))


def relu(x: Any) -> Any:
    return gl.maximum(x, 0.0)


def sum_to(x: Any, shape: Any) -> Any:
    have = tuple(gl.shape(x))
    target = tuple(shape)
    if have == target:
        return x
    lead = len(have) - len(target)
    axes = tuple(range(lead)) + tuple(
        i + lead for i, n in enumerate(target) if n == 1 and have[i + lead] != 1)
    if axes:
        x = gl.sum(x, axis=axes, keepdims=True)
    return gl.reshape(x, target) if lead else x


#: Values of shape ``()`` that are not arrays, on every backend: Python numbers, NumPy scalars.
_NUMBERS = (float, int, _numpy.generic)


def unbroadcast(x: Any, like: Any) -> Any:
    if isinstance(x, _NUMBERS) and isinstance(like, _NUMBERS):
        # two numbers: nothing to do, and asked first (np.shape of a NumPy scalar makes an
        # array, microseconds; a loop over u[t] asks at every step)
        return x
    target = gl.shape(like)
    have = gl.shape(x)
    if have == target:
        return x
    if not have:
        # a number standing for an adjoint that is zero so far (an overwritten value's,
        # reset to 0.0 in a loop): it means that number everywhere in ``like``
        return gl.broadcast_like(x, like)
    return gl.sum_to(x, target)


def unbroadcast_to(x: Any, shape: Any) -> Any:
    """``unbroadcast(x, like)`` where the forward pass saved only ``like``'s shape (see
    codegen/saves.py). A Python number (an adjoint that is zero so far) stays one: it stands
    for itself everywhere in that shape, as the generated code's ``0.0`` adjoints do, and
    there is no ``like`` to give it a dtype; a 0-d array is spread in its own dtype."""
    have = gl.shape(x)
    target = tuple(shape)
    if have == target or isinstance(x, _NUMBERS):
        return x
    if not have:
        return gl.broadcast_to(x, target)
    return gl.sum_to(x, target)


def norm(x: Any, ord: Any = None, axis: Any = None, *, keepdims: bool = False) -> Any:
    """The vector norm over ``axis`` (all entries without one), ``np.linalg.vector_norm``'s:
    ``ord`` a number, +-inf (the largest or smallest magnitude), or 'fro' (the 2-norm, as
    ``torch.norm`` reads it)."""
    if type(x) is float or type(x) is int:
        # a Python number (np.linalg.norm(b) of one): a float64 array of the backend, as NumPy
        # makes of it, which the rules (and torch, TensorFlow) take
        x = gl.array(float(x))
    else:
        x = _inexact(x)
    if isinstance(ord, str) and ord != "fro":
        raise GradlabError(
            f"a norm with ord={ord!r}: gradlab differentiates the vector norms (ord a number, "
            f"inf or -inf) and the Frobenius norm ('fro'); the nuclear norm needs the singular "
            f"values, which gradlab does not differentiate")
    if ord is None or ord == 2 or ord == "fro":
        return gl.sqrt(gl.sum(x * x, axis=axis, keepdims=keepdims))
    if ord == 1:
        return gl.sum(gl.abs(x), axis=axis, keepdims=keepdims)
    if ord == float("inf"):
        return gl.max(gl.abs(x), axis=axis, keepdims=keepdims)
    if ord == -float("inf"):
        return gl.min(gl.abs(x), axis=axis, keepdims=keepdims)
    if ord == 0:
        return gl.sum(gl.astype(gl.not_equal(x, 0), gl.dtype(x)), axis=axis, keepdims=keepdims)
    return gl.sum(gl.abs(x) ** ord, axis=axis, keepdims=keepdims) ** (1.0 / ord)


def matrix_axes(ndim: int, axis: Any, vector_without_axis: bool = False
                ) -> tuple[int, int] | None:
    """The (row, column) axes ``np.linalg.norm`` reads an array of ``ndim`` axes as a matrix
    over, or None where it reads a vector: two axes given, or none given and the array 2-d
    (unless ``vector_without_axis``: TensorFlow's ``tf.norm`` reads any array as one vector
    then). Plain Python, so the gradient helpers share it."""
    if axis is None:
        return None if vector_without_axis or ndim != 2 else (0, 1)
    if isinstance(axis, (tuple, list)) and len(axis) == 2:
        return int(axis[0]) % ndim, int(axis[1]) % ndim
    return None


def linalg_norm(x: Any, ord: Any = None, axis: Any = None, *, keepdims: bool = False,
                vector_without_axis: bool = False) -> Any:
    """``np.linalg.norm``: a vector norm, except over a matrix (see :func:`matrix_axes`), where
    ``ord`` is 'fro' (the default), 1 or -1 (the largest or smallest sum of magnitudes down a
    column), inf or -inf (along a row). The spectral (2, -2) and nuclear ('nuc') norms need the
    singular values, which gradlab refuses rather than compute a vector norm under their name;
    it refuses -1 as well (its rule is that of the vector norm, whose ord -1 differs)."""
    axes = matrix_axes(len(tuple(gl.shape(x))), axis, vector_without_axis)
    if axes is None:
        return gl.norm(x, ord, axis, keepdims=keepdims)
    if ord is None or ord == "fro" or ord == "euclidean":
        return gl.norm(x, None, axis, keepdims=keepdims)
    if ord in (1, float("inf"), -float("inf")):
        down, across = axes if ord == 1 else axes[::-1]
        sums = gl.sum(gl.abs(x), axis=down, keepdims=True)
        pick = gl.max if ord > 0 else gl.min
        out = pick(sums, axis=across, keepdims=True)
        return out if keepdims else gl.squeeze(out, axis=axes)
    how = {-1: "the smallest column sum, np.min(np.sum(np.abs(M), axis=0))",
           2: "the largest singular value", -2: "the smallest singular value",
           "nuc": "the sum of the singular values"}.get(ord, "not a matrix norm NumPy knows")
    raise GradlabError(
        f"the matrix norm with ord={ord!r} (np.linalg.norm(M, {ord!r}) of a 2-d M, or over two "
        f"axes) is {how}: gradlab does not differentiate it. Write it with differentiable "
        f"operations (an SVD is not one), or use the Frobenius norm (no ord), ord 1 or inf "
        f"(the largest column or row sum), or an axis for vector norms of rows or columns")


def _at_least(x: Any, n: int) -> Any:
    """NumPy's placement of the new axes: a vector becomes a row (1, k), and (1, k, 1) in 3-d;
    a matrix gains a last axis."""
    dims = tuple(gl.shape(x))
    if len(dims) >= n:
        return x
    if n == 3 and len(dims) == 2:
        return gl.reshape(x, dims + (1,))
    if n == 3 and len(dims) == 1:
        return gl.reshape(x, (1,) + dims + (1,))
    return gl.reshape(x, (1,) * (n - len(dims)) + dims)


def atleast_1d(x: Any) -> Any:
    return _at_least(x, 1)


def atleast_2d(x: Any) -> Any:
    return _at_least(x, 2)


def atleast_3d(x: Any) -> Any:
    return _at_least(x, 3)


def crossentropy(logits: Any, labels: Any) -> Any:
    logp = gl.log_softmax(logits, axis=-1)
    picked = gl.take_along_axis(logp, gl.expand_dims(labels, -1), axis=-1)
    return -gl.squeeze(picked, axis=-1)


def kl_div_with_logits(logits_p: Any, logits_q: Any, axis: int = -1) -> Any:
    logp = gl.log_softmax(logits_p, axis=axis)
    logq = gl.log_softmax(logits_q, axis=axis)
    return gl.sum(gl.exp(logp) * (logp - logq), axis=axis)


def flatten(x: Any, start: int = 0, end: int = -1) -> Any:
    dims = tuple(gl.shape(x))
    if not dims:
        return gl.reshape(x, (1,))
    start %= len(dims)
    end %= len(dims)
    middle = 1
    for n in dims[start:end + 1]:
        middle *= n
    return gl.reshape(x, dims[:start] + (middle,) + dims[end + 1:])


def unstack(x: Any, axis: int = 0) -> list[Any]:
    n = gl.shape(x)[axis]
    index = (slice(None),) * (axis % len(gl.shape(x)))
    return [x[index + (i,)] for i in range(n)]


def std(x: Any, axis: Any = None, *, keepdims: bool = False, ddof: int = 0) -> Any:
    return gl.sqrt(gl.var(x, axis=axis, keepdims=keepdims, ddof=ddof))


def numpy_call(fn: Any, *args: Any, **kwargs: Any) -> Any:
    """A NumPy function gradlab keeps as written (``np.unique(b)``: no gradient flows through
    it), on this backend's values: called on NumPy copies of them, its arrays (alone or in a
    tuple or list) given back as the backend's, since they meet the backend's values next;
    NumPy's scalars as Python numbers, which every framework takes in its own dtype."""
    out = fn(*[_to_numpy(a) for a in args], **{k: _to_numpy(v) for k, v in kwargs.items()})
    return _from_numpy(out)


def torch_call(fn: Any, *args: Any, **kwargs: Any) -> Any:
    """A torch function gradlab keeps as written (``torch.logit(v)``: no gradient flows
    through it), where gradlab may hold as a Python or NumPy float what the user's code made
    a tensor (``v = torch.tensor(x)`` of a float): that input made a tensor first, as torch's
    functions take no number there. (Only the first argument, the input of torch's functions:
    the others may be options, ``dim=0``; ints stay, as they may be sizes, ``torch.randn(3)``;
    NumPy arrays stay, for ``torch.from_numpy``.)"""
    if args and isinstance(args[0], (float, complex, _numpy.inexact)):
        import torch
        args = (torch.as_tensor(args[0]),) + args[1:]
    return fn(*args, **kwargs)


def _to_numpy(v: Any) -> Any:
    if isinstance(v, (list, tuple)):
        return type(v)(_to_numpy(e) for e in v)
    if hasattr(v, "shape") and not isinstance(v, (_numpy.ndarray, _numpy.generic)):
        return gl.to_numpy(v)
    return v


def _from_numpy(v: Any) -> Any:
    if isinstance(v, _numpy.ndarray) and v.dtype == object:   # np.frompyfunc's: numbers
        numbers = _numpy.array(v.tolist())                    # in NumPy's dtype, if they are
        return v if numbers.dtype == object else gl.array(numbers)
    if isinstance(v, _numpy.ndarray):
        return gl.array(v)
    if isinstance(v, _numpy.generic):
        return v.item()
    if isinstance(v, (list, tuple)) and not hasattr(v, "_fields"):
        return type(v)(_from_numpy(e) for e in v)
    return v


def dtype(x: Any) -> _dtypes.DType:
    return _dtypes.neutral(getattr(x, "dtype", type(x)))


def index_of_max(xs: Any) -> int:
    """The index of the item the builtin ``max(xs)`` returns: ``max`` keeps the first item no
    later one is greater than, and so does ``max`` over the indices keyed by the items."""
    items = list(xs)
    return max(range(len(items)), key=items.__getitem__)


def index_of_min(xs: Any) -> int:
    """The index of the item the builtin ``min(xs)`` returns (see :func:`index_of_max`)."""
    items = list(xs)
    return min(range(len(items)), key=items.__getitem__)


#: primitive name -> its generic formula, used where a backend has no version of its own
GENERIC: dict[str, Callable[..., Any]] = dict(
    logsumexp=logsumexp, logsumexp_shift=logsumexp_shift, softmax=softmax,
    log_softmax=log_softmax, hypot=hypot, logaddexp=logaddexp, builtin_round=builtin_round,
    rsqrt=rsqrt,
    matrix_transpose=matrix_transpose,
    squared_difference=squared_difference, sigmoid=sigmoid, softplus=softplus, relu=relu,
    sum_to=sum_to, unbroadcast=unbroadcast, unbroadcast_to=unbroadcast_to, norm=norm,
    linalg_norm=linalg_norm, atleast_1d=atleast_1d,
    atleast_2d=atleast_2d, atleast_3d=atleast_3d, crossentropy=crossentropy,
    kl_div_with_logits=kl_div_with_logits, flatten=flatten, unstack=unstack, std=std,
    dtype=dtype, numpy_call=numpy_call, torch_call=torch_call, index_of_max=index_of_max,
    index_of_min=index_of_min)
