"""Container arguments in the workbench (workbench/leafcalls.py): a loss taking ``params`` as a
dict (a namedtuple, nested lists of dicts) is traced, stepped through, drawn, hunted for NaNs,
edited and recompiled (by the library and by the panel) on the code for the containers' leaves,
and its gradient comes back in the arguments' structure, equal to the framework's own autodiff
to 1e-10 in float64 (NumPy: to the gradient written out by hand)."""
from __future__ import annotations

from collections import namedtuple

import numpy as np
import pytest

import gradlab
from gradlab.kernel_ext.panel import GradPanel
from gradlab.workbench.leafcalls import EditedContainers, leaf_call, tree_map
from gradlab.workbench.session import GradSession
from tests.conftest import to_framework, to_numpy

RNG = np.random.default_rng(3)
X = RNG.normal(size=(5, 3))
PARAMS = {"W1": RNG.normal(size=(3, 4)), "b1": RNG.normal(size=4) * 0.1,
          "W2": RNG.normal(size=(4, 2))}


def dict_loss(params, x):
    h = np.tanh(x @ params["W1"] + params["b1"])
    return np.sum((h @ params["W2"]) ** 2) * 0.5


def clipped_dict_loss(params, x):
    h = np.tanh(x @ params["W1"] + params["b1"])
    with gradlab.insert_grad_of(h) as dh:
        dh = np.clip(dh, -0.5, 0.5)
    return np.sum((h @ params["W2"]) ** 2) * 0.5


def by_hand(params, x, clip=None):
    """dict_loss's gradient written out (NumPy), the gradient of h clipped where asked."""
    h = np.tanh(x @ params["W1"] + params["b1"])
    out = h @ params["W2"]
    dh = out @ params["W2"].T
    if clip is not None:
        dh = np.clip(dh, -clip, clip)
    dz = dh * (1 - h ** 2)
    return {"W1": x.T @ dz, "b1": dz.sum(0), "W2": h.T @ out}


def frameworks_own(framework: str, params, x):
    """dict_loss's gradient by the framework's own autodiff (NumPy: by hand)."""
    if framework == "torch":
        import torch
        leaves = {k: v.clone().requires_grad_() for k, v in params.items()}
        h = torch.tanh(x @ leaves["W1"] + leaves["b1"])
        (torch.sum((h @ leaves["W2"]) ** 2) * 0.5).backward()
        return {k: v.grad for k, v in leaves.items()}
    if framework == "jax":
        import jax
        import jax.numpy as jnp
        return jax.grad(lambda p: jnp.sum((jnp.tanh(x @ p["W1"] + p["b1"]) @ p["W2"]) ** 2)
                        * 0.5)(params)
    if framework == "tensorflow":
        import tensorflow as tf
        with tf.GradientTape() as tape:
            tape.watch(list(params.values()))
            h = tf.tanh(x @ params["W1"] + params["b1"])
            value = tf.reduce_sum((h @ params["W2"]) ** 2) * 0.5
        return dict(zip(params, tape.gradient(value, list(params.values()))))
    return by_hand(params, x)


def assert_dict_close(got, want) -> None:
    assert list(got) == list(PARAMS)        # the argument's order (jax.grad sorts the keys)
    assert set(want) == set(PARAMS)
    for k in want:
        np.testing.assert_allclose(to_numpy(got[k]), to_numpy(want[k]), rtol=1e-10,
                                   atol=1e-12)


def inputs(framework: str):
    return tree_map(lambda a: to_framework(a, framework), PARAMS), to_framework(X, framework)


def test_the_gradient_is_the_frameworks(framework) -> None:
    params, x = inputs(framework)
    got = gradlab.grad(dict_loss, "params")(params, x)
    assert_dict_close(got, frameworks_own(framework, params, x))
    assert_dict_close(got, by_hand(PARAMS, X))


def test_trace_step_and_graph_run_the_code_for_the_leaves(framework) -> None:
    params, x = inputs(framework)
    df = gradlab.grad(dict_loss, "params")
    report = gradlab.trace(df)(params, x)
    assert report.fn.__code__.co_varnames[:4] == ("params_W1", "params_b1", "params_W2", "x")
    written = {v.name: v for s in report.backward() for v in s.values}
    for k, g in by_hand(PARAMS, X).items():
        assert written[f"dparams_{k}"].norm == pytest.approx(float(np.linalg.norm(g)),
                                                            rel=1e-10)
    stepper = gradlab.step(df, params, x)
    assert [r.name for r in stepper.rows()][:4] == ["params_W1", "params_b1", "params_W2", "x"]
    stepper.go(len(stepper) - 1)
    assert "differentiates your line" in stepper.text()
    dot = gradlab.graph(df, params, x).dot().source
    assert "v_params_W1 [label=<params_W1<br/>(3, 4)" in dot and "grad |·|=" in dot


def test_insert_grad_of_in_a_function_of_a_dict(framework) -> None:
    params, x = inputs(framework)
    got = gradlab.grad(clipped_dict_loss, "params")(params, x)
    assert_dict_close(got, by_hand(PARAMS, X, clip=0.5))


def halve_dW2(source: str) -> str:
    return source.replace("    return (dparams_W1, dparams_b1, dparams_W2)",
                          "    dparams_W2 = dparams_W2 * 0.5\n"
                          "    return (dparams_W1, dparams_b1, dparams_W2)")


def test_recompile_an_edit_of_the_code_for_the_leaves(framework) -> None:
    params, x = inputs(framework)
    df = gradlab.grad(dict_loss, "params")
    text = df.source_for(params, x)
    assert halve_dW2(text) != text
    edited = gradlab.recompile(halve_dW2(text), like=df)
    assert isinstance(edited, EditedContainers) and "dparams_W2 * 0.5" in edited.source
    want = by_hand(PARAMS, X)
    want["W2"] = want["W2"] * 0.5
    assert_dict_close(edited(params, x), want)
    with pytest.raises(gradlab.GradlabError, match="another structure"):
        edited({"W1": params["W1"], "b1": params["b1"], "W2": params["W2"], "c": 1.0}, x)
    with pytest.raises(gradlab.GradlabError, match="takes the leaves of container"):
        edited(params["W1"], x)


def test_the_panel_runs_edits_and_compares_frameworks_on_a_dict(framework) -> None:
    params, x = inputs(framework)
    bound = []
    session = GradSession(gradlab.grad(dict_loss, "params"), (params, x))
    session.on_active.append(bound.append)
    panel = GradPanel(session, backend=framework)
    assert "def ddict_loss_dparams(params_W1, params_b1, params_W2, x" in panel.editor_text
    assert "dparams = {'W1': dparams_W1" in panel.editor_text
    (result,) = panel.run()
    assert not result.error, result.error
    assert_dict_close(result.gradients, by_hand(PARAMS, X))
    assert "gradient dparams by parameter (3): shape, norm" in result.value_lines()
    (result,) = panel.recompile_and_run(halve_dW2(panel.editor_text))
    assert session.version() == "edited: 1 line changed"
    assert np.allclose(to_numpy(result.gradients["W2"]), by_hand(PARAMS, X)["W2"] * 0.5)
    assert np.allclose(to_numpy(bound[-1](params, x)["W2"]), by_hand(PARAMS, X)["W2"] * 0.5)
    assert "no graph" not in panel.graph_html()
    assert "no table" not in panel.saved_html()
    panel.reset()
    results = session.run("all")
    assert all(not r.error for r in results) and len(results) >= 2
    assert max(r.difference for r in results) < 1e-12


def logged(params, x):
    h = np.log(x @ params["W1"] + params["b1"])
    return np.sum(h @ params["W2"])


def test_the_nan_hunt_on_a_dict(framework) -> None:
    """log of negative numbers: the hunt names the user's line, and each parameter's norm
    says which gradients it reached."""
    params, x = inputs(framework)
    (result,) = GradSession(gradlab.grad(logged, "params"), (params, x)).run(framework)
    assert "first NaN/Inf at step" in result.diagnosis and "forward pass" in result.diagnosis
    line = logged.__code__.co_firstlineno + 1
    assert f'from your line {line}: h = np.log(x @ params["W1"] + params["b1"])' in \
        result.diagnosis, result.diagnosis
    norms = gradlab.parameter_norms(result.gradients)
    assert list(norms) == ["W1", "b1", "W2"]      # d/dz log(z) = 1/z is finite; dW2 = h.T @ 1
    assert np.isfinite(norms["W1"]) and np.isfinite(norms["b1"]) and np.isnan(norms["W2"])
    assert "NaN/Inf!" in "\n".join(result.value_lines())


Layer = namedtuple("Layer", ["W", "b"])


def layered(params, x):
    h = x
    for layer in params["layers"]:
        h = np.tanh(h @ layer.W + layer.b)
    return np.sum(h ** 2)


def test_a_loop_over_layers_of_namedtuples() -> None:
    """A function whose code for arrays cannot be written (it reads params as a container):
    every tool works on the code for the call's structure."""
    params = {"layers": [Layer(RNG.normal(size=(3, 3)), np.zeros(3)) for _ in range(2)]}
    df = gradlab.grad(layered, "params")
    grads = df(params, X)
    assert type(grads["layers"][1]) is Layer
    norms = gradlab.parameter_norms(grads)
    assert list(norms) == ["layers.0.W", "layers.0.b", "layers.1.W", "layers.1.b"]
    report = gradlab.trace(df)(params, X)
    assert report.first_nonfinite is None and report.backward()
    assert len(gradlab.step(df, params, X)) == len(report.backward())
    assert gradlab.graph(df, params, X).dot().source.count("[label=tanh") == 2
    session = GradSession(df, (params, X))
    assert session.header().startswith("dlayered(params, x) → ∂layered/∂params")
    (result,) = session.run()
    assert not result.error and "layers.1.W" in "\n".join(result.value_lines())
    text = session.source.replace("    return (", "    dparams_layers_0_W = 0.0 * "
                                  "dparams_layers_0_W\n    return (")
    assert session.recompile(text), session.error
    (result,) = session.run()
    assert not np.any(result.gradients["layers"][0].W)
    np.testing.assert_allclose(result.gradients["layers"][1].W, grads["layers"][1].W)


def test_leaf_call_and_tree_map() -> None:
    df = gradlab.grad(dict_loss, "params")
    assert leaf_call(df, (X, X)) is None
    call = leaf_call(df, (PARAMS, X))
    assert call is not None and call.df.params == ["params_W1", "params_b1", "params_W2", "x"]
    assert call.args[0] is PARAMS["W1"] and call.args[3] is X
    value, grads = call.df(*call.args)             # the code returns the value too
    assert list(call.gradients(grads)) == ["W1", "b1", "W2"]
    doubled = tree_map(lambda a: a * 2, {"a": [1.0, {"b": 2.0}], "c": 3.0})
    assert doubled == {"a": [2.0, {"b": 4.0}], "c": 6.0}


def test_jvp_and_hvp_with_a_dict_run_traced_and_edited() -> None:
    tangent = {"W1": np.ones((3, 4)), "b1": np.ones(4), "W2": np.ones((4, 2))}
    for derivative in (gradlab.jvp(dict_loss, "params"), gradlab.hvp(dict_loss, "params")):
        want = derivative(PARAMS, X, tangent)
        (result,) = GradSession(derivative, (PARAMS, X, tangent)).run()
        assert not result.error, result.error
        assert gradlab.trace(derivative)(PARAMS, X, tangent).first_nonfinite is None
        edited = gradlab.recompile(derivative.source_for(PARAMS, X, tangent), like=derivative)
        got = edited(PARAMS, X, tangent)
        if derivative.mode == "jvp":
            np.testing.assert_allclose(got[1], want[1], rtol=1e-12)
            np.testing.assert_allclose(result.gradients, want[1], rtol=1e-12)
        else:
            assert_dict_close(got, want)
            assert_dict_close(result.gradients, want)
