"""Issue 17's bench row: a small torch MLP's loss differentiated through gradlab, the model
an opaque call (``nn.Sequential``, differentiated by torch's autograd as one line of the
generated code) and the loss the user's own code (differentiated by gradlab), against
``loss.backward()``.

Not a test: a script that prints the timings and one PASS/FAIL line. One thread; the two
statements interleaved, ``timeit.Timer.autorange`` to size a repeat, the median of the repeats
(the way bench/gradients.py measures). Both gradients are checked to 1e-10 first.

    python bench/real_models.py [--quick]
"""
from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("MKL_NUM_THREADS", "1")

import argparse  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import timeit  # noqa: E402
from pathlib import Path  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import torch  # noqa: E402

import gradlab  # noqa: E402

LIMIT = 1.2
torch.set_num_threads(1)
torch.manual_seed(0)
MODEL = torch.nn.Sequential(torch.nn.Linear(64, 128), torch.nn.Tanh(),
                            torch.nn.Linear(128, 10)).double()


def loss(x, y):
    logits = MODEL(x)
    m = torch.max(logits, dim=1, keepdim=True).values
    log_probs = logits - m - torch.log(torch.sum(torch.exp(logits - m), dim=1, keepdim=True))
    return -torch.mean(torch.sum(y * log_probs, dim=1))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer, shorter repeats")
    args = parser.parse_args()
    repeats, target = (5, 0.02) if args.quick else (21, 0.1)
    x = torch.randn(32, 64, dtype=torch.float64)
    y = torch.nn.functional.one_hot(torch.randint(0, 10, (32,)), 10).double()
    df = gradlab.grad(loss)

    def by_gradlab():
        return df(x, y)

    def by_backward():
        leaf = x.detach().requires_grad_()
        loss(leaf, y).backward()
        return leaf.grad

    difference = float((by_gradlab() - by_backward()).abs().max())
    scale = float(by_backward().abs().max())
    print(f"torch {torch.__version__}, 1 thread; MLP 64-128-10 (tanh), batch 32, float64; "
          f"gradient w.r.t. x")
    print(f"max |gradlab - loss.backward()| = {difference:.3g} (largest entry {scale:.3g})")
    if difference > 1e-10 * max(scale, 1.0):
        print("FAIL  the gradients differ")
        return 1
    print("the generated code:\n" + df.source_for(x, y))
    timers = {"gradlab": timeit.Timer(by_gradlab), "loss.backward()": timeit.Timer(by_backward)}
    numbers = {}
    for label, timer in timers.items():
        loops, total = timer.autorange()
        numbers[label] = max(1, round(loops * target / max(total, 1e-9)))
    samples: dict[str, list[float]] = {label: [] for label in timers}
    for r in range(repeats):
        for label in (list(timers) if r % 2 == 0 else list(timers)[::-1]):
            samples[label].append(timers[label].timeit(numbers[label]) / numbers[label])
    medians = {label: statistics.median(s) for label, s in samples.items()}
    for label, m in medians.items():
        print(f"{label:<18}{m * 1e6:10.1f} µs (median of {repeats})")
    ratio = medians["gradlab"] / medians["loss.backward()"]
    print(f"{'PASS' if ratio <= LIMIT else 'FAIL'}  gradlab <= {LIMIT}x loss.backward() on the "
          f"MLP with an opaque nn.Sequential: {ratio:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
