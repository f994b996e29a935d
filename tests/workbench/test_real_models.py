"""Surgery and inspection on real models (issue 17, item 4): a loss that calls a framework model
gradlab cannot read (a ``torch.nn.Sequential``, a Keras model, a callable JAX pytree, run
through the framework's own autodiff as one line: ``pred, pred_vjp = gl.vjp_of(model, x)``),
differentiated with respect to the model's parameters and to its input. ``insert_grad_of``,
Recompile (the library call and the panel's), step-through, trace, the graph, the NaN hunt and
the norm per parameter all work on it, and every gradient equals the framework's own autodiff
to 1e-10 in float64. (Losses taking ``params`` dicts: tests/workbench/test_leafcalls.py.)"""
from __future__ import annotations

import dataclasses
import functools

import numpy as np
import pytest

import gradlab
from gradlab.kernel_ext.panel import GradPanel
from gradlab.workbench.health import named_leaves
from gradlab.workbench.session import GradSession
from tests.conftest import require, to_framework, to_numpy

BACKENDS = ("torch", "jax", "tensorflow")
RNG = np.random.default_rng(7)
X = RNG.normal(size=(5, 3))
Y = RNG.normal(size=(5, 2))
W1, B1 = RNG.normal(size=(3, 4)) * 0.7, RNG.normal(size=4) * 0.1
W2, B2 = RNG.normal(size=(4, 2)) * 0.7, RNG.normal(size=2) * 0.1
CLIP = 0.3


def model_loss(model, x, y):
    pred = model(x)
    return np.sum((pred - y) ** 2) * 0.5


def clipped_loss(model, x, y):
    pred = model(x)
    with gradlab.insert_grad_of(pred) as dpred:
        dpred = np.clip(dpred, -0.3, 0.3)
    return np.sum((pred - y) ** 2) * 0.5


def model_twice(model, x, y):
    h = model(x)
    return np.sum(model(x * 2.0) * h)


def distance(model, x, y):
    pred = model(x)
    return np.sqrt(np.sum((pred - y) ** 2))


@functools.lru_cache(maxsize=None)
def jax_mlp_type() -> type:
    """A callable pytree of arrays (what an Equinox module is): a dataclass JAX flattens."""
    import jax
    import jax.numpy as jnp

    @dataclasses.dataclass
    class MLP:
        W1: object
        b1: object
        W2: object
        b2: object

        def __call__(self, x):
            return jnp.tanh(x @ self.W1 + self.b1) @ self.W2 + self.b2
    return jax.tree_util.register_dataclass(MLP, data_fields=["W1", "b1", "W2", "b2"],
                                            meta_fields=[])


def make_model(framework: str):
    """x -> tanh(x @ W1 + b1) @ W2 + b2 in the framework's own terms (float64)."""
    require(framework)
    if framework == "torch":
        import torch
        model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Tanh(),
                                    torch.nn.Linear(4, 2)).double()
        with torch.no_grad():
            for layer, (w, b) in ((model[0], (W1, B1)), (model[2], (W2, B2))):
                layer.weight.copy_(torch.as_tensor(w.T))
                layer.bias.copy_(torch.as_tensor(b))
        return model
    if framework == "jax":
        import jax.numpy as jnp
        return jax_mlp_type()(*(jnp.asarray(a) for a in (W1, B1, W2, B2)))
    import tensorflow as tf
    model = tf.keras.Sequential([tf.keras.layers.Dense(4, activation="tanh", dtype="float64"),
                                 tf.keras.layers.Dense(2, dtype="float64")])
    model.build((None, 3))
    model.set_weights([W1, B1, W2, B2])
    return model


def reference(framework: str, model, x, y, clip: float | None = None):
    """The framework's own gradients of model_loss (the output's gradient clipped to
    ``clip`` first, where given): (the model's parameters' gradients as a list, x's)."""
    if framework == "torch":
        import torch
        leaf = x.clone().requires_grad_()
        model.zero_grad()
        pred = model(leaf)
        g = (pred - y).detach()
        pred.backward(g if clip is None else g.clamp(-clip, clip))
        return [p.grad for p in model.parameters()], leaf.grad
    if framework == "jax":
        import jax
        import jax.numpy as jnp
        pred, pull = jax.vjp(lambda m, v: m(v), model, x)
        g = pred - y
        dmodel, dx = pull(g if clip is None else jnp.clip(g, -clip, clip))
        return jax.tree_util.tree_leaves(dmodel), dx
    import tensorflow as tf
    with tf.GradientTape() as tape:
        tape.watch(x)
        pred = model(x)
    g = pred - y
    dmodel, dx = tape.gradient(pred, [model.trainable_variables, x], output_gradients=g
                               if clip is None else tf.clip_by_value(g, -clip, clip))
    return list(dmodel), dx


def assert_same(got, want) -> None:
    """Equal to 1e-10, leaf by leaf (a model's gradient in its own structure)."""
    got_leaves = [leaf for _, leaf in named_leaves(got)]
    want_leaves = [leaf for _, leaf in named_leaves(want)]
    assert len(got_leaves) == len(want_leaves)
    for g, w in zip(got_leaves, want_leaves):
        np.testing.assert_allclose(to_numpy(g), to_numpy(w), rtol=1e-10, atol=1e-12)


@pytest.fixture(params=BACKENDS)
def setup(request):
    framework = request.param
    model = make_model(framework)
    return framework, model, to_framework(X, framework), to_framework(Y, framework)


def test_the_gradients_are_the_frameworks(setup) -> None:
    framework, model, x, y = setup
    dmodel, dx = gradlab.grad(model_loss, ("model", "x"))(model, x, y)
    want_model, want_x = reference(framework, model, x, y)
    assert_same(dmodel, want_model)
    assert_same(dx, want_x)


@pytest.mark.parametrize("wrt", ["model", "x"])
def test_insert_grad_of_clips_the_models_output_gradient(setup, wrt) -> None:
    framework, model, x, y = setup
    df = gradlab.grad(clipped_loss, wrt)
    assert "dpred = gl.clip(dpred, -0.3, 0.3)" in df.source_for(model, x, y)
    want = reference(framework, model, x, y, clip=CLIP)[0 if wrt == "model" else 1]
    assert_same(df(model, x, y), want)


def clip_before_the_model(source: str) -> str:
    """The edit a user makes: clip the model's output gradient before its backward line."""
    line = next(line for line in source.splitlines() if "pred_vjp(dpred)" in line)
    indent = line[:len(line) - len(line.lstrip())]
    return source.replace(line, f"{indent}dpred = gl.clip(dpred, -{CLIP}, {CLIP})\n{line}")


@pytest.mark.parametrize("wrt", ["model", "x"])
def test_recompile_and_the_panels_recompile_run_the_edit(setup, wrt) -> None:
    framework, model, x, y = setup
    df = gradlab.grad(model_loss, wrt)
    want = reference(framework, model, x, y, clip=CLIP)[0 if wrt == "model" else 1]
    edited = clip_before_the_model(df.source_for(model, x, y))
    assert_same(gradlab.recompile(edited, like=df)(model, x, y), want)
    panel = GradPanel(GradSession(df, (model, x, y)), backend=framework)
    (result,) = panel.recompile_and_run(clip_before_the_model(panel.editor_text))
    assert not result.error and result.framework == framework, result.error
    assert panel.session.version() == "edited: 1 line changed"
    assert_same(result.gradients, want)


def test_step_through_shows_the_model_call_as_one_step_with_its_shapes(setup) -> None:
    framework, model, x, y = setup
    df = gradlab.grad(model_loss, ("model", "x"))
    stepper = gradlab.step(df, model, x, y)
    (forward,) = [s for s in stepper.forward_steps if "gl.vjp_of(model, x" in s.code]
    assert [(v.name, v.shape) for v in forward.values] == [("pred", (5, 2))]
    (backward,) = [s for s in stepper.steps if "pred_vjp(dpred)" in s.code]
    values = {v.name: v for v in backward.values}
    assert values["dx"].shape == (5, 3)
    assert values["dmodel"].shape == (4,)          # four parameters, one value
    want_model, want_x = reference(framework, model, x, y)
    norms = [float(np.linalg.norm(to_numpy(g))) for g in want_model]
    assert values["dmodel"].norm == pytest.approx(float(np.sqrt(np.sum(np.square(norms)))),
                                                  rel=1e-10)
    stepper.go(stepper.steps.index(backward))
    text = stepper.text()
    line = model_loss.__code__.co_firstlineno + 1
    assert f"differentiates your line {line}: pred = model(x)" in text
    (row,) = [line for line in stepper.table().splitlines() if line.startswith("model ")]
    assert f"{values['dmodel'].head} |·|={values['dmodel'].norm:.4g}  ← this step" in row
    assert values["dmodel"].head in ("4 parameters", "list of 4")


def test_the_graph_has_one_node_per_model_call(setup) -> None:
    framework, model, x, y = setup
    once = gradlab.graph(gradlab.grad(model_loss, "model"), model, x, y).dot().source
    twice = gradlab.graph(gradlab.grad(model_twice, ("model", "x")), model, x, y).dot().source
    assert once.count('label="model()"') == 1
    (node,) = [line for line in once.splitlines() if line.strip().startswith("v_model [")]
    assert "grad |·|=" in node         # the parameters' gradient, one norm
    assert twice.count('label="model()"') == 2
    panel = GradPanel(GradSession(gradlab.grad(model_loss, "model"), (model, x, y)),
                      backend=framework)
    assert "no graph" not in panel.graph_html()


def test_the_nan_hunt_finds_a_nan_in_the_parameters_gradient(setup) -> None:
    """sqrt of a sum that is exactly 0: the value is finite, the gradient is 0/0."""
    framework, model, x, _ = setup
    y = model(x)
    df = gradlab.grad(distance, "model")
    report = gradlab.trace(df)(model, x, y)
    bad = report.first_nonfinite
    assert bad is not None and bad.section == "backward"
    dmodel = [v for s in report.backward() for v in s.values if v.name == "dmodel"]
    assert dmodel and not dmodel[0].finite       # the model's gradient, one value, NaN
    (result,) = GradSession(df, (model, x, y)).run(framework)
    assert result.diagnosis.startswith("first NaN/Inf at step") and "backward pass" in \
        result.diagnosis, result.diagnosis
    assert not result.ok


def test_the_norm_of_each_parameters_gradient(setup) -> None:
    framework, model, x, y = setup
    df = gradlab.grad(model_loss, "model")
    grads = df(model, x, y)
    norms = gradlab.parameter_norms(grads)
    want = [float(np.linalg.norm(to_numpy(g))) for g in reference(framework, model, x, y)[0]]
    np.testing.assert_allclose(list(norms.values()), want, rtol=1e-10)
    names = {"torch": ["0.weight", "0.bias", "2.weight", "2.bias"],
             "jax": ["W1", "b1", "W2", "b2"], "tensorflow": ["0", "1", "2", "3"]}[framework]
    shown = [v.path for v in model.trainable_variables] if framework == "tensorflow" else names
    assert list(norms) == names
    (result,) = GradSession(df, (model, x, y)).run("all")    # a model runs on its own
    assert result.framework == framework                       # framework only
    lines = result.value_lines()
    assert "gradient dmodel by parameter (4): shape, norm" in lines
    assert any(line.split()[0] == shown[0] and f"|·|={want[0]:.4g}" in line for line in lines)
    import matplotlib
    matplotlib.use("Agg")
    figure = gradlab.plot_parameter_norms(grads, model=model)
    assert len(figure.axes[0].patches) == 4
    if framework == "tensorflow":      # a list: named after the model's variables if given
        assert list(gradlab.parameter_norms(grads, model=model)) == [
            v.path for v in model.trainable_variables]


def test_a_batch_in_a_dict_and_a_model() -> None:
    """A loss taking the model and a dict of arrays: the dict's leaves and the model's call."""
    model = make_model("torch")
    import torch
    batch = {"x": torch.as_tensor(X), "y": torch.as_tensor(Y)}

    def batch_loss(model, batch):
        pred = model(batch["x"])
        return np.sum((pred - batch["y"]) ** 2) * 0.5
    df = gradlab.grad(batch_loss, "model")
    assert_same(df(model, batch), reference("torch", model, batch["x"], batch["y"])[0])
    report = gradlab.trace(df)(model, batch)
    assert any(v.name == "dmodel" for s in report.backward() for v in s.values)
    edited = clip_before_the_model(df.source_for(model, batch))
    assert_same(gradlab.recompile(edited, like=df)(model, batch),
                reference("torch", model, batch["x"], batch["y"], clip=CLIP)[0])
    assert gradlab.graph(df, model, batch).dot().source.count('label="model()"') == 1


def recurrent(cell, x, steps):
    h = x
    for t in range(steps):
        h = cell(h) * 0.9 + 0.1 * h
    return np.sum(h ** 2)


def test_a_model_called_in_a_loop_is_one_step_per_iteration() -> None:
    require("torch")
    import torch
    torch.manual_seed(0)
    cell = torch.nn.Sequential(torch.nn.Linear(3, 3), torch.nn.Tanh()).double()
    x = torch.as_tensor(X[:2])
    df = gradlab.grad(recurrent, ("cell", "x"))
    stepper = gradlab.step(df, cell, x, 3)
    calls = [s for s in stepper.steps if "cell_out_vjp(dcell_out)" in s.code]
    assert len(calls) == 3
    assert all([(v.name, v.shape) for v in s.values] == [("dcell_part_2", (2,)), (
        "dh_part_2", (2, 3))] for s in calls)
    leaf = x.clone().requires_grad_()
    cell.zero_grad()
    h = leaf
    for _ in range(3):
        h = cell(h) * 0.9 + 0.1 * h
    torch.sum(h ** 2).backward()
    dcell, dx = df(cell, x, 3)
    assert_same(dcell, [p.grad for p in cell.parameters()])
    assert_same(dx, leaf.grad)
    norms = gradlab.gradient_norms(stepper.report, ["dcell"])["dcell"]
    assert norms[0] == 0.0 and norms[-1] == pytest.approx(float(np.sqrt(sum(
        float(torch.sum(p.grad ** 2)) for p in cell.parameters()))), rel=1e-10)
    assert gradlab.graph(df, cell, x, 3).dot().source.count('label="cell()"') == 1


CLIP_BY_NORM = """    total = sum(gl.sum(g ** 2) for g in dmodel.values()) ** 0.5
    scale = gl.minimum(1.0, 1.0 / total)
    dmodel = {name: g * scale for name, g in dmodel.items()}
    return dmodel"""


def test_clipping_by_the_global_norm_edited_in_the_panel() -> None:
    """What the lesson does: clip a torch model's gradient to norm 1 by editing the backward
    code in the panel; equal to torch's own gradient scaled so (1e-10), the norms per
    parameter shown under the run."""
    model = make_model("torch")
    import torch
    x, y = torch.as_tensor(X) * 10, torch.as_tensor(Y)
    panel = GradPanel(GradSession(gradlab.grad(model_loss, "model"), (model, x, y)),
                      backend="torch")
    (result,) = panel.recompile_and_run(panel.editor_text.replace("    return dmodel",
                                                                  CLIP_BY_NORM))
    assert not result.error, result.error
    want = reference("torch", model, x, y)[0]
    total = float(np.sqrt(sum(float(torch.sum(g ** 2)) for g in want)))
    assert total > 1.0
    assert_same(result.gradients, [g / total for g in want])
    assert sum(n ** 2 for n in gradlab.parameter_norms(result.gradients).values()) == \
        pytest.approx(1.0, rel=1e-12)
    assert "gradient dmodel by parameter (4): shape, norm" in panel.text(color="never")
