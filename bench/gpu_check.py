"""The GPU check: one short script for a machine with a CUDA GPU.

It runs a ``%%grad`` cell headless with ``--backend torch --device cuda`` and with
``--backend jax --device gpu``, checks that the device line names the GPU, and times the
generated gradient against ``torch.autograd`` and ``jax.jit(jax.grad)`` on W2 (784-256-10 MLP,
batch 64) and W4 (logsumexp over 1000x1000). Without a GPU it says so and exits 0.

    python bench/gpu_check.py          # on the GPU machine
    python bench/gpu_check.py --cpu    # the same steps on the CPU: keeps the script honest in CI
"""
from __future__ import annotations

import os
import statistics
import sys
import time
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def has_cuda() -> bool:
    try:
        import torch
    except ImportError:
        return False
    return bool(torch.cuda.is_available())


def median_ms(fn, *args, sync, repeats: int = 30) -> tuple[float, float]:
    start = time.perf_counter()
    sync(fn(*args))
    first = (time.perf_counter() - start) * 1e3
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        sync(fn(*args))
        times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times), first


def main(argv: list[str]) -> int:
    on_cpu = "--cpu" in argv
    if not on_cpu and not has_cuda():
        print("gpu_check: no CUDA GPU on this machine (torch.cuda.is_available() is False); "
              "nothing to check")
        return 0
    import numpy as np
    import torch
    from IPython.core.interactiveshell import InteractiveShell

    import gradlab
    from gradlab import examples

    failures = []
    name = "cpu" if on_cpu else torch.cuda.get_device_name(0)
    print(f"device: {name}")

    # --- the magic, headless, on torch/cuda and jax/gpu ------------------------------------------
    shell = InteractiveShell.instance()
    shell.run_line_magic("load_ext", "gradlab")
    shell.run_cell("from gradlab import examples\n"
                   "args = examples.make_mlp_inputs(dtype=__import__('numpy').float32)")
    shell.run_cell("import numpy as np")
    cell = ("def mlp_loss(W1, b1, W2, b2, X, Y):\n"
            "    h = np.tanh(X @ W1 + b1)\n"
            "    logits = h @ W2 + b2\n"
            "    m = np.max(logits, axis=1, keepdims=True)\n"
            "    log_probs = logits - m - np.log(np.sum(np.exp(logits - m), axis=1, "
            "keepdims=True))\n"
            "    return -np.mean(np.sum(Y * log_probs, axis=1))\n")
    for backend, device in (("torch", "cpu" if on_cpu else "cuda"),
                            ("jax", "cpu" if on_cpu else "gpu")):
        try:
            panel = shell.run_cell_magic(
                "grad", f'--backend {backend} --device {device} --run "args"', cell)
            line = panel.result_line
            print(f"%%grad --backend {backend} --device {device}: {line}")
            if panel.results[0].error or name not in line:
                failures.append(f"{backend}: device line does not name {name!r}: {line}")
        except Exception as e:  # report and go on to the next check
            failures.append(f"{backend}: {type(e).__name__}: {e}")
            print(f"%%grad --backend {backend} --device {device}: FAILED {e}")

    # --- timings: generated gradient vs the frameworks' own autodiff ---------------------------
    def w4(x):
        m = np.max(x)
        return np.log(np.sum(np.exp(x - m))) + m

    cuda = torch.device("cpu" if on_cpu else "cuda")
    sync_t = (lambda out: None) if on_cpu else (lambda out: torch.cuda.synchronize())  # noqa
    w2_args = [torch.as_tensor(a, device=cuda) for a in examples.make_mlp_inputs(
        dtype=np.float32)]
    x4 = torch.randn(1000, 1000, device=cuda)

    def torch_mlp(W1, b1, W2, b2, X, Y):
        h = torch.tanh(X @ W1 + b1)
        logits = h @ W2 + b2
        return -torch.mean(torch.sum(Y * torch.log_softmax(logits, dim=1), dim=1))

    def autograd_w2(*a):
        a = [t.detach().requires_grad_(i == 0) for i, t in enumerate(a)]
        return torch.autograd.grad(torch_mlp(*a), a[0])[0]

    def autograd_w4(x):
        x = x.detach().requires_grad_(True)
        m = torch.max(x)
        return torch.autograd.grad(torch.log(torch.sum(torch.exp(x - m))) + m, x)[0]

    rows = []
    dw2 = gradlab.grad(examples.mlp_loss)
    dw4 = gradlab.grad(w4)
    for label, ours, theirs, args in (("W2 torch", dw2, autograd_w2, w2_args),
                                      ("W4 torch", dw4, autograd_w4, [x4])):
        a, fa = median_ms(ours, *args, sync=sync_t)
        b, fb = median_ms(theirs, *args, sync=sync_t)
        rows.append((label, a, b, fa, fb))
    try:
        import jax
        import jax.numpy as jnp
        gpu = jax.devices("cpu" if on_cpu else "gpu")[0]
        sync_j = lambda out: jax.block_until_ready(out)  # noqa: E731
        j2 = [jax.device_put(jnp.asarray(a), gpu) for a in examples.make_mlp_inputs(
            dtype=np.float32)]
        j4 = jax.device_put(jnp.asarray(np.random.default_rng(0).normal(
            size=(1000, 1000)).astype(np.float32)), gpu)

        def jax_mlp(W1, b1, W2, b2, X, Y):
            h = jnp.tanh(X @ W1 + b1)
            logits = h @ W2 + b2
            return -jnp.mean(jnp.sum(Y * jax.nn.log_softmax(logits, axis=1), axis=1))

        def jax_w4(x):
            m = jnp.max(x)
            return jnp.log(jnp.sum(jnp.exp(x - m))) + m

        for label, ours, theirs, args in (
                ("W2 jax.jit", jax.jit(dw2), jax.jit(jax.grad(jax_mlp)), j2),
                ("W4 jax.jit", jax.jit(dw4), jax.jit(jax.grad(jax_w4)), [j4])):
            a, fa = median_ms(ours, *args, sync=sync_j)
            b, fb = median_ms(theirs, *args, sync=sync_j)
            rows.append((label, a, b, fa, fb))
    except Exception as e:  # jax without a GPU plugin: say so
        failures.append(f"jax timings: {type(e).__name__}: {e}")
    print(f"\n{'workload':12s} {'gradlab ms':>11s} {'framework ms':>13s} {'ratio':>7s}  "
          f"first calls (ms)")
    for label, a, b, fa, fb in rows:
        print(f"{label:12s} {a:11.3f} {b:13.3f} {a / b:7.2f}  {fa:.0f} / {fb:.0f}")
    if failures:
        print("\nFAILED:\n  " + "\n  ".join(failures))
        return 1
    print(f"\nPASS: the device line names {name} on torch and jax")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
