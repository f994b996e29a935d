"""Data-parallel training with a gradlab gradient on ``torch.distributed`` (issue 17, item 5).

Not a benchmark: a check that a generated gradient is an ordinary function of torch tensors,
so the usual data-parallel recipe applies to it unchanged. Two processes (gloo, CPU) each take
half of the batch, compute gradlab's gradient of the mean loss over their half, and average
it with ``all_reduce``. Because the halves are equal, that average *is* the gradient of the
mean loss over the whole batch: the script compares it with gradlab's single-process gradient
and with ``loss.backward()``, then runs a few SGD steps and checks that both processes hold
the same parameters, equal to single-process training on the whole batch. The same is done
for the network as a ``torch.nn.Sequential`` (``wrt="model"``: one opaque line of gradlab's
code, differentiated by torch's autograd).

    python bench/data_parallel_torch.py [--steps N] [--out DIR]

``--out DIR`` keeps what each process ends with (``rank0.pt``, ``rank1.pt``) and the problem
(``problem.pt``), for tests/test_data_parallel.py to check on its own. Prints one PASS/FAIL
line; exits 1 on FAIL.
"""
from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
from pathlib import Path  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402
import torch.multiprocessing as mp  # noqa: E402

import gradlab  # noqa: E402

WORLD = 2
BATCH, INPUTS, HIDDEN = 64, 8, 16
LEARNING_RATE = 0.1
TOLERANCE = 1e-12


def loss(params, x, y):
    """The user's model and loss, on torch tensors: a tanh MLP and the mean squared error."""
    h = torch.tanh(x @ params["W1"] + params["b1"])
    pred = h @ params["W2"] + params["b2"]
    return torch.mean((pred - y) ** 2)


def module_loss(model, x, y):
    """The same loss with the network a ``torch.nn.Module`` gradlab calls as one line."""
    pred = model(x)
    return torch.mean((pred - y) ** 2)


def network() -> torch.nn.Sequential:
    """The network as a module: the same in every process (seeded)."""
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(INPUTS, HIDDEN), torch.nn.Tanh(),
                               torch.nn.Linear(HIDDEN, 1)).double()


def problem() -> tuple[dict[str, torch.Tensor], torch.Tensor, torch.Tensor]:
    """The starting parameters and the whole batch, the same in every process (seeded)."""
    g = torch.Generator().manual_seed(0)
    params = {"W1": torch.randn(INPUTS, HIDDEN, generator=g, dtype=torch.float64) * 0.5,
              "b1": torch.zeros(HIDDEN, dtype=torch.float64),
              "W2": torch.randn(HIDDEN, 1, generator=g, dtype=torch.float64) * 0.5,
              "b2": torch.zeros(1, dtype=torch.float64)}
    x = torch.randn(BATCH, INPUTS, generator=g, dtype=torch.float64)
    y = torch.sin(x.sum(dim=1, keepdim=True))
    return params, x, y


def all_reduce_mean(grads: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """Every process's gradients averaged over the processes, as DDP does (summed in a copy:
    the all-reduce writes into its tensor, and a gradient may share memory with an input)."""
    averaged = {}
    for name, g in grads.items():
        total = g.clone()
        dist.all_reduce(total, op=dist.ReduceOp.SUM)
        averaged[name] = total / dist.get_world_size()
    return averaged


def sgd(params, grads):
    return {name: p - LEARNING_RATE * grads[name] for name, p in params.items()}


def worker(rank: int, init_file: str, out: str, steps: int) -> None:
    """One process: its half of the batch, the all-reduced gradient, ``steps`` SGD steps."""
    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method=f"file://{init_file}", rank=rank,
                            world_size=WORLD)
    params, x, y = problem()
    mine = slice(rank * BATCH // WORLD, (rank + 1) * BATCH // WORLD)
    dloss = gradlab.grad(loss, wrt="params")
    first = all_reduce_mean(dloss(params, x[mine], y[mine]))
    for _ in range(steps):
        params = sgd(params, all_reduce_mean(dloss(params, x[mine], y[mine])))
    dmodule = gradlab.grad(module_loss, wrt="model")
    of_module = all_reduce_mean(dmodule(network(), x[mine], y[mine]))
    torch.save({"grad": first, "params": params, "module_grad": of_module},
               Path(out) / f"rank{rank}.pt")
    dist.destroy_process_group()


def run(out: Path, steps: int) -> None:
    """Starts the ``WORLD`` processes and waits for them; their results land in ``out``."""
    torch.save(dict(zip(("params", "x", "y"), problem()), module=network().state_dict()),
               out / "problem.pt")
    with tempfile.TemporaryDirectory() as rendezvous:
        mp.spawn(worker, args=(str(Path(rendezvous) / "init"), str(out), steps),
                 nprocs=WORLD, join=True)


def largest_difference(a: dict[str, torch.Tensor], b: dict[str, torch.Tensor]) -> float:
    assert a.keys() == b.keys(), (sorted(a), sorted(b))
    return max(float((a[k] - b[k]).abs().max()) for k in a)


def by_backward(params, x, y) -> dict[str, torch.Tensor]:
    leaves = {name: p.detach().clone().requires_grad_() for name, p in params.items()}
    loss(leaves, x, y).backward()
    return {name: p.grad for name, p in leaves.items()}


def module_by_backward(x, y) -> dict[str, torch.Tensor]:
    net = network()
    module_loss(net, x, y).backward()
    return {name: p.grad for name, p in net.named_parameters()
            if p.grad is not None}


def report(out: Path, steps: int) -> bool:
    """Prints the comparisons; True when every one holds."""
    ranks = [torch.load(out / f"rank{r}.pt") for r in range(WORLD)]
    params, x, y = problem()
    dloss = gradlab.grad(loss, wrt="params")
    whole = dloss(params, x, y)
    single = params
    for _ in range(steps):
        single = sgd(single, dloss(single, x, y))
    figures = {
        "all-reduced gradient vs gradlab on the whole batch":
            max(largest_difference(r["grad"], whole) for r in ranks),
        "all-reduced gradient vs loss.backward() on the whole batch":
            max(largest_difference(r["grad"], by_backward(params, x, y)) for r in ranks),
        f"parameters after {steps} SGD steps, process 0 vs process 1":
            largest_difference(ranks[0]["params"], ranks[1]["params"]),
        f"parameters after {steps} SGD steps vs one process on the whole batch":
            max(largest_difference(r["params"], single) for r in ranks),
        "nn.Sequential (wrt='model'), all-reduced vs loss.backward() on the whole batch":
            max(largest_difference(r["module_grad"], module_by_backward(x, y)) for r in ranks),
    }
    print(f"torch {torch.__version__}, gloo, {WORLD} processes on the CPU; batch {BATCH} split "
          f"{BATCH // WORLD} + {BATCH // WORLD}; MLP {INPUTS}-{HIDDEN}-1 (tanh), float64")
    for label, value in figures.items():
        print(f"max |difference|, {label}: {value:.3g}")
    return all(value <= TOLERANCE for value in figures.values())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=3, help="SGD steps after the first gradient")
    parser.add_argument("--out", type=Path, default=None,
                        help="keep each process's results here (default: a temporary folder)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        out = args.out or Path(scratch)
        out.mkdir(parents=True, exist_ok=True)
        run(out, args.steps)
        passed = report(out, args.steps)
    print(f"{'PASS' if passed else 'FAIL'}  the all-reduced gradlab gradient is the whole "
          f"batch's gradient (to {TOLERANCE:g})")
    return 0 if passed else 1


if __name__ == "__main__":
    sys.exit(main())
