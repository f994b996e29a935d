"""The helpers gradient code calls (adjoint_helpers.py), on every backend, against NumPy
written out by hand."""
from __future__ import annotations

import numpy as np
import pytest

from gradlab.errors import GradlabError
from gradlab.tensor.gradlist import GradList
from gradlab.tensor.registry import backend
from tests.conftest import to_framework, to_numpy

RNG = np.random.default_rng(3)


@pytest.mark.parametrize("shape, repeats, axis", [((3,), 2, None), ((2, 3), 3, None),
                                                  ((2, 3), 2, 1), ((2, 3, 4), 2, -1),
                                                  ((), 3, None), ((2, 3), 2, 0)])
def test_unrepeat_adds_up_each_entrys_copies(framework: str, shape, repeats, axis) -> None:
    """unrepeat is the transpose of repeat: <repeat(x), g> == <x, unrepeat(g)> for all x, g."""
    gl = backend(framework)
    x = RNG.normal(size=shape)
    g = RNG.normal(size=np.repeat(x, repeats, axis).shape)
    got = to_numpy(gl.unrepeat(to_framework(g, framework), to_framework(x, framework),
                               repeats, axis))
    assert got.shape == x.shape
    assert np.sum(np.repeat(x, repeats, axis) * g) == pytest.approx(np.sum(x * got))
    forward = to_numpy(gl.repeat(to_framework(x, framework), repeats, axis))
    np.testing.assert_allclose(forward, np.repeat(x, repeats, axis))


def test_unrepeat_refuses_a_count_per_entry(framework: str) -> None:
    gl = backend(framework)
    x = to_framework(np.ones(3), framework)
    with pytest.raises(GradlabError, match="one count for every entry"):
        gl.unrepeat(to_framework(np.ones(6), framework), x, [1, 2, 3])


def test_unbroadcast_each_sums_back_to_each_item(framework: str) -> None:
    """sum([a (1,), b (3,), c a number]) broadcasts: each item gets the gradient summed to its
    own shape."""
    gl = backend(framework)
    g = np.array([1.0, 2.0, 4.0])
    items = [to_framework(np.zeros(1), framework), to_framework(np.zeros(3), framework), 0.5]
    got = gl.unbroadcast_each(to_framework(g, framework), items)
    np.testing.assert_allclose(to_numpy(got[0]), [7.0])
    np.testing.assert_allclose(to_numpy(got[1]), g)
    assert float(to_numpy(got[2])) == pytest.approx(7.0)


def test_as_list_gives_a_stacked_gradient_its_rows(framework: str) -> None:
    """A list that was a row of np.array(rows) gets its gradient as an array: as_list makes it a
    list again (the gradient code pops from it), a list's gradient (GradList); a list keeps
    its items, and a GradList stays the same one."""
    gl = backend(framework)
    g = RNG.normal(size=(3, 2))
    rows = gl.as_list(to_framework(g, framework))
    assert type(rows) is GradList and len(rows) == 3
    for got, want in zip(rows, g):
        np.testing.assert_allclose(to_numpy(got), want)
    items = [to_framework(g[0], framework)]
    assert type(gl.as_list(items)) is GradList and gl.as_list(items)[0] is items[0]
    assert gl.as_list(rows) is rows


def test_stack_of_a_list_of_lists_is_np_array_of_it(framework: str) -> None:
    gl = backend(framework)
    rows = [[to_framework(np.array(float(3 * i + j)), framework) for j in range(3)]
            for i in range(2)]
    np.testing.assert_allclose(to_numpy(gl.stack(rows)), np.arange(6.0).reshape(2, 3))


def test_stack_of_python_numbers_has_numpy_s_dtype(framework: str) -> None:
    """np.array([[1.0], [2.0]]) is float64 on every backend (TensorFlow's own stack made
    float32 of Python floats, which it then refused to multiply by a float64 input)."""
    gl = backend(framework)
    assert "float64" in str(gl.stack([[1.0], [2.0]]).dtype)


@pytest.mark.parametrize("ord, axis, shape", [(1, None, (4,)), (float("inf"), None, (4,)),
                                              (-float("inf"), 0, (3, 2)), (1, None, (2, 3)),
                                              (float("inf"), None, (2, 3)),
                                              (-float("inf"), (2, 0), (2, 3, 2)),
                                              (1, (1, 0), (2, 3))])
def test_linalg_norm_weights_are_the_derivative(framework: str, ord, axis, shape) -> None:
    """The derivative of np.linalg.norm(x, ord, axis) summed, away from ties, against central
    differences."""
    gl = backend(framework)
    x = RNG.uniform(0.5, 1.5, shape) * np.where(np.arange(np.prod(shape)) % 2, -1, 1).reshape(
        shape)
    got = to_numpy(gl.linalg_norm_weights(to_framework(x, framework), ord, axis=axis))
    expected = np.zeros_like(x)
    for i in np.ndindex(shape):
        step = np.zeros_like(x)
        step[i] = 1e-6
        expected[i] = (np.sum(np.linalg.norm(x + step, ord, axis))
                       - np.sum(np.linalg.norm(x - step, ord, axis))) / 2e-6
    np.testing.assert_allclose(got, expected, atol=1e-6)
