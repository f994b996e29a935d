"""Unary and binary primitives and reductions on plain Python numbers, shared by every backend that
needs them.

Generated code can hand a primitive a Python float: a branch that yields a constant
(``np.sin(x[1] if x[1] < 0 else 0.5)``), a helper's default argument, a rule applied to such a
value in the backward pass. NumPy accepts one, but ``torch.sin(0.5)`` raises and TensorFlow
silently makes a float32 tensor that cannot meet the user's float64 values. Answering with a
Python float instead keeps each framework's weak typing in charge of the dtype, as it is when
the user writes ``x * 0.5``. The ``math`` module is also ten times cheaper than a NumPy call on a
float, which is why the pure-Python backend uses the same table.
"""
from __future__ import annotations

import builtins
import functools
import math
from typing import Any, Callable

import numpy as np

from . import promote


def _sigmoid(x: float) -> float:
    return 0.5 * (math.tanh(0.5 * x) + 1.0)


def _softplus(x: float) -> float:
    return builtins.max(x, 0.0) + math.log1p(math.exp(-builtins.abs(x)))


def _sign(x: float) -> float:
    return x if x != x else float(x > 0) - float(x < 0)   # NumPy's sign: nan stays nan


#: Numbers answered without the framework: Python's, and NumPy's scalars (``np.abs(0.5)`` in
#: code kept as written on constants gives one, and torch refuses it as it refuses a float);
#: NUMBERS_AND_BOOLS adds truth values, which NumPy counts as 0 and 1 (``np.exp(x > 0)`` of a
#: float ``x``: ``tf.exp(True)`` and ``torch.exp(True)`` raise)
NUMBERS = promote.NUMBERS_AND_BOOLS - {bool, np.bool_}
NUMBERS_AND_BOOLS = promote.NUMBERS_AND_BOOLS


#: primitive name -> its value on one Python number
SCALAR_FUNCTIONS: dict[str, Callable[[float], Any]] = dict(
    sqrt=math.sqrt, exp=math.exp, expm1=math.expm1, log=math.log, log1p=math.log1p,
    log2=math.log2, log10=math.log10, sin=math.sin, cos=math.cos, tan=math.tan,
    arcsin=math.asin, arccos=math.acos, arctan=math.atan, sinh=math.sinh, cosh=math.cosh,
    tanh=math.tanh, arcsinh=math.asinh, arccosh=math.acosh, arctanh=math.atanh, erf=math.erf,
    sigmoid=_sigmoid, softplus=_softplus, abs=lambda x: builtins.abs(float(x)),
    square=lambda x: float(x) * x, sign=_sign, relu=lambda x: builtins.max(float(x), 0.0),
    negative=lambda x: -float(x), reciprocal=lambda x: 1.0 / x,
    real=float, imag=lambda x: 0.0, conj=float, angle=lambda x: math.pi if x < 0 else 0.0)


#: unary predicates on one Python number (``np.isfinite(math.expm1(w))`` of a Python float w):
#: a Python bool, as NumPy's is a bool
SCALAR_PREDICATES: dict[str, Callable[[float], bool]] = dict(
    isnan=math.isnan, isinf=math.isinf, isfinite=math.isfinite, logical_not=lambda x: not x)


_BOOLS = frozenset({bool, np.bool_})
#: NumPy computes its float functions of a truth value in float16 (``np.exp(True)`` is 2.719)
_NUMPY_OF_BOOL = {name: getattr(np, name) for name in SCALAR_FUNCTIONS
                  if isinstance(getattr(np, name, None), np.ufunc)}


def scalar_first(name: str, array_fn: Callable[[Any], Any], casts: dict[Any, Any] | None = None,
                 astype: Callable[[Any, Any], Any] | None = None) -> Callable[[Any], Any]:
    """``array_fn`` for tensors; for a Python int or float, the ``math`` value as a Python
    float (NumPy's nan/inf where ``math`` refuses, as outside a function's domain). ``casts``:
    the tensor dtypes to cast first, and to what (``promote.casts``: NumPy's dtype for ints and
    bools), with ``astype``; the check is in this one frame, not a second wrapper."""
    scalar_fn: Callable[[float], Any] = SCALAR_FUNCTIONS.get(name) or SCALAR_PREDICATES[name]
    table = casts or {}
    numbers = NUMBERS_AND_BOOLS

    def op(x: Any) -> Any:
        if type(x) in numbers:
            if type(x) in _BOOLS and name in _NUMPY_OF_BOOL:   # NumPy's value: in float16
                try:
                    return float(_NUMPY_OF_BOOL[name](x))
                except TypeError:   # (np.sign has no loop for bools; torch's sign does: 1 or 0)
                    pass
            try:
                return scalar_fn(float(x))
            except (ValueError, OverflowError, ZeroDivisionError):
                # the functions that raise there are NumPy's own ufuncs (sqrt, log, exp...),
                # the NumPy backend's too (NumPy itself, not that backend: it loads this table)
                return float(getattr(np, name)(float(x)))
        try:                           # (free when nothing raises: no getattr call)
            cast = x.dtype in table
        except AttributeError:         # a list, to a framework that takes one
            if type(x) is complex and hasattr(np, name):   # complex(s).real: NumPy's value
                value = getattr(np, name)(x)
                return value.item() if isinstance(value, np.generic) else value
            cast = False
        if cast:
            to = table[x.dtype]
            if to is None:             # floor of an int, abs of a bool: the value itself
                return x
            x = astype(x, to)          # type: ignore[misc]
        return array_fn(x)
    op.__name__ = name
    op.__doc__ = f"{getattr(array_fn, '__name__', name)} for arrays; Python numbers stay Python."
    return op


#: reductions, and what each gives for one number (``np.sum(0.5)`` is 0.5, its var 0.0)
SCALAR_REDUCTIONS: dict[str, Callable[[float], Any]] = dict(
    sum=float, mean=float, prod=float, max=float, min=float, logsumexp=float,
    var=lambda x: 0.0, std=lambda x: 0.0, any=bool, all=bool)

#: the axes NumPy lets a 0-d array be reduced over, as over all of them (``v.min(-1)`` of a
#: 0-d ``v``); torch, TensorFlow and JAX refuse them
_AXES_OF_0D = (0, -1, (0,), (-1,))


def _over_all_axes(x: Any, axis: Any) -> bool:
    """Whether ``axis`` (not None) means every axis of ``x``: a number's or a 0-d value's
    axis 0 or -1."""
    return axis in _AXES_OF_0D and (
        type(x) in NUMBERS_AND_BOOLS or getattr(x, "ndim", None) == 0)


def reduction_first(name: str, array_fn: Callable[..., Any],
                    array: Callable[[Any], Any] | None = None) -> Callable[..., Any]:
    """``array_fn`` for tensors; a Python int or float reduced over every axis (its only one)
    is a Python float, as NumPy would give (``np.sum(x * 1.0 if c else 0.5)``), and over an
    axis, with ``array``, a 0-d tensor. A 0-d value reduced over axis 0 or -1 is reduced over
    all its axes (none), as NumPy allows."""
    scalar_fn = SCALAR_REDUCTIONS[name]

    @functools.wraps(array_fn)
    def op(x: Any, axis: Any = None, **kwargs: Any) -> Any:
        if type(x) in NUMBERS_AND_BOOLS:
            if axis is None and not kwargs.get("ddof"):
                return scalar_fn(x)
            if array is not None:
                x = array(x)
        if axis is not None and _over_all_axes(x, axis):
            axis = None
        # without keywords (the common call) no dict is unpacked into the call
        return array_fn(x, axis, **kwargs) if kwargs else array_fn(x, axis)
    return op


def numpy_axes_versions(ns: dict[str, Any]) -> dict[str, Callable[..., Any]]:
    """For a namespace that takes Python numbers as they are (JAX): its reductions, with a 0-d
    value reduced over axis 0 or -1 as NumPy reduces it (see :func:`reduction_first`)."""
    out: dict[str, Callable[..., Any]] = {}
    for name in SCALAR_REDUCTIONS:
        fn = ns[name]

        def op(x: Any, axis: Any = None, *args: Any, __fn: Any = fn, **kwargs: Any) -> Any:
            if axis is not None and _over_all_axes(x, axis):
                axis = None
            return __fn(x, axis, *args, **kwargs)
        out[name] = functools.wraps(fn)(op)
    return out


_INTEGERS = frozenset({int, np.int64, np.int32})


def _maximum(a: Any, b: Any) -> Any:
    return a if a >= b or a != a else b     # NumPy's: a nan on either side wins


def _minimum(a: Any, b: Any) -> Any:
    return a if a <= b or a != a else b


def _floor_divide(a: Any, b: Any) -> Any:
    return a // b if b else np.floor_divide(a, b)   # NumPy's at 0: inf/nan, 0 for ints


def _mod(a: Any, b: Any) -> Any:
    return a % b if b else np.remainder(a, b)   # the divisor's sign, as NumPy; NumPy's at 0


#: binary primitives on two numbers (``np.maximum(v, 0.5)`` where ``v`` is still 0.5;
#: ``np.remainder(1.5, v)``, whose forward rule reads ``floor_divide(1.5, v)``)
SCALAR_BINARY: dict[str, Callable[[Any, Any], Any]] = dict(
    maximum=_maximum, minimum=_minimum, arctan2=math.atan2, hypot=math.hypot,
    logaddexp=lambda a, b: float(np.logaddexp(a, b)), floor_divide=_floor_divide, mod=_mod)


def binary_first(name: str, array_fn: Callable[..., Any]) -> Callable[..., Any]:
    """``array_fn`` unless both arguments are Python (or NumPy) numbers: then a Python float,
    or an int for the larger or smaller of two ints (``range(np.minimum(len(x), len(y)))``)."""
    scalar_fn = SCALAR_BINARY[name]
    keeps_ints = name not in ("arctan2", "hypot", "logaddexp")

    @functools.wraps(array_fn)
    def op(x: Any, y: Any) -> Any:
        tx, ty = type(x), type(y)
        if tx in NUMBERS_AND_BOOLS and ty in NUMBERS_AND_BOOLS:
            if keeps_ints and tx in _INTEGERS and ty in _INTEGERS:
                return int(scalar_fn(x, y))
            return float(scalar_fn(float(x), float(y)))
        return array_fn(x, y)
    return op


def round_first(array_fn: Callable[..., Any]) -> Callable[..., Any]:
    """``array_fn`` for tensors; a Python number rounded as NumPy rounds it (half to even),
    as a Python float (``round(3.14159, 2)`` in the user's code)."""
    @functools.wraps(array_fn)
    def op(x: Any, decimals: int = 0) -> Any:
        if type(x) in NUMBERS_AND_BOOLS:
            return float(np.round(x, decimals))
        return array_fn(x, decimals)
    return op


#: primitives of one array with no Python-number version of their own: a number is first made
#: the framework's 0-d tensor of NumPy's dtype (``np.any(x)`` or ``np.cumsum(x)`` of a float
#: ``x`` on torch, ``scipy.special.softmax`` of one number on TensorFlow)
TENSOR_FIRST = ("cumsum", "flip", "squeeze", "softmax", "log_softmax", "rsqrt", "argsort",
                "logsumexp_shift", "norm", "linalg_norm", "prod_others", "tile", "expand_dims",
                "clip")


def tensor_first(array_fn: Callable[..., Any], array: Callable[[Any], Any]
                 ) -> Callable[..., Any]:
    """``array_fn``, with a Python or NumPy number (or truth value) first made a tensor by
    ``array`` (the namespace's ``array``: NumPy's dtype, float64 for a Python float)."""
    @functools.wraps(array_fn)
    def op(x: Any, *args: Any, **kwargs: Any) -> Any:
        if type(x) in NUMBERS_AND_BOOLS:
            x = array(x)
        return array_fn(x, *args, **kwargs)
    return op


def python_number_versions(ns: dict[str, Any], casts_like_numpy: bool = False
                           ) -> dict[str, Callable[..., Any]]:
    """For a namespace whose framework refuses Python numbers: each of its unary primitives
    wrapped with :func:`scalar_first`, each reduction with :func:`reduction_first` and each
    binary primitive with :func:`binary_first` (the namespace itself is left as it is). Such
    a framework also differs from NumPy on the unary functions of ints and bools: they are
    computed in NumPy's dtype (:mod:`.promote`) when ``casts_like_numpy``."""
    out: dict[str, Callable[..., Any]] = {}
    # (the pure-Python backend casts nothing and has neither)
    native: Any = ns.get("native_dtype")
    astype: Any = ns.get("astype")
    for name in [*SCALAR_FUNCTIONS, *SCALAR_PREDICATES]:
        if name in ns:
            table = promote.casts(name, native) if casts_like_numpy else {}
            out[name] = scalar_first(name, ns[name], table, astype)
    if casts_like_numpy:
        for name in promote.UNWRAPPED:
            out[name] = promote.numpy_typed(name, ns[name], native, astype)
    array = ns.get("array")
    for name in SCALAR_REDUCTIONS:
        out[name] = reduction_first(name, ns[name], array)
    for name in SCALAR_BINARY:
        out[name] = binary_first(name, ns[name])
    for name in TENSOR_FIRST:
        if name in ns and array is not None:
            out[name] = tensor_first(ns[name], array)
    out["round"] = round_first(promote.numpy_round(ns["round"], native, astype)
                               if casts_like_numpy
                               else ns["round"])
    return out
