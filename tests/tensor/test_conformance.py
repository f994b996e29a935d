"""Every primitive of ``gradlab.tensor.spec.SIGNATURES`` against NumPy, on each backend.

The suite is one table, ``CASES``: each row names a primitive, says how to build its inputs (in
the dtype under test) and which NumPy expression is the reference. Each row runs on NumPy,
PyTorch, TensorFlow and JAX, in float32 and float64 (rows whose inputs are integer or boolean run
once), and the result must equal NumPy's: same shape, same dtype, values within a tolerance fit for
the dtype. ``test_table_covers_spec`` fails when a primitive has no row, so the table stays
complete as the spec grows. Rows marked ``traced`` also run inside ``jax.jit`` and
``tf.function``.

Conventions of the contract that NumPy alone does not fix (documented in ``spec.py``):

* creation functions called with ``dtype=None`` give NumPy's dtypes on every backend: float64 for
  floats (not PyTorch's or TensorFlow's float32: generated code builds constants next to the
  user's float64 values), int64 for ints; JAX without x64 can only give float32 (rows marked
  ``default_float``);
* ``norm`` is a vector norm over ``axis`` (``np.linalg.vector_norm``), for every ``ord``;
* ``argsort`` is stable; ``topk`` works on the last axis and returns int64 indices.
"""
from __future__ import annotations

import inspect
import math
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np
import pytest

import gradlab.tensor as gt
from gradlab.tensor import SIGNATURES, backend
from gradlab.tensor.dtypes import DType

from tests.conftest import require, to_framework, to_numpy

INF, NAN = float("inf"), float("nan")
# NumPy references on nan/inf rows warn, as NumPy does; the results are what is checked
pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")
FLOATS = ("float32", "float64")


# --- how a row describes its inputs --------------------------------------------------------------
class A:
    """An array argument: NumPy for the reference, converted to the framework under test."""

    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = np.asarray(value)

    def __repr__(self) -> str:
        return f"A({self.value.dtype}{list(self.value.shape)})"


class Lazy:
    """An argument built once the dtype under test is known."""

    __slots__ = ("fn",)

    def __init__(self, fn: Callable[[np.dtype], Any]) -> None:
        self.fn = fn


class _DT:
    """The dtype under test: gradlab's neutral dtype for the backend, NumPy's for the reference."""

    def __repr__(self) -> str:
        return "DT"


DT = _DT()


def F(*shape: int, lo: float = -2.0, hi: float = 2.0, seed: int = 0) -> Lazy:
    """A float array of ``shape`` in the dtype under test, uniform in [lo, hi)."""
    return Lazy(lambda dt: A(np.random.default_rng(seed).uniform(lo, hi, shape).astype(dt)))


def FV(values: Any) -> Lazy:
    """Given float values, in the dtype under test."""
    return Lazy(lambda dt: A(np.asarray(values, dtype=dt)))


def NZ(*shape: int, seed: int = 1) -> Lazy:
    """Floats away from zero: +-[0.5, 2)."""
    def make(dt: np.dtype) -> A:
        rng = np.random.default_rng(seed)
        return A((rng.uniform(0.5, 2.0, shape) * rng.choice([-1.0, 1.0], shape)).astype(dt))
    return Lazy(make)


def TIES(*shape: int, seed: int = 2, k: int = 3) -> Lazy:
    """Small integers as floats: many ties."""
    return Lazy(lambda dt: A(np.random.default_rng(seed).integers(0, k, shape).astype(dt)))


def PERM(*shape: int, seed: int = 3) -> Lazy:
    """Distinct floats (no ties)."""
    n = math.prod(shape)
    return Lazy(lambda dt: A(np.random.default_rng(seed).permutation(n).reshape(shape)
                             .astype(dt) / 4))


def WELL(*shape: int, seed: int = 4) -> Lazy:
    """Well-conditioned square matrices (last two axes)."""
    def make(dt: np.dtype) -> A:
        n = shape[-1]
        m = np.random.default_rng(seed).uniform(-1, 1, shape) + 3 * np.eye(n)
        return A(m.astype(dt))
    return Lazy(make)


def I(values: Any) -> A:  # noqa: E743 (an integer array, int64)
    return A(np.asarray(values, dtype=np.int64))


def B(*shape: int, seed: int = 5) -> A:
    return A(np.random.default_rng(seed).random(shape) < 0.5)


def resolve(obj: Any, dt: np.dtype) -> Any:
    if isinstance(obj, Lazy):
        return obj.fn(dt)
    if isinstance(obj, (list, tuple)):
        return type(obj)(resolve(o, dt) for o in obj)
    if isinstance(obj, dict):
        return {k: resolve(v, dt) for k, v in obj.items()}
    return obj


def to_np(obj: Any, dt: np.dtype) -> Any:
    if isinstance(obj, A):
        return obj.value
    if obj is DT:
        return dt
    if isinstance(obj, DType):
        return np.dtype(obj.name)
    if isinstance(obj, (list, tuple)):
        return type(obj)(to_np(o, dt) for o in obj)
    if isinstance(obj, dict):
        return {k: to_np(v, dt) for k, v in obj.items()}
    return obj


class Leaf:
    __slots__ = ("i",)

    def __init__(self, i: int) -> None:
        self.i = i


def to_template(obj: Any, fw: str, dt: np.dtype, leaves: list[Any]) -> Any:
    """``obj`` with each array replaced by a :class:`Leaf` numbering the converted arrays in
    ``leaves`` (so that a traced function can take them as its arguments)."""
    if isinstance(obj, A):
        leaves.append(to_framework(obj.value, fw))
        return Leaf(len(leaves) - 1)
    if obj is DT:
        return getattr(gt, np.dtype(dt).name)
    if isinstance(obj, (list, tuple)):
        return type(obj)(to_template(o, fw, dt, leaves) for o in obj)
    if isinstance(obj, dict):
        return {k: to_template(v, fw, dt, leaves) for k, v in obj.items()}
    return obj


def fill(obj: Any, arrays: tuple[Any, ...]) -> Any:
    if isinstance(obj, Leaf):
        return arrays[obj.i]
    if isinstance(obj, (list, tuple)):
        return type(obj)(fill(o, arrays) for o in obj)
    if isinstance(obj, dict):
        return {k: fill(v, arrays) for k, v in obj.items()}
    return obj


# --- the table -----------------------------------------------------------------------------------
@dataclass
class Case:
    name: str
    args: tuple[Any, ...]
    kwargs: dict[str, Any]
    ref: Callable[..., Any]
    id: str
    tol: float = 1.0                    # multiplies the dtype's tolerance
    traced: bool = False                # also run inside jax.jit and tf.function
    floats: bool = True                 # run in float32 and float64 (else once)
    default_float: bool = False         # float results in the framework's default float dtype
    check: Callable[..., None] | None = None   # custom check(fn, fw, dt) instead of a reference
    out_framework: str | None = None    # the result's framework, if not the backend's
    marks: list[Any] = field(default_factory=list)

    @property
    def dtypes(self) -> tuple[str | None, ...]:
        return FLOATS if self.floats else (None,)


CASES: list[Case] = []


def case(name: str, *args: Any, kw: dict[str, Any] | None = None,
         ref: Callable[..., Any] | None = None, id: str = "", **options: Any) -> None:
    if ref is None:
        ref = getattr(np, name, None) or _no_reference
    if not id:
        id = ",".join(_short(a) for a in args[1:]) + "".join(
            f",{k}={_short(v)}" for k, v in (kw or {}).items())
    CASES.append(Case(name, args, dict(kw or {}), ref, id.strip(","), **options))


def _no_reference(*args: Any, **kwargs: Any) -> Any:
    raise AssertionError("this row needs a ref or a check")


def _short(v: Any) -> str:
    if isinstance(v, Lazy):
        return "arr"
    if isinstance(v, A):
        return "idx" if v.value.dtype.kind in "iu" else ("mask" if v.value.dtype == bool else
                                                          "arr")
    if isinstance(v, slice):
        return ":".join("" if p is None else str(p) for p in (v.start, v.stop, v.step))
    if isinstance(v, tuple):
        return "(" + ";".join(_short(x) for x in v) + ")"
    if v is Ellipsis:
        return "..."
    return str(v)


def _in_float64(fn: Callable[..., Any]) -> Callable[..., Any]:
    """A reference computed in float64 and rounded to the input's dtype."""
    def ref(x: Any, *rest: Any, **kw: Any) -> Any:
        return np.asarray(fn(np.asarray(x, np.float64), *rest, **kw)).astype(x.dtype)
    return ref


_erf = np.vectorize(math.erf, otypes=[np.float64])

# elementwise unary: name -> (lo, hi) of the input, reference
UNARY: dict[str, tuple[float, float, Callable[..., Any]]] = {
    "abs": (-2, 2, np.abs), "sign": (-2, 2, np.sign), "sqrt": (0.1, 4, np.sqrt),
    "square": (-2, 2, np.square), "exp": (-3, 3, np.exp), "expm1": (-3, 3, np.expm1),
    "log": (0.1, 4, np.log), "log1p": (-0.5, 4, np.log1p), "log2": (0.1, 4, np.log2),
    "log10": (0.1, 4, np.log10), "sin": (-3, 3, np.sin), "cos": (-3, 3, np.cos),
    "tan": (-1.2, 1.2, np.tan), "arcsin": (-0.9, 0.9, np.arcsin),
    "arccos": (-0.9, 0.9, np.arccos), "arctan": (-3, 3, np.arctan),
    "sinh": (-3, 3, np.sinh), "cosh": (-3, 3, np.cosh), "tanh": (-3, 3, np.tanh),
    "arcsinh": (-3, 3, np.arcsinh), "arccosh": (1.1, 4, np.arccosh),
    "arctanh": (-0.9, 0.9, np.arctanh),
    "sigmoid": (-6, 6, _in_float64(lambda x: 1 / (1 + np.exp(-x)))),
    "softplus": (-6, 6, _in_float64(lambda x: np.logaddexp(0.0, x))),
    "relu": (-2, 2, lambda x: np.maximum(x, 0)),
    "erf": (-2, 2, _in_float64(_erf)),
    "floor": (-3, 3, np.floor), "ceil": (-3, 3, np.ceil), "round": (-3, 3, np.round),
    "negative": (-2, 2, np.negative), "reciprocal": (0.5, 3, np.reciprocal),
    "rsqrt": (0.5, 3, lambda x: 1 / np.sqrt(x)),
    "isnan": (-2, 2, np.isnan), "isinf": (-2, 2, np.isinf), "isfinite": (-2, 2, np.isfinite),
    # parts of complex values, of real ones here (angle: 0 or pi)
    "real": (-2, 2, np.real), "imag": (-2, 2, np.imag), "conj": (-2, 2, np.conj),
    "angle": (-2, 2, np.angle),
}
SPECIAL = [NAN, INF, -INF, 0.0, -0.0, 0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 3.7, -3.7, 1e-8]
for _name, (_lo, _hi, _ref) in UNARY.items():
    case(_name, F(3, 4, lo=_lo, hi=_hi), ref=_ref, id="3x4", traced=_name in ("tanh", "erf"))
for _name in ("abs sign floor ceil round negative isnan isinf isfinite relu sigmoid softplus "
              "tanh exp sqrt").split():
    _ref = UNARY[_name][2]
    case(_name, FV(SPECIAL), ref=(lambda r: lambda x: np.where(np.isnan(x), x, r(x)))(_ref)
         if _name in ("sign",) else _ref, id="nan,inf,halves")
case("logical_not", B(3, 4), floats=False)

# elementwise binary
_BIN_DOMAIN = {"power": (F(3, 4, lo=0.5, hi=2), F(3, 4, seed=1), F(4, seed=1)),
               "divide": (F(3, 4), NZ(3, 4), NZ(4)),
               "floor_divide": (F(3, 4, lo=-5, hi=5), NZ(3, 4), NZ(4)),
               "mod": (F(3, 4, lo=-5, hi=5), NZ(3, 4), NZ(4))}
_TIED_X = TIES(3, 4, seed=6)
_TIED_Y = TIES(3, 4, seed=7)
for _name in """add subtract multiply divide power maximum minimum arctan2 hypot logaddexp floor_divide
        mod equal not_equal less less_equal greater greater_equal""".split():
    if _name in _BIN_DOMAIN:
        _x, _y, _yb = _BIN_DOMAIN[_name]
    elif _name in ("equal", "not_equal", "less", "less_equal", "greater", "greater_equal"):
        _x, _y, _yb = _TIED_X, _TIED_Y, TIES(4, seed=8)
    else:
        _x, _y, _yb = F(3, 4), F(3, 4, seed=1), F(4, seed=1)
    case(_name, _x, _y, id="3x4,3x4", traced=_name in ("maximum", "mod", "less"))
    case(_name, _x, _yb, id="3x4,4")
    case(_name, _x, 1.0 if _name in ("equal", "less") else 1.5, id="3x4,scalar")
for _name, _scalar in (("subtract", 2.0), ("divide", 1.0), ("power", 2.0), ("maximum", 0.0),
                       ("minimum", 0.0), ("less", 0.0), ("arctan2", 1.0), ("add", 1)):
    case(_name, _scalar, F(3, 4, lo=0.5 if _name == "divide" else -2), id="scalar,3x4")
case("power", F(3, 4), 3, id="3x4,int3")
case("squared_difference", F(3, 4), F(4, seed=1), ref=lambda x, y: (x - y) ** 2, id="3x4,4")
for _name in ("logical_and", "logical_or"):
    case(_name, B(3, 4), B(3, 4, seed=9), floats=False, id="3x4,3x4")
    case(_name, B(3, 4), B(4, seed=9), floats=False, id="3x4,4")
    case(_name, B(3, 4), True, floats=False, id="3x4,True")
for _a, _b in (((3, 4), (4, 5)), ((2, 3, 4), (4, 5)), ((2, 3, 4), (2, 4, 5)), ((4,), (4, 5)),
               ((3, 4), (4,)), ((4,), (4,))):
    _id = f"{'x'.join(map(str, _a))},{'x'.join(map(str, _b))}"
    case("matmul", F(*_a), F(*_b, seed=1), id=_id, traced=True)
    if not (len(_a) == 3 and len(_b) == 3):
        case("dot", F(*_a), F(*_b, seed=1), id=_id, traced=_id == "4,4")
case("dot", F(2, 3, 4), F(3, 4, 5, seed=1), id="3d,3d (tensordot rule)")
case("dot", F(3, 4), F(seed=1), id="3x4,0d")
case("outer", F(3), F(4, seed=1), id="3,4", traced=True)
case("outer", F(2, 2), F(3, seed=1), id="2x2 (flattened),3")

# reductions
AXES: list[Any] = [None, 0, -1, (0, 2), (-1, 0)]


def _logsumexp_ref(x: Any, axis: Any = None, keepdims: bool = False) -> Any:
    x64 = x.astype(np.float64)
    m = np.max(x64, axis=axis, keepdims=True)
    out = np.log(np.sum(np.exp(x64 - m), axis=axis, keepdims=True)) + m
    if not keepdims:
        out = np.squeeze(out, axis=axis) if axis is not None else out.reshape(())
    return out.astype(x.dtype)


for _name in ("sum", "mean", "prod", "max", "min", "logsumexp"):
    _x = F(2, 3, 4, lo=0.6, hi=1.4) if _name == "prod" else F(2, 3, 4)
    _ref = _logsumexp_ref if _name == "logsumexp" else getattr(np, _name)
    for _axis in AXES:
        for _keep in (False, True):
            case(_name, _x, _axis, kw={"keepdims": _keep}, ref=_ref, id=f"axis={_axis},"
                 f"keepdims={_keep}", traced=_axis == (-1, 0) and _keep is False)
    case(_name, _x, ref=_ref, id="defaults")
    case(_name, _x, (), ref=_ref, id="axis=() reduces nothing")


def _shift_ref(x: Any, axis: Any = None, keepdims: bool = False) -> Any:
    m = np.max(x, axis=axis, keepdims=keepdims)
    return np.where(np.isfinite(m), m, 0).astype(x.dtype)


for _axis in (None, -1, (0, 2)):
    for _keep in (False, True):
        case("logsumexp_shift", F(2, 3, 4), _axis, kw={"keepdims": _keep}, ref=_shift_ref,
             id=f"axis={_axis},keepdims={_keep}", traced=_axis == -1 and _keep)
case("logsumexp_shift", FV([[1000.0, -INF], [-INF, -INF], [INF, 0.0]]), -1, ref=_shift_ref,
     id="0 where the maximum is infinite", traced=True)
case("logsumexp", F(2, 3, lo=-1e4, hi=1e4), -1, ref=_logsumexp_ref, id="large", traced=True)
case("logsumexp", FV([[1000.0, 1000.0], [-1000.0, -1000.0], [-INF, 0.0]]), -1,
     ref=_logsumexp_ref, id="huge,-inf")
case("logsumexp", FV([[-INF, -INF]]), None, ref=lambda x, a: np.asarray(-INF, x.dtype),
     id="all -inf")
for _name in ("all", "any"):
    case(_name, B(2, 3), (), floats=False, id="axis=() reduces nothing")
    for _axis in AXES:
        for _keep in (False, True):
            case(_name, B(2, 3, 4), _axis, kw={"keepdims": _keep}, floats=False,
                 id=f"axis={_axis},keepdims={_keep}")
for _name in ("var", "std"):
    for _axis, _keep, _ddof in ((None, False, 0), (0, False, 1), (-1, True, 0), ((0, 2), False, 1),
                                ((0, 2), True, 0), (None, True, 1)):
        case(_name, F(2, 3, 4), _axis, kw={"keepdims": _keep, "ddof": _ddof},
             id=f"axis={_axis},keepdims={_keep},ddof={_ddof}", traced=_ddof == 1 and _axis == 0)
for _name in ("argmax", "argmin"):
    for _x, _what in ((PERM(3, 4, 5), "distinct"), (TIES(3, 4, 5, k=2), "ties")):
        for _axis in (None, 0, -1):
            for _keep in (False, True):
                case(_name, _x, _axis, kw={"keepdims": _keep},
                     id=f"{_what},axis={_axis},keepdims={_keep}",
                     traced=_axis == -1 and _keep and _what == "distinct")


def _norm_ref(x: Any, ord: Any = None, axis: Any = None, keepdims: bool = False) -> Any:
    out = np.linalg.vector_norm(x, ord=2 if ord is None else ord, axis=axis, keepdims=keepdims)
    return np.asarray(out).astype(x.dtype)


_NORM_X = Lazy(lambda dt: A((np.random.default_rng(10).uniform(-2, 2, (3, 4))
                             * (np.arange(12).reshape(3, 4) % 5 != 0)).astype(dt)))
for _ord in (None, 1, 2, INF, -INF, 0, 3, 0.5):
    for _axis, _keep in ((None, False), (-1, False), ((0, 1), True), (0, True)):
        case("norm", _NORM_X, _ord, _axis, kw={"keepdims": _keep}, ref=_norm_ref,
             id=f"ord={_ord},axis={_axis},keepdims={_keep}", traced=_ord == 2 and _axis == -1)
def _linalg_norm_ref(x: Any, ord: Any = None, axis: Any = None, keepdims: bool = False) -> Any:
    return np.asarray(np.linalg.norm(x, ord, axis, keepdims)).astype(x.dtype)


# np.linalg.norm: vector norms of a vector or along one axis, Frobenius for a matrix
for _x, _ord, _axis in ((F(5), None, None), (F(5), 1, None), (F(5), 3, None),
                        (_NORM_X, None, None), (_NORM_X, "fro", None), (_NORM_X, 2, 1),
                        (_NORM_X, None, (0, 1)), (F(2, 3, 4), 1, -1)):
    case("linalg_norm", _x, _ord, _axis, ref=_linalg_norm_ref,
         id=f"ord={_ord},axis={_axis}", traced=_ord == 2)
# matrix norms of the largest (smallest) column or row sum, without an axis and over two
for _x, _ord, _axis in ((_NORM_X, 1, None), (_NORM_X, INF, None), (_NORM_X, -INF, None),
                        (_NORM_X, 1, (1, 0)), (F(2, 3, 4), INF, (0, 2)),
                        (F(2, 3, 4), -INF, (-1, 0)), (F(5), -INF, None)):
    for _keep in (False, True):
        case("linalg_norm", _x, _ord, _axis, kw={"keepdims": _keep}, ref=_linalg_norm_ref,
             id=f"ord={_ord},axis={_axis},keepdims={_keep}", traced=_ord == 1 and _keep)


def _tf_norm_ref(x: Any, ord: Any = None, axis: Any = None, keepdims: bool = False,
                 vector_without_axis: bool = False) -> Any:
    flat = x.reshape(-1) if axis is None else x
    return _linalg_norm_ref(flat, ord, axis, keepdims)


for _ord in (1, INF, None):   # tf.norm: a 2-d array without an axis is one vector
    case("linalg_norm", _NORM_X, _ord, kw={"vector_without_axis": True}, ref=_tf_norm_ref,
         id=f"ord={_ord},vector_without_axis")


def _check_matrix_norm_refused(fn: Any, fw: str, dt: Any) -> None:
    from gradlab.errors import GradlabError
    with pytest.raises(GradlabError, match="matrix norm"):
        fn(to_framework(np.ones((3, 4), dtype=dt), fw), 2)


case("linalg_norm", check=_check_matrix_norm_refused, id="ord=2 of a matrix is refused")


def _check_matrix_norms_refused(fn: Any, fw: str, dt: Any) -> None:
    from gradlab.errors import GradlabError
    m = to_framework(np.ones((3, 4), dtype=dt), fw)
    for ord in (-2, -1, "nuc", 3):
        with pytest.raises(GradlabError, match="matrix norm"):
            fn(m, ord)
    with pytest.raises(GradlabError, match="matrix norm"):
        fn(to_framework(np.ones((2, 3, 4), dtype=dt), fw), 2, (0, 2))


case("linalg_norm", check=_check_matrix_norms_refused, id="-2, -1, nuc of a matrix are refused")
for _x in (F(3), F(2, 3), F(2, 3, 4), FV(1.5)):
    for _n in (1, 2, 3):
        case(f"atleast_{_n}d", _x, id=f"{_x.fn(np.float64).value.shape}")
for _axis in (None, 0, -1):
    case("cumsum", F(2, 3, 4), _axis, id=f"axis={_axis}", traced=_axis == -1)
    case("cumprod", F(2, 3, 4), _axis, id=f"axis={_axis}", traced=_axis == -1)
case("where", B(3, 4), F(3, 4), F(3, 4, seed=1), id="3x4", traced=True)
case("where", B(3, 4), F(3, 4), F(4, seed=1), id="broadcast")
case("where", B(3, 4), F(3, 4), 0.0, id="scalar y")
case("where", B(3, 4), 1.0, F(3, 4), id="scalar x")
case("clip", F(3, 4), -0.5, 0.5, id="scalars", traced=True)
case("clip", F(3, 4), F(3, 4, lo=-2, hi=-0.5, seed=1), F(4, lo=0.5, hi=2, seed=2), id="arrays")
case("clip", F(3, 4), 0.0, None, id="0,None")
case("clip", F(3, 4), None, 0.5, id="None,0.5")

# shapes
_X234 = F(2, 3, 4)
for _shape in ((6, 4), (-1,), 24, (4, -1), (2, 12)):
    case("reshape", _X234, _shape, traced=_shape == (4, -1))
case("reshape", F(1, 1), (), id="()")
for _axes in (None, (1, 0, 2), (2, 0, 1), (-1, 0, 1)):
    case("transpose", _X234, _axes, traced=_axes == (2, 0, 1))
case("transpose", _X234, id="defaults")
for _a1, _a2 in ((0, 2), (-1, 0), (1, 1)):
    case("swapaxes", _X234, _a1, _a2, traced=_a1 == -1)
case("matrix_transpose", _X234, id="2x3x4", traced=True)
case("matrix_transpose", F(3, 4), id="3x4")
case("matrix_transpose", FV(1.5), ref=lambda x: x, id="0-d: itself (torch's x.mT)")


def _check_mT_of_vector_refused(fn: Any, fw: str, dt: Any) -> None:
    from gradlab.errors import GradlabError
    with pytest.raises(GradlabError, match="no matrix transpose"):
        fn(to_framework(np.ones(3, dtype=dt), fw))


case("matrix_transpose", check=_check_mT_of_vector_refused, id="a vector is refused")
for _s, _d in ((0, -1), (-1, 0), (1, 2), (2, 1)):
    case("moveaxis", _X234, _s, _d, traced=_s == 0)
for _axis in (0, -1, 1, (0, 2), (-1, 0)):
    case("expand_dims", _X234, _axis, traced=_axis == (0, 2))
_X2131 = F(2, 1, 3, 1)
for _axis in (None, 1, (1, 3), -1):
    case("squeeze", _X2131, _axis, traced=_axis == -1)
case("squeeze", _X2131, id="defaults")
case("concatenate", [F(2, 3), F(2, 3, seed=1)], 0, id="2 arrays,0", traced=True)
case("concatenate", (F(2, 3), F(2, 1, seed=1), F(2, 2, seed=2)), -1, id="3 arrays (tuple),-1")
case("concatenate", [F(2, 3), F(1, 3, seed=1)], id="defaults")
for _axis in (0, 1, -1):
    case("stack", [F(2, 3), F(2, 3, seed=1), F(2, 3, seed=2)], _axis, traced=_axis == -1)
case("stack", [F(2, 3), F(2, 3, seed=1)], id="defaults")


def _unstack_ref(x: Any, axis: int = 0) -> list[Any]:
    return [np.take(x, i, axis=axis) for i in range(x.shape[axis])]


for _axis in (0, 1, -1):
    case("unstack", _X234, _axis, ref=_unstack_ref, traced=_axis == 1)
case("unstack", _X234, ref=_unstack_ref, id="defaults")
_X64 = F(6, 4)
for _args in ((3,), ([1, 4],), (2, 1), ([2], -1), ([],), ((1, 5),)):
    case("split", _X64, *_args, traced=_args == ([1, 4],))
for _x, _shape in ((F(4), (3, 4)), (F(3, 1), (2, 3, 5)), (F(), (2, 2)), (F(1, 4), (1, 4))):
    case("broadcast_to", _x, _shape, traced=_shape == (2, 3, 5))


def _sum_to_ref(x: Any, shape: Any) -> Any:
    shape = tuple(shape)
    lead = x.ndim - len(shape)
    out = np.sum(x, axis=tuple(range(lead))) if lead else x
    axes = tuple(i for i, n in enumerate(shape) if n == 1 and out.shape[i] != 1)
    return np.sum(out, axis=axes, keepdims=True) if axes else out


for _shape in ((3, 4), (3, 1), (1, 4), (2, 1, 4), (2, 3, 4), (4,), (1,), (), (1, 1, 1)):
    case("sum_to", _X234, _shape, ref=_sum_to_ref, traced=_shape == (3, 1))
    case("unbroadcast", _X234, Lazy(lambda dt, s=_shape: A(np.zeros(s, dt))),
         ref=lambda x, like: _sum_to_ref(x, like.shape), id=f"like {_shape}",
         traced=_shape == (1, 4))
# a 0-d adjoint (a zero reset to a number in a loop) stands for itself everywhere in ``like``
case("unbroadcast", Lazy(lambda dt: A(np.full((), 2.0, dt))),
     Lazy(lambda dt: A(np.zeros((3, 4), dt))), ref=lambda x, like: np.broadcast_to(x, like.shape),
     id="0-d into (3, 4)")
# the same with only ``like``'s shape saved (codegen/saves.py); a Python number stays one
for _shape in ((3, 4), (3, 1), (1, 4), (4,), ()):
    case("unbroadcast_to", _X234, _shape, ref=_sum_to_ref, id=f"to {_shape}")
case("unbroadcast_to", Lazy(lambda dt: A(np.full((), 2.0, dt))), (3, 4),
     ref=lambda x, shape: np.broadcast_to(x, shape), id="0-d into (3, 4)")
for _x, _reps in ((F(3), 2), (F(2, 3), (2, 1)), (F(2, 3), (2, 1, 1)), (_X234, (1, 2)),
                  (F(2, 3), 3)):
    case("tile", _x, _reps, traced=_reps == (2, 1, 1))
for _x, _repeats, _axis in ((F(3), 2, None), (F(2, 3), 3, None), (F(2, 3), 2, 1),
                            (_X234, 2, -1), (F(), 3, None)):
    case("repeat", _x, _repeats, _axis, traced=_axis == 1)
for _axis in (None, 0, -1, (0, 2)):
    case("flip", _X234, _axis, traced=_axis == (0, 2))
case("flip", _X234, id="defaults")
_X34 = F(3, 4)
def _pad_ref(x: Any, pad_width: Any, mode: str = "constant", constant_values: Any = 0) -> Any:
    if mode == "constant":
        return np.pad(x, pad_width, mode, constant_values=constant_values)
    return np.pad(x, pad_width, mode)


for _pw in (1, (1, 2), ((1, 0), (0, 2)), [(2, 1)], (0, 0)):
    case("pad", _X34, _pw, ref=_pad_ref, traced=_pw == (1, 2))
case("pad", _X34, ((1, 0), (0, 2)), "constant", 1.5, ref=_pad_ref, id="constant 1.5")
case("pad", _X34, ((1, 0), (0, 2)), kw={"constant_values": -2.0}, ref=_pad_ref,
     id="constant_values=-2")
for _mode in ("reflect", "edge", "symmetric", "wrap"):
    case("pad", _X34, ((2, 1), (1, 3)), _mode, ref=_pad_ref, id=_mode,
         traced=_mode in ("reflect", "edge"))
    case("pad", F(5), 2, kw={"mode": _mode}, ref=_pad_ref, id=f"1d,{_mode}")


def _flatten_ref(x: Any, start: int = 0, end: int = -1) -> Any:
    if x.ndim == 0:
        return x.reshape(1)
    s, e = start % x.ndim, end % x.ndim
    return x.reshape(x.shape[:s] + (-1,) + x.shape[e + 1:])


for _args in ((), (1,), (0, 1), (-2,), (1, 1), (0, -2)):
    case("flatten", _X234, *_args, ref=_flatten_ref, id=f"x{_args}", traced=_args == (1,))
case("flatten", F(5), ref=_flatten_ref, id="1d")
case("flatten", F(), ref=_flatten_ref, id="0d")
for _idx, _axis in ((I([0, 2, 2]), None), (I([0, 1, 1]), 0), (I([3, 0]), -1), (I([-1, 0]), 1),
                    (I([[0, 1], [1, 0]]), 0), (1, 1), (I([5, 23, 0]), None)):
    case("take", _X234, _idx, _axis, id=f"{_short(_idx)}{getattr(_idx, 'value', '')},{_axis}"
         .replace(" ", "").replace("\n", ""), traced=_axis == -1)
case("take", _X234, I([1, 0]), id="defaults")
case("take_along_axis", _X34, I([[0, 3], [1, 1], [2, 0]]), 1, id="3x2,axis=1", traced=True)
case("take_along_axis", _X34, I([[0, 2, 1, 0], [2, 2, 0, 1]]), 0, id="2x4,axis=0")
case("take_along_axis", _X34, I([[3], [0], [-1]]), -1, id="3x1,axis=-1 (negative index)")
case("take_along_axis", _X34, I([[1, 2]]), 1, id="1x2 (broadcast),axis=1")
_X453 = F(4, 5, 3)
_MASK1 = A(np.array([True, False, True, True]))
_MASK3 = A(np.random.default_rng(11).random((4, 5, 3)) < 0.5)
for _index, _traced in ((1, False), (-1, False), (slice(1, 3), False),
                        (slice(None, None, 2), False),
                        (slice(None, None, -1), True), (slice(3, 0, -2), False),
                        ((1, slice(None), 2), False), ((Ellipsis, 0), False), ((None, 1), False),
                        ((slice(1, 3), None, -1), True),
                        ((slice(None), slice(None, None, -1), 0), False), ((), False),
                        (I([0, 2, 2, -1]), True), ((I([0, 1]), I([2, -2])), True),
                        ((slice(None), I([0, 4, 4])), True), ((Ellipsis, I([2, 0])), False),
                        ((I([[0, 1], [3, 3]]),), False), ((1, I([0, 2])), False),
                        (_MASK1, False), (_MASK3, False), ((_MASK1, 2), False),
                        ((I([1, 3]), slice(None), I([0, 2])), True), ([0, 3, 3], False),
                        ((1, slice(1, 4), I([2, 0, 1])), False)):
    _id = ("mask" + "x".join(map(str, _index.value.shape)) if _index is _MASK1 or _index is
           _MASK3 else _short(_index) if _index != () else "()")
    case("getitem", _X453, _index, ref=lambda x, i: x[i], id=_id, traced=_traced)


def _index_update_ref(x: Any, index: Any, values: Any) -> Any:
    out = x.copy()
    out[index] = values
    return out


def _index_add_ref(x: Any, index: Any, values: Any) -> Any:
    out = x.copy()
    np.add.at(out, index, values)
    return out


_X43 = F(4, 3)
for _index, _values in ((1, 9.0), (1, F(3, seed=1)), (slice(1, 3), F(2, 3, seed=1)),
                        ((1, 2), 5.0), (I([0, 2]), F(2, 3, seed=1)),
                        ((I([0, 3]), I([1, 0])), F(2, seed=1)), (slice(None, None, 2), -1.0),
                        ([3, 0], 1.0),
                        ((slice(None), 1), F(4, seed=1)), ((Ellipsis, -1), 0.0),
                        (I([-1, 1]), F(2, 3, seed=1)), (slice(None, None, -1), F(4, 3, seed=1))):
    case("index_update", _X43, _index, _values, ref=_index_update_ref,
         id=f"{_short(_index)},{'arr' if isinstance(_values, Lazy) else _values}",
         traced=isinstance(_index, A))
case("index_update", F(2, 4, 3), (1, slice(0, 3), I([[0], [2]])), F(2, 1, 3, seed=1),
     ref=_index_update_ref, id="(int;slice;idx) [axes go first]", traced=True)
case("index_add", F(2, 4, 3), (1, slice(0, 3), I([[0], [0]])), F(2, 1, 3, seed=1),
     ref=_index_add_ref, id="(int;slice;idx) [axes go first]", traced=True)
for _index, _values in ((1, F(3, seed=1)), (slice(0, 2), 2.0), ((1, 2), 5.0),
                        (I([0, 2, 0]), F(3, 3, seed=1)), (I([1, 1, 1]), 1.0),
                        ((I([0, 0, 3]), I([1, 1, 2])), F(3, seed=1)),
                        ((slice(None), I([0, 0])), F(4, 2, seed=1)), (I([-1, 3]), F(2, 3)),
                        ((Ellipsis, 0), F(4, seed=1)), (slice(None, None, -1), F(4, 3)),
                        ([0, 0, 2], F(3, 3)), ((I([3, 3]), slice(None)), F(2, 3, seed=1))):
    case("index_add", _X43, _index, _values, ref=_index_add_ref,
         id=f"{_short(_index)},{'arr' if isinstance(_values, Lazy) else _values}",
         traced=isinstance(_index, A) or (isinstance(_index, tuple) and isinstance(_index[0], A)))
for _axis in (-1, 0, 1):
    case("sort", TIES(3, 20), _axis, traced=_axis == 0)
    case("argsort", TIES(3, 20), _axis, ref=lambda x, axis: np.argsort(x, axis, kind="stable"),
         id=f"ties,{_axis}", traced=_axis == -1)
case("sort", F(3, 4), id="defaults")
# the builtin max(xs) / min(xs)'s pick: the first of equal items, as np.argmax's
case("index_of_max", TIES(20), ref=lambda x: int(np.argmax(x)), id="ties")
case("index_of_min", TIES(20), ref=lambda x: int(np.argmin(x)), id="ties")
case("argsort", F(3, 4), ref=lambda x: np.argsort(x, kind="stable"), id="defaults")


def _topk_ref(x: Any, k: int, sorted: bool = True) -> tuple[Any, Any]:
    idx = np.argsort(-x, axis=-1, kind="stable")[..., :k]
    return np.take_along_axis(x, idx, -1), idx


def _check_topk_unsorted(fn: Callable[..., Any], fw: str, dt: np.dtype) -> None:
    x = np.random.default_rng(3).permutation(24).reshape(4, 6).astype(dt)
    values, indices = fn(to_framework(x, fw), 3, sorted=False)
    exp_v, exp_i = _topk_ref(x, 3)
    got_v, got_i = to_numpy(values), to_numpy(indices)
    assert got_v.dtype == x.dtype and got_i.dtype == np.int64
    np.testing.assert_array_equal(np.sort(got_v, -1), np.sort(exp_v, -1))
    np.testing.assert_array_equal(np.sort(got_i, -1), np.sort(exp_i, -1))
    np.testing.assert_array_equal(np.take_along_axis(x, got_i, -1), got_v)


for _x, _k in ((PERM(3, 6), 2), (PERM(3, 6), 1), (PERM(7), 3), (PERM(2, 3, 4), 4)):
    case("topk", _x, _k, ref=_topk_ref, traced=_k == 2)
case("topk", PERM(3, 6), 6, True, ref=_topk_ref, id="k=n,sorted=True")
case("topk", ref=_topk_ref, check=_check_topk_unsorted, id="sorted=False")
case("meshgrid", F(3), F(4, seed=1), id="xy", traced=True)
case("meshgrid", F(3), F(4, seed=1), kw={"indexing": "ij"}, id="ij")
case("meshgrid", F(3), F(4, seed=1), F(2, seed=2), kw={"indexing": "ij"}, id="3 arrays,ij")

# linear algebra
_slogdet_ref = lambda x: tuple(np.linalg.slogdet(x))  # noqa: E731
for _shape in ((3, 3), (2, 3, 3)):
    _id = "x".join(map(str, _shape))
    case("inv", WELL(*_shape), ref=np.linalg.inv, id=_id, tol=10, traced=True)
    case("det", WELL(*_shape), ref=np.linalg.det, id=_id, tol=10, traced=len(_shape) == 2)
    case("slogdet", WELL(*_shape), ref=_slogdet_ref, id=_id, tol=10, traced=True)
_NEG = FV([[0.0, 2.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 3.0]])   # det = -6
case("det", _NEG, ref=np.linalg.det, id="negative")
case("slogdet", _NEG, ref=_slogdet_ref, id="negative")
for _b, _id in ((F(3, seed=1), "3x3,3"), (F(3, 2, seed=1), "3x3,3x2")):
    case("solve", WELL(3, 3), _b, ref=np.linalg.solve, id=_id, tol=10, traced=_id == "3x3,3")
case("solve", WELL(2, 3, 3), F(2, 3, 2, seed=1), ref=np.linalg.solve, id="batched", tol=10)
for _sub, _ops in (("ij,jk->ik", (F(3, 4), F(4, 5, seed=1))),
                   ("bij,bjk->bik", (F(2, 3, 4), F(2, 4, 5, seed=1))),
                   ("i,i->", (F(4), F(4, seed=1))), ("ij->ji", (F(3, 4),)),
                   ("ij->j", (F(3, 4),)), ("i,j->ij", (F(3), F(4, seed=1))),
                   ("...ij,...jk->...ik", (F(2, 3, 4), F(4, 2, seed=1)))):
    case("einsum", _sub, list(_ops), id=_sub, tol=2, traced=_sub == "bij,bjk->bik",
         ref=lambda sub, ops: np.einsum(sub, *ops))

# creation
case("zeros", (2, 3), DT, id="(2,3),dtype", traced=True)
case("zeros", 4, kw={"dtype": DT}, id="4,dtype=")
case("ones", (2, 3), DT, id="(2,3),dtype")
case("ones", (), DT, id="(),dtype")
case("full", (2, 3), 1.5, DT, id="(2,3),1.5,dtype", traced=True)
case("full", 3, -2, kw={"dtype": DT}, id="3,-2,dtype=")
case("zeros_like", F(2, 3), id="keeps dtype", traced=True)
case("ones_like", F(2, 3), id="keeps dtype")
case("full_like", F(2, 3), 2.5, id="keeps dtype", traced=True)
case("zeros_like", I([1, 2]), DT, id="int->dtype")
case("ones_like", I([1, 2]), kw={"dtype": DT}, id="int->dtype=")
case("full_like", I([1, 2]), 2.5, DT, id="int->dtype")
case("arange", 0, 5, 1, DT, ref=lambda a, b, s, d: np.arange(a, b, s, dtype=d), id="0,5,1,dt")
case("arange", 0.0, 1.0, 0.25, DT, ref=lambda a, b, s, d: np.arange(a, b, s, dtype=d),
     id="0.0,1.0,0.25,dt")
case("arange", 5, kw={"dtype": DT}, ref=lambda n, dtype: np.arange(n, dtype=dtype), id="5,dtype=")
case("linspace", 0, 1, 5, DT, ref=lambda a, b, n, d: np.linspace(a, b, n, dtype=d), id="0,1,5,dt")
case("linspace", -1.0, 2.0, kw={"dtype": DT}, ref=lambda a, b, dtype: np.linspace(a, b,
     dtype=dtype), id="-1,2,dtype=")
case("eye", 3, None, DT, ref=lambda n, m, d: np.eye(n, m, dtype=d), id="3,None,dt")
case("eye", 2, 4, DT, ref=lambda n, m, d: np.eye(n, m, dtype=d), id="2,4,dt")
case("array", [[1, 2], [3, 4]], DT, ref=np.asarray, id="ints,dt")
case("array", [0.5, -1.5], kw={"dtype": DT}, ref=np.asarray, id="floats,dtype=")
case("array", F(2, 3), ref=np.asarray, id="from array (keeps dtype)")
case("one_hot", I([0, 2, 1, 3]), 4, DT, ref=lambda i, n, d: np.eye(n, dtype=d)[i], id="4,dt",
     traced=True)
case("one_hot", I([[0, 2], [1, 1]]), 3, kw={"dtype": DT},
     ref=lambda i, n, dtype: np.eye(n, dtype=dtype)[i], id="2d,3,dtype=")
# dtype=None: NumPy's dtypes (float64, int64, bool), float32 on JAX without x64
_CREATE_DEFAULT = dict(floats=False, default_float=True)
case("zeros", (2, 3), id="default dtype", **_CREATE_DEFAULT)
case("ones", 3, id="default dtype", **_CREATE_DEFAULT)
case("full", (2,), 1.5, id="1.5,default dtype", **_CREATE_DEFAULT)
case("full", (2, 2), 3, id="int 3 -> int64", floats=False)
case("full", (2,), True, id="True -> bool", floats=False)
case("arange", 5, id="5 -> int64", floats=False)
case("arange", 1, 7, 2, id="1,7,2 -> int64", floats=False)
case("arange", 0.0, 1.0, 0.25, id="floats,default dtype", **_CREATE_DEFAULT)
case("linspace", 0, 1, 5, id="default dtype", **_CREATE_DEFAULT)
case("eye", 3, id="default dtype", **_CREATE_DEFAULT)
case("array", [1.5, 2.5], ref=np.asarray, id="floats,default dtype", **_CREATE_DEFAULT)
case("array", [[1, 2], [3, 4]], ref=np.asarray, id="ints -> int64", floats=False)
case("array", [True, False], ref=np.asarray, id="bools -> bool", floats=False)
case("array", [[1, 2.5], [3, 4]], ref=np.asarray, id="ints and floats", **_CREATE_DEFAULT)
case("array", 2.5, ref=np.asarray, id="Python float", **_CREATE_DEFAULT)
case("full", (2,), 1 + 2j, ref=np.full, id="complex -> complex128", floats=False)
case("uniform", check=lambda fn, fw, dt: _check_default_random(fn, fw), id="default dtype",
     floats=False)
case("normal", check=lambda fn, fw, dt: _check_default_random(fn, fw), id="default dtype",
     floats=False)
case("one_hot", I([0, 2, 1]), 3, ref=lambda i, n: np.eye(n)[i], id="default dtype",
     **_CREATE_DEFAULT)
case("zeros", (2,), gt.int32, id="int32", floats=False)
case("full", (2,), 7, gt.int64, id="int64", floats=False)
case("ones", (2,), gt.bool_, id="bool", floats=False)
case("arange", 4, kw={"dtype": gt.int32}, ref=lambda n, dtype: np.arange(n, dtype=dtype),
     id="int32", floats=False)
case("one_hot", I([1, 0]), 2, gt.int64, ref=lambda i, n, d: np.eye(n, dtype=d)[i],
     id="int64", floats=False)


def _check_random(name: str) -> Callable[..., None]:
    def check(fn: Callable[..., Any], fw: str, dt: np.dtype) -> None:
        neutral = getattr(gt, np.dtype(dt).name)
        a, b = (2.0, 5.0) if name == "uniform" else (3.0, 0.5)
        x = to_numpy(fn((200, 50), a, b, seed=7, dtype=neutral))
        again = to_numpy(fn((200, 50), a, b, seed=7, dtype=neutral))
        other = to_numpy(fn((200, 50), a, b, seed=8, dtype=neutral))
        assert x.shape == (200, 50) and x.dtype == dt
        np.testing.assert_array_equal(x, again)       # same seed, same values
        assert not np.array_equal(x, other)           # another seed, other values
        if name == "uniform":
            assert x.min() >= a and x.max() < b
            assert abs(x.mean() - 3.5) < 0.05 and abs(x.std() - 3 / math.sqrt(12)) < 0.05
        else:
            assert abs(x.mean() - 3.0) < 0.03 and abs(x.std() - 0.5) < 0.03
        one = to_numpy(fn(5, seed=1, dtype=neutral))
        assert one.shape == (5,)
        default = to_numpy(fn((3,)))
        assert default.dtype == default_float(fw)
        if name == "uniform":
            assert ((default >= 0) & (default < 1)).all()
    return check


def _check_default_random(fn: Callable[..., Any], fw: str) -> None:
    out = to_numpy(fn((4, 3), seed=2))
    assert out.shape == (4, 3) and out.dtype == default_float(fw)


case("uniform", check=_check_random("uniform"), id="seed,shape,dtype,range")
case("normal", check=_check_random("normal"), id="seed,shape,dtype,moments")


# neural-network helpers
def _softmax_ref(x: Any, axis: int = -1) -> Any:
    x64 = x.astype(np.float64)
    e = np.exp(x64 - x64.max(axis=axis, keepdims=True))
    return (e / e.sum(axis=axis, keepdims=True)).astype(x.dtype)


def _log_softmax_ref(x: Any, axis: int = -1) -> Any:
    x64 = x.astype(np.float64)
    return (x64 - _logsumexp_ref(x64, axis, True)).astype(x.dtype)


for _name, _ref in (("softmax", _softmax_ref), ("log_softmax", _log_softmax_ref)):
    case(_name, F(3, 4), ref=_ref, id="defaults", traced=True)
    case(_name, F(3, 4), 0, ref=_ref, id="axis=0")
    case(_name, F(2, 3, 4), kw={"axis": 1}, ref=_ref, id="axis=1")
    case(_name, F(3, 4, lo=-1e4, hi=1e4), ref=_ref, id="large", traced=True)
    case(_name, FV([[1000.0, 1001.0, -1000.0], [-INF, 0.0, 1.0]]), ref=_ref, id="huge,-inf")


def _crossentropy_ref(logits: Any, labels: Any) -> Any:
    logp = _log_softmax_ref(logits)
    return -np.take_along_axis(logp, labels[..., None], -1)[..., 0]


def _kl_ref(p: Any, q: Any, axis: int = -1) -> Any:
    lp, lq = _log_softmax_ref(p, axis).astype(np.float64), _log_softmax_ref(q, axis)
    return np.sum(np.exp(lp) * (lp - lq), axis=axis).astype(p.dtype)


case("crossentropy", F(4, 5), I([0, 4, 2, 2]), ref=_crossentropy_ref, id="4x5", traced=True)
case("crossentropy", F(2, 3, 5, lo=-100, hi=100), I([[0, 1, 4], [3, 3, 2]]),
     ref=_crossentropy_ref, id="2x3x5,large")
case("kl_div_with_logits", F(3, 4), F(3, 4, seed=1), ref=_kl_ref, id="defaults", traced=True)
case("kl_div_with_logits", F(3, 4), F(3, 4, seed=1), 0, ref=_kl_ref, id="axis=0")

# inspection and conversion
for _x, _id in ((F(2, 3), "2x3"), (F(), "0d"), (F(0, 4), "empty")):
    case("shape", _x, id=_id)
    case("size", _x, ref=lambda x: int(np.size(x)), id=_id)
    case("ndim", _x, ref=lambda x: int(np.ndim(x)), id=_id)
    case("dtype", _x, ref=lambda x: gt.dtypes.neutral(x.dtype), id=_id)
case("dtype", I([1]), ref=lambda x: gt.int64, id="int64", floats=False)
case("dtype", B(2), ref=lambda x: gt.bool_, id="bool", floats=False)
_astype_ref = lambda x, d: x.astype(d)  # noqa: E731
case("astype", F(2, 3), gt.float64, ref=_astype_ref, id="float64", traced=True)
case("astype", F(2, 3), gt.float32, ref=_astype_ref, id="float32")
case("astype", F(2, 3, lo=-5, hi=5), gt.int32, ref=_astype_ref, id="int32 (truncates)")
case("astype", FV([0.0, 1.5, -0.0, NAN]), gt.bool_, ref=_astype_ref, id="bool")
case("astype", I([1, -2]), DT, ref=_astype_ref, id="int->dtype")
case("astype", F(2, 3), "float64", ref=_astype_ref, id="name float64")
case("to_numpy", F(2, 3), ref=np.asarray, id="2x3", out_framework="numpy")
case("to_numpy", F(), ref=np.asarray, id="0d", out_framework="numpy")
case("item", F(), ref=lambda x: x.item(), id="0d")
case("item", F(1, 1), ref=lambda x: x.item(), id="1x1")
case("item", I(7), ref=lambda x: x.item(), id="int", floats=False)
case("stop_gradient", F(2, 3), ref=lambda x: x, id="2x3", traced=True)


# --- comparing a result with NumPy's -------------------------------------------------------------
def default_float(fw: str) -> np.dtype:
    """The dtype a creation function gives floats when called with ``dtype=None``: NumPy's,
    except on JAX without x64, which has no float64."""
    if fw == "jax":
        import jax
        return np.dtype(np.float64 if jax.config.jax_enable_x64 else np.float32)
    return np.dtype(np.float64)


TOL = {np.dtype(np.float32): (2e-5, 2e-6), np.dtype(np.float64): (1e-11, 1e-13),
       np.dtype(np.float16): (2e-3, 2e-3), np.dtype(np.complex64): (2e-5, 2e-6),
       np.dtype(np.complex128): (1e-11, 1e-13)}


def assert_conforms(out: Any, expected: Any, fw: str, scale: float = 1.0, where: str = "out",
                    cast_float: np.dtype | None = None) -> None:
    """``out`` (of framework ``fw``) equals NumPy's ``expected``: type, shape, dtype, values."""
    if isinstance(expected, DType):
        assert isinstance(out, DType), f"{where}: {out!r} is not a gradlab dtype"
        assert out == expected, f"{where}: dtype {out!r} != {expected!r}"
        return
    if isinstance(expected, (list, tuple)):
        assert isinstance(out, (list, tuple)), f"{where}: {type(out)} is not a list or tuple"
        if expected and all(type(e) is int for e in expected):  # a shape
            assert isinstance(out, tuple) and all(type(o) is int for o in out), \
                f"{where}: shape {out!r} must be a tuple of Python ints"
        assert len(out) == len(expected), f"{where}: {len(out)} items, NumPy has {len(expected)}"
        for i, (o, e) in enumerate(zip(out, expected)):
            assert_conforms(o, e, fw, scale, f"{where}[{i}]", cast_float)
        return
    if type(expected) in (bool, int, float):
        assert type(out) is type(expected), f"{where}: {type(out)} is not {type(expected)}"
        assert out == pytest.approx(expected, rel=1e-6), f"{where}: {out} != {expected}"
        return
    expected = np.asarray(expected)
    if cast_float is not None and expected.dtype.kind == "f":
        expected = expected.astype(cast_float)
    assert gt.framework_of(out) == fw, f"{where}: a {type(out)}, not a {fw} value"
    got = to_numpy(out)
    assert got.shape == expected.shape, f"{where}: shape {got.shape} != NumPy's {expected.shape}"
    assert got.dtype == expected.dtype, f"{where}: dtype {got.dtype} != NumPy's {expected.dtype}"
    if expected.dtype.kind in "fc":
        rtol, atol = TOL[expected.dtype]
        np.testing.assert_allclose(got, expected, rtol=rtol * scale, atol=atol * scale,
                                   equal_nan=True, err_msg=where)
    else:
        np.testing.assert_array_equal(got, expected, err_msg=where)


def run_case(c: Case, fw: str, dtype: str | None, transform: Callable[..., Any] | None = None
             ) -> None:
    dt = np.dtype(dtype or "float64")
    ops = backend(fw)
    fn = getattr(ops, c.name)
    if c.check is not None:
        c.check(fn, fw, dt)
        return
    args, kwargs = resolve(c.args, dt), resolve(c.kwargs, dt)
    expected = c.ref(*to_np(args, dt), **to_np(kwargs, dt))
    leaves: list[Any] = []
    targs, tkwargs = to_template(args, fw, dt, leaves), to_template(kwargs, fw, dt, leaves)

    def call(*arrays: Any) -> Any:
        return fn(*fill(targs, arrays), **fill(tkwargs, arrays))

    out = transform(call)(*leaves) if transform is not None else call(*leaves)
    assert_conforms(out, expected, c.out_framework or fw, c.tol, f"{c.name}({c.id})",
                    default_float(fw) if c.default_float else None)


def _params(cases: list[Case]) -> list[Any]:
    return [pytest.param(c, d, id=f"{c.name}[{c.id}]" + (f"-{d}" if d else ""), marks=c.marks)
            for c in cases for d in c.dtypes]


# --- the tests -----------------------------------------------------------------------------------
def test_table_covers_spec() -> None:
    covered = {c.name for c in CASES}
    missing = sorted(set(SIGNATURES) - covered)
    assert not missing, f"primitives in SIGNATURES without a conformance row: {missing}"
    unknown = sorted(covered - set(SIGNATURES))
    assert not unknown, f"conformance rows for names not in SIGNATURES: {unknown}"


def test_every_backend_defines_every_primitive(framework: str) -> None:
    ops = backend(framework)
    missing = [name for name in SIGNATURES if not callable(getattr(ops, name, None))]
    assert not missing, f"{framework} backend lacks {missing}"


def _spec_signature(name: str) -> inspect.Signature:
    return inspect.signature(eval(f"lambda {SIGNATURES[name][1:-1]}: None"))  # noqa: S307


def _plain(sig: inspect.Signature) -> str:
    params = [p.replace(annotation=inspect.Parameter.empty) for p in sig.parameters.values()]
    return str(sig.replace(parameters=params, return_annotation=inspect.Signature.empty))


def test_adapters_have_the_canonical_signature(framework: str) -> None:
    """Functions gradlab writes itself (adapters and generic versions) take exactly the spec's
    parameters; names bound to a framework's own function are checked by behaviour only."""
    ops = backend(framework)
    wrong = []
    for name in SIGNATURES:
        fn = getattr(ops, name)
        if not (inspect.isfunction(fn) and fn.__module__.startswith("gradlab.")):
            continue
        have, want = _plain(inspect.signature(fn)), _plain(_spec_signature(name))
        if have != want:
            wrong.append(f"{name}{have} (spec: {want})")
    assert not wrong, f"{framework} adapters differ from spec.py: " + "; ".join(wrong)


@pytest.mark.parametrize(("c", "dtype"), _params(CASES))
def test_conforms(framework: str, c: Case, dtype: str | None) -> None:
    run_case(c, framework, dtype)


TRACED = [c for c in CASES if c.traced]


def _jit(call: Callable[..., Any]) -> Callable[..., Any]:
    import jax
    return jax.jit(call)


def _tf_function(call: Callable[..., Any]) -> Callable[..., Any]:
    import tensorflow as tf
    return tf.function(call, autograph=False)


@pytest.mark.parametrize("tracer", ["jax.jit", "tf.function"])
@pytest.mark.parametrize(("c", "dtype"), _params(TRACED))
def test_conforms_traced(tracer: str, c: Case, dtype: str | None) -> None:
    fw = "jax" if tracer == "jax.jit" else "tensorflow"
    require(fw)
    run_case(c, fw, dtype, _jit if fw == "jax" else _tf_function)


def test_traced_subset_is_representative() -> None:
    kinds = {c.name for c in TRACED}
    for name in ("sum", "logsumexp", "getitem", "index_add", "index_update", "topk", "split",
                 "unstack", "sum_to", "softmax", "norm", "one_hot", "pad", "einsum"):
        assert name in kinds, f"no traced row for {name}"
    assert len(kinds) >= 60


# --- matmul's adjoint halves, every rank pair, against the product rule --------------------------
_MATMUL_SHAPES = [((3, 4), (4, 5)), ((3, 4), (4,)), ((4,), (4, 5)), ((4,), (4,)),
                  ((2, 3, 4), (4, 5)), ((2, 3, 4), (2, 4, 5)), ((3, 4), (2, 4, 5)),
                  ((2, 3, 4), (4,))]


@pytest.mark.parametrize("shapes", _MATMUL_SHAPES, ids=lambda s: f"{s[0]}@{s[1]}")
def test_matmul_grad_halves(framework: str, shapes: Any) -> None:
    """``<dz, d(x @ y)>`` along a direction (u, v) equals ``<matmul_grad_x(dz), u>`` +
    ``<matmul_grad_y(dz), v>``: the halves are the adjoint of the product rule, whichever
    fast form a backend uses for some ranks (TensorFlow's transpose flags)."""
    rng = np.random.default_rng(len(shapes[0]) * 10 + len(shapes[1]))
    x, y = rng.normal(size=shapes[0]), rng.normal(size=shapes[1])
    u, v = rng.normal(size=shapes[0]), rng.normal(size=shapes[1])
    dz = rng.normal(size=np.shape(np.matmul(x, y)))
    ops = backend(framework)
    fx, fy, fdz = (to_framework(a, framework) for a in (x, y, dz))
    gx = to_numpy(ops.matmul_grad_x(fdz, fx, fy))
    gy = to_numpy(ops.matmul_grad_y(fdz, fx, fy))
    assert gx.shape == x.shape and gy.shape == y.shape
    directional = np.sum(dz * (np.matmul(u, y) + np.matmul(x, v)))
    np.testing.assert_allclose(np.sum(gx * u) + np.sum(gy * v), directional, rtol=1e-10)
