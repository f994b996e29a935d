"""``make demo``: differentiate a built-in example, print its backward code, run it on every
installed framework, and report per framework the device, the time and the gradient check."""
from __future__ import annotations

import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")


def _quietly_import_frameworks() -> None:
    """TensorFlow's C++ logging writes to the process's stderr before any setting applies;
    silence file descriptor 2 while it loads so the demo's output stays readable."""
    import importlib.util
    if importlib.util.find_spec("tensorflow") is None:
        return
    saved = os.dup(2)
    try:
        with open(os.devnull, "w") as devnull:
            os.dup2(devnull.fileno(), 2)
            import tensorflow  # noqa: F401
    finally:
        os.dup2(saved, 2)
        os.close(saved)


def main() -> int:
    import numpy as np
    _quietly_import_frameworks()

    import gradlab
    from gradlab import examples
    from gradlab.workbench.checking import finite_differences, to_float64_numpy
    from gradlab.workbench.display import highlight_terminal
    from gradlab.tensor import convert, installed_frameworks
    from gradlab.workbench.timing import measure

    print("gradlab demo: the gradient of a one-hidden-layer network's loss\n")
    df = gradlab.grad(examples.mlp_loss, wrt=("W1", "W2"))
    print(highlight_terminal(df.source))
    args = examples.make_mlp_inputs(batch=16, inputs=20, hidden=8, classes=4)
    reference = [finite_differences(examples.mlp_loss, list(args), i) for i in (0, 2)]
    print(f"{'framework':12s} {'device':28s} {'time':>34s}  check (max abs error vs finite "
          f"differences)")
    for fw in installed_frameworks():
        try:
            if fw == "jax":
                import jax
                jax.config.update("jax_enable_x64", True)
            inputs = tuple(convert(a, fw) for a in args)
            grads, timing = measure(df, inputs, repeats=20)
            errors = [float(np.nanmax(np.abs(to_float64_numpy(g) - r)))
                      for g, r in zip(grads, reference)]
            status = "ok" if max(errors) < 1e-6 else "MISMATCH"
            line = timing.line().split(" · ", 2)
            print(f"{fw:12s} {timing.device:28s} {' · '.join(line[2:]):>34s}  "
                  f"{max(errors):.1e} {status}")
        except Exception as e:  # one framework failing must not hide the others
            print(f"{fw:12s} failed: {type(e).__name__}: {e}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
