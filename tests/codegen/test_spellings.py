"""Every spelling in the primitive table, called as its framework spells it, against that
framework: gradlab's forward value equals the framework function's own, and its gradient equals
the framework's own autodiff (torch.autograd, jax.grad, tf.GradientTape, HIPS autograd) or, for
NumPy, SciPy, ``math`` and builtins, central finite differences.

A row is made from the spelling's record: sample arguments in the canonical signature
(:data:`SAMPLES`), written out with the framework's positional order and keyword names (the
inverse of the record's mapping), so a mapping that is wrong for the framework — ``torch.var``
read as biased, TensorFlow's ``keepdims`` passed positionally, scipy's softmax over the last
axis — shows here as a wrong value or gradient. The functions are written to one module per
run, because gradlab reads their source.
"""
from __future__ import annotations

import atexit
import importlib
import importlib.util
import shutil
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import gradlab
from gradlab.codegen.primitives import _SHARED_METHODS, _TORCH_METHODS, METHODS, PATHS
from gradlab.tensor.primitive import Meaning, parse_signature
from gradlab.tensor.spec import (BOOLEAN, INTEGER, NONDIFFERENTIABLE, PRIMITIVES,
                                 SHAPE_ONLY)
from tests.conftest import import_path, require, to_numpy


@dataclass(frozen=True)
class Arr:
    """A float64 array argument: its shape and where its values lie."""

    shape: tuple[int, ...]
    domain: str = "normal"     # normal | positive | unit | above1 | nonzero | bool | int3
    seed: int = 0

    def make(self) -> np.ndarray:
        rng = np.random.default_rng(self.seed + 11 * len(self.shape))
        if self.domain == "positive":
            return rng.uniform(0.5, 2.0, self.shape)
        if self.domain == "unit":
            return rng.uniform(-0.8, 0.8, self.shape)
        if self.domain == "above1":
            return rng.uniform(1.2, 3.0, self.shape)
        if self.domain == "nonzero":
            return rng.uniform(0.5, 2.0, self.shape) * rng.choice([-1.0, 1.0], self.shape)
        if self.domain == "bool":
            return rng.random(self.shape) < 0.5
        if self.domain == "int3":
            return rng.integers(0, 3, self.shape)
        if self.domain == "well":
            return rng.uniform(-1, 1, self.shape) + 3 * np.eye(self.shape[-1])
        return rng.normal(size=self.shape)


X = Arr((3, 4))
X2 = Arr((3, 4), seed=1)
V = Arr((4,))
T = Arr((2, 3, 4))

#: Sample calls per primitive, in the canonical signature: ``(positional, keywords)``.
#: An ``Arr`` is an array of the framework under test (a Python float for ``math``).
_UNARY_DOMAIN = {"log": "positive", "log2": "positive", "log10": "positive", "sqrt": "positive",
                 "log1p": "positive", "arcsin": "unit", "arccos": "unit", "arctanh": "unit",
                 "arccosh": "above1", "reciprocal": "nonzero"}
SAMPLES: dict[str, list[tuple[tuple[Any, ...], dict[str, Any]]]] = {}
for _record in PRIMITIVES.values():
    if "unary" in _record.kinds:
        SAMPLES[_record.name] = [((Arr((3, 4), _UNARY_DOMAIN.get(_record.name, "normal")),), {})]
_Y_DOMAIN = {"divide": "nonzero", "mod": "positive", "floor_divide": "positive"}
_X_DOMAIN = {"power": "positive"}
for _record in PRIMITIVES.values():
    if "binary" in _record.kinds:
        _x = Arr((3, 4), _X_DOMAIN.get(_record.name, "normal"))
        _y = Arr((3, 4), _Y_DOMAIN.get(_record.name, "normal"), seed=1)
        SAMPLES[_record.name] = [((_x, _y), {}), ((_x, Arr((4,), _y.domain, seed=2)), {}),
                                 ((_x, 1.5), {})]
for _name in ("sum", "mean", "prod", "max", "min", "logsumexp", "all", "any", "argmax",
              "argmin"):
    SAMPLES[_name] = [((X,), {}), ((X,), {"axis": 1}), ((X,), {"axis": 0, "keepdims": True})]
for _name in ("var", "std"):
    SAMPLES[_name] = [((X,), {}), ((X,), {"axis": 1}), ((X,), {"axis": 0, "ddof": 1}),
                      ((X,), {"axis": 1, "keepdims": True, "ddof": 0})]
SAMPLES.update({
    "matmul": [((X, Arr((4, 2), seed=1)), {}), ((X, Arr((4,), seed=1)), {})],
    "dot": [((V, Arr((4,), seed=1)), {})],
    "outer": [((Arr((3,)), V), {})],
    "norm": [((V,), {}), ((X,), {"ord": 1, "axis": 1}), ((X,), {"axis": 0, "keepdims": True})],
    "linalg_norm": [((V,), {}), ((X,), {}), ((X,), {"ord": 3, "axis": 1})],
    "cumsum": [((X,), {"axis": 1})],
    "where": [((Arr((3, 4), "bool"), X, X2), {})],
    "clip": [((X, -0.5, 0.5), {})],
    "reshape": [((X, (4, 3)), {})],
    "flatten": [((X,), {})],
    "expand_dims": [((X, 1), {})],
    "squeeze": [((Arr((3, 1, 4)),), {}), ((Arr((3, 1, 4)),), {"axis": 1})],
    "transpose": [((X,), {}), ((T,), {"axes": (1, 0, 2)})],
    "swapaxes": [((T, 0, 2), {})],
    "matrix_transpose": [((X,), {}), ((T,), {})],
    "moveaxis": [((T, 0, -1), {})],
    "atleast_1d": [((V,), {})], "atleast_2d": [((V,), {})], "atleast_3d": [((X,), {})],
    "concatenate": [(([X, X2],), {"axis": 1})],
    "stack": [(([X, X2],), {"axis": 1})],
    "unstack": [((X,), {"axis": 0})],
    "split": [((X, 2), {"axis": 1})],
    "broadcast_to": [((V, (3, 4)), {})],
    "tile": [((V, (2, 1)), {})],
    "repeat": [((V, 2), {}), ((X, 3), {"axis": 1})],
    "flip": [((X,), {"axis": 1})],
    "inv": [((Arr((3, 3), "well"),), {})],
    "det": [((Arr((3, 3), "well"),), {})],
    "solve": [((Arr((3, 3), "well"), Arr((3,), seed=1)), {})],
    "einsum": [(("ij,kj->ik", [X, X2]), {}), (("ij,j", [X, Arr((4,), seed=1)]), {})],
    "softmax": [((X,), {"axis": 1})],
    "log_softmax": [((X,), {"axis": 1})],
    "copy": [((X,), {})],
    "stop_gradient": [((X,), {})],
    "full_like": [((X, 2.5), {})],
    "zeros_like": [((X,), {})],
    "ones_like": [((X,), {})],
    "array": [((X,), {})],
    "astype": [((X, "float64"), {})],
    "sum_list": [(([X, X2],), {})],
    "divmod": [((X, 1.5), {})],
})
#: Results that are a boolean, an integer or a shape: their rows would test no gradient, and
#: the semantic guard compares their values with the function's own on every first call.
NOT_FLOAT = {name for name, why in NONDIFFERENTIABLE.items()
             if why in (BOOLEAN, INTEGER, SHAPE_ONLY)}
for _name in NOT_FLOAT:
    SAMPLES.pop(_name, None)
#: Results that are a list or a pair: the row differentiates its last item.
LAST_ITEM = {"split", "unstack", "divmod"}

#: Module root -> the framework whose arrays its spellings take (``autograd`` takes NumPy's
#: arrays and is checked against HIPS autograd; ``math`` takes Python floats).
_FRAMEWORK_OF_ROOT = {"numpy": "numpy", "scipy": "numpy", "math": "math", "builtins": "numpy",
                      "gradlab": "numpy", "autograd": "autograd", "torch": "torch",
                      "tensorflow": "tensorflow", "jax": "jax"}
#: How each framework sums an array (the rows reduce a result to a scalar with fixed weights).
_SUM = {"numpy": "_np.sum", "math": "_np.sum", "autograd": "_anp.sum", "torch": "_torch.sum",
        "tensorflow": "_tf.reduce_sum", "jax": "_jnp.sum"}


@dataclass
class Row:
    path: str
    meaning: Meaning
    args: tuple[Any, ...]
    kwargs: dict[str, Any]

    @property
    def method(self) -> str:
        """The method name for a method row (``.var [torch]``), else ''."""
        return self.path[1:].split(" ")[0] if self.path.startswith(".") else ""

    @property
    def framework(self) -> str:
        if self.method:
            return self.path.split("[")[1].rstrip("]")
        root = self.path.split(".")[0]
        if self.path.startswith(("jax.", "jaxlib.")):
            return "jax"
        return _FRAMEWORK_OF_ROOT[root]

    @property
    def id(self) -> str:
        opts = ",".join(f"{k}={v}" for k, v in self.kwargs.items())
        shapes = ",".join("x".join(map(str, a.shape)) if isinstance(a, Arr) else
                          ("list" if isinstance(a, list) else repr(a)) for a in self.args)
        return f"{self.path}({shapes}{';' + opts if opts else ''})"


#: NumPy's API re-implemented: each spelling is checked on its first sample only.
_CLONES = ("jax.numpy.", "autograd.numpy.", "jax.scipy.")


def _rows() -> list[Row]:
    rows = []
    for path, meaning in sorted(PATHS.items()):
        if meaning.arity is not None or meaning.with_indices or meaning.transforms:
            continue   # chained builtins, value-and-index pairs, flags: test_primitives.py
        samples = SAMPLES.get(meaning.prim, [])
        if path.startswith(_CLONES):   # NumPy's mapping, tested in full on numpy.*
            samples = samples[:1]
        for args, kwargs in samples:
            rows.append(Row(path, meaning, args, kwargs))
    # methods: NumPy's meaning on NumPy arrays (those NumPy arrays have) and on JAX arrays,
    # torch's on torch tensors
    for framework, dialect, names in (
            ("numpy", "numpy", [n for n in _SHARED_METHODS if hasattr(np.ndarray, n)]),
            ("jax", "numpy", [n for n in _SHARED_METHODS if hasattr(np.ndarray, n)]),
            ("torch", "torch", sorted(set(_SHARED_METHODS) | set(_TORCH_METHODS)))):
        for name in sorted(names):
            meaning = METHODS[dialect][name]
            if meaning.with_indices:
                continue
            for args, kwargs in SAMPLES.get(meaning.prim, [])[:2]:
                if args and isinstance(args[0], Arr):
                    rows.append(Row(f".{name} [{framework}]", meaning, args, kwargs))
    return rows


ROWS = _rows()


#: Spelled primitives whose calls take no array sample, each with where it is tested.
TESTED_ELSEWHERE = {
    "builtin_round": "Python's round takes numbers, and NumPy's arrays have no __round__: "
                     "tests/tensor/backends/test_common.py, test_known_bugs.py (every backend)",
    "take": "torch's take (flattened) and index_select (one axis) take different samples: "
            "tests/codegen/rules/test_take.py, every spelling",
    "take_along_axis": "its indices must fit the array's shape: tests/codegen/rules/test_take.py",
}


def test_every_spelled_primitive_has_samples() -> None:
    """A primitive that users can spell and that has no sample here is untested."""
    spelled = {m.prim for m in PATHS.values()}
    creation = {p for p in spelled if "creation" in PRIMITIVES[p].kinds}
    missing = sorted(spelled - set(SAMPLES) - creation - NOT_FLOAT - set(TESTED_ELSEWHERE))
    assert not missing, f"no sample calls for {missing}"


# --- writing a row as code -------------------------------------------------------------------
def _keyword(meaning: Meaning, canonical: str, accepted: set[str] | None) -> str:
    """The framework's keyword for a canonical parameter: the name itself where the framework
    takes it, else a name its mapping renames to it."""
    candidates = [canonical] + [k for k, v in meaning.rename.items() if v == canonical] + [
        k for k, (v, _) in meaning.literals.items() if v == canonical and k != canonical]
    if accepted is not None:
        for c in candidates:
            if c in accepted:
                return c
    return candidates[-1] if accepted is None and len(candidates) > 1 else candidates[0]


def _accepted_keywords(fn: Any) -> set[str] | None:
    import inspect
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return None
    if any(p.kind is p.VAR_KEYWORD for p in params.values()):
        return None
    return set(params)


def _module_name(path: str) -> str:
    return "_m_" + path.rsplit(".", 1)[0].replace(".", "_")


def _text(row: Row, index: int) -> tuple[str, list[Arr]]:
    """``r<i>`` calls the spelling; ``f<i>`` reduces its result to a scalar with weights."""
    arrays: list[Arr] = []

    def literal(value: Any) -> str:
        if isinstance(value, Arr):
            arrays.append(value)
            return f"a{len(arrays) - 1}"
        if isinstance(value, list):
            return "[" + ", ".join(literal(v) for v in value) + "]"
        return repr(value)

    args = list(row.args)
    if row.meaning.varargs and not row.method:   # np.einsum(s, a, b): the list spread out
        at = list(parse_signature(PRIMITIVES[row.meaning.prim].signature).parameters).index(
            row.meaning.varargs)
        args[at:at + 1] = args[at]
    positional = [literal(a) for a in args]
    if row.method:   # a NumPy method takes NumPy's keyword names, a torch method torch's
        accepted = {"axis", "keepdims", "ddof", "axes", "ord"} if row.framework != "torch" \
            else {"dim", "keepdim", "correction", "p", "dims"}
    else:
        accepted = _accepted_keywords(import_path(row.path))
    keywords = []
    for canonical, value in row.kwargs.items():
        key = _keyword(row.meaning, canonical, accepted)
        if key in row.meaning.literals and key != canonical:
            table = row.meaning.literals[key][1]
            value = next((k for k, v in table.items() if v == value), value)
        keywords.append(f"{key}={literal(value)}")
    root, _, name = row.path.rpartition(".")
    if row.method:
        func, positional = f"{positional[0]}.{row.method}", positional[1:]
    else:
        func = name if root == "builtins" else f"{_module_name(row.path)}.{name}"
    params = ", ".join(f"a{i}" for i in range(len(arrays)))
    item = "[-1]" if row.meaning.prim in LAST_ITEM else ""
    text = (f"def r{index}({params}):\n"
            f"    return {func}({', '.join(positional + keywords)}){item}\n\n\n"
            f"def f{index}({params}):\n"
            f"    out = r{index}({params})\n"
            f"    return {_SUM[row.framework]}(out * W{index})\n")
    return text, arrays


class _Module:
    """Every row's functions in one module, imported once (gradlab reads their source)."""

    def __init__(self, rows: list[Row]) -> None:
        self.inputs: dict[int, list[Arr]] = {}
        self.skipped: dict[int, str] = {}
        lines = ["import importlib", "import numpy as _np"]
        for alias, mod in (("_anp", "autograd.numpy"), ("_torch", "torch"),
                           ("_tf", "tensorflow"), ("_jnp", "jax.numpy")):
            lines.append(f"try:\n    import {mod} as {alias}\nexcept ImportError:\n"
                         f"    {alias} = None")
        for mod in sorted({r.path.rsplit(".", 1)[0] for r in rows if not r.method}
                          - {"builtins"}):
            lines.append(f"try:\n    {_module_name(mod + '.x')} = importlib.import_module("
                         f"{mod!r})\nexcept ImportError:\n    pass")
        lines.append("")
        for i, row in enumerate(rows):
            try:
                text, arrays = _text(row, i)
            except Exception as e:  # the framework is not installed
                self.skipped[i] = f"{row.path}: {type(e).__name__}: {e}"
                continue
            self.inputs[i] = arrays
            lines += [f"W{i} = None", "", text]
        directory = Path(tempfile.mkdtemp(prefix="gradlab_spellings_"))
        atexit.register(shutil.rmtree, directory, True)
        path = directory / "spelled_rows.py"
        path.write_text("\n".join(lines))
        spec = importlib.util.spec_from_file_location("spelled_rows", path)
        assert spec is not None and spec.loader is not None
        self.module = importlib.util.module_from_spec(spec)
        sys.modules["spelled_rows"] = self.module
        spec.loader.exec_module(self.module)


_module: _Module | None = None


def _the_module() -> _Module:
    global _module
    if _module is None:
        _module = _Module(ROWS)
    return _module


# --- running a row ---------------------------------------------------------------------------
def _convert(value: Any, framework: str) -> Any:
    value = np.asarray(value)
    if framework in ("numpy", "autograd"):
        return value
    if framework == "math":
        return float(value)
    if framework == "torch":
        import torch
        return torch.as_tensor(value.copy())
    if framework == "tensorflow":
        import tensorflow as tf
        return tf.constant(value)
    import jax.numpy as jnp
    return jnp.asarray(value)


def _reference_gradient(f: Any, framework: str, raw: list[np.ndarray], wrt: int, prim: str
                        ) -> np.ndarray:
    inputs = [_convert(r, framework) for r in raw]
    if framework == "torch":
        import torch
        inputs[wrt].requires_grad_(True)
        out = f(*inputs)
        if not out.requires_grad or not PRIMITIVES[prim].differentiable:
            return np.zeros_like(raw[wrt])    # detached, or no derivative in torch either
        (grad,) = torch.autograd.grad(out, inputs[wrt], allow_unused=True)
        return np.zeros_like(raw[wrt]) if grad is None else grad.numpy()
    if framework == "jax":
        import jax
        return np.asarray(jax.grad(f, wrt)(*inputs))
    if framework == "tensorflow":
        import tensorflow as tf
        with tf.GradientTape() as tape:
            tape.watch(inputs[wrt])
            out = f(*inputs)
        grad = tape.gradient(out, inputs[wrt])
        return np.zeros_like(raw[wrt]) if grad is None else np.asarray(grad)
    if framework == "autograd":
        import autograd
        try:
            return np.asarray(autograd.grad(f, wrt)(*inputs))
        except Exception:  # noqa: BLE001 - HIPS autograd lacks or fails this gradient
            pass     # finite differences, then
    if prim == "stop_gradient":
        return np.zeros_like(raw[wrt])
    x = np.asarray(raw[wrt], dtype=np.float64)
    grad = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        plus, minus = list(inputs), list(inputs)
        xp, xm = x.copy(), x.copy()
        xp[i] += 1e-6
        xm[i] -= 1e-6
        plus[wrt], minus[wrt] = _convert(xp, framework), _convert(xm, framework)
        grad[i] = (float(f(*plus)) - float(f(*minus))) / 2e-6
    return grad


@pytest.mark.parametrize("row", ROWS, ids=lambda r: r.id)
def test_spelling(row: Row) -> None:
    framework = row.framework
    if framework == "autograd":
        pytest.importorskip("autograd")
    elif framework not in ("numpy", "math"):
        require(framework)
    module = _the_module()
    index = ROWS.index(row)
    if index in module.skipped:
        pytest.skip(module.skipped[index])
    raw = [a.make() for a in module.inputs[index]]
    if framework == "math":
        raw = [np.asarray(r.flat[0]) for r in raw]
    inputs = [_convert(r, framework) for r in raw]
    r, f = getattr(module.module, f"r{index}"), getattr(module.module, f"f{index}")
    try:
        out = r(*inputs)
    except Exception as e:
        pytest.skip(f"{row.path} does not take this sample itself: {type(e).__name__}: {e}")
    weights = np.random.default_rng(index).normal(size=np.shape(to_numpy(out)))
    setattr(module.module, f"W{index}", float(weights) if framework == "math" else
            _convert(weights, framework))
    expected = np.asarray(to_numpy(f(*inputs)), dtype=np.float64)
    wrt = next(i for i, a in enumerate(raw) if a.dtype.kind == "f")
    g = gradlab.value_and_grad(f, wrt)
    got_value, got = g(*inputs)
    np.testing.assert_allclose(np.asarray(to_numpy(got_value), dtype=np.float64), expected,
                               rtol=1e-9, atol=1e-10, err_msg=f"value of {row.id}")
    reference = _reference_gradient(f, framework, raw, wrt, row.meaning.prim)
    np.testing.assert_allclose(np.asarray(to_numpy(got), dtype=np.float64), reference,
                               rtol=1e-6, atol=1e-7,
                               err_msg=f"gradient of {row.id}\n{g.source}")


try:
    import torch
except ImportError:      # the test below requires it
    torch = None


def torch_casts_and_moves(x):
    y = x.to(torch.float64) * 2.0
    z = y.to("cpu")
    return torch.sum(z.to(dtype=torch.float64) ** 2)


def test_torch_to_casts_and_moves() -> None:
    """``x.to(dtype)`` is a cast and ``x.to(device)`` a move: the gradient flows through both,
    and comes back in the input's dtype (the samples above cannot draw a device)."""
    require("torch")
    x = torch.tensor([1.0, 2.0], dtype=torch.float32)
    g = gradlab.grad(torch_casts_and_moves)(x)
    assert g.dtype == torch.float32
    np.testing.assert_allclose(to_numpy(g), 8.0 * np.array([1.0, 2.0]))
    _, tangent = gradlab.jvp(torch_casts_and_moves)(x, torch.ones(2))
    assert float(tangent) == pytest.approx(24.0)
