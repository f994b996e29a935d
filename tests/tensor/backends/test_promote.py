"""Unary functions of int and bool arrays in NumPy's dtype on every backend
(gradlab.tensor.backends.promote), and the TensorFlow reductions of bools."""
from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

import gradlab.tensor as gt
from gradlab.tensor.backends.promote import (FLOAT_FUNCTIONS, KEEPING_FUNCTIONS, casts,
                                             numpy_dtype)

from tests.conftest import require, to_framework, to_numpy

BACKENDS = ["numpy", "torch", "tensorflow", "jax"]
INPUTS = {"bool": np.array([True, False, True]), "int64": np.array([1, 2, 3]),
          "int32": np.array([1, 0, 2], dtype=np.int32)}


def test_numpy_dtypes_are_numpys_own() -> None:
    assert numpy_dtype("exp", "bool") == "float16"
    assert numpy_dtype("log", "int64") == "float64"
    assert numpy_dtype("abs", "bool") == "bool"
    assert numpy_dtype("square", "bool") == "int8"
    assert numpy_dtype("floor", "int64") == "int64"


def test_casts_leave_out_what_needs_none() -> None:
    table = casts("floor", str)
    assert table["bool"] is None and table["int64"] is None     # floor of an int is itself
    assert casts("abs", str) == {"bool": None}                    # abs of an int is computed
    assert casts("sign", str) == {}
    assert casts("tanh", str)["int64"] == "float64"


@pytest.mark.parametrize("framework", BACKENDS)
@pytest.mark.parametrize("dtype", sorted(INPUTS))
@pytest.mark.parametrize("name", FLOAT_FUNCTIONS + KEEPING_FUNCTIONS)
def test_unary_function_of_ints_and_bools_is_numpys(framework: str, dtype: str,
                                                    name: str) -> None:
    """NumPy's value in NumPy's dtype (torch: float32 of ints, TensorFlow: refused; JAX:
    float32 of bools)."""
    require(framework)
    if framework == "jax" and name in ("sigmoid", "softplus", "relu", "erf"):
        pytest.skip("not a jax.numpy function of NumPy's dtypes")
    ops, npops = gt.backend(framework), gt.backend("numpy")
    arr = INPUTS[dtype]
    if name in ("arccosh",):
        arr = arr.astype(dtype) + np.array(1, dtype=arr.dtype if dtype != "bool" else np.int8
                                           ).astype(arr.dtype)
    want = getattr(npops, name)(arr)
    got = to_numpy(getattr(ops, name)(to_framework(arr, framework)))
    assert got.dtype == want.dtype, (name, dtype, got.dtype, want.dtype)
    np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), rtol=1e-12,
                               equal_nan=True)


def test_tensorflow_reductions_of_bools() -> None:
    """NumPy sums and multiplies bools as int64; their max is any, their min all."""
    require("tensorflow")
    ops = gt.backend("tensorflow")
    m = np.array([[True, False], [True, True]])
    t = to_framework(m, "tensorflow")
    for name in ("sum", "prod", "max", "min"):
        for axis in (None, 0):
            got, want = to_numpy(getattr(ops, name)(t, axis)), getattr(np, name)(m, axis=axis)
            assert got.dtype == want.dtype and np.array_equal(got, want), name
    np.testing.assert_array_equal(to_numpy(ops.cumsum(t, 1)), np.cumsum(m, 1))
    np.testing.assert_array_equal(to_numpy(ops.maximum(t, to_framework(np.ones(2) * 0.5,
                                                                        "tensorflow"))),
                                  np.maximum(m, 0.5 * np.ones(2)))


def test_jax_casts_whatever_x64_was_when_the_namespace_was_made() -> None:
    """The namespace made before ``jax_enable_x64`` was switched on (a user importing gradlab
    first): ``sigmoid`` of an int64 array still casts to float64 (its table had only int32:
    'logistic does not accept dtype int64', people fuzzer seed 505)."""
    require("jax")
    import subprocess
    import sys
    code = ("from gradlab.tensor import backend\n"
            "gl = backend('jax')\n"
            "import jax\n"
            "jax.config.update('jax_enable_x64', True)\n"
            "import jax.numpy as jnp\n"
            "print(gl.sigmoid(jnp.arange(3)).dtype, gl.floor(jnp.arange(2)).dtype)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120, cwd=str(Path(__file__).resolve().parents[3]),
                         env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[3])})
    assert out.stdout.split() == ["float64", "int64"], out.stderr[-2000:]
