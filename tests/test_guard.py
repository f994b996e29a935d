"""The semantic guard: the first call for new argument types compares the generated forward
value with the function's own, and names the first line of the user's whose value differs.

A reading of a line with another meaning than the framework's is simulated by changing one
primitive of the NumPy tensor layer (``gl.tanh``), so that these tests do not depend on which
spellings gradlab reads wrongly today."""
from __future__ import annotations

import inspect
import warnings

import numpy as np
import pytest

import gradlab
from gradlab.tensor import backend
from tests.conftest import central_difference, require


def two_steps(x):
    a = x * 2.0
    h = np.tanh(a)
    b = h + 1.0
    return np.sum(b)


def in_a_loop(x):
    for i in range(4):
        x = np.tanh(x) + x
    return np.sum(x)


def _line_of(fn, text: str) -> int:
    lines, first = inspect.getsourcelines(fn)
    return first + next(i for i, line in enumerate(lines) if text in line)


@pytest.fixture()
def wrong_tanh(monkeypatch):
    """gl.tanh of NumPy computes something else than np.tanh where |x| > 1.5."""
    ops = backend("numpy")
    right = ops.tanh
    monkeypatch.setattr(ops, "tanh", lambda x: np.where(np.abs(x) > 1.5, 2.0 * right(x),
                                                        right(x)))
    return ops


def test_a_mismatch_names_the_first_line_whose_value_differs(wrong_tanh):
    df = gradlab.grad(two_steps)
    with pytest.raises(gradlab.ForwardMismatchError) as info:
        df(np.array([0.1, 1.0, -2.0]))
    e = info.value
    assert e.lineno == _line_of(two_steps, "h = np.tanh(a)")
    assert e.name == "h" and e.line == "h = np.tanh(a)"
    assert "check=False" in str(e) and "two_steps" in str(e)
    # the failure leaves no fast path behind: the next call is checked again
    with pytest.raises(gradlab.ForwardMismatchError):
        df(np.array([0.1, 1.0, -2.0]))


def test_forward_mode_is_guarded_as_reverse_mode_is(wrong_tanh):
    """jvp's value is the function's value: a reading of a line with another meaning is
    caught on the first call for these argument types (people fuzz seed 11 found a wrong jvp
    value that grad's guard refused), and check=False switches it off."""
    x, v = np.array([0.1, 1.0, -2.0]), np.ones(3)
    with pytest.raises(gradlab.ForwardMismatchError) as info:
        gradlab.jvp(two_steps)(x, v)
    assert "two_steps" in str(info.value)
    value, _ = gradlab.jvp(two_steps, check=False)(x, v)
    assert value != pytest.approx(two_steps(x))


def test_a_mismatch_in_a_later_loop_iteration_is_found(wrong_tanh):
    x = np.array([0.5, 0.2])    # |x| passes 1.5 in the third iteration
    with pytest.raises(gradlab.ForwardMismatchError) as info:
        gradlab.grad(in_a_loop)(x)
    assert info.value.lineno == _line_of(in_a_loop, "x = np.tanh(x) + x")
    assert info.value.name == "x"


def test_check_false_switches_the_guard_off(wrong_tanh):
    x = np.array([0.1, 1.0, -2.0])
    g = gradlab.grad(two_steps, check=False)(x)
    assert g.shape == x.shape
    value, _ = gradlab.value_and_grad(two_steps, check=False)(x)
    assert value != pytest.approx(two_steps(x))     # the generated code's own value


def test_agreeing_values_pass_and_are_checked_once_per_argument_layout():
    calls = []

    def counted(x):
        calls.append(1)
        return np.sum(np.tanh(x) * 2.0)

    df = gradlab.grad(counted)
    df(np.ones(3))
    assert len(calls) == 2           # the generated forward pass, and the original once
    df(np.ones(3))                   # the same layout: the fast path, nothing more
    assert len(calls) == 3
    df(np.ones(5))                   # another shape: checked again
    assert len(calls) == 5
    df(np.ones(5, dtype=np.float32))     # another dtype: checked again
    assert len(calls) == 7
    df(np.ones(5))
    df(np.ones(3, dtype=np.float64))
    assert len(calls) == 9
    df([1.0, 2.0])                   # new argument types: checked again
    assert len(calls) == 11
    assert df.unchecked == {}


def gram_sum(x):
    return np.sum(np.dot(x, x.T) ** 2)


def test_a_new_shape_is_checked_before_its_gradient_is_trusted():
    """Checked by types alone, a call with a matrix after one with a vector was never compared
    with the function (#15: the guard keys its check by types, shapes and dtypes)."""
    df = gradlab.grad(gram_sum)
    x = np.array([0.5, -1.0, 2.0])
    np.testing.assert_allclose(df(x), central_difference(gram_sum, x), rtol=1e-6)
    assert gradlab.guard.layout((x,)) in df._checked
    M = np.arange(6.0).reshape(2, 3) / 7.0
    np.testing.assert_allclose(df(M), central_difference(gram_sum, M), rtol=1e-6)
    assert gradlab.guard.layout((M,)) in df._checked


def test_a_fresh_closure_per_step_is_checked_once():
    """The functions made from one transform share what was checked."""
    calls = []

    def step(scale):
        def loss(x):
            calls.append(1)
            return np.sum(np.tanh(x) * scale)
        return loss

    for scale in (1.0, 2.0, 3.0):
        gradlab.grad(step(scale))(np.ones(2))
    assert len(calls) == 4           # 3 generated forward passes, the original once


def test_nan_matches_nan_and_infinities_match():
    def log_loss(x):
        return np.sum(np.log(x))

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert np.isnan(gradlab.value_and_grad(log_loss)(np.array([-1.0, 2.0]))[0])
        assert gradlab.value_and_grad(log_loss)(np.array([0.0, 2.0]))[0] == -np.inf


def test_float32_inputs_compare_at_float32_precision():
    def lse(x):
        m = np.max(x)
        return m + np.log(np.sum(np.exp(x - m)))

    x = np.random.default_rng(0).normal(size=1000).astype(np.float32) * 30
    g = gradlab.grad(lse)(x)
    assert g.dtype == np.float32
    np.testing.assert_allclose(g.sum(), 1.0, rtol=1e-4)


def squashed_flag(x):
    finite = np.isfinite(float(x[0]))
    y = np.arccos(finite / (1.0 + finite ** 2) ** 0.5 * 0.9)
    return y


def test_a_float32_detour_in_a_float64_function_is_a_mismatch():
    """On torch, ``finite ** 2`` of a bool is an int64 tensor, and an int tensor plus 1.0 is
    torch's default float32 (NumPy: float64): a value off by 1e-7 relatively, which the guard
    compares in the function's own precision (float64: 1e-9), not in the generated code's."""
    require("torch")
    import torch
    with pytest.raises(gradlab.ForwardMismatchError) as info:
        gradlab.grad(squashed_flag)(torch.tensor([0.5, 1.0, 2.0], dtype=torch.float64))
    assert info.value.name == "y"
    assert "in float32, where your function computes in float64" in str(info.value)
    assert gradlab.grad(squashed_flag)(np.array([0.5, 1.0, 2.0])).tolist() == [0.0, 0.0, 0.0]


def test_inputs_the_function_changes_are_copied():
    def logs(x, log):
        log.append(1.0)
        return np.sum(x * 2.0)

    log: list = []
    gradlab.grad(logs)(np.ones(3), log)
    assert log == [1.0]        # the generated forward pass's append; the original ran on a copy


def test_random_functions_are_not_checked_and_say_why():
    def noisy(x):
        return np.sum(x * np.random.rand())

    df = gradlab.grad(noisy)
    df(np.ones(3))
    assert "random" in next(iter(df.unchecked.values()))


def test_edited_gradients_are_not_guarded(wrong_tanh):
    def loss(W, x):
        h = np.tanh(x @ W)
        return np.mean(h ** 2)

    df = gradlab.grad(loss)
    edited = gradlab.recompile(df.source.replace("h = gl.tanh(xW)", "h = gl.tanh(xW) * 2.0"),
                               like=df)
    W, x = np.full((3, 2), 0.9), np.ones((4, 3))
    edited(W, x)      # the forward pass changed on purpose: no ForwardMismatchError
    assert "edited" in next(iter(edited.unchecked.values()))


def test_while_tracing_nothing_is_compared_then_an_eager_call_is(monkeypatch):
    require("jax")
    import jax
    import jax.numpy as jnp
    ops = backend("jax")
    right = ops.tanh
    monkeypatch.setattr(ops, "tanh", lambda x: 2.0 * right(x))
    df = gradlab.grad(two_steps)
    x = jnp.asarray([0.1, 0.2])
    jax.jit(df)(x)         # tracers have no value: not compared
    with pytest.raises(gradlab.ForwardMismatchError):
        df(x)


def test_a_function_returning_several_values_is_refused_before_running():
    def two(x):
        out = helper_pair(x)
        return out

    with pytest.raises(gradlab.GradlabError, match="returns a tuple of 2 outputs"):
        gradlab.grad(two)(np.ones(3))
    np.testing.assert_allclose(gradlab.grad(two)(np.ones(3), seed=(1.0, 1.0)), [3.0] * 3)


def helper_pair(x):
    return np.sum(x), np.sum(x * 2.0)


def test_checked_layouts_stay_bounded(monkeypatch):
    """A new shape per call (sequences of varying length) is checked once each; the layouts
    remembered stay within guard.CHECKED_LIMIT (then all are checked again once)."""
    monkeypatch.setattr(gradlab.guard, "CHECKED_LIMIT", 8)
    df = gradlab.grad(gram_sum)
    for n in range(1, 30):
        x = np.linspace(-1.0, 1.0, n)
        np.testing.assert_allclose(df(x), 4 * np.dot(x, x) * x, rtol=1e-9)
        assert len(df._checked) <= 8


def tanh_energy(x):
    y = np.tanh(x)
    return np.sum(y * y)


def test_hvp_is_checked_by_the_guard_too(monkeypatch):
    """hvp's generated code computes the function's value on the way: the guard compares it
    with the function's own on a new layout, as it does for grad and jvp (a misread hypot of
    a truth value gave a silently wrong hvp: people fuzzer seed 6161)."""
    numpy_gl = backend("numpy")
    real_tanh = numpy_gl.tanh
    monkeypatch.setattr(numpy_gl, "tanh", lambda v: real_tanh(v) * 1.5)   # a misreading
    with pytest.raises(gradlab.guard.ForwardMismatchError, match="tanh_energy"):
        gradlab.hvp(tanh_energy)(np.ones(3), np.ones(3))
    assert gradlab.hvp(tanh_energy, check=False)(np.ones(3), np.ones(3)).shape == (3,)
