"""What gradlab's tensor layer costs over calling each framework directly.

Not a test: a script that prints a table and one PASS/FAIL line per target. Every framework runs
on one thread, and each comparison is measured side by side in this one run (raw and gradlab
timings interleaved, median of repeats), so the ratios are fair on a shared, noisy machine.

    (a) the flat namespace, ``ops.tanh(x)``, ``ops.sum(x, axis=0)``, ``ops.matmul(x, y)``,
        against the framework's own call;
    (b) the wrapper chain ``astensor(x).square().sum().sqrt()`` against the raw calls
        ``sqrt(sum(square(x)))`` and against EagerPy's same chain.

Targets (on the 10-element tensor, where overhead shows): flat namespace <= 1.05x raw on every
backend (geometric mean over the ops); wrapper chain <= 1.5x raw on NumPy and <= 1.2x on PyTorch;
``import gradlab`` under 0.3 s and importing no framework (a fresh interpreter, median of 5).

    python bench/overhead.py [--quick] [--strict]

``--quick`` takes fewer repeats; ``--strict`` exits with status 1 when a target fails.
"""
from __future__ import annotations

import os

# One thread everywhere, set before any framework is imported.
for _var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "NUMEXPR_NUM_THREADS",
             "VECLIB_MAXIMUM_THREADS", "TF_NUM_INTRAOP_THREADS", "TF_NUM_INTEROP_THREADS"):
    os.environ[_var] = "1"
os.environ["XLA_FLAGS"] = ("--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1 "
                           "--xla_force_host_platform_device_count=1")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import argparse  # noqa: E402
import json  # noqa: E402
import math  # noqa: E402
import platform  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import timeit  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any, Callable  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

FLAT_LIMIT, NUMPY_CHAIN_LIMIT, TORCH_CHAIN_LIMIT, IMPORT_LIMIT = 1.05, 1.5, 1.2, 0.3
SMALL, LARGE = (2, 5), (1000, 1000)   # 10 elements; a million


# --- the frameworks, each on one thread ----------------------------------------------------------
def setup(fw: str) -> dict[str, Any]:
    """The raw calls of one framework, its gradlab namespace, and a way to make its arrays."""
    import gradlab.tensor as gt
    ops = gt.backend(fw)
    env: dict[str, Any] = {"ops": ops, "astensor": gt.astensor}
    if fw == "numpy":
        env["make"] = lambda a: a
        env["raw"] = {"tanh": "np.tanh(x)", "sum": "np.sum(x, axis=0)",
                      "matmul": "np.matmul(x, y)", "chain": "np.sqrt(np.sum(np.square(x)))"}
        env["np"] = np
    elif fw == "torch":
        import torch
        torch.set_num_threads(1)
        try:
            torch.set_num_interop_threads(1)
        except RuntimeError:  # already set
            pass
        env["torch"] = torch
        env["make"] = torch.from_numpy
        env["raw"] = {"tanh": "torch.tanh(x)", "sum": "torch.sum(x, dim=0)",
                      "matmul": "torch.matmul(x, y)",
                      "chain": "torch.sqrt(torch.sum(torch.square(x)))"}
    elif fw == "tensorflow":
        import tensorflow as tf
        tf.config.threading.set_intra_op_parallelism_threads(1)
        tf.config.threading.set_inter_op_parallelism_threads(1)
        env["tf"] = tf
        env["make"] = tf.constant
        env["raw"] = {"tanh": "tf.math.tanh(x)", "sum": "tf.reduce_sum(x, axis=0)",
                      "matmul": "tf.linalg.matmul(x, y)",
                      "chain": "tf.math.sqrt(tf.reduce_sum(tf.math.square(x)))"}
    elif fw == "jax":
        import jax
        import jax.numpy as jnp
        env["jnp"] = jnp
        env["make"] = lambda a: jax.device_put(jnp.asarray(a))
        block = ".block_until_ready()"
        env["raw"] = {"tanh": "jnp.tanh(x)" + block, "sum": "jnp.sum(x, axis=0)" + block,
                      "matmul": "jnp.matmul(x, y)" + block,
                      "chain": "jnp.sqrt(jnp.sum(jnp.square(x)))" + block}
    env["block"] = ".block_until_ready()" if fw == "jax" else ""
    try:
        import eagerpy as ep
        env["ep"] = ep
    except ImportError:
        env["ep"] = None
    return env


def versions(fw: str) -> str:
    module = {"numpy": "numpy", "torch": "torch", "tensorflow": "tensorflow", "jax": "jax"}[fw]
    return str(getattr(sys.modules[module], "__version__", "?"))


# --- measuring -----------------------------------------------------------------------------------
def calibrate(timer: timeit.Timer, target: float) -> int:
    """Loops per repeat so that one repeat takes about ``target`` seconds."""
    number = 1
    while True:
        elapsed = timer.timeit(number)
        if elapsed >= target / 4 or number >= 1 << 20:
            return max(1, int(number * target / max(elapsed, 1e-9)))
        number *= 4


def side_by_side(stmts: dict[str, str], env: dict[str, Any], repeats: int, target: float
                 ) -> dict[str, float]:
    """Median seconds per call of each statement, repeats interleaved (a b c c b a a b c ...:
    the order alternates, so that whatever favours a position favours each statement alike)."""
    timers = list({k: timeit.Timer(s, globals=env) for k, s in stmts.items()}.items())
    for _, t in timers:   # warm up (JAX compiles its eager kernels on first use)
        t.timeit(3)
    number = min(calibrate(t, target) for _, t in timers)
    samples: dict[str, list[float]] = {k: [] for k in stmts}
    for r in range(repeats):
        for k, t in (timers if r % 2 == 0 else timers[::-1]):
            samples[k].append(t.timeit(number) / number)
    return {k: statistics.median(v) for k, v in samples.items()}


def measure_backend(fw: str, repeats: int, target: float) -> list[dict[str, Any]]:
    env = setup(fw)
    rows = []
    rng = np.random.default_rng(0)
    for shape in (SMALL, LARGE):
        env["x"] = env["make"](rng.standard_normal(shape).astype(np.float32))
        env["y"] = env["make"](rng.standard_normal(shape[::-1]).astype(np.float32))
        big = shape == LARGE
        reps = max(3, repeats // 2) if big else repeats
        size = f"{math.prod(shape)} ({shape[0]}x{shape[1]})" if not big else "1000x1000"
        block = env["block"]
        for op, call in (("tanh", "ops.tanh(x)"), ("sum", "ops.sum(x, axis=0)"),
                         ("matmul", "ops.matmul(x, y)")):
            t = side_by_side({"raw": env["raw"][op], "gradlab": call + block}, env, reps, target)
            rows.append(dict(fw=fw, size=size, small=not big, what=f"ops.{op}", raw=t["raw"],
                             gradlab=t["gradlab"], eagerpy=None))
        stmts = {"raw": env["raw"]["chain"],
                 "gradlab": "astensor(x).square().sum().sqrt().raw" + block}
        if env["ep"] is not None:
            stmts["eagerpy"] = "ep.astensor(x).square().sum().sqrt().raw" + block
        try:
            t = side_by_side(stmts, env, reps, target)
        except Exception as e:  # EagerPy may not support this framework version
            print(f"  (EagerPy chain failed on {fw}: {type(e).__name__}: {e})")
            stmts.pop("eagerpy", None)
            t = side_by_side(stmts, env, reps, target)
        rows.append(dict(fw=fw, size=size, small=not big, what="chain", raw=t["raw"],
                         gradlab=t["gradlab"], eagerpy=t.get("eagerpy")))
    return rows


def measure_import(runs: int = 5) -> tuple[float, list[str]]:
    """Median seconds of ``import gradlab`` in a fresh interpreter, and the frameworks it
    imported (should be none)."""
    code = ("import time, sys, json; t = time.perf_counter(); import gradlab, gradlab.tensor; "
            "dt = time.perf_counter() - t; print(json.dumps([dt, [m for m in ('torch', "
            "'tensorflow', 'jax', 'jaxlib') if m in sys.modules]]))")
    times, imported = [], set()
    for _ in range(runs):
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                             cwd=ROOT, check=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
        dt, mods = json.loads(out.stdout.strip().splitlines()[-1])
        times.append(dt)
        imported.update(mods)
    return statistics.median(times), sorted(imported)


# --- reporting -----------------------------------------------------------------------------------
def us(seconds: float | None) -> str:
    return "-" if seconds is None else f"{seconds * 1e6:10.2f}"


def ratio(a: float | None, b: float | None) -> str:
    return "-" if a is None or b is None else f"{a / b:5.2f}x"


def geomean(values: list[float]) -> float:
    return math.exp(sum(math.log(v) for v in values) / len(values))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer repeats")
    parser.add_argument("--strict", action="store_true", help="exit 1 when a target fails")
    parser.add_argument("--frameworks", default="numpy,torch,tensorflow,jax")
    args = parser.parse_args()
    repeats, target = (7, 0.01) if args.quick else (21, 0.02)
    started = time.perf_counter()

    print("gradlab tensor-layer overhead (median of interleaved repeats, one thread)")
    print(f"python {platform.python_version()} on {platform.machine()}, "
          f"{os.cpu_count()} CPUs; OMP/MKL/OPENBLAS_NUM_THREADS=1; "
          f"XLA_FLAGS={os.environ['XLA_FLAGS']!r}")
    coretype = os.environ.get("OPENBLAS_CORETYPE")
    print(f"OPENBLAS_CORETYPE={coretype}" if coretype else "OPENBLAS_CORETYPE is not set")

    import_time, imported = measure_import()

    import gradlab.tensor as gt
    rows: list[dict[str, Any]] = []
    for fw in args.frameworks.split(","):
        if not gt.is_installed(fw):
            print(f"{fw}: not installed, skipped")
            continue
        rows += measure_backend(fw, repeats, target)
        print(f"  measured {fw} {versions(fw)}", file=sys.stderr)

    header = (f"{'backend':<11}{'size':<13}{'call':<12}{'raw µs':>10}{'gradlab µs':>12}"
              f"{'eagerpy µs':>12}{'gl/raw':>8}{'gl/ep':>8}{'ep/raw':>8}")
    print()
    print(header)
    print("-" * len(header))
    for r in rows:
        print(f"{r['fw']:<11}{r['size']:<13}{r['what']:<12}{us(r['raw'])}{us(r['gradlab']):>12}"
              f"{us(r['eagerpy']):>12}{ratio(r['gradlab'], r['raw']):>8}"
              f"{ratio(r['gradlab'], r['eagerpy']):>8}{ratio(r['eagerpy'], r['raw']):>8}")
        if r["what"] == "chain" and not r["small"]:
            print()

    print("Ratios below 1x are real, not noise: np.tanh or torch.tanh is a slower attribute\n"
          "lookup (the framework's large module dict) than ops.tanh; the function is the same.")
    results: list[tuple[str, bool]] = []
    frameworks = sorted({r["fw"] for r in rows}, key=["numpy", "torch", "tensorflow",
                                                       "jax"].index)
    flat = {fw: geomean([r["gradlab"] / r["raw"] for r in rows if r["fw"] == fw and r["small"]
                         and r["what"] != "chain"]) for fw in frameworks}
    ok = all(v <= FLAT_LIMIT for v in flat.values())
    detail = ", ".join(f"{fw} {v:.3f}x" for fw, v in flat.items())
    results.append((f"flat namespace <= {FLAT_LIMIT}x raw on 10 elements, every backend "
                    f"(geomean of tanh/sum/matmul): {detail}", ok))
    for fw, limit in (("numpy", NUMPY_CHAIN_LIMIT), ("torch", TORCH_CHAIN_LIMIT)):
        chain = [r for r in rows if r["fw"] == fw and r["what"] == "chain"]
        if not chain:
            continue
        worst = max(r["gradlab"] / r["raw"] for r in chain)
        small = next(r["gradlab"] / r["raw"] for r in chain if r["small"])
        results.append((f"wrapper chain <= {limit}x raw on {fw}: {small:.3f}x on 10 elements, "
                        f"worst over sizes {worst:.3f}x", worst <= limit))
    results.append((f"import gradlab < {IMPORT_LIMIT} s (fresh interpreter, median of 5): "
                    f"{import_time:.3f} s", import_time < IMPORT_LIMIT))
    results.append((f"import gradlab imports no framework: "
                    f"{'none imported' if not imported else ', '.join(imported)}", not imported))
    print()
    for text, passed in results:
        print(f"{'PASS' if passed else 'FAIL'}  {text}")
    print(f"\n({time.perf_counter() - started:.0f} s)")
    return 1 if args.strict and not all(p for _, p in results) else 0


if __name__ == "__main__":
    sys.exit(main())
