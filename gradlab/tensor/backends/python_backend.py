"""Plain Python numbers: ``math`` for scalars (a NumPy call on a float costs ten times more),
NumPy for anything else. Chosen when every input of a generated function is a Python number,
so results stay Python numbers, as the user's own ``math`` code would give."""
from __future__ import annotations

import builtins
import math
from typing import Any, Callable

from . import numpy_backend as _np_ops
from .numpy_backend import *  # noqa: F401,F403  (everything not overridden below)
from .numpy_backend import native_dtype  # noqa: F401

NAME = "python"


def _scalar_first(scalar_fn: Callable[[float], Any], array_fn: Callable[[Any], Any]
                  ) -> Callable[[Any], Any]:
    def op(x: Any) -> Any:
        if type(x) is float or type(x) is int:
            try:
                return scalar_fn(x)
            except (ValueError, OverflowError):  # outside the domain: NumPy gives nan/inf
                return float(array_fn(float(x)))
        return array_fn(x)
    op.__name__ = array_fn.__name__
    op.__doc__ = f"math.{scalar_fn.__name__} for Python numbers, numpy otherwise."
    return op


def _sigmoid(x: float) -> float:
    return 0.5 * (math.tanh(0.5 * x) + 1.0)


def _softplus(x: float) -> float:
    # builtins: the star import below binds max and abs to NumPy's reductions
    return builtins.max(x, 0.0) + math.log1p(math.exp(-builtins.abs(x)))


_PAIRS = dict(sqrt=math.sqrt, exp=math.exp, expm1=math.expm1, log=math.log, log1p=math.log1p,
              log2=math.log2, log10=math.log10, sin=math.sin, cos=math.cos, tan=math.tan,
              arcsin=math.asin, arccos=math.acos, arctan=math.atan, sinh=math.sinh,
              cosh=math.cosh, tanh=math.tanh, arcsinh=math.asinh, arccosh=math.acosh,
              arctanh=math.atanh, erf=math.erf, sigmoid=_sigmoid, softplus=_softplus)

for _name, _fn in _PAIRS.items():
    globals()[_name] = _scalar_first(_fn, getattr(_np_ops, _name))
del _name, _fn


def zeros_like(x: Any, dtype: Any = None) -> Any:  # type: ignore[no-redef]
    if type(x) is float or type(x) is int:
        return 0.0
    return _np_ops.zeros_like(x, dtype)


def ones_like(x: Any, dtype: Any = None) -> Any:  # type: ignore[no-redef]
    if type(x) is float or type(x) is int:
        return 1.0
    return _np_ops.ones_like(x, dtype)
