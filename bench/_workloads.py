"""The workloads of ``bench/gradients.py``: each function as a user would write it for gradlab
(``np.*`` / ``math.*``), the same function for every baseline (HIPS autograd, PyTorch, JAX,
TensorFlow), and a hand-written analytic NumPy gradient.

Kept in a file of its own because gradlab reads a function's source. Nothing here imports a
framework at import time except NumPy and SciPy.
"""
from __future__ import annotations

import math
import types

import numpy as np
import scipy.special

from gradlab.examples import make_mlp_inputs, mlp_loss, rnn_loss

__all__ = ["mlp_loss", "rnn_loss", "make_mlp_inputs"]


# --- W1: sum(tanh(x)**2) on 10 elements ----------------------------------------------------------
def w1_tanh_sq(x):
    return np.sum(np.tanh(x) ** 2)


def w1_hand(x):
    t = np.tanh(x)
    return 2.0 * t * (1.0 - t * t)


# --- W2: 784-256-10 tanh MLP, softmax cross-entropy, batch 64 ------------------------------------
# The function is gradlab.examples.mlp_loss(W1, b1, W2, b2, X, Y); gradient w.r.t. all four
# weights (W1, b1, W2, b2), as a training step needs.
def w2_hand(W1, b1, W2, b2, X, Y):
    h = np.tanh(X @ W1 + b1)
    logits = h @ W2 + b2
    e = np.exp(logits - np.max(logits, axis=1, keepdims=True))
    p = e / np.sum(e, axis=1, keepdims=True)
    dlogits = (p * np.sum(Y, axis=1, keepdims=True) - Y) * (1.0 / X.shape[0])
    dW2 = h.T @ dlogits
    db2 = np.sum(dlogits, axis=0)
    dz = (dlogits @ W2.T) * (1.0 - h * h)
    dW1 = X.T @ dz
    db1 = np.sum(dz, axis=0)
    return dW1, db1, dW2, db2


# --- W3: 50-step tanh recurrence skipping every 5th step, hidden 64, w.r.t. W --------------------
# The function is gradlab.examples.rnn_loss(W, xs, h0).
def w3_hand(W, xs, h0):
    hs = [h0]
    steps = []
    h = h0
    for t in range(xs.shape[0]):
        if t % 5 == 0:
            continue
        h = np.tanh(W @ h + xs[t])
        hs.append(h)
        steps.append(t)
    dW = np.zeros_like(W)
    dh = 2.0 * h
    for i in range(len(steps), 0, -1):
        h_new, h_old = hs[i], hs[i - 1]
        da = dh * (1.0 - h_new * h_new)
        dW += np.outer(da, h_old)
        dh = W.T @ da
    return dW


def make_rnn_inputs(steps=50, hidden=64, seed=1, dtype=np.float64):
    rng = np.random.default_rng(seed)
    W = rng.normal(size=(hidden, hidden)) * (0.9 / math.sqrt(hidden))
    xs = rng.normal(size=(steps, hidden)) * 0.5
    h0 = rng.normal(size=hidden) * 0.1
    return tuple(a.astype(dtype) for a in (W, xs, h0))


# --- W4 / W4b: logsumexp over a 1000x1000 array --------------------------------------------------
def w4_logsumexp(x):
    """W4: the stable, max-shifted formula a user writes with np.max."""
    m = np.max(x)
    return m + np.log(np.sum(np.exp(x - m)))


def w4b_logsumexp(x):
    """W4b: the same with scipy.special.logsumexp."""
    return scipy.special.logsumexp(x)


def w4_hand(x):
    """The analytic gradient of logsumexp: softmax over all elements."""
    e = np.exp(x - np.max(x))
    e *= 1.0 / np.sum(e)
    return e


# --- W5: a damped spring, 200 explicit Euler steps on Python floats, w.r.t. the stiffness k ------
def w5_spring(k, x0, v0, c, dt):
    x = x0
    v = v0
    for _ in range(200):
        a = -k * x - c * v
        v = v + dt * a
        x = x + dt * v
    return x * x


def w5_hand(k, x0, v0, c, dt):
    """Forward sensitivities (dx/dk, dv/dk) alongside the state: what a person writes for one
    scalar parameter; the same arithmetic count as a reverse sweep without storing a tape."""
    x, v, sx, sv = x0, v0, 0.0, 0.0
    for _ in range(200):
        a = -k * x - c * v
        sa = -x - k * sx - c * sv
        v = v + dt * a
        sv = sv + dt * sa
        x = x + dt * v
        sx = sx + dt * sv
    return 2.0 * x * sx


W5_ARGS = (4.0, 1.0, 0.0, 0.1, 0.01)   # k, x0, v0, c, dt


# --- W6: a state updated from u[t], 200 steps, w.r.t. u (issue 16) -----------------------------
# The shape of control, simulation and hand-written RNN problems: a scalar state, one input a
# step. The same code runs on every framework (it calls no np.* function).
def w6_cost(u, T0):
    T = T0
    c = 0.0
    for t in range(u.shape[0]):
        dT = (10.0 - T) * 0.1 + u[t] * 0.5
        T = T + 0.2 * dT
        c = c + 0.3 * u[t] * u[t] + (T - 21.0) ** 2
    return c


def w6_hand(u, T0):
    # T[t+1] = 0.98 T[t] + 0.2 + 0.1 u[t]; c = sum 0.3 u[t]^2 + (T[t+1] - 21)^2
    n = u.shape[0]
    Ts = np.empty(n, dtype=u.dtype)
    T = T0
    for t in range(n):
        T = T + 0.2 * ((10.0 - T) * 0.1 + u[t] * 0.5)
        Ts[t] = T
    du = np.empty_like(u)
    dT = 0.0
    for t in range(n - 1, -1, -1):
        dT = dT + 2.0 * (Ts[t] - 21.0)
        du[t] = 0.6 * u[t] + 0.1 * dT
        dT = 0.98 * dT
    return du


def make_w6_inputs(steps=200, seed=6):
    """``u`` and the initial state ``T0``, a Python float as a user passes it."""
    rng = np.random.default_rng(seed)
    return rng.normal(size=steps), 20.0


def w3_hand_saved_bytes(W, xs, h0):
    """What w3_hand keeps for its backward pass: the hidden states ``hs`` (h0 and one per step
    taken), in bytes."""
    taken = sum(1 for t in range(xs.shape[0]) if t % 5 != 0)
    return (taken + 1) * h0.nbytes


# --- the same functions for the baselines --------------------------------------------------------
def rebind(fn, **modules):
    """``fn`` with the global names in ``modules`` rebound (``np`` -> autograd.numpy or
    jax.numpy): the baseline is the very same code on the other framework's NumPy."""
    g = dict(fn.__globals__)
    g.update(modules)
    return types.FunctionType(fn.__code__, g, fn.__name__ + "_" + "_".join(
        getattr(m, "__name__", "m").replace(".", "_") for m in modules.values()),
        fn.__defaults__, fn.__closure__)


def torch_versions():
    import torch

    def w1(x):
        return torch.sum(torch.tanh(x) ** 2)

    def w2(W1, b1, W2, b2, X, Y):
        h = torch.tanh(X @ W1 + b1)
        logits = h @ W2 + b2
        m = torch.amax(logits, dim=1, keepdim=True)
        log_probs = logits - m - torch.log(torch.sum(torch.exp(logits - m), dim=1, keepdim=True))
        return -torch.mean(torch.sum(Y * log_probs, dim=1))

    def w3(W, xs, h0):
        h = h0
        for t in range(xs.shape[0]):
            if t % 5 == 0:
                continue
            h = torch.tanh(W @ h + xs[t])
        return torch.sum(h ** 2)

    def w4(x):
        m = torch.max(x)
        return m + torch.log(torch.sum(torch.exp(x - m)))

    def w4b(x):
        return torch.logsumexp(x, dim=(0, 1))

    return dict(W1=w1, W2=w2, W3=w3, W4=w4, W4b=w4b, W6=w6_cost)


def tf_versions():
    import tensorflow as tf

    def w1(x):
        return tf.reduce_sum(tf.math.tanh(x) ** 2)

    def w2(W1, b1, W2, b2, X, Y):
        h = tf.math.tanh(X @ W1 + b1)
        logits = h @ W2 + b2
        m = tf.reduce_max(logits, axis=1, keepdims=True)
        log_probs = logits - m - tf.math.log(tf.reduce_sum(tf.math.exp(logits - m), axis=1,
                                                           keepdims=True))
        return -tf.reduce_mean(tf.reduce_sum(Y * log_probs, axis=1))

    def w3(W, xs, h0):
        h = h0
        for t in range(xs.shape[0]):     # a Python loop: unrolled when traced
            if t % 5 == 0:
                continue
            h = tf.math.tanh(tf.linalg.matvec(W, h) + xs[t])
        return tf.reduce_sum(h ** 2)

    def w4(x):
        m = tf.reduce_max(x)
        return m + tf.math.log(tf.reduce_sum(tf.math.exp(x - m)))

    def w4b(x):
        return tf.reduce_logsumexp(x)

    return dict(W1=w1, W2=w2, W3=w3, W4=w4, W4b=w4b, W6=w6_cost)


def autograd_versions():
    import autograd.numpy as anp
    import autograd.scipy.special as asp

    scipy_ns = types.SimpleNamespace(special=asp)
    return dict(W1=rebind(w1_tanh_sq, np=anp), W2=rebind(mlp_loss, np=anp),
                W3=rebind(rnn_loss, np=anp), W4=rebind(w4_logsumexp, np=anp),
                W4b=rebind(w4b_logsumexp, scipy=scipy_ns), W5=rebind(w5_spring, np=anp),
                W6=w6_cost)


def jax_versions():
    import jax.numpy as jnp
    import jax.scipy.special as jsp

    scipy_ns = types.SimpleNamespace(special=jsp)
    return dict(W1=rebind(w1_tanh_sq, np=jnp), W2=rebind(mlp_loss, np=jnp),
                W3=rebind(rnn_loss, np=jnp), W4=rebind(w4_logsumexp, np=jnp),
                W4b=rebind(w4b_logsumexp, scipy=scipy_ns), W6=w6_cost)


# --- a realistic ~40-line function, for the transform time ---------------------------------------
def _softplus(z):
    return np.log1p(np.exp(-np.abs(z))) + np.maximum(z, 0.0)


def _normalize(h, eps):
    mu = np.mean(h, axis=-1, keepdims=True)
    var = np.mean((h - mu) ** 2, axis=-1, keepdims=True)
    return (h - mu) / np.sqrt(var + eps)


def transform_subject(params, X, y, mask, n_layers, l2, use_norm, clip):
    """A small residual regression model with a robust loss and a weight penalty."""
    h = X @ params[0]
    penalties = []
    for i in range(1, n_layers):
        W = params[i]
        z = h @ W
        if use_norm:
            z = _normalize(z, 1e-5)
        if i % 2 == 0:
            h = h + np.tanh(z)
        else:
            h = _softplus(z)
        penalties.append(np.sum(W * W))
        if i > 8:
            break
    out = h @ params[n_layers]
    pred = out[:, 0]
    resid = (pred - y) * mask
    abs_r = np.abs(resid)
    if clip > 0.0:
        # a Huber loss: quadratic near zero, linear beyond clip
        quad = 0.5 * resid ** 2
        lin = clip * (abs_r - 0.5 * clip)
        data = np.where(abs_r < clip, quad, lin)
    else:
        data = resid ** 2
    n = np.sum(mask)
    loss = np.sum(data) / np.maximum(n, 1.0)
    reg = 0.0
    j = 0
    while j < len(penalties):
        reg = reg + penalties[j]
        j += 1
    total = loss + l2 * reg
    if total > 1e6:
        return total / 1e6
    return total


def make_transform_inputs(n=32, d=8, hidden=16, layers=4, seed=2):
    rng = np.random.default_rng(seed)
    params = [rng.normal(size=(d, hidden)) * 0.3]
    for _ in range(1, layers):
        params.append(rng.normal(size=(hidden, hidden)) * 0.3)
    params.append(rng.normal(size=(hidden, 1)) * 0.3)
    X = rng.normal(size=(n, d))
    y = rng.normal(size=n)
    mask = (rng.random(n) > 0.1).astype(np.float64)
    return params, X, y, mask, layers, 1e-3, True, 1.0


def autograd_transform_subject():
    """``transform_subject`` and its helpers on autograd.numpy (for a correctness check)."""
    import autograd.numpy as anp
    g = dict(globals())
    g["np"] = anp
    for name in ("_softplus", "_normalize", "transform_subject"):
        g[name] = types.FunctionType(globals()[name].__code__, g, name)
    return g["transform_subject"]
