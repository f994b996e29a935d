"""Helpers that gradient code needs and no framework ships, written once against a namespace.

``broadcast_like(g, x)`` — ``g`` spread to ``x``'s shape *and dtype* (the adjoint of a sum or a
mean; a Python seed like ``1.0`` must not turn a float32 gradient into float64);
``matmul_grad_x``/``matmul_grad_y`` — the two halves of ``matmul``'s adjoint for any ranks
(vectors included, where the textbook ``dz @ y.T`` needs an outer product instead);
list helpers for adjoints of Python lists (``xs.append``, ``stack``, ``concatenate``).

Like the generic formulas of :mod:`.common`, these are templates written against ``gl``, bound to
each backend's namespace when it is made (:mod:`.namespace`). A backend with a faster form of a
helper defines it itself and falls back on the template, which its namespace holds as
``generic_<name>``. ``zeros_like``, ``index_add`` and ``index_update`` (table :data:`LIST_AWARE`)
wrap the backend's own, which stays in the namespace as ``native_<name>``.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as _numpy

from ...errors import GradlabError
from ..gradlist import GradList, added
from ..einsum_terms import parse as parse_terms
from .common import is_inexact, matrix_axes

#: The namespace a template is bound to, and whether NumPy's scalars are constants there (both
#: set in each bound copy, never here).
gl: Any
NUMPY_SCALARS_ARE_CONSTANTS: bool


def broadcast_like(g: Any, x: Any) -> Any:
    if type(x) is float or type(x) is int or isinstance(x, _numpy.generic):
        return g   # the value is a number (NumPy kept as written on constants): so is g
    if isinstance(x, (list, tuple)):
        # the gradient of a container holds one entry per item, each spread to its item
        if isinstance(g, (list, tuple)):
            items = list(g)
        elif not isinstance(g, (int, float)) and gl.ndim(g) > 0 and gl.shape(g)[0] == len(x):
            items = [g[i] for i in range(len(x))]      # the items stacked into one array
        else:
            items = [g] * len(x)
        return GradList(broadcast_like(gi, xi) for gi, xi in zip(items, x))
    if isinstance(g, (int, float)):
        return gl.full_like(x, g)
    if gl.dtype(g) != gl.dtype(x):
        g = gl.astype(g, gl.dtype(x))
    target = gl.shape(x)
    if gl.shape(g) == target:
        return g
    if not target and gl.size(g) == 1:   # a 0-d value reduced over axis 0 or -1, as NumPy
        return gl.reshape(g, ())         # allows: its gradient, unreduced over that axis
    return gl.broadcast_to(g, target)


def matmul_grad_x(dz: Any, x: Any, y: Any) -> Any:
    """d(x @ y)/dx applied to ``dz``."""
    if isinstance(dz, float) and dz == 0.0:
        return gl.native_zeros_like(x)
    nx, ny = gl.ndim(x), gl.ndim(y)
    if nx == 0 or ny == 0:          # np.dot with a number is a product
        return gl.unbroadcast(dz * _as_numbers(y, dz), x)
    if nx == 2 and ny == 2:
        return gl.matmul(dz, gl.swapaxes(y, -1, -2))
    if nx == 2 and ny == 1 and gl.ndim(dz) == 1:      # W @ h: the outer product of dz and h
        return gl.outer(dz, y)
    if ny == 1:
        if nx == 1:
            return dz * _as_numbers(y, dz)
        return gl.reshape(dz, gl.shape(dz) + (1,)) * _as_numbers(y, dz)
    if nx == 1:
        if ny == 2:
            return gl.matmul(y, dz)
        column = gl.reshape(dz, gl.shape(dz) + (1,))
        return gl.sum_to(gl.matmul(y, column)[..., 0], gl.shape(x))
    return gl.unbroadcast(gl.matmul(dz, gl.swapaxes(y, -1, -2)), x)


def _as_numbers(v: Any, like: Any) -> Any:
    """A mask or an int operand of a product, in the gradient's dtype: TensorFlow's ``*`` of a
    float64 tensor and a bool one gave a bool tensor, all False (``np.dot(v, np.all(x))``:
    people fuzzer seed 7171, a silently zero gradient)."""
    if hasattr(v, "dtype") and not is_inexact(v) and hasattr(like, "dtype"):
        return gl.astype(v, gl.dtype(like))
    return v


def matmul_grad_y(dz: Any, x: Any, y: Any) -> Any:
    """d(x @ y)/dy applied to ``dz``."""
    if isinstance(dz, float) and dz == 0.0:
        return gl.native_zeros_like(y)
    nx, ny = gl.ndim(x), gl.ndim(y)
    if nx == 0 or ny == 0:          # np.dot with a number is a product
        return gl.unbroadcast(dz * _as_numbers(x, dz), y)
    if nx == 2 and (ny == 2 or ny == 1):   # x.T @ dz
        return gl.matmul(gl.swapaxes(x, -1, -2), dz)
    if nx == 1:
        if ny == 1:
            return dz * _as_numbers(x, dz)
        shape = gl.shape(dz)
        return gl.reshape(_as_numbers(x, dz), (-1, 1)) * gl.reshape(
            dz, shape[:-1] + (1,) + shape[-1:])
    if ny == 1:
        column = gl.reshape(dz, gl.shape(dz) + (1,))
        return gl.sum_to(gl.matmul(gl.swapaxes(x, -1, -2), column)[..., 0], gl.shape(y))
    return gl.unbroadcast(gl.matmul(gl.swapaxes(x, -1, -2), dz), y)


def linalg_norm_weights(x: Any, ord: Any, axis: Any = None, *,
                        vector_without_axis: bool = False) -> Any:
    """The derivative of ``linalg_norm(x, ord, axis)`` for the orders where it is piecewise
    constant (1, inf, -inf), shaped like ``x``: the result's gradient, spread back, is
    multiplied by it. For a vector norm, the signs of the entries (ord 1) or of those of the
    largest (smallest) magnitude; for a matrix norm (:func:`.common.matrix_axes`), the signs
    of the entries of the column (ord 1) or row (inf, -inf) whose sum of magnitudes is the
    largest (smallest). Ties share the gradient equally, as ``max``'s rule does."""
    if type(x) is float or type(x) is int:
        x = gl.array(float(x))      # a Python number: a float64 array, as linalg_norm reads it
    axes = matrix_axes(gl.ndim(x), axis, vector_without_axis)
    if axes is None:
        if ord == 1:
            return gl.sign(x)
        magnitudes, across = gl.abs(x), axis
    else:
        down, across = axes if ord == 1 else axes[::-1]
        magnitudes = gl.sum(gl.abs(x), axis=down, keepdims=True)
    pick = gl.max if ord > 0 else gl.min
    chosen = gl.astype(gl.equal(magnitudes, pick(magnitudes, axis=across, keepdims=True)),
                       gl.dtype(x))
    return gl.sign(x) * (chosen / gl.sum(chosen, axis=across, keepdims=True))


def inverse_axes(axes: Any) -> tuple[int, ...]:
    axes = [int(a) for a in axes]
    inverse = [0] * len(axes)
    for i, a in enumerate(axes):
        inverse[a % len(axes)] = i
    return tuple(inverse)


def untile(g: Any, x: Any, reps: Any) -> Any:
    """The adjoint of ``tile``: add up the copies."""
    xs = tuple(gl.shape(x))
    reps = (reps,) if isinstance(reps, int) else tuple(reps)
    n = max(len(xs), len(reps))
    xs_full = (1,) * (n - len(xs)) + xs
    reps = (1,) * (n - len(reps)) + reps
    split_shape: list[int] = []
    for r, s in zip(reps, xs_full):
        split_shape += [r, s]
    summed = gl.sum(gl.reshape(g, tuple(split_shape)), axis=tuple(range(0, 2 * n, 2)))
    return gl.reshape(summed, xs)


def unrepeat(g: Any, x: Any, repeats: Any, axis: Any = None) -> Any:
    """The adjoint of NumPy's ``repeat``: each entry's copies, which stand side by side, added
    up (of the flattened ``x`` when ``axis`` is None)."""
    if not isinstance(repeats, (int, _numpy.integer)):
        raise GradlabError(
            "gradlab differentiates repeat with one count for every entry (an int); for a "
            "count per entry, index the array instead: x[np.repeat(np.arange(len(x)), counts)]")
    repeats = int(repeats)
    xs = tuple(gl.shape(x))
    if axis is None:
        size = 1
        for d in xs:
            size *= d
        return gl.reshape(gl.sum(gl.reshape(g, (size, repeats)), axis=1), xs)
    axis = axis % len(xs)
    split = xs[:axis] + (xs[axis], repeats) + xs[axis + 1:]
    return gl.sum(gl.reshape(g, split), axis=axis + 1)


def _positions(x: Any) -> Any:
    """Each entry's position in the flattened ``x``, shaped like ``x``: taken as ``x`` is, they
    say where each taken entry came from."""
    return gl.reshape(gl.arange(gl.size(x)), tuple(gl.shape(x)))


def _added_at(g: Any, x: Any, positions: Any) -> Any:
    """``g``'s entries added up at their flat ``positions`` of an array shaped like ``x``
    (an entry taken twice gets both gradients)."""
    flat = gl.reshape(gl.zeros_like(x), (-1,))
    return gl.reshape(gl.index_add(flat, positions, g), tuple(gl.shape(x)))


def untake(g: Any, x: Any, indices: Any, axis: Any = None) -> Any:
    """The adjoint of ``take``."""
    return _added_at(g, x, gl.take(_positions(x), indices, axis))


def untake_along_axis(g: Any, x: Any, indices: Any, axis: Any) -> Any:
    """The adjoint of ``take_along_axis``; where ``x`` was broadcast against ``indices``, the
    copies' gradients add up."""
    return _added_at(g, x, gl.take_along_axis(_positions(x), indices, axis))


def index_written(g: Any, index: Any) -> Any:
    """``g[index]`` with zeros where a later write through the same index overwrote the entry
    (NumPy keeps the last one): the gradient of the values ``x[index] = values`` wrote. Only
    an index holding integer arrays can name an entry twice (``x[[0, 0]] = v``)."""
    taken = gl.getitem(g, index)
    if isinstance(g, list) or not _may_repeat(index):
        return taken
    positions = gl.getitem(_positions(g), index)
    flat = gl.reshape(positions, (-1,))
    if gl.size(flat) < 2:
        return taken
    order = gl.argsort(flat)                       # stable: repeats stay in writing order
    ordered = gl.getitem(flat, order)
    last_of_run = gl.concatenate([gl.not_equal(ordered[1:], ordered[:-1]),
                                  gl.ones((1,), dtype="bool")])
    kept = gl.index_update(gl.zeros(tuple(gl.shape(flat)), dtype="bool"), order, last_of_run)
    return gl.where(gl.reshape(kept, tuple(gl.shape(positions))), taken, gl.zeros_like(taken))


def _may_repeat(index: Any) -> bool:
    """Whether an index holds an integer array or list (ints, slices, None, ``...`` and
    boolean masks name each entry once)."""
    for part in index if isinstance(index, tuple) else (index,):
        if isinstance(part, (list, tuple)) and part and not all(
                isinstance(p, bool) for p in part):
            return True
        shape = getattr(part, "shape", None)
        if hasattr(part, "dtype") and shape is not None and len(shape) and (
                "bool" not in str(part.dtype)):
            return True
    return False


def unbroadcast_each(g: Any, xs: Any) -> list[Any]:
    """The adjoint of the builtin ``sum`` of a list: ``g`` summed back to each item's shape
    (``sum([a, b])`` broadcasts a (1,) item against a (3,) one)."""
    return GradList(gl.unbroadcast(g, x) if hasattr(x, "shape") or hasattr(g, "shape") else g
                    for x in xs)


def unconcatenate(g: Any, xs: Any, axis: int = 0) -> list[Any]:
    """The adjoint of ``concatenate``: ``g`` cut back into pieces shaped like ``xs``."""
    bounds, total = [], 0
    for part in list(xs)[:-1]:
        total += gl.shape(part)[axis]
        bounds.append(total)
    return GradList(gl.split(g, bounds, axis=axis))


def einsum_adjoint(g: Any, subscripts: Any, xs: Any) -> list[Any]:
    """The adjoint of ``einsum``: each operand's gradient is an einsum of the result's
    gradient with the other operands, into the operand's own subscripts."""
    xs = list(xs)
    terms = parse_terms(subscripts, [gl.ndim(x) for x in xs])
    if _is_number_zero(g):
        return GradList(_item_zeros(x) for x in xs)
    return GradList(_operand_gradient(g, k, terms, xs) for k in range(len(xs)))


def einsum_tangent(subscripts: Any, xs: Any, xs_dot: Any) -> Any:
    """Forward mode of ``einsum``, linear in each operand: the sum over the operands of the
    einsum with that operand's tangent in its place."""
    xs = list(xs)
    parts = [gl.einsum(subscripts, xs[:k] + [t] + xs[k + 1:])
             for k, t in enumerate(_tangents(xs_dot, len(xs))) if not _is_number_zero(t)]
    if not parts:
        return gl.zeros_like(gl.einsum(subscripts, xs))
    total = parts[0]
    for part in parts[1:]:
        total = total + part
    return total


def einsum_adjoint_tangent(g: Any, g_dot: Any, subscripts: Any, xs: Any, xs_dot: Any
                           ) -> list[Any]:
    """Forward mode of ``einsum_adjoint`` (hvp): operand k's gradient is linear in the result's
    gradient and in each other operand, and does not read operand k itself."""
    xs = list(xs)
    terms = parse_terms(subscripts, [gl.ndim(x) for x in xs])
    tangents = _tangents(xs_dot, len(xs))
    out = []
    for k in range(len(xs)):
        total = None if _is_number_zero(g_dot) else _operand_gradient(g_dot, k, terms, xs)
        for j, t in enumerate(tangents):
            if j == k or _is_number_zero(t) or _is_number_zero(g):
                continue
            part = _operand_gradient(g, k, terms, xs[:j] + [t] + xs[j + 1:])
            total = part if total is None else total + part
        out.append(_item_zeros(xs[k]) if total is None else total)
    return GradList(out)


def _operand_gradient(g: Any, k: int, terms: Any, xs: list[Any]) -> Any:
    """Operand k's gradient: the einsum of the other operands and ``g`` into operand k's
    letters. A letter operand k sums alone takes a vector of ones (its gradient is the same
    along it); a letter repeated in operand k (a diagonal, ``'ii->i'``) gets a fresh letter
    tied to the first by an identity matrix; an axis of length 1 that broadcast is summed."""
    x = xs[k]
    shape = tuple(gl.shape(x))
    dtype = gl.dtype(g) if hasattr(g, "dtype") else gl.dtype(x)
    if not hasattr(g, "shape"):        # a number reaching a 0-d result (a seed)
        g = gl.full((), g, dtype=dtype)
    known = set("".join(t for j, t in enumerate(terms.inputs) if j != k) + terms.output)
    fresh = terms.unused()
    target, extra_terms, extra = [], [], []
    for axis, letter in enumerate(terms.inputs[k]):
        if letter in target:
            again = next(fresh)
            target.append(again)
            extra_terms.append(letter + again)
            extra.append(gl.eye(shape[axis], dtype=dtype))
            continue
        target.append(letter)
        if letter not in known:
            extra_terms.append(letter)
            extra.append(gl.ones((shape[axis],), dtype=dtype))
    others = [xs[j] for j in range(len(xs)) if j != k]
    spec = ",".join([t for j, t in enumerate(terms.inputs) if j != k] + [terms.output]
                    + extra_terms) + "->" + "".join(target)
    r = gl.einsum(spec, others + [g] + extra)
    broadcast = tuple(a for a, n in enumerate(shape) if n == 1 and gl.shape(r)[a] != 1)
    if broadcast:
        r = gl.sum(r, axis=broadcast, keepdims=True)
    return r if tuple(gl.shape(r)) == shape else gl.broadcast_to(r, shape)


def _tangents(xs_dot: Any, n: int) -> list[Any]:
    """A list's tangent, item by item (a list with no tangent yet is the number 0)."""
    return [0.0] * n if _is_number_zero(xs_dot) else list(xs_dot)


def _is_number_zero(v: Any) -> bool:
    return v is None or (type(v) in (int, float) and v == 0)


def zeros_like_list(xs: Any) -> list[Any]:
    return GradList(_item_zeros(x) for x in xs)


def _item_zeros(x: Any) -> Any:
    """The zero gradient of a list's item: in floats for an item of bools or ints, whose
    gradient the code adds float values into (in place, as ``dxs[i] += v``)."""
    if hasattr(x, "dtype") and not is_inexact(x) and hasattr(x, "shape"):
        return zeros_like(x, "float64")
    return zeros_like(x)


def _is_complex(x: Any) -> bool:
    return "complex" in str(getattr(x, "dtype", type(x).__name__))


def imag_adjoint(dy: Any, x: Any) -> Any:
    """d imag(x) applied to ``dy``: ``-1j * dy`` for a complex ``x`` (gradlab's convention for
    a complex value computed from a real input: the chain back to that input is real); 0 for
    a real ``x``, whose imaginary part is constant (and TensorFlow multiplies no float by
    ``1j``)."""
    return -1j * dy if _is_complex(x) else gl.zeros_like(dy)


def angle_adjoint(dy: Any, x: Any) -> Any:
    """d angle(x) applied to ``dy``: ``-1j * dy / x`` for a complex ``x``; 0 for a real one,
    whose angle (0 or pi) is constant away from 0."""
    return -1j * dy / x if _is_complex(x) else gl.zeros_like(dy)


def or_one(x: Any) -> Any:
    """``x``, with 1 where it is 0: the denominator of a derivative at a tip where its
    numerator is 0 too (``hypot`` and ``arctan2`` at the origin, ``log`` of a zero base beside
    a zero power), so the derivative there is 0, as the norm's at 0, instead of 0 / 0."""
    if not hasattr(x, "shape") or isinstance(x, _numpy.generic):   # a number: its own type
        return x if x != 0 else x + 1
    return gl.where(gl.equal(x, 0), gl.ones_like(x), x)


def adjugate(x: Any) -> Any:
    """The adjugate of square matrices (the transposed cofactors: ``det(x) * inv(x)`` where
    ``x`` is invertible), finite where it is singular too: det's derivative there, where
    ``det * inv`` is 0 * inf. From the SVD ``x = u s vh``: ``adj(x) = det(u) det(vh) vh^H
    diag(prod of the other singular values) u^H``."""
    u, s, vh = gl.svd(x)
    others = prod_others(s, axis=-1)
    sign = gl.expand_dims(gl.expand_dims(gl.det(u) * gl.det(vh), -1), -1)
    v = gl.conj(gl.swapaxes(vh, -1, -2))
    return sign * gl.matmul(v * gl.expand_dims(others, -2), gl.conj(gl.swapaxes(u, -1, -2)))


def as_list(g: Any) -> list[Any]:
    """The gradient of a list that was an item of a list turned into an array (``np.array(rows)``
    of a list of lists): it comes back as an array, its rows the items' gradients. The code
    that follows pops from it as from a list."""
    return g if isinstance(g, GradList) else GradList(g if type(g) is list else gl.unstack(g, 0))


def add_lists(a: Any, b: Any) -> Any:
    """Two gradients of a list, item by item. Where one is an array (an array argument
    unpacked into names, ``a, b, c = x``, and read as an array too), the sum is an array."""
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return added(a, b)
    for zero, other in ((a, b), (b, a)):   # a gradient not reached yet (a tangent's 0.0)
        if isinstance(other, (list, tuple)) and type(zero) in (int, float) and zero == 0:
            return GradList(other)
    return _as_array(a) + _as_array(b)


def _as_array(g: Any) -> Any:
    return gl.stack([gl.array(v) if isinstance(v, (int, float)) else v for v in g]) if type(
        g) in (list, tuple, GradList) else g


def zeros_like(x: Any, dtype: Any = None) -> Any:
    """``zeros_like`` that also takes a Python list of arrays (a list is a value too)."""
    if isinstance(x, (list, tuple)):
        return zeros_like_list(x)
    if x is None:    # a result not computed on this path: its gradient is simply zero
        return 0.0
    if dtype is None and (type(x) is float or type(x) is int):   # so is a number's
        return 0.0
    if dtype is None and NUMPY_SCALARS_ARE_CONSTANTS and isinstance(x, _numpy.generic):
        return 0.0   # NumPy kept as written on constants (np.sum(0.5)) on another backend
    return gl.native_zeros_like(x) if dtype is None else gl.native_zeros_like(x, dtype)


def index_update(x: Any, index: Any, values: Any) -> Any:
    """Of a list too: the gradient of a list of tuples set item by item (``dparams[i] =
    dparams_i``), which JAX's and TensorFlow's code and forward mode over gradient code (hvp)
    write as an update."""
    if isinstance(x, list):
        out = GradList(x)
        out[index] = values
        return out
    return gl.native_index_update(x, index, _as_array(values))


def index_add(x: Any, index: Any, values: Any) -> Any:
    if isinstance(x, list):
        out = GradList(x)
        out[index] = added(out[index], values)
        return out
    # the rows of an array read as a list's items (a, b = x[:2]): their gradients, stacked
    return gl.native_index_add(x, index, _as_array(values))


def prod_others(x: Any, axis: Any = None) -> Any:
    """For each entry, the product of the other entries along ``axis`` (all of them for None),
    shaped like ``x``: the product of those before it times the product of those after it,
    so no entry is divided by (a zero, an infinity or a NaN entry spoils only the products it
    is part of, and a product that underflows or overflows as a whole is not divided back)."""
    if isinstance(x, (int, float)):
        return 1.0        # a number is its own product: no other entry
    if gl.ndim(x) == 0:   # so is a 0-d value, over axis 0 or -1 too (as NumPy allows)
        return gl.ones_like(x)
    return _from_last(_products_of_others(_to_last(x, axis)), x, axis)


def prod_others_jvp(x: Any, x_dot: Any, axis: Any = None) -> Any:
    """The directional derivative of :func:`prod_others` (forward mode over the gradient of
    ``prod``): for entry i, the sum over j != i of ``x_dot[j]`` times the product of the
    entries other than i and j, computed without dividing (each pair's product is
    :func:`prod_others` of the slice with entry i set to 1)."""
    if isinstance(x, (int, float)):
        return 0.0        # the constant 1 of a number
    if gl.ndim(x) == 0:
        return gl.zeros_like(x)
    n = 1
    for a in _reduced_axes(x, axis):
        n *= gl.shape(x)[a]
    if n > _PAIRWISE_LIMIT:    # n * n products: the division, exact for entries that are
        return _prod_others_jvp_by_division(x, x_dot, axis)   # finite and not zero
    xs, ts = _to_last(x, axis), _to_last(x_dot + gl.zeros_like(x), axis)
    eye = gl.eye(n, dtype="bool")
    without_i = gl.where(eye, gl.ones_like(xs[..., None, :]), xs[..., None, :])
    pairs = _products_of_others(without_i)              # [..., i, j]: all but i and j
    terms = gl.where(eye, gl.zeros_like(pairs), pairs * ts[..., None, :])
    return _from_last(gl.sum(terms, axis=-1), x, axis)


#: the longest slice whose jvp is computed pairwise (n * n products per slice)
_PAIRWISE_LIMIT = 256


def _prod_others_jvp_by_division(x: Any, x_dot: Any, axis: Any) -> Any:
    zero = gl.equal(x, 0)
    nonzero = gl.where(zero, gl.ones_like(x), x)
    rest = gl.prod(nonzero, axis=axis, keepdims=True)
    others = prod_others(nonzero, axis)                      # of the nonzero entries but i
    zeros = gl.sum(gl.astype(zero, gl.dtype(x)), axis=axis, keepdims=True)
    nothing = gl.zeros_like(x)
    ratio = gl.where(zero, nothing, x_dot / nonzero)
    ratios = gl.sum(ratio, axis=axis, keepdims=True)          # sum of x_dot / x, nonzero x
    zero_dot = gl.sum(gl.where(zero, x_dot, nothing), axis=axis, keepdims=True)
    none = others * (ratios - ratio)                           # no zero in the slice
    one = gl.where(zero, rest * ratios, zero_dot * others)
    two = gl.where(zero, (zero_dot - x_dot) * rest, nothing)
    return gl.where(gl.equal(zeros, 0), none,
                    gl.where(gl.equal(zeros, 1), one,
                             gl.where(gl.equal(zeros, 2), two, nothing)))


def _products_of_others(v: Any) -> Any:
    """Along the last axis: the product of the entries before each one times the product of
    the entries after it."""
    ones = gl.ones_like(v[..., :1])
    before = gl.cumprod(gl.concatenate([ones, v[..., :-1]], axis=-1), axis=-1)
    after = gl.flip(gl.cumprod(gl.flip(gl.concatenate([v[..., 1:], ones], axis=-1), axis=-1),
                               axis=-1), axis=-1)
    return before * after


def _reduced_axes(x: Any, axis: Any) -> tuple[int, ...]:
    ndim = gl.ndim(x)
    if axis is None:
        return tuple(range(ndim))
    return tuple(sorted(a % ndim for a in ((axis,) if isinstance(axis, int) else axis)))


def _reduced_last(x: Any, axis: Any) -> tuple[tuple[int, ...], int]:
    """The order of ``x``'s axes with ``axis``'s (all of them for None) at the end, and how
    many are kept in front."""
    axes = _reduced_axes(x, axis)
    kept = tuple(a for a in range(gl.ndim(x)) if a not in axes)
    return kept + axes, len(kept)


def _to_last(x: Any, axis: Any) -> Any:
    """``x`` with ``axis``'s axes (all of them for None) moved to the end as one axis."""
    order, kept = _reduced_last(x, axis)
    moved = gl.transpose(x, order)
    return gl.reshape(moved, tuple(gl.shape(moved))[:kept] + (-1,))


def _from_last(v: Any, x: Any, axis: Any) -> Any:
    """A result laid out as :func:`_to_last` lays out ``x``, shaped like ``x`` again."""
    order, _ = _reduced_last(x, axis)
    shape = tuple(gl.shape(x)[a] for a in order)
    return gl.transpose(gl.reshape(v, shape), inverse_axes(order))


#: helper name -> template, used where a backend has no version of its own
HELPERS: dict[str, Callable[..., Any]] = dict(
    broadcast_like=broadcast_like, matmul_grad_x=matmul_grad_x, matmul_grad_y=matmul_grad_y,
    inverse_axes=inverse_axes, untile=untile, unrepeat=unrepeat, unconcatenate=unconcatenate,
    untake=untake, untake_along_axis=untake_along_axis, index_written=index_written,
    unbroadcast_each=unbroadcast_each,
    zeros_like_list=zeros_like_list, as_list=as_list, imag_adjoint=imag_adjoint,
    angle_adjoint=angle_adjoint, add_lists=add_lists, prod_others=prod_others,
    prod_others_jvp=prod_others_jvp, linalg_norm_weights=linalg_norm_weights, or_one=or_one,
    adjugate=adjugate, einsum_adjoint=einsum_adjoint, einsum_tangent=einsum_tangent,
    einsum_adjoint_tangent=einsum_adjoint_tangent)

#: primitives whose template takes Python lists too and wraps the backend's own for arrays
LIST_AWARE: dict[str, Callable[..., Any]] = dict(zeros_like=zeros_like, index_add=index_add,
                                                 index_update=index_update)


#: The helpers' signatures, for documentation and the conformance tests.
SIGNATURES = {
    "broadcast_like": "(g, x)",
    "matmul_grad_x": "(dz, x, y)",
    "matmul_grad_y": "(dz, x, y)",
    "inverse_axes": "(axes)",
    "linalg_norm_weights": "(x, ord, axis=None, *, vector_without_axis=False)",
    "prod_others": "(x, axis=None)",
    "prod_others_jvp": "(x, x_dot, axis=None)",
    "untile": "(g, x, reps)",
    "unrepeat": "(g, x, repeats, axis=None)",
    "untake": "(g, x, indices, axis=None)",
    "index_written": "(g, index)",
    "untake_along_axis": "(g, x, indices, axis)",
    "unbroadcast_each": "(g, xs)",
    "unconcatenate": "(g, xs, axis=0)",
    "zeros_like_list": "(xs)",
    "add_lists": "(a, b)",
    "as_list": "(g)",
    "einsum_adjoint": "(g, subscripts, xs)",
    "einsum_tangent": "(subscripts, xs, xs_dot)",
    "einsum_adjoint_tangent": "(g, g_dot, subscripts, xs, xs_dot)",
    "or_one": "(x)",
    "adjugate": "(x)",
    "imag_adjoint": "(dy, x)",
    "angle_adjoint": "(dy, x)",
}
