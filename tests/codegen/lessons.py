"""The functions of the five lessons (notebooks/*.ipynb) and the README, with the arguments
the lessons call them with: what tests/codegen/test_textbook.py reads the specialised
gradients of."""
import numpy as np

import gradlab
from gradlab.examples import mlp_loss


def tour_loss(W1, b1, W2, x, y):
    h = np.tanh(x @ W1 + b1)
    pred = h @ W2
    return np.mean((pred - y) ** 2)


def clipped(W, x):
    h = np.tanh(x @ W)
    with gradlab.insert_grad_of(h) as dh:
        dh = np.clip(dh, -0.1, 0.1)
    return np.sum(h ** 2)


def quantized_loss(w, X, target):
    q = w + gradlab.stop_gradient(np.round(w) - w)
    return np.mean((X @ q - target) ** 2)


def half_square(x):
    return np.sum(x * gradlab.stop_gradient(x))


def neuron(w, x, y):
    z = w * x
    a = np.tanh(z)
    return (a - y) ** 2


def layer(w, x, y):
    z = w * x
    a = np.tanh(z)
    return np.sum((a - y) ** 2)


def layer_loss(W, b, x, y):
    z = x @ W + b
    a = np.tanh(z)
    return np.sum((a - y) ** 2)


def rnn(W, xs, h0):
    h = h0
    for t in range(xs.shape[0]):
        h = np.tanh(W @ h + xs[t])
    return np.sum(h ** 2)


def mean_norm(X):
    r = np.sqrt(np.sum(X ** 2, axis=1))
    return np.mean(r)


def bce(w, X, y):
    p = 1.0 / (1.0 + np.exp(-(X @ w)))
    return -np.mean(y * np.log(p) + (1 - y) * np.log(1 - p))


def bce_logits(w, X, y):
    z = X @ w
    softplus = np.maximum(z, 0.0) + np.log1p(np.exp(-np.abs(z)))
    return np.mean(softplus - y * z)


def layer_energy(A, B):
    H = np.tanh(A @ B)
    return np.mean((H @ B) ** 2)


def readme_loss(W, x):
    h = np.tanh(x @ W)
    return np.mean(h ** 2)


def cases():
    """(lesson, function, wrt, arguments as the lesson makes them)."""
    rng = np.random.default_rng(0)
    X3 = np.array([[1.0, 0.5], [2.0, 0.1], [-1.0, 1.0]])
    return [
        ("README", readme_loss, 0, (rng.normal(size=(3, 2)), rng.normal(size=(5, 3)))),
        ("01_tour", tour_loss, (0, 1, 2),
         (rng.normal(size=(3, 4)) * 0.5, np.zeros(4), rng.normal(size=(4, 1)) * 0.5,
          rng.normal(size=(8, 3)), rng.normal(size=(8, 1)))),
        ("02_gradient_surgery", clipped, 0, (rng.normal(size=(3, 2)), rng.normal(size=(5, 3)))),
        ("02_gradient_surgery", quantized_loss, 0,
         (np.array([0.8, 1.2, 0.4]), rng.normal(size=(6, 3)), rng.normal(size=6))),
        ("02_gradient_surgery", half_square, 0, (np.array([1.0, -2.0, 3.0]),)),
        ("03_backprop_classroom", neuron, 0, (0.5, 2.0, 1.0)),
        ("03_backprop_classroom", layer, 0,
         (np.array([0.5, -0.3, 0.8]), np.array([2.0, 1.0, -1.0]), np.array([1.0, 0.0, 0.5]))),
        ("03_backprop_classroom", layer_loss, (0, 1),
         (rng.normal(size=(3, 2)) * 0.5, np.zeros(2), rng.normal(size=(4, 3)),
          rng.normal(size=(4, 2)) * 0.5)),
        ("03_backprop_classroom", rnn, 0,
         (rng.normal(size=(3, 3)) * 0.5, rng.normal(size=(6, 3)), rng.normal(size=3))),
        ("04_debugging_gradients", mean_norm, 0,
         (np.array([[3.0, 4.0], [0.0, 0.0], [1.0, 2.0]]),)),
        ("04_debugging_gradients", bce, 0,
         (np.array([30.0, -5.0]), X3, np.array([1.0, 0.0, 0.0]))),
        ("04_debugging_gradients", bce_logits, 0,
         (np.array([30.0, -5.0]), X3, np.array([1.0, 0.0, 0.0]))),
        ("05_backends_and_gpu", mlp_loss, (0, 1, 2, 3),
         (rng.normal(size=(64, 32)) * 0.1, np.zeros(32), rng.normal(size=(32, 10)) * 0.1,
          np.zeros(10), rng.normal(size=(64, 64)), np.eye(10)[rng.integers(0, 10, size=64)])),
        ("05_backends_and_gpu", layer_energy, (0, 1),
         (rng.normal(size=(6, 6)), rng.normal(size=(6, 6)) / 6 ** 0.5)),
    ]
