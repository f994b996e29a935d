"""grad(f, checkpoint=...): the gradient of a checkpointed loop equals the taped one, on every
backend and for every number of snapshots; loops that cannot be checkpointed are refused at
their line."""
from __future__ import annotations

import numpy as np
import pytest

import gradlab
from gradlab.errors import GradlabError
from tests.conftest import to_framework, to_numpy


def rnn(x, u, W):
    for t in range(u.shape[0]):
        x = x + 0.1 * np.tanh(W * x + u[t])
    return np.sum(x ** 2)


def thermostat(u, T0):
    T = T0
    c = 0.0
    for t in range(u.shape[0]):
        dT = (10.0 - T) * 0.1 + u[t] * 0.5
        T = T + 0.2 * dT
        c = c + 0.3 * u[t] * u[t] + (T - 21.0) ** 2
    return c


def backwards_with_stride(x, u):
    s = x * 0.0
    for t in reversed(range(1, u.shape[0], 2)):
        s = np.sin(s + u[t] * x)
    return np.sum(s)


def overwritten_state(x, u):
    # h is assigned before the loop and first thing in each step: the backward code of
    # `s = h * h` reads the value h had before the loop, which a snapshot must bring back
    h = np.sin(x)
    s = h * h
    for t in range(u.shape[0]):
        h = np.tanh(u[t] * x)
        s = s + h
    return np.sum(s * h)


def branches_and_inner_loop(x, u):
    y = x
    for t in range(u.shape[0]):
        if t % 2 == 0:
            y = y * np.cos(u[t])
        else:
            y = y + u[t]
        for k in range(2):
            y = np.sin(y) + 0.5 * y
    return np.sum(y)


def scale(v, a):
    return np.tanh(v * a)


def calls_and_two_loops(x, u):
    y = x
    for t in range(u.shape[0]):
        y = scale(y, u[t]) + y
    z = y * 2.0
    for t in range(3):
        z = z * y + 1.0
    return np.sum(z)


def no_carried_state(x, u):
    y = x
    for t in range(u.shape[0]):
        y = u[t] * x
    return np.sum(y * y)


def _cases(rng):
    v = rng.normal(size=4)
    u = rng.normal(size=(11, 4)) * 0.5
    return [
        (rnn, (v, u, rng.normal(size=4)), (0, 1, 2)),
        (thermostat, (rng.normal(size=9), 18.0), (0, 1)),
        (backwards_with_stride, (v, u), (0, 1)),
        (overwritten_state, (v, u), (0, 1)),
        (branches_and_inner_loop, (v, u), (0, 1)),
        (calls_and_two_loops, (v, u[:5]), (0, 1)),
        (no_carried_state, (v, u), (0, 1)),
    ]


CASES = _cases(np.random.default_rng(0))


@pytest.mark.parametrize("snapshots", [True, 0, 1, 3])
@pytest.mark.parametrize("fn, args, wrt", CASES, ids=[c[0].__name__ for c in CASES])
def test_checkpointed_gradient_equals_the_taped_one_on_numpy(fn, args, wrt, snapshots):
    taped = gradlab.grad(fn, wrt)(*args)
    checkpointed = gradlab.grad(fn, wrt, checkpoint=snapshots)(*args)
    for a, b in zip(taped, checkpointed):
        np.testing.assert_allclose(b, a, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("fn, args, wrt", CASES, ids=[c[0].__name__ for c in CASES])
def test_checkpointed_gradient_on_every_backend(framework, fn, args, wrt):
    taped = gradlab.grad(fn, wrt)(*args)
    inputs = [a if isinstance(a, float) else to_framework(a, framework) for a in args]
    checkpointed = gradlab.grad(fn, wrt, checkpoint=2)(*inputs)
    for a, b in zip(taped, checkpointed):
        np.testing.assert_allclose(to_numpy(b), a, rtol=1e-10, atol=1e-10)


def test_value_and_grad_with_checkpoint():
    rng = np.random.default_rng(1)
    args = (rng.normal(size=6), 20.0)
    value, grads = gradlab.value_and_grad(thermostat, (0, 1), checkpoint=True)(*args)
    assert value == pytest.approx(thermostat(*args))
    taped = gradlab.grad(thermostat, (0, 1))(*args)
    np.testing.assert_allclose(grads[0], taped[0], rtol=1e-12)
    assert grads[1] == pytest.approx(taped[1], rel=1e-12)


def test_the_schedule_is_in_the_generated_code():
    source = gradlab.grad(rnn, checkpoint=True).source
    for piece in ("checkpoint_schedule(t_steps, None)", "t_snapshots[t] = x",
                  "for action, t, steps in t_schedule.backward:", "x = t_snapshots[t]",
                  "elif action == 'advance':", "# reverse step t"):
        assert piece in source, piece
    assert "checkpoint_schedule(t_steps, 4)" in gradlab.grad(rnn, checkpoint=4).source


def test_the_forward_sweep_pushes_nothing():
    source = gradlab.grad(rnn, checkpoint=True).source
    forward = source.split("── backward ──")[0]
    assert ".append(" not in forward


# --- refusals -------------------------------------------------------------------------------------
def with_while(x):
    k = 0
    while k < 3:
        x = x * 2.0
        k = k + 1
    return x


def with_break(x, n):
    for t in range(n):
        if x > 10.0:
            break
        x = x * 2.0
    return x


def with_list(x):
    xs = []
    for t in range(3):
        x = x * 2.0
        xs.append(x)
    return xs[-1]


def carried_from_inside(x):
    s = 0.0
    for t in range(3):
        if t > 0:
            s = s + prev
        prev = x * t
    return s


def loop_in_branch(x, flag):
    if flag:
        for t in range(3):
            x = x * 2.0
    return x


def no_loop(x):
    return x * 2.0


@pytest.mark.parametrize("fn, args, words", [
    (with_while, (1.0,), ["while", "line"]),
    (with_break, (1.0, 3), ["break", "stop early"]),
    (with_list, (1.0,), ["list xs"]),
    (carried_from_inside, (1.0,), ["prev", "before the loop"]),
    (loop_in_branch, (1.0, True), ["inside an `if`"]),
    (no_loop, (1.0,), ["no loop"]),
])
def test_loops_that_cannot_be_checkpointed_are_refused(fn, args, words):
    with pytest.raises(GradlabError) as info:
        gradlab.grad(fn, checkpoint=True)(*args)
    message = str(info.value)
    for word in words:
        assert word in message, message
    gradlab.grad(fn)(*args)     # without checkpoint= it is differentiated


@pytest.mark.parametrize("bad", [-1, 2.5, "yes"])
def test_checkpoint_takes_true_or_a_number_of_snapshots(bad):
    with pytest.raises(GradlabError, match="checkpoint="):
        gradlab.grad(rnn, checkpoint=bad)


def test_every_corpus_loop_checkpointed_gives_the_taped_gradient_or_a_refusal():
    """Over the reverse-mode corpus (NumPy): each function is either refused with
    checkpoint= (a gradlab error naming what to change) or checkpointed with the taped
    gradient, for the default and two small numbers of snapshots."""
    from tests.codegen.corpus import CORPUS
    checkpointed = 0
    for case in CORPUS:
        if "numpy" not in case.frameworks:
            continue
        args = case.inputs()
        try:
            taped = gradlab.grad(case.fn, case.wrt)(*args)
        except GradlabError:
            continue
        for snapshots in (True, 0, 2):
            try:
                grads = gradlab.grad(case.fn, case.wrt, checkpoint=snapshots)(*args)
            except GradlabError as e:
                assert "checkpoint" in str(e), (case.name, str(e))
                break
            pairs = zip(taped, grads) if isinstance(taped, tuple) else [(taped, grads)]
            for a, b in pairs:
                np.testing.assert_allclose(np.asarray(b, dtype=float),
                                           np.asarray(a, dtype=float), rtol=1e-10,
                                           atol=1e-12, err_msg=case.name)
            checkpointed += 1
    assert checkpointed >= 50
