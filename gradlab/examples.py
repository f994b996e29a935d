"""Small functions used by ``make demo``, the notebooks and the benchmarks. They are plain NumPy:
gradlab runs their gradients on every framework anyway."""
from __future__ import annotations

import numpy as np


def mlp_loss(W1, b1, W2, b2, X, Y):
    """Softmax cross-entropy of a one-hidden-layer tanh network."""
    h = np.tanh(X @ W1 + b1)
    logits = h @ W2 + b2
    m = np.max(logits, axis=1, keepdims=True)
    log_probs = logits - m - np.log(np.sum(np.exp(logits - m), axis=1, keepdims=True))
    return -np.mean(np.sum(Y * log_probs, axis=1))


def rnn_loss(W, xs, h0):
    """A tanh recurrence that skips every 5th step."""
    h = h0
    for t in range(xs.shape[0]):
        if t % 5 == 0:
            continue
        h = np.tanh(W @ h + xs[t])
    return np.sum(h ** 2)


def make_mlp_inputs(batch=64, inputs=784, hidden=256, classes=10, seed=0, dtype=np.float64):
    rng = np.random.default_rng(seed)
    W1 = rng.normal(size=(inputs, hidden)) * 0.05
    b1 = np.zeros(hidden)
    W2 = rng.normal(size=(hidden, classes)) * 0.05
    b2 = np.zeros(classes)
    X = rng.normal(size=(batch, inputs))
    Y = np.eye(classes)[rng.integers(0, classes, batch)]
    return tuple(a.astype(dtype) for a in (W1, b1, W2, b2, X, Y))
