"""What the backends share (gradlab.tensor.backends.common): index and padding helpers, and
the generic formulas bound to each backend's namespace where its framework lacks one."""
from __future__ import annotations

import numpy as np
import pytest

from gradlab.tensor import backend
from gradlab.tensor.backends import common
from tests.conftest import to_framework, to_numpy


@pytest.mark.parametrize("index, basic", [
    (1, True), ((slice(1, None), None, Ellipsis), True), ((0, -1), True),
    (np.array([0, 1]), False), ([0, 1], False), ((slice(None), np.int64(1)), False)])
def test_a_basic_index_has_no_arrays(index, basic) -> None:
    assert common.is_basic_index(index) is basic


def test_axes_normalized() -> None:
    assert common.normalize_axes(None, 3) == (0, 1, 2)
    assert common.normalize_axes(-1, 3) == (2,)
    assert common.normalize_axes([2, -3], 3) == (0, 2)


@pytest.mark.parametrize("pad_width, pairs", [
    (1, [(1, 1), (1, 1)]), ((1, 2), [(1, 2), (1, 2)]), (((2, 0),), [(2, 0), (2, 0)]),
    ([(1, 0), (0, 3)], [(1, 0), (0, 3)]), ((3,), [(3, 3), (3, 3)])])
def test_every_form_of_pad_width_is_one_pair_per_axis(pad_width, pairs) -> None:
    assert common.pad_pairs(pad_width, 2) == pairs
    x = np.arange(6.0).reshape(2, 3)
    np.testing.assert_array_equal(np.pad(x, pad_width), np.pad(x, pairs))


@pytest.mark.parametrize("mode", ["edge", "reflect", "symmetric", "wrap"])
def test_pad_indices_gather_what_numpy_pads_with(mode) -> None:
    values = np.array([10.0, 20.0, 30.0, 40.0])
    positions = common.pad_indices(4, 2, 3, mode)
    np.testing.assert_array_equal(values[positions], np.pad(values, (2, 3), mode=mode))


def test_generic_formulas_are_templates_that_need_a_namespace() -> None:
    assert {"logsumexp", "unbroadcast", "sum_to", "softmax"} <= set(common.GENERIC)
    with pytest.raises(NameError):
        common.softmax(np.zeros(2))            # no ``gl`` here: bound copies only


def test_bound_formulas_agree_with_numpy_on_every_backend(framework) -> None:
    ops = backend(framework)
    x = np.array([[1000.0, 1001.0, 999.0], [-2.0, 0.5, 3.0]])
    t = to_framework(x, framework)
    m = x.max(axis=1, keepdims=True)
    lse = (m + np.log(np.exp(x - m).sum(axis=1, keepdims=True)))[:, 0]
    np.testing.assert_allclose(to_numpy(ops.logsumexp(t, axis=1)), lse, rtol=1e-12)
    np.testing.assert_allclose(to_numpy(ops.softmax(t, axis=-1)), np.exp(x - lse[:, None]),
                               rtol=1e-12)
    g = to_framework(np.ones((4, 2, 3)), framework)
    like = to_framework(np.ones((2, 1)), framework)
    np.testing.assert_array_equal(to_numpy(ops.unbroadcast(g, like)), np.full((2, 1), 12.0))
    np.testing.assert_array_equal(to_numpy(ops.sum_to(g, (3,))), np.full(3, 8.0))
    np.testing.assert_array_equal(to_numpy(ops.unbroadcast(0.0, like)), np.zeros((2, 1)))


@pytest.mark.parametrize("framework", ["numpy", "torch", "tensorflow", "jax"])
def test_builtin_round_is_pythons_on_every_backend(framework: str) -> None:
    """``round(v)`` in the user's code: an int for a number and a 0-d value (torch's tensors
    have no ``__round__``, TensorFlow's fails), arrays rounded elementwise, half to even."""
    from tests.conftest import require
    require(framework)
    gl = backend(framework)
    assert gl.builtin_round(2.5) == 2 and type(gl.builtin_round(2.5)) is int
    zero_d = gl.builtin_round(to_framework(np.array(3.5), framework))
    assert int(zero_d) == 4
    rows = to_framework(np.array([[0.5, 1.5], [-2.5, 2.6]]), framework)
    if framework == "numpy":     # NumPy's arrays have no __round__: the user's code fails too
        with pytest.raises(TypeError):
            gl.builtin_round(rows)
        return
    np.testing.assert_array_equal(to_numpy(gl.builtin_round(rows)), [[0.0, 2.0], [-2.0, 3.0]])


@pytest.mark.parametrize("framework", ["torch", "tensorflow", "jax"])
def test_the_norm_of_bools_and_ints_is_numpys_float(framework: str) -> None:
    """``np.linalg.norm`` of a mask: TensorFlow's Sqrt takes no int (a crash, people fuzzer seed
    606); every backend computes it in float64, as NumPy."""
    from tests.conftest import require
    require(framework)
    ops = backend(framework)
    for values in (np.array([True, False, True]), np.array([1, 2])):
        got = ops.norm(to_framework(values, framework))
        assert float(to_numpy(got)) == pytest.approx(np.linalg.norm(values), rel=1e-12)
