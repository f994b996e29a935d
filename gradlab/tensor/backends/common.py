"""Primitives written once against a namespace's own operations.

Frameworks differ in what they ship (NumPy has no ``logsumexp``, TensorFlow no ``flatten``...).
:func:`complete` fills those gaps in a backend module's namespace from its other primitives, so
each formula exists in one place. A backend defines its own version first when the framework
has a faster or more accurate one; :func:`complete` never overwrites.
"""
from __future__ import annotations

from typing import Any, Callable, Literal

from .. import dtypes as _dtypes

#: NumPy's ``pad`` modes that every backend implements.
PadMode = Literal["constant", "edge", "reflect", "symmetric", "wrap"]


def is_basic_index(index: Any) -> bool:
    """True for indices made of ints, slices, None and Ellipsis (no arrays, no duplicates)."""
    items = index if type(index) is tuple else (index,)
    return all(i is None or i is Ellipsis or type(i) in (int, slice) for i in items)


def normalize_axes(axis: Any, ndim: int) -> tuple[int, ...]:
    """Axes as a sorted tuple of non-negative ints; ``None`` means every axis."""
    if axis is None:
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


def complete(ns: dict[str, Any]) -> None:
    """Define in ``ns`` every generic primitive it does not define yet."""
    exp, log, log1p, sqrt = ns["exp"], ns["log"], ns["log1p"], ns["sqrt"]
    abs_, maximum, where = ns["abs"], ns["maximum"], ns["where"]
    sum_, max_, shape_of = ns["sum"], ns["max"], ns["shape"]
    reshape, stop_gradient = ns["reshape"], ns["stop_gradient"]

    def logsumexp_shift(x: Any, axis: Any = None, *, keepdims: bool = False) -> Any:
        """The maximum, or 0 where it is infinite (a row of -inf must give -inf, not nan), or 0
        for an empty array: what logsumexp subtracts before ``exp``."""
        if 0 in tuple(shape_of(x)):
            return sum_(ns["zeros_like"](x), axis=axis, keepdims=keepdims)
        m = stop_gradient(max_(x, axis=axis, keepdims=keepdims))
        return where(ns["isfinite"](m), m, ns["zeros_like"](m))

    def logsumexp(x: Any, axis: Any = None, *, keepdims: bool = False) -> Any:
        m = ns["logsumexp_shift"](x, axis=axis, keepdims=True)
        out = log(sum_(exp(x - m), axis=axis, keepdims=True)) + m
        return out if keepdims else _drop(out, axis)

    def _drop(x: Any, axis: Any) -> Any:
        if axis is None:
            return reshape(x, ())
        return ns["squeeze"](x, axis=axis)

    def softmax(x: Any, axis: int = -1) -> Any:
        e = exp(x - stop_gradient(max_(x, axis=axis, keepdims=True)))
        return e / sum_(e, axis=axis, keepdims=True)

    def log_softmax(x: Any, axis: int = -1) -> Any:
        # (x - m) - log(sum(exp(x - m))), not x - logsumexp(x): for large x the latter rounds
        # the result to the precision of x itself (an ulp of 1000.0 is 6e-5 in float32).
        shifted = x - stop_gradient(max_(x, axis=axis, keepdims=True))
        return shifted - log(sum_(exp(shifted), axis=axis, keepdims=True))

    def sigmoid(x: Any) -> Any:
        return 0.5 * (ns["tanh"](0.5 * x) + 1.0)

    def softplus(x: Any) -> Any:
        return maximum(x, 0.0) + log1p(exp(-abs_(x)))

    def relu(x: Any) -> Any:
        return maximum(x, 0.0)

    def sum_to(x: Any, shape: Any) -> Any:
        have = tuple(shape_of(x))
        target = tuple(shape)
        if have == target:
            return x
        lead = len(have) - len(target)
        axes = tuple(range(lead)) + tuple(
            i + lead for i, n in enumerate(target) if n == 1 and have[i + lead] != 1)
        if axes:
            x = sum_(x, axis=axes, keepdims=True)
        return reshape(x, target) if lead else x

    def unbroadcast(x: Any, like: Any) -> Any:
        target = shape_of(like)
        have = shape_of(x)
        if have == target:
            return x
        if not have:
            # a number standing for an adjoint that is zero so far (an overwritten value's,
            # reset to 0.0 in a loop): it means that number everywhere in ``like``
            return ns["broadcast_like"](x, like)
        return sum_to(x, target)

    def norm(x: Any, ord: Any = None, axis: Any = None, *, keepdims: bool = False) -> Any:
        if ord is None or ord == 2 or ord == "fro":
            return sqrt(sum_(x * x, axis=axis, keepdims=keepdims))
        if ord == 1:
            return sum_(abs_(x), axis=axis, keepdims=keepdims)
        if ord == float("inf"):
            return max_(abs_(x), axis=axis, keepdims=keepdims)
        if ord == 0:
            return sum_(ns["astype"](ns["not_equal"](x, 0), ns["dtype"](x)), axis=axis,
                        keepdims=keepdims)
        return sum_(abs_(x) ** ord, axis=axis, keepdims=keepdims) ** (1.0 / ord)

    def linalg_norm(x: Any, ord: Any = None, axis: Any = None, *, keepdims: bool = False
                    ) -> Any:
        """``np.linalg.norm``: a vector norm, except that for a matrix (no axis, or two axes)
        a numeric ``ord`` asks for a matrix norm (``ord=2``: the largest singular value),
        which gradlab refuses rather than compute a vector norm under its name."""
        matrix = (axis is None and len(tuple(shape_of(x))) == 2) or (
            isinstance(axis, (tuple, list)) and len(axis) == 2)
        if ord == "fro" or ord is None:
            return norm(x, None, axis, keepdims=keepdims)
        if matrix:
            from ...errors import GradlabError
            raise GradlabError(
                f"np.linalg.norm(M, {ord!r}) of a matrix is a matrix norm, which gradlab does "
                f"not differentiate: use np.linalg.norm(M) (Frobenius) or pass axis= for "
                f"vector norms of its rows or columns")
        return norm(x, ord, axis, keepdims=keepdims)

    def atleast_nd(n: int) -> Callable[[Any], Any]:
        def atleast(x: Any) -> Any:
            dims = tuple(shape_of(x))
            if len(dims) >= n:
                return x
            # NumPy's placement: a vector becomes a row (1, k), and (1, k, 1) for 3-d
            if n == 3 and len(dims) == 2:
                return reshape(x, dims + (1,))
            if n == 3 and len(dims) == 1:
                return reshape(x, (1,) + dims + (1,))
            return reshape(x, (1,) * (n - len(dims)) + dims)
        atleast.__name__ = f"atleast_{n}d"
        return atleast

    def crossentropy(logits: Any, labels: Any) -> Any:
        logp = ns["log_softmax"](logits, axis=-1)
        picked = ns["take_along_axis"](logp, ns["expand_dims"](labels, -1), axis=-1)
        return -ns["squeeze"](picked, axis=-1)

    def kl_div_with_logits(logits_p: Any, logits_q: Any, axis: int = -1) -> Any:
        logp = ns["log_softmax"](logits_p, axis=axis)
        logq = ns["log_softmax"](logits_q, axis=axis)
        return sum_(exp(logp) * (logp - logq), axis=axis)

    def flatten(x: Any, start: int = 0, end: int = -1) -> Any:
        dims = tuple(shape_of(x))
        if not dims:
            return reshape(x, (1,))
        start %= len(dims)
        end %= len(dims)
        middle = 1
        for n in dims[start:end + 1]:
            middle *= n
        return reshape(x, dims[:start] + (middle,) + dims[end + 1:])

    def unstack(x: Any, axis: int = 0) -> list[Any]:
        n = shape_of(x)[axis]
        index = (slice(None),) * (axis % len(shape_of(x)))
        return [x[index + (i,)] for i in range(n)]

    def std(x: Any, axis: Any = None, *, keepdims: bool = False, ddof: int = 0) -> Any:
        return sqrt(ns["var"](x, axis=axis, keepdims=keepdims, ddof=ddof))

    def dtype(x: Any) -> _dtypes.DType:
        return _dtypes.neutral(getattr(x, "dtype", type(x)))

    generic: dict[str, Callable[..., Any]] = dict(
        logsumexp=logsumexp, logsumexp_shift=logsumexp_shift, softmax=softmax,
        log_softmax=log_softmax, sigmoid=sigmoid, softplus=softplus, relu=relu, sum_to=sum_to,
        unbroadcast=unbroadcast, norm=norm, linalg_norm=linalg_norm,
        atleast_1d=atleast_nd(1), atleast_2d=atleast_nd(2), atleast_3d=atleast_nd(3),
        crossentropy=crossentropy,
        kl_div_with_logits=kl_div_with_logits, flatten=flatten, unstack=unstack, std=std,
        dtype=dtype)
    for name, fn in generic.items():
        ns.setdefault(name, fn)
