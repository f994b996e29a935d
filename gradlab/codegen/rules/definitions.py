"""NumPy functions that are written out as Python, the way a person would define them.

``np.trace`` is the sum of a diagonal; ``np.tril`` keeps entries below a diagonal;
``np.diff`` subtracts neighbours. Such a function needs no rule of its own: defined here in
terms of primitives that have rules, it is read like a helper of the user's (a subroutine of
the generated code, shown under its own name), and its gradient follows from the definition.
A student reading the gradient of ``np.trace(A)`` sees where the gradient goes (onto the
diagonal) instead of a call to an opaque rule. Their names say what they stand for
(``np_trace``, ``special_logit``),
and every name here has such a prefix (``np_``, ``special_``, ``math_``; ``torch_``, ``jax_``,
``tf_``, ``nn_`` in :mod:`.activations`): the generated code holds them beside the user's
names, so none may clash with one (a user's ``diagonal_offsets`` would be refused).

Each definition takes the arguments NumPy's function takes, of which it implements the ones
in its signature: an option it does not name (``np.trace(x, axis1=1)``) is refused when the
call is read, with the option named. ``spelled`` lists the names under which NumPy, JAX's and
autograd's NumPy (and SciPy, for ``scipy.special``) spell the function. Functions here call
only NumPy (imported as ``numpy``, so that no user's ``np`` clashes with it), ``math``, SciPy
and each other; :mod:`.activations` defines the neural-network functions the same way.
"""
from __future__ import annotations

import math
from typing import Any, Callable

import numpy

from ...errors import gradlab_refuses

try:        # (SciPy is optional: its definitions are reached only from calls of SciPy's)
    import scipy.special
except ImportError:  # pragma: no cover
    scipy = None

#: dotted path (``numpy.trace``) -> the definition
DEFINITIONS: dict[str, Callable[..., Any]] = {}
_DEFINED: set[Callable[..., Any]] = set()
_NUMPY_ROOTS = ("numpy", "jax.numpy", "autograd.numpy")
_SCIPY_ROOTS = ("scipy", "jax.scipy")


#: array dialect (``numpy``, which JAX shares, or ``torch``) -> method name -> the definition,
#: called with the array the method is called on as its first argument (``x.trace()``)
METHOD_DEFINITIONS: dict[str, dict[str, Callable[..., Any]]] = {"numpy": {}, "torch": {}}


def spelled(*names: str, roots: tuple[str, ...] = _NUMPY_ROOTS, torch: str = "",
            method: str = "", torch_method: str = ""
            ) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register a definition under ``names`` in each of ``roots``, and under ``torch``'s
    names (space-separated) where torch's function takes the same arguments in the same
    order (its keywords may differ: a keyword the definition lacks is refused, not guessed).
    ``method`` names the array methods (of NumPy's arrays and torch's tensors alike) and
    ``torch_method`` the tensor methods it also stands for, the array being the first
    argument."""
    def register(fn: Callable[..., Any]) -> Callable[..., Any]:
        _DEFINED.add(fn)
        for name in names:
            for root in roots:
                DEFINITIONS[f"{root}.{name}"] = fn
        for name in torch.split():
            DEFINITIONS[f"torch.{name}"] = fn
        for dialects, spelled_as in ((("numpy", "torch"), method), (("torch",), torch_method)):
            for name in spelled_as.split():
                for dialect in dialects:
                    METHOD_DEFINITIONS[dialect][name] = fn
        return fn
    return register


def is_definition(obj: Any) -> bool:
    """Whether ``obj`` is one of the definitions (called by another one, by its name)."""
    try:
        return obj in _DEFINED
    except TypeError:       # unhashable
        return False


# --- diagonals and triangles ---------------------------------------------------------------------
@spelled("diagonal", method="diagonal")
def np_diagonal(a, offset=0):
    """The entries a[i, i + offset] of the first two axes, as the last axis."""
    if numpy.ndim(a) < 2:
        gradlab_refuses("np.diagonal, np.trace: the array needs two axes or more")
    n = a.shape[0]
    m = a.shape[1]
    if offset >= 0:
        length = m - offset if m - offset < n else n
        index = numpy.arange(length)
        return numpy.moveaxis(a[index, index + offset], 0, -1)
    length = n + offset if n + offset < m else m
    index = numpy.arange(length)
    return numpy.moveaxis(a[index - offset, index], 0, -1)


@spelled("trace", torch="trace", method="trace")
def np_trace(a, offset=0):
    """The sum of the diagonal."""
    return numpy.sum(np_diagonal(a, offset), axis=-1)


@spelled("diag", torch="diag")
def np_diag(v, k=0):
    """A 1-d array on the diagonal of a square matrix of zeros; of a 2-d array, its diagonal."""
    if numpy.ndim(v) != 1:
        return np_diagonal(v, k)
    size = v.shape[0] + (k if k >= 0 else -k)
    index = numpy.arange(v.shape[0])
    square = numpy.zeros((size, size), dtype=v.dtype)
    if k >= 0:
        square[index, index + k] = v
    else:
        square[index - k, index] = v
    return square


@spelled()
def np_tri_offsets(m):
    """For each entry of the last two axes, how far right of the diagonal it lies (column
    minus row): what np.tril and np.triu compare with k."""
    if numpy.ndim(m) < 2:
        gradlab_refuses("np.tril, np.triu of an array of fewer than two axes: gradlab's "
                        "definition takes a matrix (or a stack of them)")
    return numpy.arange(m.shape[-1])[None, :] - numpy.arange(m.shape[-2])[:, None]


@spelled("tril")
def np_tril(m, k=0):
    """Entries on and below diagonal k of the last two axes; zeros above."""
    return numpy.where(np_tri_offsets(m) <= k, m, numpy.zeros_like(m))


@spelled("triu")
def np_triu(m, k=0):
    """Entries on and above diagonal k of the last two axes; zeros below."""
    return numpy.where(np_tri_offsets(m) >= k, m, numpy.zeros_like(m))


# torch's spellings of the functions above, under torch's own keyword names
@spelled(torch="diagonal")
def torch_diagonal(input, offset=0):
    return np_diagonal(input, offset)


@spelled(torch="tril", torch_method="tril")
def torch_tril(input, diagonal=0):
    return np_tril(input, diagonal)


@spelled(torch="triu", torch_method="triu")
def torch_triu(input, diagonal=0):
    return np_triu(input, diagonal)


# --- differences, sums along an axis -------------------------------------------------------------
@spelled("diff")
def np_diff(a, n=1, axis=-1):
    """Each entry minus the one before it along ``axis``, ``n`` times."""
    if numpy.ndim(a) == 0:
        gradlab_refuses("np.diff of a 0-d value (NumPy raises too)")
    moved = numpy.moveaxis(a, axis, -1)
    kind = a.dtype                  # (the tensor layer's dtype, compared by name)
    for _ in range(n):
        if kind == "bool":          # of truth values: whether neighbours differ, as NumPy
            moved = numpy.not_equal(moved[..., 1:], moved[..., :-1])
        else:
            moved = moved[..., 1:] - moved[..., :-1]
    return numpy.moveaxis(moved, -1, axis)


@spelled("trapezoid", "trapz", torch="trapezoid trapz")
def np_trapezoid(y, x=None, dx=1.0, axis=-1):
    """The trapezoidal rule along ``axis``: spacing ``dx``, or the differences of ``x``."""
    moved = numpy.moveaxis(y, axis, -1)
    heights = (moved[..., 1:] + moved[..., :-1]) / 2.0
    if x is None:
        return numpy.sum(heights * dx, axis=-1)
    return numpy.sum(heights * np_diff(x), axis=-1)


@spelled("ptp")
def np_ptp(a, axis=None):
    """The range, maximum minus minimum."""
    if axis is None:
        return numpy.max(a) - numpy.min(a)
    return numpy.max(a, axis=axis) - numpy.min(a, axis=axis)


@spelled("cumprod", method="cumprod")
def np_cumprod(a, axis=None):
    """Running products, one multiplication per entry along ``axis`` (flattened without)."""
    moved = numpy.reshape(a, (-1,)) if axis is None else numpy.moveaxis(a, axis, 0)
    products = [moved[0]]
    for i in range(1, moved.shape[0]):
        products.append(products[i - 1] * moved[i])
    stacked = numpy.stack(products)
    return stacked if axis is None else numpy.moveaxis(stacked, 0, axis)


@spelled(torch="cumprod", torch_method="cumprod")
def torch_cumprod(input, dim):
    return np_cumprod(input, dim)


@spelled(torch="gather", torch_method="gather")
def torch_gather(input, dim, index):
    """torch's gather: along ``dim``, the entries ``index`` picks (np.take_along_axis). On the
    other axes, nothing broadcasts: an index shorter than the input reads its first entries."""
    if numpy.ndim(index) != numpy.ndim(input):
        gradlab_refuses("torch.gather: the index needs as many axes as the input (torch "
                        "raises too)")
    if numpy.ndim(input) == 0:        # torch reads a 0-d tensor as one entry
        one = numpy.take_along_axis(numpy.reshape(input, (1,)), numpy.reshape(index, (1,)),
                                    axis=0)
        return numpy.reshape(one, ())
    for d in range(numpy.ndim(index)):
        if d != dim % numpy.ndim(index) and index.shape[d] != input.shape[d]:
            if index.shape[d] > input.shape[d]:
                gradlab_refuses("torch.gather: the index is longer than the input on an "
                                "axis other than dim (torch raises too)")
            input = numpy.take(input, numpy.arange(index.shape[d]), axis=d)
    return numpy.take_along_axis(input, index, axis=dim)


@spelled("polyval")
def np_polyval(p, x):
    """The polynomial with coefficients ``p`` (highest power first) at ``x``, by Horner's rule."""
    value = x * 0.0
    for coefficient in p:
        value = value * x + coefficient
    return value


@spelled("sort")
def np_sort(a, axis=-1):
    """The entries in increasing order along ``axis`` (of the flattened array for None): each
    row taken in the order ``argsort`` gives, so the gradient goes back to where each came from."""
    moved = numpy.reshape(a, (-1,)) if axis is None else numpy.moveaxis(a, axis, -1)
    rows = numpy.reshape(moved, (-1, moved.shape[-1]))
    order = numpy.argsort(rows, axis=-1)
    picked = rows[numpy.arange(rows.shape[0])[:, None], order]
    if axis is None:
        return numpy.reshape(picked, (-1,))
    return numpy.moveaxis(numpy.reshape(picked, moved.shape), -1, axis)


@spelled("median")
def np_median(a, axis=None):
    """The middle entry along ``axis`` once sorted (of the flattened array for None), or the
    mean of the middle two."""
    if axis is None:
        ordered = np_sort(a, None)
    else:
        ordered = numpy.moveaxis(np_sort(a, axis), axis, -1)
    n = ordered.shape[-1]
    if n % 2 == 1:
        return ordered[..., n // 2]
    return (ordered[..., n // 2 - 1] + ordered[..., n // 2]) / 2.0


@spelled("percentile")
def np_percentile(a, q, axis=None):
    """The q-th percentile (a number q) along ``axis`` (of the flattened array for None), by
    linear interpolation between the two sorted entries around it, as NumPy's default."""
    return np_quantile(a, q / 100.0, axis)


@spelled("quantile")
def np_quantile(a, q, axis=None):
    """The q-th quantile (a number q in [0, 1]): see :func:`np_percentile`."""
    if numpy.ndim(q) != 0:
        gradlab_refuses("np.quantile, np.percentile: gradlab's definition takes one number q")
    if axis is None:
        ordered = np_sort(a, None)
    else:
        ordered = numpy.moveaxis(np_sort(a, axis), axis, -1)
    position = q * (ordered.shape[-1] - 1)
    lower = int(position)          # (position >= 0: its floor)
    upper = lower + 1 if lower + 1 < ordered.shape[-1] else lower
    weight = position - lower
    return ordered[..., lower] * (1.0 - weight) + ordered[..., upper] * weight


@spelled("cov")
def np_cov(m, rowvar=True, bias=False, ddof=None):
    """The covariance of the variables in the rows (columns if not ``rowvar``), over the
    observations: centred products divided by their number less ``ddof`` (1 unless ``bias``)."""
    x = numpy.atleast_2d(m)
    if not rowvar and x.shape[0] != 1:
        x = numpy.transpose(x)
    if ddof is None:
        ddof = 0 if bias else 1
    centred = x - numpy.mean(x, axis=1, keepdims=True)
    return numpy.squeeze(centred @ numpy.transpose(centred) / (x.shape[1] - ddof))


@spelled("add.reduce")
def np_add_reduce(array, axis=0):
    if numpy.ndim(array) == 0:
        return array      # (NumPy's reduce of a 0-d value is the value)
    return numpy.sum(array, axis=axis)


@spelled("multiply.reduce")
def np_multiply_reduce(array, axis=0):
    if numpy.ndim(array) == 0:
        return array      # (NumPy's reduce of a 0-d value is the value)
    return numpy.prod(array, axis=axis)


@spelled("maximum.reduce")
def np_maximum_reduce(array, axis=0):
    if numpy.ndim(array) == 0:
        return array      # (NumPy's reduce of a 0-d value is the value)
    return numpy.max(array, axis=axis)


@spelled("minimum.reduce")
def np_minimum_reduce(array, axis=0):
    if numpy.ndim(array) == 0:
        return array      # (NumPy's reduce of a 0-d value is the value)
    return numpy.min(array, axis=axis)


# --- joining -------------------------------------------------------------------------------------
@spelled("vstack", "row_stack", torch="vstack row_stack")
def np_vstack(tup):
    """Rows on top of each other (a 1-d array is one row)."""
    return numpy.concatenate([numpy.atleast_2d(t) for t in tup], axis=0)


@spelled("hstack", torch="hstack")
def np_hstack(tup):
    """Side by side: along the first axis for 1-d arrays, the second otherwise."""
    arrays = [numpy.atleast_1d(t) for t in tup]
    if numpy.ndim(arrays[0]) == 1:
        return numpy.concatenate(arrays, axis=0)
    return numpy.concatenate(arrays, axis=1)


@spelled("column_stack", torch="column_stack")
def np_column_stack(tup):
    """1-d arrays as columns, 2-d arrays as they are, side by side."""
    columns = []
    for t in tup:
        if numpy.ndim(t) < 2:
            columns.append(numpy.reshape(t, (-1, 1)))
        else:
            columns.append(t)
    return numpy.concatenate(columns, axis=1)


@spelled(torch="diff", torch_method="diff")
def torch_diff(input, n=1, dim=-1):
    return np_diff(input, n, dim)


@spelled(torch="roll", torch_method="roll")
def torch_roll(input, shifts, dims=None):
    return np_roll(input, shifts, dims)


@spelled("roll")
def np_roll(a, shift, axis=None):
    """Entries moved ``shift`` places along ``axis`` (of the flattened array without), the
    last ones coming round to the front."""
    moved = numpy.reshape(a, (-1,)) if axis is None else numpy.moveaxis(a, axis, 0)
    n = moved.shape[0]
    cut = n - shift % n
    rolled = numpy.concatenate([moved[cut:], moved[:cut]], axis=0)
    if axis is None:
        return numpy.reshape(rolled, numpy.shape(a))
    return numpy.moveaxis(rolled, 0, axis)


# --- products ------------------------------------------------------------------------------------
@spelled("cross")
def np_cross(a, b):
    """The cross product of 3-vectors along the last axis."""
    if a.shape[-1] != 3 or b.shape[-1] != 3:
        gradlab_refuses("np.cross: gradlab's definition takes 3-vectors along the last axis")
    return numpy.stack([a[..., 1] * b[..., 2] - a[..., 2] * b[..., 1],
                        a[..., 2] * b[..., 0] - a[..., 0] * b[..., 2],
                        a[..., 0] * b[..., 1] - a[..., 1] * b[..., 0]], axis=-1)


@spelled("kron", torch="kron")
def np_kron(a, b):
    """The Kronecker product of two 1-d or two 2-d arrays: each entry of a times all of b."""
    if numpy.ndim(a) != numpy.ndim(b) or numpy.ndim(a) == 0 or numpy.ndim(a) > 2:
        gradlab_refuses("np.kron: gradlab's definition takes two 1-d or two 2-d arrays")
    if numpy.ndim(a) == 1:
        return numpy.reshape(a[:, None] * b[None, :], (-1,))
    blocks = a[:, None, :, None] * b[None, :, None, :]
    return numpy.reshape(blocks, (a.shape[0] * b.shape[0], a.shape[1] * b.shape[1]))


@spelled("linalg.slogdet")
def np_slogdet(a):
    """The sign and the log of the absolute value of the determinant."""
    determinant = numpy.linalg.det(a)
    return numpy.sign(determinant), numpy.log(numpy.abs(determinant))


@spelled("inner")
def np_inner(a, b):
    """Sums of products over the last axis of each: every row of a against every row of b."""
    if numpy.ndim(a) == 0 or numpy.ndim(b) == 0:
        return a * b
    size = a.shape[-1]
    products = numpy.reshape(a, (-1, size)) @ numpy.transpose(numpy.reshape(b, (-1, size)))
    return numpy.reshape(products, a.shape[:-1] + b.shape[:-1])


@spelled("linalg.matrix_power")
def np_matrix_power(a, n):
    """``a @ a @ ... @ a``, n times (the inverse's powers for n < 0; the identity for 0)."""
    if n == 0:
        return numpy.zeros_like(a) + numpy.eye(a.shape[-1], dtype=a.dtype)
    base = a
    times = n
    if n < 0:
        base = numpy.linalg.inv(a)
        times = -n
    power = base
    for _ in range(times - 1):
        power = power @ base
    return power


# --- elementwise ---------------------------------------------------------------------------------
@spelled("deg2rad", "radians", torch="deg2rad")
def np_deg2rad(x):
    return x * (numpy.pi / 180.0)


@spelled("rad2deg", "degrees", torch="rad2deg")
def np_rad2deg(x):
    return x * (180.0 / numpy.pi)


@spelled("exp2", torch="exp2")
def np_exp2(x):
    return numpy.exp(x * numpy.log(2.0))


@spelled("special.logit", roots=_SCIPY_ROOTS, torch="logit special.logit")
def special_logit(x):
    """log(x / (1 - x)), the inverse of the sigmoid."""
    return numpy.log(x) - numpy.log1p(-x)


@spelled("average")
def np_average(a, axis=None, weights=None):
    """The mean, or the mean weighted by ``weights`` (of a's shape, or 1-d along ``axis``)."""
    if weights is None:
        if axis is None:
            return numpy.mean(a)
        return numpy.mean(a, axis=axis)
    if axis is None:
        return numpy.sum(a * weights) / numpy.sum(weights)
    if numpy.ndim(weights) == numpy.ndim(a):
        return numpy.sum(a * weights, axis=axis) / numpy.sum(weights, axis=axis)
    moved = numpy.moveaxis(a, axis, -1)
    return numpy.sum(moved * weights, axis=-1) / numpy.sum(weights)


@spelled("nansum")
def np_nansum(a, axis=None):
    """The sum with NaN entries counted as zero (they get no gradient)."""
    if axis is None:
        return numpy.sum(numpy.where(numpy.isnan(a), 0, a))
    return numpy.sum(numpy.where(numpy.isnan(a), 0, a), axis=axis)


@spelled("nanmean")
def np_nanmean(a, axis=None):
    """The mean of the entries that are not NaN."""
    kept = numpy.logical_not(numpy.isnan(a))
    values = numpy.where(kept, a, 0)
    if axis is None:
        return numpy.sum(values) / numpy.sum(kept)
    return numpy.sum(values, axis=axis) / numpy.sum(kept, axis=axis)


@spelled("heaviside", torch="heaviside")
def np_heaviside(x1, x2):
    """0 below zero, 1 above, ``x2`` at zero (a step: no gradient through ``x1``)."""
    return numpy.where(x1 > 0, 1.0, numpy.where(x1 == 0, x2, 0.0))


@spelled("fabs")
def np_fabs(x):
    return numpy.abs(x)


@spelled("positive")
def np_positive(x):
    return x


@spelled("rint")
def np_rint(x):
    return numpy.round(x)


@spelled("trunc", "fix", torch="trunc fix")
def np_trunc(x):
    """Rounded towards zero (a step: no gradient)."""
    return numpy.where(x >= 0, numpy.floor(x), numpy.ceil(x))


@spelled("fmod", torch="fmod")
def np_fmod(x1, x2):
    """The remainder with the sign of the dividend (C's fmod)."""
    return x1 - np_trunc(x1 / x2) * x2


@spelled("logaddexp2")
def np_logaddexp2(x1, x2):
    """log2(2**x1 + 2**x2)."""
    return numpy.logaddexp(x1 * numpy.log(2.0), x2 * numpy.log(2.0)) / numpy.log(2.0)


@spelled("vdot")
def np_vdot(a, b):
    """The dot product of the flattened arrays, the first conjugated."""
    return numpy.sum(numpy.conj(numpy.reshape(a, (-1,))) * numpy.reshape(b, (-1,)))


@spelled("tensordot", torch="tensordot")
def np_tensordot(a, b, axes=2):
    """The last ``axes`` axes of a against the first of b (an int; pairs of axis lists are
    refused)."""
    if not isinstance(axes, int):
        gradlab_refuses("np.tensordot: gradlab's definition takes axes as an int")
    size = 1
    for d in a.shape[numpy.ndim(a) - axes:]:
        size = size * d
    product = numpy.reshape(a, (-1, size)) @ numpy.reshape(b, (size, -1))
    return numpy.reshape(product, a.shape[:numpy.ndim(a) - axes] + b.shape[axes:])


@spelled("special.xlogy", roots=_SCIPY_ROOTS, torch="xlogy special.xlogy")
def special_xlogy(x, y):
    """x * log(y), 0 where x is 0 (y there is read as 1, so its gradient stays finite)."""
    zero = x == 0
    return numpy.where(zero, 0.0, x * numpy.log(numpy.where(zero, 1.0, y)))


@spelled("special.log_softmax", roots=_SCIPY_ROOTS)
def special_log_softmax(x, axis=None):
    """x minus the log of the sum of its exponentials."""
    if axis is None:
        return x - scipy.special.logsumexp(x)
    return x - scipy.special.logsumexp(x, axis=axis, keepdims=True)


@spelled("erfc", roots=("math",))
def math_erfc(x):
    return 1.0 - math.erf(x)


@spelled("radians", roots=("math",))
def math_radians(x):
    return x * (math.pi / 180.0)
