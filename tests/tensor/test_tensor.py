"""The ``Tensor`` wrapper (gradlab.tensor.tensor): its methods, operators and chaining.

``METHODS`` is a table of every public method and property of ``Tensor`` with a NumPy reference;
``test_method_table_is_complete`` fails when a method is added without a row.
"""
from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np
import pytest

import gradlab.tensor as gt
from gradlab.tensor import Tensor, astensor, native

from tests.conftest import require, to_framework, to_numpy
from tests.tensor.test_autodiff import expected_grads, framework_loss
from tests.tensor.test_conformance import UNARY, assert_conforms

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

RNG = np.random.default_rng(0)
X34 = RNG.uniform(-2, 2, (3, 4)).astype(np.float32)
Y34 = RNG.uniform(-2, 2, (3, 4)).astype(np.float32)
POS34 = RNG.uniform(0.5, 2, (3, 4)).astype(np.float32)
X234 = RNG.uniform(-2, 2, (2, 3, 4)).astype(np.float32)
Y43 = Y34.T.copy()
SQ = (RNG.uniform(-1, 1, (3, 3)) + 3 * np.eye(3)).astype(np.float32)
MASK = RNG.random((3, 4)) < 0.5
LABELS = np.array([0, 3, 1], dtype=np.int64)


def _sigmoid(x: Any) -> Any:
    return (1 / (1 + np.exp(-x.astype(np.float64)))).astype(x.dtype)


def _norm(x: Any, ord: float, axis: Any = None, keepdims: bool = False) -> Any:
    return np.linalg.vector_norm(x, ord=ord, axis=axis, keepdims=keepdims).astype(x.dtype)


def _log_softmax(x: Any, axis: int = -1) -> Any:
    x64 = x.astype(np.float64)
    m = x64.max(axis=axis, keepdims=True)
    return (x64 - m - np.log(np.exp(x64 - m).sum(axis=axis, keepdims=True))).astype(x.dtype)


# --- the method table: name -> (input, call on the Tensor, NumPy reference) ----------------------
Row = tuple[Any, Callable[[Tensor], Any], Callable[[Any], Any]]
METHODS: dict[str, list[Row]] = {}


def method(name: str, x: Any, call: Callable[[Tensor], Any], ref: Callable[[Any], Any]) -> None:
    METHODS.setdefault(name, []).append((x, call, ref))


_UNARY_METHODS = [n for n in UNARY if n not in ("negative",)] + ["logical_not"]
for _name in _UNARY_METHODS:
    if _name == "logical_not":
        method(_name, MASK, lambda t: t.logical_not(), np.logical_not)
        continue
    _lo, _hi, _ref = UNARY[_name]
    _x = np.random.default_rng(1).uniform(_lo, _hi, (3, 4)).astype(np.float32)
    method(_name, _x, (lambda n: lambda t: getattr(t, n)())(_name), _ref)

method("numpy", X34, lambda t: t.numpy(), lambda x: x)
method("item", X34[:1, :1], lambda t: t.item(), lambda x: x.item())
method("shape", X234, lambda t: t.shape, lambda x: x.shape)
method("ndim", X234, lambda t: t.ndim, lambda x: x.ndim)
method("size", X234, lambda t: t.size, lambda x: x.size)
method("dtype", X234, lambda t: t.dtype, lambda x: gt.float32)
method("device", X34, lambda t: gt.device_label(t.device, t.framework), lambda x: "cpu")
method("device_label", X34, lambda t: t.device_label, lambda x: "cpu")
method("astype", X34, lambda t: t.astype(gt.float64), lambda x: x.astype(np.float64))
method("astype", X34, lambda t: t.astype(gt.int64), lambda x: x.astype(np.int64))
method("float32", X34.astype(np.float64), lambda t: t.float32(), lambda x: x.astype(np.float32))
method("float64", X34, lambda t: t.float64(), lambda x: x.astype(np.float64))
method("bool", X34, lambda t: t.bool(), lambda x: x.astype(bool))
method("logical_and", MASK, lambda t: t.logical_and(~MASK[0]), lambda x: x & ~MASK[0])
method("logical_or", MASK, lambda t: t.logical_or(True), lambda x: x | True)
method("pow", POS34, lambda t: t.pow(1.5), lambda x: x ** np.float32(1.5))
method("maximum", X34, lambda t: t.maximum(0.5), lambda x: np.maximum(x, np.float32(0.5)))
method("minimum", X34, lambda t: t.minimum(0.5), lambda x: np.minimum(x, np.float32(0.5)))
method("arctan2", X34, lambda t: t.arctan2(1.0), lambda x: np.arctan2(x, np.float32(1.0)))
method("clip", X34, lambda t: t.clip(-0.5, 0.5), lambda x: np.clip(x, -0.5, 0.5))
method("where", MASK, lambda t: t.where(X34, 0.0), lambda x: np.where(x, X34, 0.0))
method("where", MASK, lambda t: t.where(astensor(X34), Y34), lambda x: np.where(x, X34, Y34))
for _name in ("sum", "mean", "prod", "max", "min", "logsumexp"):
    _ref = getattr(np, _name, None)
    if _name == "logsumexp":
        def _ref(x: Any, axis: Any = None, keepdims: bool = False) -> Any:
            m = x.max(axis=axis, keepdims=True)
            out = np.log(np.exp(x - m).sum(axis=axis, keepdims=True)) + m
            return out if keepdims else np.squeeze(out, axis=axis)
    method(_name, X234, (lambda n: lambda t: getattr(t, n)())(_name), _ref)
    method(_name, X234, (lambda n: lambda t: getattr(t, n)(-1, keepdims=True))(_name),
           (lambda r: lambda x: r(x, axis=-1, keepdims=True))(_ref))
    method(_name, X234, (lambda n: lambda t: getattr(t, n)(axis=(0, 2)))(_name),
           (lambda r: lambda x: r(x, axis=(0, 2)))(_ref))
for _name in ("all", "any"):
    method(_name, MASK, (lambda n: lambda t: getattr(t, n)())(_name), getattr(np, _name))
    method(_name, MASK, (lambda n: lambda t: getattr(t, n)(0, keepdims=True))(_name),
           (lambda n: lambda x: getattr(np, n)(x, 0, keepdims=True))(_name))
method("var", X234, lambda t: t.var(), np.var)
method("var", X234, lambda t: t.var(1, ddof=1, keepdims=True),
       lambda x: np.var(x, 1, ddof=1, keepdims=True))
method("std", X234, lambda t: t.std(), np.std)
method("std", X234, lambda t: t.std((0, 1), ddof=1), lambda x: np.std(x, (0, 1), ddof=1))
method("argmax", X234, lambda t: t.argmax(), np.argmax)
method("argmax", X234, lambda t: t.argmax(-1, keepdims=True),
       lambda x: np.argmax(x, -1, keepdims=True))
method("argmin", X234, lambda t: t.argmin(1), lambda x: np.argmin(x, 1))
method("cumsum", X234, lambda t: t.cumsum(), np.cumsum)
method("cumsum", X234, lambda t: t.cumsum(1), lambda x: np.cumsum(x, 1))
method("norm", X234, lambda t: t.norm(), lambda x: _norm(x, 2))
method("norm", X234, lambda t: t.norm(1, axis=-1), lambda x: _norm(x, 1, -1))
_SPARSE = X34 * (np.arange(12).reshape(3, 4) % 3 != 0)
method("norms", _SPARSE, lambda t: t.norms.l0(), lambda x: _norm(x, 0))
method("norms", _SPARSE, lambda t: t.norms.l0(axis=-1), lambda x: _norm(x, 0, -1))
method("norms", X34, lambda t: t.norms.l1(), lambda x: _norm(x, 1))
method("norms", X34, lambda t: t.norms.l1(0, keepdims=True), lambda x: _norm(x, 1, 0, True))
method("norms", X34, lambda t: t.norms.l2(), lambda x: _norm(x, 2))
method("norms", X34, lambda t: t.norms.l2(axis=-1), lambda x: _norm(x, 2, -1))
method("norms", X34, lambda t: t.norms.linf(), lambda x: _norm(x, math.inf))
method("norms", X34, lambda t: t.norms.linf(1), lambda x: _norm(x, math.inf, 1))
method("norms", X34, lambda t: t.norms.lp(3), lambda x: _norm(x, 3))
method("norms", X34, lambda t: t.norms.lp(1.5, axis=0), lambda x: _norm(x, 1.5, 0))
method("reshape", X234, lambda t: t.reshape((6, -1)), lambda x: x.reshape(6, -1))
method("reshape", X234, lambda t: t.reshape(24), lambda x: x.reshape(24))
method("transpose", X234, lambda t: t.transpose(), lambda x: x.T)
method("transpose", X234, lambda t: t.transpose((1, 0, 2)), lambda x: x.transpose(1, 0, 2))
method("T", X34, lambda t: t.T, lambda x: x.T)
method("swapaxes", X234, lambda t: t.swapaxes(0, -1), lambda x: x.swapaxes(0, -1))
method("moveaxis", X234, lambda t: t.moveaxis(0, -1), lambda x: np.moveaxis(x, 0, -1))
method("expand_dims", X34, lambda t: t.expand_dims(1), lambda x: x[:, None])
method("expand_dims", X34, lambda t: t.expand_dims((0, -1)), lambda x: x[None, :, :, None])
method("squeeze", X34[:1, :, None], lambda t: t.squeeze(), np.squeeze)
method("squeeze", X34[:1, :, None], lambda t: t.squeeze(-1), lambda x: x[..., 0])
method("flatten", X234, lambda t: t.flatten(), lambda x: x.reshape(-1))
method("flatten", X234, lambda t: t.flatten(1), lambda x: x.reshape(2, -1))
method("broadcast_to", X34[0], lambda t: t.broadcast_to((2, 4)),
       lambda x: np.broadcast_to(x, (2, 4)))
method("sum_to", X234, lambda t: t.sum_to((3, 1)), lambda x: x.sum(0).sum(-1, keepdims=True))
method("tile", X34, lambda t: t.tile((2, 1)), lambda x: np.tile(x, (2, 1)))
method("flip", X34, lambda t: t.flip(), np.flip)
method("flip", X34, lambda t: t.flip(-1), lambda x: x[:, ::-1])
method("pad", X34, lambda t: t.pad(1), lambda x: np.pad(x, 1))
method("pad", X34, lambda t: t.pad(((0, 1), (2, 0)), value=1.5),
       lambda x: np.pad(x, ((0, 1), (2, 0)), constant_values=1.5))
method("pad", X34, lambda t: t.pad(((1, 1), (0, 2)), "reflect"),
       lambda x: np.pad(x, ((1, 1), (0, 2)), "reflect"))
method("split", X234, lambda t: t.split(2, axis=-1), lambda x: np.split(x, 2, axis=-1))
method("split", X234, lambda t: t.split([1]), lambda x: np.split(x, [1]))
method("unstack", X234, lambda t: t.unstack(), lambda x: list(x))
method("unstack", X234, lambda t: t.unstack(-1), lambda x: list(np.moveaxis(x, -1, 0)))
method("take", X34, lambda t: t.take(np.array([2, 0, 2]), axis=1),
       lambda x: np.take(x, [2, 0, 2], axis=1))
method("take_along_axis", X34, lambda t: t.take_along_axis(np.array([[1], [0], [3]]), 1),
       lambda x: np.take_along_axis(x, np.array([[1], [0], [3]]), 1))
method("index_update", X34, lambda t: t.index_update((1, slice(None)), 0.0),
       lambda x: np.where(np.arange(3)[:, None] == 1, np.float32(0), x))
method("index_add", X34, lambda t: t.index_add(np.array([0, 0, 2]), 1.0),
       lambda x: x + np.array([[2], [0], [1]], np.float32))
method("sort", X34, lambda t: t.sort(), np.sort)
method("sort", X34, lambda t: t.sort(0), lambda x: np.sort(x, 0))
method("argsort", X34, lambda t: t.argsort(), lambda x: np.argsort(x, kind="stable"))
method("topk", X34, lambda t: t.topk(2),
       lambda x: (np.sort(x, -1)[:, ::-1][:, :2], np.argsort(-x, -1, kind="stable")[:, :2]))
method("matmul", X34, lambda t: t.matmul(Y43), lambda x: x @ Y43)
method("dot", X34, lambda t: t.dot(Y34[0]), lambda x: x.dot(Y34[0]))
method("outer", X34[0], lambda t: t.outer(Y34[1]), lambda x: np.outer(x, Y34[1]))
method("inv", SQ, lambda t: t.inv(), np.linalg.inv)
method("det", SQ, lambda t: t.det(), np.linalg.det)
method("slogdet", SQ, lambda t: t.slogdet(), lambda x: tuple(np.linalg.slogdet(x)))
method("softmax", X34, lambda t: t.softmax(), lambda x: np.exp(_log_softmax(x)))
method("softmax", X34, lambda t: t.softmax(0), lambda x: np.exp(_log_softmax(x, 0)))
method("log_softmax", X34, lambda t: t.log_softmax(), _log_softmax)
method("crossentropy", X34, lambda t: t.crossentropy(LABELS),
       lambda x: -np.take_along_axis(_log_softmax(x), LABELS[:, None], -1)[:, 0])
method("onehot_like", X34, lambda t: t.onehot_like(LABELS),
       lambda x: np.eye(4, dtype=np.float32)[LABELS])
method("onehot_like", X34, lambda t: t.onehot_like(LABELS, value=-2.5),
       lambda x: np.float32(-2.5) * np.eye(4, dtype=np.float32)[LABELS])
method("zeros_like", X34, lambda t: t.zeros_like(), np.zeros_like)
method("ones_like", X34, lambda t: t.ones_like(), np.ones_like)
method("full_like", X34, lambda t: t.full_like(2.5), lambda x: np.full_like(x, 2.5))
method("zeros", X34, lambda t: t.zeros((2, 5)), lambda x: np.zeros((2, 5), x.dtype))
method("ones", X34, lambda t: t.ones(3), lambda x: np.ones(3, x.dtype))
method("full", X34, lambda t: t.full((2,), -1.0), lambda x: np.full((2,), -1.0, x.dtype))
method("arange", X34, lambda t: t.arange(5), lambda x: np.arange(5))
method("arange", X34, lambda t: t.arange(1, 8, 3), lambda x: np.arange(1, 8, 3))
method("meshgrid", X34[0], lambda t: t.meshgrid(Y34[0, :3]),
       lambda x: np.meshgrid(x, Y34[0, :3]))
method("meshgrid", X34[0], lambda t: t.meshgrid(Y34[0, :3], indexing="ij"),
       lambda x: np.meshgrid(x, Y34[0, :3], indexing="ij"))
_CUSTOM = {"uniform", "normal", "value_and_grad"}   # checked by their own tests below


def _public_api() -> set[str]:
    names = {n for n in dir(gt.tensor_class("numpy")) if not n.startswith("_")}
    return names - {"framework", "ops", "raw"}


def test_method_table_is_complete() -> None:
    missing = sorted(_public_api() - set(METHODS) - _CUSTOM)
    assert not missing, f"Tensor methods without a row in METHODS: {missing}"


def _params() -> list[Any]:
    return [pytest.param(name, i, id=f"{name}[{i}]")
            for name, rows in METHODS.items() for i in range(len(rows))]


def _call_with_framework_operands(call: Callable[[Tensor], Any], t: Tensor, fw: str) -> Any:
    """Rows are written with NumPy operands (``Y34``, index arrays); a Tensor refuses values of
    another framework, so convert the NumPy arrays a row's lambda closes over or reads."""
    code = call.__code__
    glb = dict(call.__globals__)
    for name in code.co_names:
        value = glb.get(name)
        if isinstance(value, np.ndarray):
            glb[name] = to_framework(value, fw)
    g = type(call)(code, glb, call.__name__, call.__defaults__, call.__closure__)
    return g(t)


def _np_from_call_code(call: Callable[[Tensor], Any]) -> bool:
    return "np" in call.__code__.co_names


@pytest.mark.parametrize(("name", "i"), _params())
def test_method(framework: str, name: str, i: int) -> None:
    x, call, ref = METHODS[name][i]
    t = astensor(to_framework(x, framework))
    assert type(t) is gt.tensor_class(framework)
    if _np_from_call_code(call):   # np.array(...) operands inside the call: build them here
        out = _call_rebuilding_np(call, t, framework)
    else:
        out = _call_with_framework_operands(call, t, framework)
    expected = ref(x)
    _assert_result(out, expected, framework, type(t), name)


class _NpProxy:
    """``np`` inside a row's call: ``np.array`` makes the framework's array, the rest is NumPy."""

    def __init__(self, fw: str) -> None:
        self.fw = fw

    def array(self, *args: Any, **kwargs: Any) -> Any:
        return to_framework(np.array(*args, **kwargs), self.fw)

    def __getattr__(self, name: str) -> Any:
        return getattr(np, name)


def _call_rebuilding_np(call: Callable[[Tensor], Any], t: Tensor, fw: str) -> Any:
    code = call.__code__
    glb = dict(call.__globals__)
    glb["np"] = _NpProxy(fw)
    for name in code.co_names:
        value = glb.get(name)
        if isinstance(value, np.ndarray):
            glb[name] = to_framework(value, fw)
    g = type(call)(code, glb, call.__name__, call.__defaults__, call.__closure__)
    return g(t)


def _assert_result(out: Any, expected: Any, fw: str, cls: type, where: str) -> None:
    if isinstance(out, Tensor):
        assert type(out) is cls, f"{where}: a {type(out).__name__}, not a {cls.__name__}"
        assert_conforms(out.raw, expected, fw, where=where)
    elif isinstance(out, (list, tuple)) and not (expected == () or isinstance(expected, tuple)
                                                 and all(type(e) is int for e in expected)):
        assert len(out) == len(expected), where
        for k, (o, e) in enumerate(zip(out, expected)):
            _assert_result(o, e, fw, cls, f"{where}[{k}]")
    elif isinstance(expected, np.ndarray):   # .numpy()
        assert isinstance(out, np.ndarray), f"{where}: {type(out)} is not a NumPy array"
        np.testing.assert_array_equal(out, expected)
    else:
        assert type(out) is type(expected), f"{where}: {type(out)} is not {type(expected)}"
        if isinstance(expected, float):
            assert out == pytest.approx(expected, rel=1e-6), where
        else:
            assert out == expected, where


# --- astensor / native, operators, chaining ------------------------------------------------------
def test_astensor_native_round_trip(framework: str) -> None:
    x = to_framework(X34, framework)
    t = astensor(x)
    assert isinstance(t, Tensor) and t.raw is x and t.framework == framework
    assert native(t) is x
    assert astensor(t) is t
    assert gt.istensor(t) and not gt.istensor(x)
    nested = native({"a": [t, (t, 1.0)], "b": None})
    assert nested["a"][0] is x and nested["a"][1][0] is x and nested["a"][1][1] == 1.0
    assert nested["b"] is None
    a, b = gt.astensors(x, x)
    assert a.raw is x and b.raw is x
    assert native(x) is x


def test_astensor_of_python_numbers_is_numpy() -> None:
    t = astensor(2.5)
    assert t.framework == "numpy" and t.shape == () and float(t) == 2.5


def test_chain(framework: str) -> None:
    x = to_framework(X34, framework)
    out = astensor(x).square().sum().sqrt()
    assert type(out) is gt.tensor_class(framework)
    assert_conforms(out.raw, np.sqrt(np.sum(np.square(X34))), framework)
    assert float(out) == pytest.approx(float(np.linalg.norm(X34)), rel=1e-6)


_BINARY_OPS: list[tuple[str, Callable[[Any, Any], Any]]] = [
    ("+", lambda a, b: a + b), ("-", lambda a, b: a - b), ("*", lambda a, b: a * b),
    ("/", lambda a, b: a / b), ("//", lambda a, b: a // b), ("%", lambda a, b: a % b),
    ("**", lambda a, b: a ** b), ("<", lambda a, b: a < b), ("<=", lambda a, b: a <= b),
    (">", lambda a, b: a > b), (">=", lambda a, b: a >= b), ("==", lambda a, b: a == b),
    ("!=", lambda a, b: a != b),
]


@pytest.mark.parametrize(("symbol", "op"), _BINARY_OPS, ids=[s for s, _ in _BINARY_OPS])
def test_operators(framework: str, symbol: str, op: Callable[[Any, Any], Any]) -> None:
    x, y = POS34, Y34 * 0 + np.float32(1.25)
    t, u = astensor(to_framework(x, framework)), astensor(to_framework(y, framework))
    cls = gt.tensor_class(framework)
    cases = [
        ("tensor op tensor", op(t, u), op(x, y)),
        ("tensor op float", op(t, 1.5), op(x, np.float32(1.5))),
        ("tensor op int", op(t, 2), op(x, 2)),
        ("float op tensor (reflected)", op(1.5, t), op(np.float32(1.5), x)),
        ("int op tensor (reflected)", op(3, t), op(3, x)),
        ("tensor op raw", op(t, to_framework(y, framework)), op(x, y)),
    ]
    raw_y = to_framework(y, framework)
    if framework == "tensorflow" and symbol in ("<", "<=", ">", ">=", "==", "!="):
        # TensorFlow's comparisons never return NotImplemented: no reflected fallback
        with pytest.raises(TypeError, match="gradlab Tensor on the left"):
            op(raw_y, t)
    else:
        cases.append(("raw op tensor (reflected)", op(raw_y, t), op(y, x)))
    for what, out, expected in cases:
        assert type(out) is cls, f"{symbol}, {what}: a {type(out).__name__}"
        assert_conforms(out.raw, expected, framework, where=f"{symbol}, {what}")


def test_unary_operators_and_matmul(framework: str) -> None:
    t = astensor(to_framework(X34, framework))
    assert_conforms((-t).raw, -X34, framework)
    assert (+t) is t
    assert_conforms(abs(t).raw, np.abs(X34), framework)
    u = astensor(to_framework(Y34.T, framework))
    assert_conforms((t @ u).raw, X34 @ Y34.T, framework)
    assert_conforms((t @ to_framework(Y34.T, framework)).raw, X34 @ Y34.T, framework)
    assert_conforms((to_framework(Y34.T, framework) @ t).raw, Y34.T @ X34, framework)


def test_indexing_iteration_and_conversions(framework: str) -> None:
    t = astensor(to_framework(X34, framework))
    assert_conforms(t[1].raw, X34[1], framework)
    assert_conforms(t[1:, ::2].raw, X34[1:, ::2], framework)
    assert_conforms(t[..., -1].raw, X34[..., -1], framework)
    idx = astensor(to_framework(np.array([2, 0]), framework))
    assert_conforms(t[idx].raw, X34[[2, 0]], framework)
    assert_conforms(t[idx, 1].raw, X34[[2, 0], 1], framework)
    assert len(t) == 3
    rows = list(t)
    assert len(rows) == 3 and all(type(r) is type(t) for r in rows)
    assert_conforms(rows[2].raw, X34[2], framework)
    one = t[0, 0]
    assert float(one) == pytest.approx(float(X34[0, 0]))
    assert int(astensor(to_framework(np.array(7), framework))) == 7
    assert bool(t[0, 0] == t[0, 0]) is True
    assert "Tensor(" in repr(t)
    with pytest.raises(TypeError):
        hash(t)


def test_properties(framework: str) -> None:
    t = astensor(to_framework(X234, framework))
    assert t.shape == (2, 3, 4) and all(type(n) is int for n in t.shape)
    assert t.ndim == 3 and t.size == 24
    assert t.dtype == gt.float32 and t.dtype == "float32"
    assert isinstance(t.dtype, gt.DType)
    assert t.device_label == "cpu"
    device = t.device
    if framework == "jax":
        assert getattr(device, "platform", None) == "cpu"
    else:
        assert device == "cpu"
    assert gt.device_label(t.raw) == "cpu"
    assert astensor(to_framework(np.array(True), framework)).dtype == gt.bool_
    assert astensor(to_framework(np.arange(3), framework)).dtype == gt.int64


def test_random_methods(framework: str) -> None:
    t = astensor(to_framework(X34.astype(np.float64), framework))
    u = t.uniform((50, 40), -1.0, 3.0, seed=3)
    assert type(u) is type(t) and u.shape == (50, 40) and u.dtype == gt.float64
    values = u.numpy()
    assert values.min() >= -1 and values.max() < 3
    np.testing.assert_array_equal(values, t.uniform((50, 40), -1.0, 3.0, seed=3).numpy())
    n = t.normal((4000,), 1.0, 2.0, seed=4)
    assert n.dtype == gt.float64 and n.shape == (4000,)
    assert abs(n.numpy().mean() - 1.0) < 0.15 and abs(n.numpy().std() - 2.0) < 0.15
    assert not np.array_equal(n.numpy(), t.normal((4000,), 1.0, 2.0, seed=5).numpy())


def test_tensor_value_and_grad(framework: str) -> None:
    x, y = X34.astype(np.float64), Y34.astype(np.float64)
    value, dx, _ = expected_grads(x, y)
    t = astensor(to_framework(x, framework))
    v, g = t.value_and_grad(framework_loss(framework), astensor(to_framework(y, framework)))
    assert type(g) is type(t)
    assert float(to_numpy(v)) == pytest.approx(value, rel=1e-10)
    assert_conforms(g.raw, dx, framework, where="Tensor.value_and_grad")


# --- the wrapper inside jax.jit and tf.function --------------------------------------------------
def test_chain_traced_in_jax_jit() -> None:
    require("jax")
    import jax
    f = jax.jit(lambda x: astensor(x).square().sum(axis=-1).sqrt().softmax().raw)
    out = f(to_framework(X34, "jax"))
    norms = np.sqrt((X34.astype(np.float64) ** 2).sum(-1))
    expected = (np.exp(norms - norms.max()) / np.exp(norms - norms.max()).sum())
    assert_conforms(out, expected.astype(np.float32), "jax")


def test_chain_traced_in_tf_function() -> None:
    require("tensorflow")
    import tensorflow as tf
    f = tf.function(lambda x: astensor(x).square().sum(axis=-1).sqrt().norms.l2().raw)
    out = f(to_framework(X34, "tensorflow"))
    assert_conforms(out, np.float32(np.linalg.norm(X34)), "tensorflow")


def test_framework_of_tf_variable_tensor_wrapper() -> None:
    require("tensorflow")
    import tensorflow as tf
    v = tf.Variable([[1.0, 2.0]])
    t = astensor(v)
    assert t.framework == "tensorflow"
    assert_conforms(t.square().sum().raw, np.float32(5.0), "tensorflow")
