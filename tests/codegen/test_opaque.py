"""Calls gradlab cannot read (codegen/opaque.py): a torch module, a jitted JAX function, a Keras
layer, a callable passed as an argument. Each is one visible line of the generated code, and its
gradient is the framework's own: checked against the framework's autodiff and against central
differences, in reverse mode, in forward mode, inside loops; NumPy, hvp and a differentiated
callable are refused with what to do instead."""
from __future__ import annotations

import numpy as np
import pytest

import gradlab
from gradlab.codegen.opaque import is_opaque_callable
from tests.conftest import require, to_framework, to_numpy

BACKENDS = ("torch", "jax", "tensorflow")
X = np.array([[0.3, -0.7, 1.1], [0.5, 0.2, -0.4]])
W = np.array([[0.2, -0.5, 0.3], [0.7, 0.1, -0.6], [-0.3, 0.4, 0.5]])


def layer_for(framework: str):
    """A framework callable gradlab cannot read: x -> tanh(x @ W + 0.1)."""
    require(framework)
    if framework == "torch":
        import torch
        lin = torch.nn.Linear(3, 3).double()
        with torch.no_grad():
            lin.weight.copy_(torch.as_tensor(W.T))
            lin.bias.fill_(0.1)
        return torch.nn.Sequential(lin, torch.nn.Tanh())
    if framework == "jax":
        import jax
        import jax.numpy as jnp
        return jax.jit(lambda x: jnp.tanh(x @ jnp.asarray(W) + 0.1))
    import tensorflow as tf
    dense = tf.keras.layers.Dense(3, activation="tanh", dtype="float64")
    dense.build((None, 3))
    dense.set_weights([W, np.full(3, 0.1)])
    return dense


def numpy_layer(x: np.ndarray) -> np.ndarray:
    return np.tanh(x @ W + 0.1)


LAYER = None   # set by each test: the module-level callable the functions below call


def loss(x, y):
    pred = LAYER(x)
    return (pred - y) ** 2 * 0.5


def loss_sum(x, y):
    pred = LAYER(x)
    return np.sum((pred - y) ** 2) * 0.5


def recurrent(x, steps):
    h = x
    for t in range(steps):
        h = LAYER(h) * 0.9 + 0.1 * h
    return np.sum(h ** 2)


def through_argument(f, x):
    return np.sum(f(x) ** 3)


def in_numpy(fn, framework):
    """``fn`` with LAYER's calls run on ``framework``'s values and the rest in NumPy: the
    reference the central differences take."""
    def run(*args):
        global LAYER
        layer = LAYER
        LAYER = lambda v: to_numpy(layer(to_framework(v, framework)))  # noqa: E731
        try:
            return fn(*args)
        finally:
            LAYER = layer
    return run


def central(fn, args, i, eps=1e-6):
    """Central differences of a scalar ``fn`` w.r.t. argument ``i`` (a NumPy array)."""
    base = [np.array(a, dtype=float) if isinstance(a, np.ndarray) else a for a in args]
    out = np.zeros_like(base[i])
    for k in np.ndindex(base[i].shape):
        for sign in (1, -1):
            moved = list(base)
            moved[i] = base[i].copy()
            moved[i][k] += sign * eps
            out[k] += sign * float(to_numpy(fn(*moved))) / (2 * eps)
    return out


@pytest.fixture(params=BACKENDS)
def layer(request):
    global LAYER
    LAYER = layer_for(request.param)
    yield request.param
    LAYER = None


def test_a_module_call_is_one_line_and_its_gradient_is_the_frameworks(layer) -> None:
    y = X[::-1] * 0.3
    df = gradlab.grad(loss_sum)
    args = [to_framework(X, layer), to_framework(y, layer)]
    text = df.source_for(*args)
    assert "pred, pred_vjp = gl.vjp_of(LAYER, x)" in text and "dx = pred_vjp(dpred)" in text
    got = to_numpy(df(*args))
    np.testing.assert_allclose(got, central(in_numpy(loss_sum, layer), [X, y], 0),
                               rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(got, (numpy_layer(X) - y) * (1 - numpy_layer(X) ** 2) @ W.T,
                               rtol=1e-10)


def test_a_seed_for_a_non_scalar_output(layer) -> None:
    y = X * 0.5
    seed = np.array([[1.0, 0.0, 2.0], [0.5, -1.0, 0.0]])
    got = gradlab.grad(loss)(to_framework(X, layer), to_framework(y, layer),
                             seed=to_framework(seed, layer))
    h = numpy_layer(X)
    np.testing.assert_allclose(to_numpy(got), (seed * (h - y) * (1 - h ** 2)) @ W.T,
                               rtol=1e-10)


def test_in_a_loop_each_step_keeps_its_own_backward(layer) -> None:
    df = gradlab.grad(recurrent)
    x = to_framework(X, layer)
    assert "pred_vjp" not in df.source_for(x, 3) and "_vjp_stack.append(" in df.source_for(x, 3)
    got = to_numpy(df(x, 3))
    np.testing.assert_allclose(got, central(in_numpy(recurrent, layer), [X, 3], 0),
                               rtol=1e-6, atol=1e-8)


def test_forward_mode_uses_the_frameworks_jvp(layer) -> None:
    v = np.array([[1.0, -0.5, 0.2], [0.3, 0.3, -1.0]])
    jv = gradlab.jvp(recurrent)
    assert "gl.jvp_of(LAYER, (h,), (h_dot,))" in jv.source
    value, dd = jv(to_framework(X, layer), 3, to_framework(v, layer))
    want = float(np.sum(central(in_numpy(recurrent, layer), [X, 3], 0) * v))
    assert float(to_numpy(dd)) == pytest.approx(want, rel=1e-6)
    assert float(to_numpy(value)) == pytest.approx(float(to_numpy(
        in_numpy(recurrent, layer)(X, 3))), rel=1e-12)


def test_under_the_frameworks_compiler(layer) -> None:
    df = gradlab.grad(recurrent)
    x = to_framework(X, layer)
    if layer == "jax":
        import jax
        compiled = jax.jit(df, static_argnums=1)
    elif layer == "tensorflow":
        import tensorflow as tf
        compiled = tf.function(lambda x: df(x, 3))
        np.testing.assert_allclose(to_numpy(compiled(x)), to_numpy(df(x, 3)), rtol=1e-12)
        return
    else:
        pytest.skip("torch runs eagerly")
    np.testing.assert_allclose(to_numpy(compiled(x, 3)), to_numpy(df(x, 3)), rtol=1e-12)


@pytest.mark.parametrize("framework", BACKENDS)
def test_a_callable_passed_as_an_argument(framework: str) -> None:
    require(framework)
    if framework == "torch":
        import torch
        f = torch.sin
    elif framework == "jax":
        import jax.numpy as jnp
        f = jnp.sin
    else:
        import tensorflow as tf
        f = tf.sin
    got = gradlab.grad(through_argument, 1)(f, to_framework(X, framework))
    np.testing.assert_allclose(to_numpy(got), 3 * np.sin(X) ** 2 * np.cos(X), rtol=1e-10)


def test_keywords_reach_the_call() -> None:
    require("torch")
    import torch
    import torch.nn.functional as F

    def normed(x, w, norm):
        return torch.sum(norm(x * w, (3,), eps=1e-3) ** 3)
    x, w = torch.as_tensor(X), torch.as_tensor(np.array([0.5, 2.0, -1.0]))
    df = gradlab.grad(normed, (0, 1))
    assert 'keywords={"eps": 0.001}' in df.source.replace("'", '"')
    got = df(x, w, F.layer_norm)
    leaves = [x.clone().requires_grad_(), w.clone().requires_grad_()]
    want = torch.autograd.grad(normed(*leaves, F.layer_norm), leaves)
    for g, e in zip(got, want):
        np.testing.assert_allclose(g.numpy(), e.numpy(), rtol=1e-12)


def test_numpy_has_no_autodiff_to_call() -> None:
    with pytest.raises(gradlab.GradlabError, match="NumPy has no autodiff of its own.*torch, "
                                                   "JAX or TensorFlow"):
        gradlab.grad(through_argument, 1)(np.sin, X)


def test_hvp_through_an_opaque_call_is_refused() -> None:
    global LAYER
    LAYER = layer_for("torch")
    try:
        with pytest.raises(gradlab.GradlabError, match="second derivative through it"):
            gradlab.hvp(recurrent)
    finally:
        LAYER = None


def test_a_gradient_for_a_callable_that_is_no_model_is_refused() -> None:
    require("torch")
    import torch
    with pytest.raises(gradlab.GradlabError, match="gradlab gives one for a torch.nn.Module"):
        gradlab.grad(through_argument, (0, 1))(torch.sin, torch.as_tensor(X))


def test_a_call_that_returns_no_tensor_is_refused() -> None:
    require("torch")
    import torch

    def pair(x):
        return torch.sum(torch.stack(TWO(x)))
    globals()["TWO"] = torch.nn.Module()
    globals()["TWO"].forward = lambda x: (x.sum(), x.mean())
    with pytest.raises(gradlab.GradlabError, match="returned a tuple"):
        gradlab.grad(pair)(torch.as_tensor(X))


def test_which_callables_are_opaque() -> None:
    require("torch")
    import torch
    assert is_opaque_callable(torch.nn.Linear(2, 2))
    assert not is_opaque_callable(torch.exp2)   # a primitive, refused until it has a rule
    assert not is_opaque_callable(torch.nn.Linear)          # a class builds a module
    assert not is_opaque_callable(np.cumprod)               # NumPy has no autodiff
    assert not is_opaque_callable(numpy_layer)              # gradlab reads the user's own
    assert not is_opaque_callable(3.0)


def model_loss(model, x, y):
    pred = model(x)
    return np.sum((pred - y) ** 2) * 0.5


def model_twice(model, x):
    h = model(x)
    return np.sum(model(x * 2.0) * h)


def test_gradient_wrt_a_torch_module_is_keyed_like_named_parameters() -> None:
    require("torch")
    import torch
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Tanh(),
                                torch.nn.Linear(4, 2)).double()
    x, y = torch.as_tensor(X), torch.as_tensor(X[:, :2] * 0.5)
    for fn, args, wrt in ((model_loss, (model, x, y), "model"),
                          (model_twice, (model, x), ("model", "x"))):
        df = gradlab.grad(fn, wrt)
        got = df(*args)
        grads = got[0] if isinstance(wrt, tuple) else got
        leaf = x.clone().requires_grad_()
        model.zero_grad()
        reference = torch.sum((model(leaf) - y) ** 2) * 0.5 if fn is model_loss else \
            torch.sum(model(leaf * 2.0) * model(leaf))
        reference.backward()
        assert list(grads) == [n for n, _ in model.named_parameters()]
        for n, p in model.named_parameters():
            np.testing.assert_allclose(grads[n].numpy(), p.grad.numpy(), rtol=1e-10, atol=1e-12)
        if isinstance(wrt, tuple):
            np.testing.assert_allclose(got[1].numpy(), leaf.grad.numpy(), rtol=1e-10)
            assert "dmodel = gl.add_params(dmodel, dmodel_part)" in df.source_for(*args)


def test_gradient_wrt_a_keras_layer_follows_its_trainable_variables() -> None:
    require("tensorflow")
    import tensorflow as tf
    dense = layer_for("tensorflow")
    x, y = tf.constant(X), tf.constant(X * 0.5)
    got = gradlab.grad(model_loss, "model")(dense, x, y)
    with tf.GradientTape() as tape:
        value = tf.reduce_sum((dense(x) - y) ** 2) * 0.5
    want = tape.gradient(value, dense.trainable_variables)
    assert len(got) == len(want) == 2
    for g, e in zip(got, want):
        np.testing.assert_allclose(g.numpy(), e.numpy(), rtol=1e-10)


def test_gradient_wrt_a_callable_pytree_in_jax() -> None:
    require("jax")
    import jax
    import jax.numpy as jnp

    @jax.tree_util.register_pytree_node_class
    class Affine:              # what an Equinox module is: a callable pytree of arrays
        def __init__(self, w, b):
            self.w, self.b = w, b

        def __call__(self, x):
            return jnp.tanh(x @ self.w + self.b)

        def tree_flatten(self):
            return (self.w, self.b), None

        @classmethod
        def tree_unflatten(cls, aux, children):
            return cls(*children)
    model = Affine(jnp.asarray(W), jnp.full(3, 0.1))
    x, y = jnp.asarray(X), jnp.asarray(X * 0.5)
    got = gradlab.grad(model_loss, "model")(model, x, y)
    want = jax.grad(lambda m: jnp.sum((m(x) - y) ** 2) * 0.5)(model)
    np.testing.assert_allclose(np.asarray(got.w), np.asarray(want.w), rtol=1e-10)
    np.testing.assert_allclose(np.asarray(got.b), np.asarray(want.b), rtol=1e-10)


def test_forward_mode_wrt_a_model_is_refused() -> None:
    require("torch")
    import torch
    model = torch.nn.Linear(3, 2).double()
    with pytest.raises(gradlab.GradlabError, match="forward mode with respect to the "
                                                   "parameters of model"):
        jv = gradlab.jvp(model_loss, "model")
        jv(model, torch.as_tensor(X), torch.zeros(2, 2, dtype=torch.float64), model)


def pooled(x):
    return TF_POOL(x, (1, 2, 2, 1), (1, 1, 1, 1), "SAME")


TF_POOL = None


def test_a_framework_function_without_a_rule_stays_refused() -> None:
    """tf.nn.max_pool is a primitive gradlab has no rule for: refused (it gets readable code
    with a rule of its own), not run opaque."""
    require("tensorflow")
    import tensorflow as tf
    global TF_POOL
    TF_POOL = tf.nn.max_pool
    with pytest.raises(gradlab.GradlabError, match="no derivative rule"):
        gradlab.grad(pooled)(tf.constant(np.ones((1, 3, 3, 1))))


def test_a_callable_of_another_framework_is_refused() -> None:
    require("torch")
    require("tensorflow")
    import tensorflow as tf
    import torch
    with pytest.raises(gradlab.GradlabError, match="belongs to tensorflow, and these are "
                                                   "PyTorch arrays"):
        gradlab.grad(through_argument, 1)(tf.sin, torch.as_tensor(X))


def normed_layer(x, w):
    h = TORCH_F.layer_norm(x @ w, (w.shape[1],))
    return (TORCH_F.silu(h) ** 2).sum()


TORCH_F = None


def test_torch_functional_without_a_rule_runs_through_torchs_autodiff() -> None:
    """``F.layer_norm`` and ``F.silu`` have no rule of gradlab's: each is one opaque line
    (``gl.vjp_of(F.layer_norm, xw, items, wrt=(0,))``), its backward torch's own, the rest
    gradlab's readable code; equal to ``torch.autograd`` in float64, jvp too; hvp refused."""
    require("torch")
    import torch
    import torch.nn.functional
    global TORCH_F
    TORCH_F = torch.nn.functional
    gen = torch.Generator().manual_seed(0)
    x = torch.randn(4, 3, dtype=torch.float64, generator=gen)
    w = torch.randn(3, 5, dtype=torch.float64, generator=gen)
    df = gradlab.grad(normed_layer, (0, 1))
    assert "gl.vjp_of(TORCH_F.layer_norm, xw, items, wrt=(0,))" in df.source
    gx, gw = df(x, w)
    xl, wl = x.clone().requires_grad_(), w.clone().requires_grad_()
    tx, tw = torch.autograd.grad(normed_layer(xl, wl), (xl, wl))
    torch.testing.assert_close(gx, tx, rtol=1e-10, atol=1e-12)
    torch.testing.assert_close(gw, tw, rtol=1e-10, atol=1e-12)
    vx, vw = torch.ones_like(x), torch.full_like(w, 0.5)
    _, tangent = gradlab.jvp(normed_layer, (0, 1))(x, w, (vx, vw))
    assert float(tangent) == pytest.approx(float((tx * vx).sum() + (tw * vw).sum()), rel=1e-10)
    with pytest.raises(gradlab.GradlabError, match="second derivative"):
        gradlab.hvp(normed_layer, (0, 1))(x, w, (vx, vw))


def require_jax_library(name: str) -> None:
    """Equinox and Flax are extras ``make test`` installs: a missing one fails there, and is
    skipped elsewhere."""
    import importlib.util

    from tests.conftest import REQUIRE_ALL
    require("jax")
    if importlib.util.find_spec(name) is None:
        message = f"{name} is not installed (make test installs it)"
        if REQUIRE_ALL:
            pytest.fail(message)
        pytest.skip(message)


def squared_error(model, x, y):
    pred = model(x)
    return (pred - y) @ (pred - y)


def test_an_equinox_module_and_its_gradient() -> None:
    """``eqx.nn.MLP`` holds its activations (functions) next to its arrays: the gradient flows
    to the float arrays alone, as ``eqx.filter_grad`` has it, None elsewhere."""
    require_jax_library("equinox")
    import equinox as eqx
    import jax
    import jax.numpy as jnp
    key = jax.random.PRNGKey(0)
    model = eqx.nn.MLP(3, 2, 8, 2, key=key, dtype=jnp.float64)
    x, y = jnp.array([0.3, -0.7, 1.1]), jnp.array([1.0, -1.0])
    got = gradlab.grad(squared_error, wrt="model")(model, x, y)
    want = eqx.filter_grad(squared_error)(model, x, y)
    ours = jax.tree_util.tree_leaves(eqx.filter(got, eqx.is_inexact_array))
    theirs = jax.tree_util.tree_leaves(want)
    assert len(ours) == len(theirs) == 6
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-10, atol=1e-12)
    dx = gradlab.grad(squared_error, wrt="x")(model, x, y)
    np.testing.assert_allclose(np.asarray(dx), np.asarray(jax.grad(squared_error, 1)(model, x, y)),
                               rtol=1e-10)


def test_a_flax_nnx_module_and_its_gradient() -> None:
    require_jax_library("flax")
    import jax
    import jax.numpy as jnp
    from flax import nnx

    class Net(nnx.Module):
        def __init__(self, rngs: nnx.Rngs) -> None:
            self.hidden = nnx.Linear(3, 8, rngs=rngs, param_dtype=jnp.float64)
            self.out = nnx.Linear(8, 2, rngs=rngs, param_dtype=jnp.float64)

        def __call__(self, x):  # type: ignore[no-untyped-def]
            return self.out(jnp.tanh(self.hidden(x)))

    net = Net(nnx.Rngs(0))
    x, y = jnp.array([0.3, -0.7, 1.1]), jnp.array([1.0, -1.0])
    got = gradlab.grad(squared_error, wrt="model")(net, x, y)
    want = nnx.grad(squared_error)(net, x, y)
    ours, theirs = jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)
    assert len(ours) == len(theirs) == 4
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-10, atol=1e-12)
