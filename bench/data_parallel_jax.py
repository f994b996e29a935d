"""A gradlab gradient under ``jax.jit`` with the batch sharded over 8 devices (issue 17, item 5).

Not a benchmark: a check that a generated gradient is an ordinary JAX function, so XLA's
sharding applies to it unchanged. The CPU is split into 8 simulated devices
(``XLA_FLAGS=--xla_force_host_platform_device_count=8``, set here before JAX is imported, so
this runs as a process of its own). The batch is sharded over a one-axis mesh
(``NamedSharding(Mesh(devices, ("batch",)), PartitionSpec("batch"))``), the parameters are
replicated, and ``jax.jit`` of gradlab's gradient computes the parameters' gradient (XLA adds
the all-reduce over the batch) and the input's gradient (which stays sharded like the batch).
Both are compared with the unsharded gradient and with ``jax.grad``; then a few jitted SGD
steps on the sharded batch with single-device ones.

    python bench/data_parallel_jax.py [--steps N] [--out DIR]

``--out DIR`` keeps the results (``sharded.npz``: the gradients and the trained parameters,
and the problem) for tests/test_data_parallel.py to check on its own. Prints one PASS/FAIL
line; exits 1 on FAIL.
"""
from __future__ import annotations

import os
import re

DEVICES = 8
os.environ["XLA_FLAGS"] = " ".join(
    [re.sub(r"--xla_force_host_platform_device_count=\S+", "", os.environ.get("XLA_FLAGS", "")),
     f"--xla_force_host_platform_device_count={DEVICES}"]).strip()
os.environ.setdefault("JAX_PLATFORMS", "cpu")

import argparse  # noqa: E402
import sys  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import jax  # noqa: E402

jax.config.update("jax_enable_x64", True)

import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from jax.sharding import Mesh, NamedSharding, PartitionSpec  # noqa: E402

import gradlab  # noqa: E402

BATCH, INPUTS, HIDDEN = 64, 8, 16
LEARNING_RATE = 0.1
TOLERANCE = 1e-12


def loss(params, x, y):
    """The user's model and loss, on JAX arrays: a tanh MLP and the mean squared error."""
    h = jnp.tanh(x @ params["W1"] + params["b1"])
    pred = h @ params["W2"] + params["b2"]
    return jnp.mean((pred - y) ** 2)


def problem() -> tuple[dict[str, np.ndarray], np.ndarray, np.ndarray]:
    """The starting parameters and the whole batch (seeded), as NumPy arrays."""
    rng = np.random.default_rng(0)
    params = {"W1": rng.normal(size=(INPUTS, HIDDEN)) * 0.5, "b1": np.zeros(HIDDEN),
              "W2": rng.normal(size=(HIDDEN, 1)) * 0.5, "b2": np.zeros(1)}
    x = rng.normal(size=(BATCH, INPUTS))
    y = np.sin(x.sum(axis=1, keepdims=True))
    return params, x, y


dloss_dparams = gradlab.grad(loss, wrt="params")
dloss_dx = gradlab.grad(loss, wrt="x")


def sgd_step(params, x, y):
    grads = dloss_dparams(params, x, y)
    return {name: p - LEARNING_RATE * grads[name] for name, p in params.items()}


def train(params, x, y, steps: int):
    step = jax.jit(sgd_step)
    for _ in range(steps):
        params = step(params, x, y)
    return params


def sharded_run(steps: int) -> dict[str, Any]:
    """Everything computed with the batch sharded over the mesh, as device arrays."""
    params, x, y = problem()
    mesh = Mesh(np.array(jax.devices()), ("batch",))
    by_batch, replicated = NamedSharding(mesh, PartitionSpec("batch")), NamedSharding(mesh,
                                                                                    PartitionSpec())
    xs, ys = jax.device_put(x, by_batch), jax.device_put(y, by_batch)
    ps = jax.device_put(params, replicated)
    program = jax.jit(dloss_dparams).lower(ps, xs, ys).compile().as_text() or ""
    return {"x": xs, "grad": jax.jit(dloss_dparams)(ps, xs, ys),
            "dx": jax.jit(dloss_dx)(ps, xs, ys), "trained": train(ps, xs, ys, steps),
            "by_batch": by_batch, "all_reduces": "all-reduce" in program}


def largest_difference(a, b) -> float:
    if isinstance(a, dict):
        assert a.keys() == b.keys(), (sorted(a), sorted(b))
        return max(largest_difference(a[k], b[k]) for k in a)
    return float(np.max(np.abs(np.asarray(a) - np.asarray(b))))


def save(out: Path, found: dict) -> None:
    params, x, y = problem()
    arrays: dict[str, Any] = {"x": x, "y": y, "dx": np.asarray(found["dx"])}
    for group, tree in (("params", params), ("grad", found["grad"]), ("trained", found["trained"])):
        arrays.update({f"{group}.{name}": np.asarray(v) for name, v in tree.items()})
    np.savez(out / "sharded.npz", **arrays)


def report(found: dict, steps: int) -> bool:
    """Prints the comparisons and where the arrays live; True when every check holds."""
    params, x, y = jax.device_put(problem(), jax.devices()[0])   # unsharded: one device
    placed = {name: len(found[name].sharding.device_set) for name in ("x", "dx")}
    placed["grad"] = min(len(g.sharding.device_set) for g in found["grad"].values())
    figures = {
        "sharded gradient vs unsharded gradlab": largest_difference(found["grad"],
                                                                    dloss_dparams(params, x, y)),
        "sharded gradient vs jax.grad": largest_difference(found["grad"],
                                                           jax.grad(loss)(params, x, y)),
        "sharded input gradient vs jax.grad": largest_difference(
            found["dx"], jax.grad(loss, argnums=1)(params, x, y)),
        f"parameters after {steps} sharded SGD steps vs unsharded":
            largest_difference(found["trained"], train(params, x, y, steps)),
    }
    print(f"jax {jax.__version__}, {len(jax.devices())} CPU devices; batch {BATCH} sharded "
          f"{BATCH // DEVICES} rows a device; MLP {INPUTS}-{HIDDEN}-1 (tanh), float64")
    copies = all(g.sharding.is_fully_replicated for g in found["grad"].values())
    print("devices holding: the batch {x}, the parameters' gradient {grad}{how}, the input's "
          "gradient {dx}".format(how=" (replicated)" if copies else "", **placed))
    for label, value in figures.items():
        print(f"max |difference|, {label}: {value:.3g}")
    stays_sharded = found["dx"].sharding.is_equivalent_to(found["by_batch"], 2)
    print(f"the input's gradient is sharded like the batch: {stays_sharded}")
    print(f"XLA's program for the parameters' gradient sums over the devices (all-reduce): "
          f"{found['all_reduces']}")
    return (all(value <= TOLERANCE for value in figures.values()) and stays_sharded
            and set(placed.values()) == {DEVICES} and bool(found["all_reduces"]))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=3, help="SGD steps")
    parser.add_argument("--out", type=Path, default=None, help="keep the results here")
    args = parser.parse_args()
    if len(jax.devices()) != DEVICES:
        print(f"FAIL  {len(jax.devices())} devices, not {DEVICES}: XLA_FLAGS was not read "
              f"(was JAX imported before this script set it?)")
        return 1
    found = sharded_run(args.steps)
    if args.out is not None:
        args.out.mkdir(parents=True, exist_ok=True)
        save(args.out, found)
    passed = report(found, args.steps)
    print(f"{'PASS' if passed else 'FAIL'}  the sharded gradlab gradient is the unsharded one "
          f"(to {TOLERANCE:g}), on {DEVICES} devices")
    return 0 if passed else 1


if __name__ == "__main__":
    sys.exit(main())
