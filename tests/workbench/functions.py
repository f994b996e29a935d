"""Small functions the workbench tests step through, draw and turn into exercises."""
from __future__ import annotations

import numpy as np


def rnn(W, xs, h0):
    h = h0
    for t in range(xs.shape[0]):
        h = np.tanh(W @ h + xs[t])
    return np.sum(h ** 2)


def loss(W, x):
    h = np.tanh(x @ W)
    return np.mean(h ** 2)


RNG = np.random.default_rng(0)
W3, XS, H0 = RNG.normal(size=(3, 3)) * 0.5, RNG.normal(size=(6, 3)), RNG.normal(size=3)
W, X = np.full((3, 2), 0.1), np.ones((4, 3))
