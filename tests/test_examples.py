"""The built-in example functions (gradlab.examples): what they compute, and gradlab's
gradients of them against central differences."""
from __future__ import annotations

import numpy as np
import pytest

import gradlab
from gradlab.examples import make_mlp_inputs, mlp_loss, rnn_loss


def central_difference(f, args, i, eps=1e-6):
    x = args[i]
    out = np.zeros_like(x)
    for k in np.ndindex(x.shape):
        up, down = x.copy(), x.copy()
        up[k] += eps
        down[k] -= eps
        out[k] = (f(*args[:i], up, *args[i + 1:]) - f(*args[:i], down, *args[i + 1:])) / (2 * eps)
    return out


def test_make_mlp_inputs_gives_shapes_dtype_and_one_hot_labels() -> None:
    W1, b1, W2, b2, X, Y = make_mlp_inputs(batch=5, inputs=4, hidden=3, classes=2,
                                           dtype=np.float32)
    assert [a.shape for a in (W1, b1, W2, b2, X, Y)] == [(4, 3), (3,), (3, 2), (2,), (5, 4),
                                                          (5, 2)]
    assert all(a.dtype == np.float32 for a in (W1, b1, W2, b2, X, Y))
    np.testing.assert_array_equal(Y.sum(axis=1), np.ones(5))
    again = make_mlp_inputs(batch=5, inputs=4, hidden=3, classes=2, dtype=np.float32)
    assert all(np.array_equal(a, b) for a, b in zip((W1, X, Y), (again[0], again[4], again[5])))


def test_mlp_loss_is_the_cross_entropy_of_the_softmax() -> None:
    args = make_mlp_inputs(batch=6, inputs=4, hidden=3, classes=3, seed=1)
    W1, b1, W2, b2, X, Y = args
    logits = np.tanh(X @ W1 + b1) @ W2 + b2
    p = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
    assert mlp_loss(*args) == pytest.approx(-np.mean(np.log(np.sum(Y * p, axis=1))), rel=1e-12)
    dW1 = gradlab.grad(mlp_loss)(*args)
    np.testing.assert_allclose(dW1, central_difference(mlp_loss, args, 0), rtol=1e-5, atol=1e-9)


def test_rnn_loss_skips_every_fifth_step() -> None:
    rng = np.random.default_rng(2)
    W, xs, h0 = rng.normal(size=(3, 3)) * 0.5, rng.normal(size=(7, 3)), rng.normal(size=3)
    h = h0
    for t in (1, 2, 3, 4, 6):
        h = np.tanh(W @ h + xs[t])
    assert rnn_loss(W, xs, h0) == np.sum(h ** 2)
    dW = gradlab.grad(rnn_loss)(W, xs, h0)
    np.testing.assert_allclose(dW, central_difference(rnn_loss, (W, xs, h0), 0), rtol=1e-6,
                               atol=1e-9)
