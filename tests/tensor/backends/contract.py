"""What every backend object promises (:class:`gradlab.tensor.backends.base.Backend`), checked
for one backend by name: each backend's own test module runs it, then its framework's
particulars."""
from __future__ import annotations

from typing import Any

import numpy as np

from gradlab.tensor import convert, registry
from gradlab.tensor.detect import framework_of
from gradlab.tensor.spec import SIGNATURES
from tests.conftest import require


def square_sum_numpy(a: Any) -> Any:
    """For NumPy's reference (HIPS autograd swaps this module's ``np`` while it runs)."""
    return np.sum(a * a)


def check_contract(name: str) -> Any:
    require(name)
    b = registry.get(name)
    assert b.name == name and b.title and b.reference and name in repr(b)
    assert b.devices()[0] == "cpu"
    for dtype in (np.float32, np.float64, np.int64, np.bool_):
        array = (np.arange(6).reshape(2, 3) % 3).astype(dtype)
        value = convert(array, name)
        assert framework_of(value) == name
        back = np.asarray(b.to_numpy(value))
        assert back.dtype == array.dtype and back.shape == array.shape
        np.testing.assert_array_equal(back, array)
    x = convert(np.array([1.0, -2.0, 3.0]), name)
    assert b.device_label(b.device_of(x)).startswith("cpu")
    assert not b.is_traced(x)
    if b.typed_seed:
        one = b.one(x)
        assert framework_of(one) == name and float(b.to_numpy(one)) == 1.0
        assert np.asarray(b.to_numpy(one)).dtype == np.float64
    f = square_sum_numpy if name == "numpy" else (
        lambda a: b.namespace().sum(b.namespace().multiply(a, a)))
    value, grads = b.value_and_grad(f, (x,), (0,))
    assert float(np.asarray(b.to_numpy(value))) == 14.0
    np.testing.assert_allclose(np.asarray(b.to_numpy(grads[0])), [2.0, -4.0, 6.0])
    missing = sorted(n for n in SIGNATURES if not hasattr(b.namespace(), n))
    assert not missing, f"{name}'s namespace lacks {missing}"
    return b
