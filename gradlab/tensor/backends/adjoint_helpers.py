"""Helpers that gradient code needs and no framework ships, written once against a namespace.

``broadcast_like(g, x)`` — ``g`` spread to ``x``'s shape *and dtype* (the adjoint of a sum or a
mean; a Python seed like ``1.0`` must not turn a float32 gradient into float64);
``matmul_grad_x``/``matmul_grad_y`` — the two halves of ``matmul``'s adjoint for any ranks
(vectors included, where the textbook ``dz @ y.T`` needs an outer product instead);
list helpers for adjoints of Python lists (``xs.append``, ``stack``, ``concatenate``).
"""
from __future__ import annotations

from typing import Any

import numpy as _numpy


def install(ns: dict[str, Any]) -> None:
    shape, reshape, zeros_like = ns["shape"], ns["reshape"], ns["zeros_like"]
    matmul, swapaxes, sum_ = ns["matmul"], ns["swapaxes"], ns["sum"]
    broadcast_to, astype, dtype = ns["broadcast_to"], ns["astype"], ns["dtype"]
    unbroadcast, split, ndim = ns["unbroadcast"], ns["split"], ns["ndim"]
    name = ns.get("NAME", "")

    if name in ("numpy", "python"):
        import numpy as np

        def broadcast_like(g: Any, x: Any) -> Any:
            dt = getattr(x, "dtype", None)
            if dt is None:   # a Python number
                return g
            if type(g) is np.ndarray and g.dtype == dt and g.shape == x.shape:
                return g
            if dt.kind not in "fc":
                dt = np.result_type(g, 1.0)
            if isinstance(g, (int, float)):
                return np.full(x.shape, g, dtype=dt)
            return np.broadcast_to(np.asarray(g, dtype=dt), np.shape(x))
    else:
        def broadcast_like(g: Any, x: Any) -> Any:
            if type(x) is float or type(x) is int or isinstance(x, _numpy.generic):
                return g   # the value is a number (NumPy kept as written on constants): so is g
            if isinstance(g, (int, float)):
                return ns["full_like"](x, g)
            if dtype(g) != dtype(x):
                g = astype(g, dtype(x))
            target = shape(x)
            if shape(g) == target:
                return g
            return broadcast_to(g, target)

    def matmul_grad_x(dz: Any, x: Any, y: Any) -> Any:
        """d(x @ y)/dx applied to ``dz``."""
        if isinstance(dz, float) and dz == 0.0:
            return zeros_like(x)
        nx, ny = ndim(x), ndim(y)
        if nx == 2 and ny == 2:
            return matmul(dz, swapaxes(y, -1, -2))
        if nx == 2 and ny == 1 and ndim(dz) == 1:      # W @ h: the outer product of dz and h
            return ns["outer"](dz, y)
        if ny == 1:
            if nx == 1:
                return dz * y
            return reshape(dz, shape(dz) + (1,)) * y
        if nx == 1:
            return matmul(y, dz) if ny == 2 else sum_to_shape(matmul(y, reshape(dz, shape(dz) + (1,)))[..., 0], shape(x))
        return unbroadcast(matmul(dz, swapaxes(y, -1, -2)), x)

    def matmul_grad_y(dz: Any, x: Any, y: Any) -> Any:
        """d(x @ y)/dy applied to ``dz``."""
        if isinstance(dz, float) and dz == 0.0:
            return zeros_like(y)
        nx, ny = ndim(x), ndim(y)
        if nx == 2 and (ny == 2 or ny == 1):   # x.T @ dz
            return matmul(swapaxes(x, -1, -2), dz)
        if nx == 1:
            if ny == 1:
                return dz * x
            return reshape(x, (-1, 1)) * reshape(dz, shape(dz)[:-1] + (1,) + shape(dz)[-1:])
        if ny == 1:
            return sum_to_shape(matmul(swapaxes(x, -1, -2), reshape(dz, shape(dz) + (1,)))[..., 0], shape(y))
        return unbroadcast(matmul(swapaxes(x, -1, -2), dz), y)

    def sum_to_shape(g: Any, target: Any) -> Any:
        return ns["sum_to"](g, target)

    def prod_others(x: Any, axis: Any = None) -> Any:
        """For each entry, the product of the other entries along ``axis`` (all of them for
        None), shaped like ``x``: ``prod(x) / x`` without dividing by a zero entry. The one
        zero of a slice gets the product of the rest; with two zeros, every entry gets 0."""
        zero = ns["equal"](x, 0)
        nonzero = ns["where"](zero, ns["ones_like"](x), x)
        rest = ns["prod"](nonzero, axis=axis, keepdims=True)
        zeros = sum_(astype(zero, dtype(x)), axis=axis, keepdims=True)
        lone_zero = ns["logical_and"](zero, ns["equal"](zeros, 1))
        return ns["where"](ns["equal"](zeros, 0), rest / nonzero,
                           ns["where"](lone_zero, rest + zeros_like(x), zeros_like(x)))

    def prod_others_jvp(x: Any, x_dot: Any, axis: Any = None) -> Any:
        """The directional derivative of :func:`prod_others` (forward mode over the gradient
        of ``prod``), exact at zero entries: each case of how many zeros a slice holds."""
        zero = ns["equal"](x, 0)
        nonzero = ns["where"](zero, ns["ones_like"](x), x)
        rest = ns["prod"](nonzero, axis=axis, keepdims=True)
        zeros = sum_(astype(zero, dtype(x)), axis=axis, keepdims=True)
        ratio = ns["where"](zero, zeros_like(x), x_dot / nonzero)
        ratios = sum_(ratio, axis=axis, keepdims=True)          # sum of x_dot / x, nonzero x
        zero_dot = sum_(ns["where"](zero, x_dot, zeros_like(x)), axis=axis, keepdims=True)
        none = rest / nonzero * (ratios - ratio)                 # no zero in the slice
        one = ns["where"](zero, rest * ratios, zero_dot * rest / nonzero)
        two = ns["where"](zero, (zero_dot - x_dot) * rest, zeros_like(x))
        return ns["where"](ns["equal"](zeros, 0), none,
                           ns["where"](ns["equal"](zeros, 1), one,
                                       ns["where"](ns["equal"](zeros, 2), two, zeros_like(x))))

    def inverse_axes(axes: Any) -> tuple[int, ...]:
        axes = [int(a) for a in axes]
        inverse = [0] * len(axes)
        for i, a in enumerate(axes):
            inverse[a % len(axes)] = i
        return tuple(inverse)

    def untile(g: Any, x: Any, reps: Any) -> Any:
        """The adjoint of ``tile``: add up the copies."""
        xs = tuple(shape(x))
        reps = (reps,) if isinstance(reps, int) else tuple(reps)
        n = max(len(xs), len(reps))
        xs_full = (1,) * (n - len(xs)) + xs
        reps = (1,) * (n - len(reps)) + reps
        split_shape: list[int] = []
        for r, s in zip(reps, xs_full):
            split_shape += [r, s]
        summed = sum_(reshape(g, tuple(split_shape)), axis=tuple(range(0, 2 * n, 2)))
        return reshape(summed, xs)

    def unconcatenate(g: Any, xs: Any, axis: int = 0) -> list[Any]:
        """The adjoint of ``concatenate``: ``g`` cut back into pieces shaped like ``xs``."""
        bounds, total = [], 0
        for part in list(xs)[:-1]:
            total += shape(part)[axis]
            bounds.append(total)
        return list(split(g, bounds, axis=axis))

    def zeros_like_list(xs: Any) -> list[Any]:
        return [zeros_like_any(x) for x in xs]

    def add_lists(a: Any, b: Any) -> list[Any]:
        return [u + v for u, v in zip(a, b)]

    native_zeros_like, native_index_add = zeros_like, ns["index_add"]
    foreign_scalars = name not in ("numpy", "python")

    def zeros_like_any(x: Any, dtype: Any = None) -> Any:
        """``zeros_like`` that also takes a Python list of arrays (a list is a value too)."""
        if type(x) is list or type(x) is tuple:
            return [zeros_like_any(v) for v in x]
        if x is None:    # a result not computed on this path: its gradient is simply zero
            return 0.0
        if dtype is None and (type(x) is float or type(x) is int):   # so is a number's
            return 0.0
        if dtype is None and foreign_scalars and isinstance(x, _numpy.generic):
            return 0.0   # NumPy kept as written on constants (np.sum(0.5)) on another backend
        return native_zeros_like(x) if dtype is None else native_zeros_like(x, dtype)

    def index_add_any(x: Any, index: Any, values: Any) -> Any:
        if type(x) is list:
            out = list(x)
            out[index] = out[index] + values
            return out
        return native_index_add(x, index, values)

    ns["zeros_like"] = zeros_like_any
    ns["index_add"] = index_add_any
    helpers = dict(broadcast_like=broadcast_like, matmul_grad_x=matmul_grad_x,
                   prod_others=prod_others, prod_others_jvp=prod_others_jvp,
                   matmul_grad_y=matmul_grad_y, inverse_axes=inverse_axes, untile=untile,
                   unconcatenate=unconcatenate, zeros_like_list=zeros_like_list,
                   add_lists=add_lists)
    for key, fn in helpers.items():
        if key in ns:      # the backend has a faster form of its own, which falls back on this
            ns["generic_" + key] = fn
        else:
            ns[key] = fn


#: The helpers' signatures, for documentation and the conformance tests.
SIGNATURES = {
    "broadcast_like": "(g, x)",
    "matmul_grad_x": "(dz, x, y)",
    "matmul_grad_y": "(dz, x, y)",
    "inverse_axes": "(axes)",
    "prod_others": "(x, axis=None)",
    "prod_others_jvp": "(x, x_dot, axis=None)",
    "untile": "(g, x, reps)",
    "unconcatenate": "(g, xs, axis=0)",
    "zeros_like_list": "(xs)",
    "add_lists": "(a, b)",
}
