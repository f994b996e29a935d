"""Data-parallel runs of a generated gradient on existing engines (issue 17, item 5): the
scripts bench/data_parallel_torch.py (torch.distributed, gloo, 2 processes) and
bench/data_parallel_jax.py (jax.jit over 8 simulated CPU devices, the batch sharded) run as
processes of their own — the first starts its workers, the second needs XLA_FLAGS set before
JAX is imported, and this process has JAX with one device. Each keeps its results in a folder,
and the checks here recompute the whole batch's gradient in this process, by gradlab and by the
framework's own autodiff, rather than trusting the script's own comparison.

The losses are the scripts' losses, written again here (a change to one shows as a failure)."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import gradlab
from tests.conftest import require

try:
    import torch
except ImportError:      # pragma: no cover - the torch test requires it
    torch = None
try:
    import jax
    import jax.numpy as jnp
except ImportError:      # pragma: no cover - the JAX test requires it
    jax = jnp = None

ROOT = Path(__file__).resolve().parent.parent
TOLERANCE = 1e-12


def run_script(name: str, out: Path) -> str:
    done = subprocess.run([sys.executable, str(ROOT / "bench" / name), "--steps", "3",
                           "--out", str(out)], capture_output=True, text=True, timeout=300,
                          cwd=ROOT)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "PASS" in done.stdout, done.stdout
    return done.stdout


@pytest.fixture(scope="module")
def torch_run(tmp_path_factory) -> Path:
    """The folder bench/data_parallel_torch.py left its results in (run once for the tests
    below: it starts two processes)."""
    require("torch")
    out = tmp_path_factory.mktemp("data_parallel_torch")
    run_script("data_parallel_torch.py", out)
    return out


def torch_loss(params, x, y):
    h = torch.tanh(x @ params["W1"] + params["b1"])
    pred = h @ params["W2"] + params["b2"]
    return torch.mean((pred - y) ** 2)


def torch_module_loss(model, x, y):
    pred = model(x)
    return torch.mean((pred - y) ** 2)


def jax_loss(params, x, y):
    h = jnp.tanh(x @ params["W1"] + params["b1"])
    pred = h @ params["W2"] + params["b2"]
    return jnp.mean((pred - y) ** 2)


def largest_difference(a: dict, b: dict) -> float:
    assert a.keys() == b.keys(), (sorted(a), sorted(b))
    return max(float(np.max(np.abs(np.asarray(a[k]) - np.asarray(b[k])))) for k in a)


def test_torch_gloo_all_reduced_gradient_is_the_whole_batch_gradient(torch_run):
    """Two gloo processes, half the batch each, gradlab's gradient all-reduced (averaged): the
    whole batch's gradient by gradlab in one process and by loss.backward(); after 3 SGD steps
    both processes hold the same parameters as one process training on the whole batch."""
    problem = torch.load(torch_run / "problem.pt")
    params, x, y = problem["params"], problem["x"], problem["y"]
    ranks = [torch.load(torch_run / f"rank{r}.pt") for r in (0, 1)]
    assert x.dtype == torch.float64 and x.shape[0] == 64
    dloss = gradlab.grad(torch_loss, wrt="params")
    whole = dloss(params, x, y)
    leaves = {k: v.clone().requires_grad_() for k, v in params.items()}
    torch_loss(leaves, x, y).backward()
    for rank in ranks:
        assert largest_difference(rank["grad"], whole) <= TOLERANCE
        assert largest_difference(rank["grad"], {k: v.grad for k, v in leaves.items()}) <= TOLERANCE
    halves = [dloss(params, x[:32], y[:32]), dloss(params, x[32:], y[32:])]
    assert largest_difference(halves[0], whole) > 1e-3, "the halves' gradients should differ"
    trained = params
    for _ in range(3):
        grads = dloss(trained, x, y)
        trained = {k: p - 0.1 * grads[k] for k, p in trained.items()}
    assert largest_difference(ranks[0]["params"], ranks[1]["params"]) == 0.0
    assert largest_difference(ranks[0]["params"], trained) <= TOLERANCE
    assert largest_difference(ranks[0]["params"], params) > 1e-3, "training moved nothing"


def test_torch_gloo_all_reduced_gradient_of_an_nn_module(torch_run):
    """The same with the network a torch.nn.Sequential (wrt="model", one opaque line of the
    generated code): the all-reduced gradient is the whole batch's, by gradlab and by
    loss.backward()."""
    problem = torch.load(torch_run / "problem.pt")
    x, y = problem["x"], problem["y"]
    net = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.Tanh(),
                              torch.nn.Linear(16, 1)).double()
    net.load_state_dict(problem["module"])
    whole = gradlab.grad(torch_module_loss, wrt="model")(net, x, y)
    assert "dmodel = pred_vjp(dpred)" in gradlab.grad(torch_module_loss,
                                                      wrt="model").source_for(net, x, y)
    torch_module_loss(net, x, y).backward()
    by_torch = {name: p.grad for name, p in net.named_parameters()}
    for rank in (0, 1):
        averaged = torch.load(torch_run / f"rank{rank}.pt")["module_grad"]
        assert largest_difference(averaged, whole) <= TOLERANCE
        assert largest_difference(averaged, by_torch) <= TOLERANCE


def test_jax_jit_on_a_batch_sharded_over_8_devices(tmp_path):
    """jax.jit of gradlab's gradient with the batch sharded over 8 simulated CPU devices and the
    parameters replicated: the unsharded gradient (by gradlab and by jax.grad, here, on one
    device), the input's gradient, and 3 SGD steps; the script asserts the arrays really lived
    on 8 devices, and says so."""
    require("jax")
    out = run_script("data_parallel_jax.py", tmp_path)
    assert "8 CPU devices" in out and "the batch 8," in out, out
    assert "the input's gradient is sharded like the batch: True" in out, out
    assert "sums over the devices (all-reduce): True" in out, out
    saved = np.load(tmp_path / "sharded.npz")

    def group(name: str) -> dict:
        return {k.split(".", 1)[1]: saved[k] for k in saved.files if k.startswith(name + ".")}

    params = {k: jnp.asarray(v) for k, v in group("params").items()}
    x, y = jnp.asarray(saved["x"]), jnp.asarray(saved["y"])
    assert x.dtype == jnp.float64 and len(jax.devices()) == 1
    dloss = gradlab.grad(jax_loss, wrt="params")
    whole = dloss(params, x, y)
    assert largest_difference(group("grad"), whole) <= TOLERANCE
    assert largest_difference(group("grad"), jax.grad(jax_loss)(params, x, y)) <= TOLERANCE
    dx = gradlab.grad(jax_loss, wrt="x")(params, x, y)
    assert float(np.max(np.abs(saved["dx"] - np.asarray(dx)))) <= TOLERANCE
    trained = params
    for _ in range(3):
        grads = dloss(trained, x, y)
        trained = {k: p - 0.1 * grads[k] for k, p in trained.items()}
    assert largest_difference(group("trained"), trained) <= TOLERANCE
    assert largest_difference(group("trained"), params) > 1e-3, "training moved nothing"
