"""Which framework a call's values come from (gradlab.tensor.detect)."""
from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from typing import Any, Callable

import numpy as np
import pytest

import gradlab.tensor as gt
from gradlab.errors import BackendError, GradlabError
from gradlab.tensor import astensor
from gradlab.tensor.detect import PYTHON, common_framework
from tests.conftest import FRAMEWORKS, require, to_framework


def test_containers_are_looked_into(framework):
    x = to_framework(np.ones(2), framework)
    assert common_framework([{"a": 1.0, "b": [0.5, (x,)]}]) == framework
    assert common_framework([{"a": 1.0}, (2.0, [3])]) == PYTHON


def test_two_frameworks_in_a_dict_are_refused():
    torch = pytest.importorskip("torch")
    with pytest.raises(BackendError, match="two frameworks"):
        common_framework([{"a": np.ones(2), "b": torch.ones(2)}])


# --- detection without importing other frameworks, and of every kind of value -------------------
def _run(code: str) -> Any:
    out = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                         text=True, timeout=120, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_detecting_numpy_imports_no_framework() -> None:
    imported = _run("""
        import json, sys
        import numpy as np
        import gradlab, gradlab.tensor as gt
        assert gt.framework_of(np.zeros(3)) == "numpy"
        assert gt.framework_of(np.float32(1)) == "numpy"
        assert gt.framework_of(1.5) == "python"
        assert gt.common_framework([np.zeros(2), 1.0]) == "numpy"
        t = gt.astensor(np.arange(4.0)).square().sum().sqrt()
        assert gt.backend("numpy").sum(np.ones(2)) == 2
        frameworks = ("torch", "tensorflow", "jax", "jaxlib")
        print(json.dumps([m for m in frameworks if m in sys.modules]))
    """)
    assert imported == []


def test_detecting_torch_imports_no_other_framework() -> None:
    require("torch")
    imported = _run("""
        import json, sys
        import torch
        import gradlab.tensor as gt
        assert gt.framework_of(torch.zeros(2)) == "torch"
        gt.astensor(torch.zeros(2)).pad(1, "edge").sum()
        gt.backend("torch")
        print(json.dumps([m for m in ("tensorflow", "jax") if m in sys.modules]))
    """)
    assert imported == []


def _values_of_every_framework() -> list[tuple[str, Callable[[], Any]]]:
    def torch_param() -> Any:
        import torch
        return torch.nn.Parameter(torch.zeros(2))

    def tf_variable() -> Any:
        import tensorflow as tf
        return tf.Variable([1.0, 2.0])

    return [
        ("numpy", lambda: np.zeros(2)), ("numpy", lambda: np.float64(1.0)),
        ("numpy", lambda: np.int32(3)), ("numpy", lambda: np.bool_(True)),
        ("numpy", lambda: np.zeros((), np.float32)),
        ("torch", lambda: to_framework(np.zeros(2), "torch")), ("torch", torch_param),
        ("tensorflow", lambda: to_framework(np.zeros(2), "tensorflow")),
        ("tensorflow", tf_variable),
        ("jax", lambda: to_framework(np.zeros(2), "jax")),
        ("python", lambda: 1), ("python", lambda: 2.5), ("python", lambda: True),
        ("python", lambda: 1 + 2j),
    ]


@pytest.mark.parametrize(("expected", "make"), _values_of_every_framework(),
                         ids=lambda v: v if isinstance(v, str) else "")
def test_framework_of(expected: str, make: Callable[[], Any]) -> None:
    if expected not in ("numpy", "python"):
        require(expected)
    value = make()
    assert gt.framework_of(value) == expected
    assert gt.require_framework(value) == expected
    if expected != "python":
        assert astensor(value).framework == expected


@pytest.mark.parametrize("value", ["abc", [1.0, 2.0], None, {"a": 1}, object(),
                                   np.random.default_rng(0)],
                         ids=["str", "list", "None", "dict", "object", "np.random.Generator"])
def test_unsupported_values(value: Any) -> None:
    assert gt.framework_of(value) is None
    with pytest.raises(TypeError) as info:
        gt.require_framework(value)
    message = str(info.value)
    t = type(value)
    assert f"{t.__module__}.{t.__qualname__}" in message
    for fw in ("numpy", "torch", "tensorflow", "jax"):
        assert fw in message
    with pytest.raises(TypeError, match=t.__qualname__):
        astensor(value)
    assert isinstance(info.value, GradlabError)


@pytest.mark.parametrize("other", [f for f in FRAMEWORKS if f != "numpy"])
def test_mixing_frameworks_is_an_error(other: str) -> None:
    require(other)
    a, b = np.ones(2, np.float32), to_framework(np.ones(2, np.float32), other)
    with pytest.raises(BackendError) as info:
        gt.common_framework([a, b])
    assert "numpy" in str(info.value) and other in str(info.value)
    with pytest.raises(BackendError) as info:
        gt.common_framework([1.0, [a, (2, b)]])
    assert "numpy" in str(info.value) and other in str(info.value)
    with pytest.raises(BackendError) as info:
        astensor(a) + astensor(b)
    assert "numpy" in str(info.value) and other in str(info.value)
    with pytest.raises(BackendError) as info:
        astensor(b) * astensor(a)
    assert "numpy" in str(info.value) and other in str(info.value)
    with pytest.raises(BackendError) as info:
        astensor(b).maximum(a)
    assert "numpy" in str(info.value) and other in str(info.value)
    with pytest.raises(BackendError):
        gt.value_and_grad(lambda x, y: x, a, b)
    assert gt.common_framework([b, 1.0, [b]]) == other
    assert gt.common_framework([1, 2.0]) == "python"


def test_a_callable_of_another_framework_is_refused_by_name():
    """What each backend's vjp_of/jvp_of asks first (codegen/opaque.py)."""
    from gradlab.errors import BackendError
    from gradlab.tensor.detect import require_callable_of
    require_callable_of(lambda x: x, "torch", "PyTorch")      # the user's own: any framework
    torch = pytest.importorskip("torch")
    require_callable_of(torch.nn.Linear(2, 2), "torch", "PyTorch")
    with pytest.raises(BackendError, match="belongs to torch, and these are JAX arrays"):
        require_callable_of(torch.nn.Linear(2, 2), "jax", "JAX")
