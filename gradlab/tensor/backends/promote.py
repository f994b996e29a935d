"""NumPy's dtypes for the unary functions of an int or bool array, on frameworks that differ.

The user's code is NumPy code (or is read as such: the tensor layer's contract is NumPy's
results, dtypes included), and NumPy computes ``np.log`` of an int64 array in float64,
``np.exp`` of a bool array in float16, ``np.floor`` of either as itself. PyTorch computes the
float functions of ints in its default float32 (a value that then differs from NumPy's and
meets the user's float64 values in the gradient code) and refuses ``abs``/``floor`` of a bool;
TensorFlow refuses all of them. So, on those two backends, an int or bool operand of a unary
function is first cast to the dtype NumPy computes in: the function then gives NumPy's value in
NumPy's dtype. The table is read off NumPy itself, per function and input dtype, once.

Where a framework's own users would expect its default float32 instead: the generated code
builds its constants in float64 next to the user's values (see :mod:`gradlab.tensor.spec`), and
one float32 made of ints would meet them; NumPy's answer is the one that is right everywhere.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

#: The non-float dtypes whose operands are cast (by NumPy name).
NON_FLOAT = ("bool", "int8", "int16", "int32", "int64", "uint8")

#: Functions that compute in floats, with their NumPy spelling where it differs (the others are
#: computed as NumPy computes ``np.tanh``: in the smallest float that holds the input).
FLOAT_FUNCTIONS = ("sqrt", "exp", "expm1", "log", "log1p", "log2", "log10", "sin", "cos",
                   "tan", "arcsin", "arccos", "arctan", "sinh", "cosh", "tanh", "arcsinh",
                   "arccosh", "arctanh", "erf", "sigmoid", "softplus")
#: Functions that keep an int or bool dtype in NumPy (``abs`` of a bool is itself).
KEEPING_FUNCTIONS = ("abs", "square", "floor", "ceil", "relu")
#: The ones :mod:`.scalars` does not wrap for Python numbers (wrapped here alone).
UNWRAPPED = ("floor", "ceil")

#: Python's and NumPy's numbers and truth values: what the number paths here and in
#: :mod:`.scalars` answer without the framework
NUMBERS_AND_BOOLS = frozenset({float, int, bool, np.float64, np.float32, np.float16, np.int64,
                               np.int32, np.bool_})


def numpy_dtype(name: str, dtype: str) -> str:
    """The dtype NumPy gives function ``name`` of an array of ``dtype``; for the functions NumPy
    lacks (``sigmoid``, ``erf``, ``relu``...), float64, as gradlab's NumPy backend gives."""
    if not hasattr(np, name):
        return "float64"
    if name in FLOAT_FUNCTIONS:
        return np.promote_types(dtype, np.float16).name
    return getattr(np, name)(np.zeros(1, dtype)).dtype.name


def casts(name: str, native: Callable[[str], Any]) -> dict[Any, Any]:
    """native input dtype -> native dtype to compute function ``name`` in, for the non-float
    dtypes that need a cast first; None where the function of such a value is the value itself
    (``floor`` of an int, ``abs`` of a bool), which the framework may refuse to compute."""
    out: dict[Any, Any] = {}
    if name not in FLOAT_FUNCTIONS and name not in KEEPING_FUNCTIONS:
        return out           # sign, negative, reciprocal: as the framework has them
    for dtype in NON_FLOAT:
        target = numpy_dtype(name, dtype)
        if name in FLOAT_FUNCTIONS or target != dtype and not hasattr(np, name):
            out[native(dtype)] = native(target)
        elif target == dtype and (name in ("floor", "ceil") or dtype == "bool"):
            out[native(dtype)] = None
        elif target != dtype:
            out[native(dtype)] = native(target)
    return out


def numpy_typed(name: str, array_fn: Callable[[Any], Any], native: Callable[[str], Any],
                astype: Callable[[Any, Any], Any]) -> Callable[[Any], Any]:
    """``array_fn`` of a tensor, cast first as NumPy computes it (see :func:`casts`); a value
    that is not a tensor goes to ``array_fn`` as it is."""
    table = casts(name, native)
    numbers = NUMBERS_AND_BOOLS if name in UNWRAPPED else ()    # (the others: see scalars.py)
    whole_numbers = (int, np.int64, np.int32) if name in FLOAT_FUNCTIONS else ()

    def op(x: Any) -> Any:
        if type(x) in numbers:       # math.floor(np.mean(v)) of a Python float: NumPy's value
            return float(getattr(np, name)(x))
        if type(x) is bool:          # np.exp(w > 0) of a Python float w: NumPy's bool, cast
            x = np.bool_(x)
        elif type(x) in whole_numbers:   # expit of a loop's index: jax.nn.sigmoid takes floats
            x = float(x)
        dtype = getattr(x, "dtype", None)
        if dtype in table:
            to = table[dtype]
            if to is None:
                return x
            x = astype(x, to)
        return array_fn(x)
    op.__name__ = name
    op.__doc__ = f"{name} with NumPy's dtype for ints and bools (see gradlab.tensor.backends." \
                 f"promote)."
    return op


def numpy_typed_versions(ns: dict[str, Any]) -> dict[str, Callable[[Any], Any]]:
    """For a namespace that takes Python numbers as they are (JAX): its unary functions that
    need a cast for some dtype, each wrapped with :func:`numpy_typed`."""
    # NumPy's dtypes themselves, not the namespace's canonical ones: JAX's arrays carry NumPy
    # dtypes, and which ints and floats it canonicalizes to depends on jax_enable_x64 *when
    # called* (a table made before x64 was switched on had no int64)
    native, astype = np.dtype, ns["astype"]
    out = {name: numpy_typed(name, ns[name], native, astype)
           for name in FLOAT_FUNCTIONS + KEEPING_FUNCTIONS if name in ns}
    out["round"] = numpy_round(ns["round"], native, astype)
    return out


#: Binary functions NumPy computes of two truth values in int8 (``b % b``), which torch and
#: TensorFlow refuse to compute of bools and JAX computes in int32; of ints, NumPy gives 0 for a
#: zero divisor, where torch and TensorFlow raise
INTEGER_DIVISION = ("mod", "floor_divide")


def integer_division_versions(ns: dict[str, Any], native: Callable[[str], Any]
                              ) -> dict[str, Callable[[Any, Any], Any]]:
    """The namespace's :data:`INTEGER_DIVISION` functions as NumPy has them: of two bool
    operands (arrays or a Python truth value), cast to int8 first; of ints, 0 where the
    divisor is 0 (JAX gives -1 there)."""
    boolean, int8, int64, astype = native("bool"), native("int8"), native("int64"), ns["astype"]
    where, equal = ns["where"], ns["equal"]
    integers = frozenset(native(d) for d in NON_FLOAT)      # (a truth value divides as 0 or 1)

    def integer(v: Any) -> bool:
        return type(v) is int or type(v) is bool or getattr(v, "dtype", None) in integers

    def whole(v: Any, other: Any) -> Any:
        """A truth value as the other operand's int dtype (int8 beside another truth value)."""
        if type(v) is bool:
            return int(v)
        if getattr(v, "dtype", None) != boolean:
            return v
        if type(other) is int:                              # NumPy's default int
            return astype(v, int64)
        to = getattr(other, "dtype", None)
        return astype(v, to if to in integers and to != boolean else int8)

    def as_numpy_does(array_fn: Callable[[Any, Any], Any]) -> Callable[[Any, Any], Any]:
        def op(x: Any, y: Any) -> Any:
            if not (integer(x) and integer(y)):
                return array_fn(x, y)
            x, y = whole(x, y), whole(y, x)
            if type(y) is int:
                return array_fn(x, y) if y else x * 0
            zero = equal(y, 0)
            return where(zero, 0, array_fn(x, where(zero, 1, y)))
        op.__name__ = array_fn.__name__
        op.__doc__ = array_fn.__doc__
        return op
    return {name: as_numpy_does(ns[name]) for name in INTEGER_DIVISION}


def numpy_round(array_fn: Callable[..., Any], native: Callable[[str], Any],
                astype: Callable[[Any, Any], Any]) -> Callable[..., Any]:
    """``round`` of a tensor as NumPy's: of an int one to whole places, the tensor itself; of a
    bool one, float16 (torch and JAX refuse to round a bool, TensorFlow an int)."""
    whole = {native(d): None for d in NON_FLOAT if d != "bool"}
    whole[native("bool")] = native(numpy_dtype("round", "bool"))

    def round(x: Any, decimals: int = 0) -> Any:
        if type(x) in (bool, np.bool_):             # np.round(True): 1.0 (JAX refuses it)
            return float(x)
        dtype = getattr(x, "dtype", None)
        if dtype in whole:
            if whole[dtype] is not None:
                return astype(x, whole[dtype])      # 0 and 1 round to themselves
            if decimals >= 0:
                return x
        return array_fn(x, decimals)
    return round
