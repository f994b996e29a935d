"""Framework-neutral dtypes (gradlab.tensor.dtypes): one name, the same on every backend."""
from __future__ import annotations

import numpy as np
import pytest

import gradlab
from gradlab.tensor import dtypes
from gradlab.tensor.dtypes import ALL, DType, neutral
from tests.conftest import require


def test_the_table_is_keyed_by_each_dtypes_own_name() -> None:
    assert all(key == d.name for key, d in ALL.items())
    assert {d.name for d in ALL.values() if d.is_floating} == {"float16", "bfloat16", "float32",
                                                               "float64"}
    for d in ALL.values():
        if d.name not in ("bool", "bfloat16"):
            assert d.itemsize == np.dtype(d.name).itemsize, d
        assert getattr(gradlab, d.name if d.name != "bool" else "bool_") is d


def test_a_dtype_equals_its_name_and_hashes_like_it() -> None:
    assert dtypes.float32 == "float32" and dtypes.float32 != "float64"
    assert dtypes.float32 == DType("float32", True, 4)
    assert {dtypes.int64: 1}[DType("int64", False, 8)] == 1
    assert repr(dtypes.bool_) == "gradlab.bool"
    assert dtypes.float32.__eq__(3) is NotImplemented


@pytest.mark.parametrize("given, name", [
    (np.float32, "float32"), (np.dtype("float64"), "float64"), ("int32", "int32"),
    (float, "float64"), (int, "int64"), (bool, "bool"), (np.bool_, "bool"),
    (dtypes.uint8, "uint8"), (np.complex128, "complex128")])
def test_neutral_reads_numpy_and_python_types(given, name) -> None:
    assert neutral(given) is ALL[name]


@pytest.mark.parametrize("framework", ["torch", "tensorflow", "jax"])
def test_neutral_reads_each_frameworks_dtypes(framework) -> None:
    require(framework)
    if framework == "torch":
        import torch
        pairs = [(torch.float32, "float32"), (torch.bfloat16, "bfloat16"), (torch.bool, "bool")]
    elif framework == "tensorflow":
        import tensorflow as tf
        pairs = [(tf.float64, "float64"), (tf.int8, "int8"), (tf.bool, "bool")]
    else:
        import jax.numpy as jnp
        pairs = [(jnp.float32, "float32"), (jnp.bfloat16, "bfloat16"), (jnp.int16, "int16")]
    for given, name in pairs:
        assert neutral(given) is ALL[name], given


def test_an_unknown_dtype_is_refused_with_the_known_ones() -> None:
    with pytest.raises(TypeError, match=r"unknown dtype 'float8'; gradlab knows float16, "):
        neutral("float8")
    with pytest.raises(TypeError, match="unknown dtype"):
        neutral(np.dtype("datetime64[s]"))
