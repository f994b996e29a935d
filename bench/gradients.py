"""What gradlab's generated gradients cost next to hand-written and framework autodiff.

Not a test: a script that prints a table and one PASS/FAIL line per target. Every framework runs
on one thread, and each comparison is measured side by side in this one run (the statements of a
comparison interleaved, ``timeit.Timer.autorange`` to size a repeat, median of repeats), so the
ratios are fair on a shared, noisy machine. First calls (transform instantiation, JAX compile,
TF trace) are timed apart from the median.

Workloads (bench/_workloads.py):
    W1   np.sum(np.tanh(x) ** 2) on 10 elements                              (w.r.t. x)
    W2   784-256-10 tanh MLP, softmax cross-entropy, batch 64
         (gradlab.examples.mlp_loss)                           (w.r.t. all of W1, b1, W2, b2)
    W3   50-step h = tanh(W @ h + x_t) skipping every 5th step, hidden 64
         (gradlab.examples.rnn_loss)                                         (w.r.t. W)
    W4   logsumexp of a 1000x1000 array, the max-shifted formula with np.max  (w.r.t. x)
    W4b  the same with scipy.special.logsumexp                                (w.r.t. x)
    W5   damped spring, 200 Euler steps on Python floats                     (w.r.t. k)
    W6   a scalar state updated from u[t], 200 steps (issue 16)              (w.r.t. u)

Rows, in float64 and float32: gradlab on NumPy vs a hand-written analytic NumPy gradient (HIPS
autograd alongside); gradlab on torch tensors vs torch.autograd (eager); ``jax.jit(df)`` on JAX
arrays vs ``jax.jit(jax.grad(f))``; ``tf.function(df)`` vs ``tf.function`` with GradientTape;
W5's gradient over its forward function; ``gradlab.jvp`` vs the forward function on NumPy;
``jax.jit(gradlab.hvp(f))`` vs ``jax.jit(jax.jvp(jax.grad(f)))`` on W2; the transform time of a
~40-line function, cold and cached. Every result is checked against the hand-written gradient
before it is timed; a failure prints ``ERROR: <type>: <message>`` on its row, and the full
tracebacks come at the end.

Targets, judged on the float64 rows (W4's also apply to W4b; W5's inputs are Python floats, so
its torch/JAX/TF rows are n/a): NumPy vs hand-written <= 1.25x on W2 and W4, <= 1.5x on W3 and
W5, <= 2x on W1; torch vs torch.autograd faster on W1 and W3, <= 1.1x on W2 and W4; jax.jit and
tf.function <= 1.1x; W5 gradient/forward <= 3; transform cold <= 100 ms, cached <= 1 ms; jvp
<= 3x forward; hvp under jax.jit <= 1.5x. Issue 16: NumPy <= 1.5x hand-written and
gradient/forward <= 3 on W6, W6's generated code at most twice the hand-written gradient's lines,
and W3's bytes saved for the backward pass equal to the hand-written gradient's (its hidden
states); W6's torch/JAX/TF rows are shown without a target. Issue 19: where a gradient has code
specialised for its call's shapes (``dW = x.T @ dxW``), that code runs side by side with the same
gradient's generic code (``gl.matmul_grad_y``...) on the NumPy, torch, jax.jit and tf.function
rows, float64 and float32: specialised <= 1.05x generic (the column ``gl/generic``).

    python bench/gradients.py [--quick] [--strict] [--only W1,W3]

``--quick`` takes fewer, shorter repeats (about a minute instead of about four); ``--strict``
exits with status 1 when a target fails; ``--only`` runs some workloads.
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
import inspect  # noqa: E402
import platform  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import timeit  # noqa: E402
import traceback  # noqa: E402
import warnings  # noqa: E402
from dataclasses import dataclass, field  # noqa: E402
from importlib import metadata  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any, Callable  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import numpy as np  # noqa: E402

import _workloads as wl  # noqa: E402

# targets: gradlab / baseline, float64
NUMPY_LIMITS = {"W1": 2.0, "W2": 1.25, "W3": 1.5, "W4": 1.25, "W4b": 1.25, "W5": 1.5, "W6": 1.5}
TORCH_LIMITS = {"W1": 1.0, "W2": 1.1, "W3": 1.0, "W4": 1.1, "W4b": 1.1}   # 1.0: "faster"
JIT_LIMIT = TF_LIMIT = 1.1
W5_FORWARD_LIMIT = 3.0
W6_FORWARD_LIMIT, W6_LINES_LIMIT = 3.0, 2.0
COLD_LIMIT_S, CACHED_LIMIT_S = 0.100, 0.001
JVP_LIMIT, HVP_LIMIT = 3.0, 1.5
#: issue 19: the code specialised for a call's shapes vs the same gradient's generic code, side
#: by side ("at least as fast"; 5% is this machine's noise between two runs of one code)
SPECIALISED_LIMIT = 1.05
WORKLOADS = ("W1", "W2", "W3", "W4", "W4b", "W5", "W6")
#: the workloads judged on torch, jax.jit and tf.function (W6's rows there have no target)
FRAMEWORK_TARGETS = ("W1", "W2", "W3", "W4", "W4b", "W5")
#: figures that are not timings: W6's line counts, W3's bytes saved (see issue16_figures)
figures: dict[str, Any] = {}

failures: list[dict[str, Any]] = []     # {key, labels, traceback}, see record_failure


# --- the workloads -----------------------------------------------------------------------------
@dataclass
class Workload:
    name: str
    fn: Callable[..., Any]
    wrt: Any                      # an index or a tuple of indices
    hand: Callable[..., Any]
    make: Callable[[Any], tuple[Any, ...]]   # dtype -> the arguments (NumPy arrays or floats)
    floats: bool = False          # the arguments are Python floats

    @property
    def wrt_tuple(self) -> tuple[int, ...]:
        return self.wrt if isinstance(self.wrt, tuple) else (self.wrt,)


def workloads() -> dict[str, Workload]:
    def cast(arrays: tuple[Any, ...], dtype: Any) -> tuple[Any, ...]:
        return tuple(np.ascontiguousarray(a, dtype=dtype) for a in arrays)

    big = np.random.default_rng(4).normal(size=(1000, 1000)) * 3.0
    small = np.random.default_rng(3).normal(size=10)
    return {
        "W1": Workload("W1", wl.w1_tanh_sq, 0, wl.w1_hand, lambda dt: cast((small,), dt)),
        "W2": Workload("W2", wl.mlp_loss, (0, 1, 2, 3), wl.w2_hand,
                       lambda dt: cast(wl.make_mlp_inputs(), dt)),
        "W3": Workload("W3", wl.rnn_loss, 0, wl.w3_hand,
                       lambda dt: cast(wl.make_rnn_inputs(), dt)),
        "W4": Workload("W4", wl.w4_logsumexp, 0, wl.w4_hand, lambda dt: cast((big,), dt)),
        "W4b": Workload("W4b", wl.w4b_logsumexp, 0, wl.w4_hand, lambda dt: cast((big,), dt)),
        "W5": Workload("W5", wl.w5_spring, 0, wl.w5_hand, lambda dt: wl.W5_ARGS, floats=True),
        "W6": Workload("W6", wl.w6_cost, 0, wl.w6_hand,      # T0: a Python float
                       lambda dt: cast(wl.make_w6_inputs()[:1], dt) + wl.make_w6_inputs()[1:]),
    }


# --- frameworks, each on one thread --------------------------------------------------------------
class FW:
    torch: Any = None
    tf: Any = None
    jax: Any = None
    jnp: Any = None
    autograd: Any = None


def import_frameworks() -> None:
    import tensorflow as tf
    tf.config.threading.set_intra_op_parallelism_threads(1)
    tf.config.threading.set_inter_op_parallelism_threads(1)
    tf.get_logger().setLevel("ERROR")
    import torch
    torch.set_num_threads(1)
    try:
        torch.set_num_interop_threads(1)
    except RuntimeError:
        pass
    import jax
    import jax.numpy as jnp
    import autograd
    FW.tf, FW.torch, FW.jax, FW.jnp, FW.autograd = tf, torch, jax, jnp, autograd


def set_jax_x64(on: bool) -> None:
    FW.jax.config.update("jax_enable_x64", on)


def version(dist: str) -> str:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return "?"


def blas() -> str:
    try:
        info = np.__config__.CONFIG["Build Dependencies"]["blas"]  # type: ignore[attr-defined]
        return f"{info['name']} {info.get('version', '')}".strip()
    except Exception:
        return "?"


# --- results -------------------------------------------------------------------------------------
def to_numpy(value: Any) -> tuple[np.ndarray, ...]:
    """A gradient of any framework as a tuple of float64 NumPy arrays."""
    if isinstance(value, (tuple, list)):
        return tuple(x for v in value for x in to_numpy(v))
    if hasattr(value, "detach"):
        value = value.detach().cpu().numpy()
    elif hasattr(value, "numpy") and not isinstance(value, np.ndarray):
        value = value.numpy()
    return (np.asarray(value, dtype=np.float64),)


def close(got: Any, want: Any, rtol: float) -> tuple[bool, float]:
    """Max difference relative to the reference's largest magnitude, per array."""
    g, w = to_numpy(got), to_numpy(want)
    if len(g) != len(w):
        return False, float("inf")
    worst = 0.0
    for a, b in zip(g, w):
        if a.shape != b.shape:
            return False, float("inf")
        scale = max(float(np.max(np.abs(b))) if b.size else 0.0, 1e-300)
        worst = max(worst, float(np.max(np.abs(a - b))) / scale if a.size else 0.0)
    return worst <= rtol, worst


def tolerance(dtype: Any) -> float:
    return 1e-10 if dtype == np.float64 else 2e-4


def tolerance_backend(dtype: Any) -> float:
    """Other frameworks sum in other orders (and XLA fuses): a looser float64 bound."""
    return 1e-9 if dtype == np.float64 else 1e-3


def short(e: BaseException) -> str:
    """``Type: message`` on one line. TensorFlow puts the user-code frames first and the error
    last ("in user code: File ... TypeError: ..."): keep the last line there."""
    lines = [line.strip() for line in str(e).splitlines() if line.strip()]
    text = lines[-1] if len(lines) > 1 and lines[0].startswith("in user code") else " ".join(lines)
    prefix = f"{type(e).__name__}: "
    text = text[len(prefix):] if text.startswith(prefix) else text
    return f"{prefix}{text[:300]}{'...' if len(text) > 300 else ''}"


def record_failure(label: str) -> None:
    """Keep the current exception's traceback, grouped with earlier ones that failed in the same
    frames with the same kind of error (the same bug on several rows is printed once)."""
    kind, value, tb = sys.exc_info()
    frames = tuple((Path(f.filename).name if "__autograph_generated" not in f.filename
                    else "<autograph>", f.lineno if "__autograph_generated" not in f.filename
                    else 0, f.name) for f in traceback.extract_tb(tb)
                   if "/bench/" not in f.filename)
    key = (getattr(kind, "__name__", "?"), frames, "" if frames else str(value))
    for entry in failures:
        if entry["key"] == key:
            entry["labels"].append(label)
            return
    failures.append({"key": key, "labels": [label], "traceback": traceback.format_exc()})


@dataclass
class Stat:
    median: float | None = None
    first: float | None = None
    error: str | None = None


@dataclass
class Row:
    work: str
    dtype: str
    kind: str          # numpy | torch | jit | tf | tf-noag | w5fwd | jvp | hvp
    label: str
    gl: Stat
    base: Stat
    extra: dict[str, Stat] = field(default_factory=dict)
    na: str | None = None

    @property
    def ratio(self) -> float | None:
        if self.gl.median is None or self.base.median is None:
            return None
        return self.gl.median / self.base.median

    @property
    def error(self) -> str | None:
        return self.gl.error or self.base.error


class Bench:
    def __init__(self, repeats: int, target: float, per_statement: bool) -> None:
        self.repeats = repeats
        self.target = target
        self.per_statement = per_statement
        self.rows: list[Row] = []

    def compare(self, label: str, stmts: dict[str, Callable[[], Any]],
                checks: dict[str, Callable[[Any], None]]) -> dict[str, Stat]:
        """Time each zero-argument statement (each returns a ready result): the first call
        apart, then ``repeats`` interleaved repeats (a b c c b a a b c ...) of ``number`` calls,
        ``number`` sized by ``timeit.Timer.autorange`` so that one round of the group takes
        about ``target`` seconds. ``checks[name](result)`` raises AssertionError on a wrong
        result; a statement that fails is not timed."""
        stats = {name: Stat() for name in stmts}
        live = []
        for name, fn in stmts.items():
            try:
                start = time.perf_counter()
                result = fn()
                stats[name].first = time.perf_counter() - start
                if name in checks:
                    checks[name](result)
                fn()
                live.append(name)
            except Exception as e:
                stats[name].error = short(e)
                record_failure(f"{label} [{name}]")
        if not live:
            return stats
        try:
            timers = {n: timeit.Timer(stmts[n]) for n in live}
            share = self.target / len(live)
            if self.per_statement:   # each statement sized to its share of a repeat
                numbers = {}
                for n in live:
                    loops, total = timers[n].autorange()
                    numbers[n] = max(1, round(loops * share / max(total, 1e-9)))
            else:                    # --quick: one autorange for the group, a shared count
                loops, total = timeit.Timer(lambda: [stmts[n]() for n in live]).autorange()
                numbers = dict.fromkeys(live, max(1, round(loops * self.target / total)))
            samples: dict[str, list[float]] = {n: [] for n in live}
            for r in range(self.repeats):
                for n in (live if r % 2 == 0 else live[::-1]):
                    samples[n].append(timers[n].repeat(repeat=1, number=numbers[n])[0]
                                      / numbers[n])
            for n in live:
                stats[n].median = statistics.median(samples[n])
        except Exception as e:
            for n in live:
                stats[n].error = short(e)
            record_failure(f"{label} [timing]")
        return stats

    def row(self, work: str, dtype: str, kind: str, label: str,
            gl: tuple[str, Callable[[], Any]], base: tuple[str, Callable[[], Any]],
            checks: dict[str, Callable[[Any], None]],
            extra: dict[str, Callable[[], Any]] | None = None) -> Row:
        stmts = {gl[0]: gl[1], base[0]: base[1], **(extra or {})}
        stats = self.compare(f"{work} {dtype} {label}", stmts, checks)
        row = Row(work, dtype, kind, label, stats[gl[0]], stats[base[0]],
                  {k: stats[k] for k in (extra or {})})
        self.rows.append(row)
        print_row(row)
        return row

    def na(self, work: str, dtype: str, kind: str, label: str, why: str) -> None:
        row = Row(work, dtype, kind, label, Stat(), Stat(), na=why)
        self.rows.append(row)
        print_row(row)

    def get(self, work: str, dtype: str, kind: str) -> Row | None:
        for r in self.rows:
            if r.work == work and r.dtype == dtype and r.kind == kind:
                return r
        return None


# --- printing ------------------------------------------------------------------------------------
def us(seconds: float | None) -> str:
    if seconds is None:
        return "-"
    return f"{seconds * 1e6:.1f}" if seconds < 1e-2 else f"{seconds * 1e6:.0f}"


def ms(seconds: float | None) -> str:
    if seconds is None:
        return "-"
    return f"{seconds * 1e3:.2f}" if seconds < 1 else f"{seconds * 1e3:.0f}"


HEADER = (f"{'':<4} {'dtype':<8}{'gradlab vs baseline':<44}{'gradlab µs':>11}{'base µs':>11}"
          f"{'ratio':>8}{'1st gl ms':>11}{'1st base ms':>12}")


def print_row(r: Row) -> None:
    lead = f"{r.work:<4} {r.dtype:<8}{r.label:<44}"
    if r.na:
        print(f"{lead}n/a: {r.na}", flush=True)
        return
    if r.error:
        which = r.gl.error and "gradlab" or "baseline"
        print(f"{lead}ERROR: {r.gl.error or r.base.error}" +
              ("" if which == "gradlab" else "   (in the baseline)"), flush=True)
        if r.gl.error and r.base.median is not None:
            print(f"{'':<13}{'(baseline alone)':<44}{'':>11}{us(r.base.median):>11}{'':>8}"
                  f"{'':>11}{ms(r.base.first):>12}", flush=True)
        return
    ratio = f"{r.ratio:.2f}x" if r.ratio is not None else "-"
    line = (f"{lead}{us(r.gl.median):>11}{us(r.base.median):>11}{ratio:>8}"
            f"{ms(r.gl.first):>11}{ms(r.base.first):>12}")
    for name, s in r.extra.items():
        if s.error:
            line += f"   {name}: ERROR: {s.error}"
        elif s.median is not None and r.gl.median is not None:
            line += f"   {name} {us(s.median)} µs (gl/{name} {r.gl.median / s.median:.2f}x)"
    print(line, flush=True)


# --- the rows ------------------------------------------------------------------------------------
def code_lines(text: str) -> int:
    """Lines of code: no blank line, comment or docstring."""
    import ast
    tree = ast.parse(text)
    docstrings = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and ast.get_docstring(node) is not None:
            first = node.body[0]
            docstrings |= set(range(first.lineno, (first.end_lineno or first.lineno) + 1))
    return sum(1 for i, line in enumerate(text.splitlines(), start=1)
               if line.strip() and not line.strip().startswith("#") and i not in docstrings)


def issue16_figures(w: Workload, df: Any, args: tuple[Any, ...]) -> None:
    """W6: the generated gradient's lines next to the hand-written one's; W3: the bytes each
    keeps for its backward pass (gradlab's counted by ``df.saved_for``)."""
    try:
        if w.name == "W6":
            import textwrap
            generated = code_lines(df.variant_source(*args))
            hand = code_lines(textwrap.dedent(inspect.getsource(w.hand)))
            figures["W6 lines"] = (generated, hand)
            print(f"{'':<13}W6 code lines: generated {generated}, hand-written {hand} "
                  f"({generated / hand:.2f}x)", flush=True)
        if w.name in ("W3", "W6"):
            report = df.saved_for(*args)
            mine = report.total_bytes
            hand = wl.w3_hand_saved_bytes(*args) if w.name == "W3" else None
            if hand is not None:
                figures["W3 bytes"] = (mine, hand)
            print(f"{'':<13}{w.name} bytes saved for the backward pass: gradlab {mine}"
                  + (f", hand-written {hand} (the hidden states)" if hand is not None else "")
                  + f"; gradlab saves {', '.join(report.names) or 'nothing'}", flush=True)
    except Exception as e:
        record_failure(f"{w.name} figures")
        print(f"{'':<13}{w.name} figures: ERROR: {short(e)}", flush=True)


def checker(want: Any, rtol: float, what: str) -> Callable[[Any], None]:
    def check(got: Any) -> None:
        ok, err = close(got, want, rtol)
        assert ok, (f"{what} differs from the hand-written gradient: max relative difference "
                    f"{err:.3g} > {rtol:g}")
    return check


def generic_twin(df: Any, w: Workload) -> Any:
    """Issue 19's comparison: the same gradient held to its generic code (``gl.matmul_grad_*``,
    ``gl.unbroadcast`` deciding by shapes at run time), or None where ``df`` has no code
    specialised for shapes (then both are the same code). ``_specializes`` is the switch that
    ``GRADLAB_SPECIALISE=0`` turns off process-wide; here it is turned off for one function,
    so that both forms run side by side in one run."""
    import gradlab
    if not df._specializes:
        return None
    twin = gradlab.grad(w.fn, wrt=w.wrt)
    twin._specializes = False
    return twin


def beside(generic: Any, statement: Callable[[Any], Callable[[], Any]]
           ) -> dict[str, Callable[[], Any]]:
    """The generic code's statement, timed with the row's (an ``extra`` of it), if any."""
    return {} if generic is None else {"generic": statement(generic)}


def gradient_rows(bench: Bench, w: Workload, dtype: Any) -> None:
    import gradlab
    dname = np.dtype(dtype).name
    if w.floats and dtype != np.float64:
        bench.na(w.name, dname, "numpy", "all rows", "inputs are Python floats (float64 only)")
        return
    args = w.make(dtype)
    wrt = w.wrt_tuple
    try:
        df = gradlab.grad(w.fn, wrt=w.wrt)
    except Exception as e:
        record_failure(f"{w.name} gradlab.grad")
        print(f"{w.name:<4} {dname:<8}{'gradlab.grad(...)':<44}ERROR: {short(e)}", flush=True)
        return
    want = w.hand(*args)
    tol, tolb = tolerance(dtype), tolerance_backend(dtype)
    generic = generic_twin(df, w)

    # NumPy (or Python floats): gradlab vs hand-written, HIPS autograd alongside
    ag = wl.autograd_versions()[w.name]
    ag_grad = FW.autograd.grad(ag, w.wrt)
    label = ("floats: gradlab vs hand-written" if w.floats else "numpy: gradlab vs hand-written")
    bench.row(w.name, dname, "numpy", label,
              ("gradlab", lambda: df(*args)), ("hand", lambda: w.hand(*args)),
              {"gradlab": checker(want, tol, "gradlab (NumPy)"),
               "autograd": checker(want, tolb, "HIPS autograd"),
               "generic": checker(want, tol, "gradlab's generic code (NumPy)")},
              extra={"autograd": lambda: ag_grad(*args),
                     **beside(generic, lambda g: lambda: g(*args))})
    if w.name == "W6" and dtype == np.float64:
        bench.row(w.name, dname, "w6fwd", "numpy: gradient vs forward f",
                  ("gradlab", lambda: df(*args)), ("forward", lambda: w.fn(*args)), {})
    if dtype == np.float64:
        issue16_figures(w, df, args)

    if w.floats:
        bench.row(w.name, dname, "w5fwd", "floats: gradient vs forward f",
                  ("gradlab", lambda: df(*args)), ("forward", lambda: w.fn(*args)), {})
        for kind, label in (("torch", "torch: gradlab vs torch.autograd"),
                            ("jit", "jax.jit(df) vs jax.jit(jax.grad)"),
                            ("tf", "tf.function(df) vs tf.function+tape")):
            bench.na(w.name, dname, kind, label, "inputs are Python floats: no tensors to run on")
        return

    # PyTorch eager: gradlab on tensors vs torch.autograd
    torch = FW.torch
    t_args = tuple(torch.from_numpy(a.copy()) if isinstance(a, np.ndarray) else a for a in args)
    t_leaf = tuple(torch.from_numpy(a.copy()).requires_grad_(i in wrt)
                   if isinstance(a, np.ndarray) else a for i, a in enumerate(args))
    t_fn = wl.torch_versions()[w.name]
    t_params = [t_leaf[i] for i in wrt]

    def torch_autograd() -> Any:
        return torch.autograd.grad(t_fn(*t_leaf), t_params)
    bench.row(w.name, dname, "torch", "torch: gradlab vs torch.autograd",
              ("gradlab", lambda: df(*t_args)), ("torch.autograd", torch_autograd),
              {"gradlab": checker(want, tolb, "gradlab (torch)"),
               "torch.autograd": checker(want, tolb, "torch.autograd"),
               "generic": checker(want, tolb, "gradlab's generic code (torch)")},
              extra=beside(generic, lambda g: lambda: g(*t_args)))

    # JAX: jax.jit of the generated function vs jax.jit(jax.grad(f))
    jax, jnp = FW.jax, FW.jnp
    j_args = tuple(jnp.asarray(a) if isinstance(a, np.ndarray) else a for a in args)
    j_gl = jax.jit(df)
    j_base = jax.jit(jax.grad(wl.jax_versions()[w.name], argnums=w.wrt))
    bench.row(w.name, dname, "jit", "jax.jit(df) vs jax.jit(jax.grad)",
              ("gradlab", lambda: jax.block_until_ready(j_gl(*j_args))),
              ("jax", lambda: jax.block_until_ready(j_base(*j_args))),
              {"gradlab": checker(want, tolb, "jax.jit(gradlab)"),
               "jax": checker(want, tolb, "jax.jit(jax.grad)"),
               "generic": checker(want, tolb, "jax.jit(gradlab's generic code)")},
              extra=beside(generic, lambda g: (lambda j: lambda: jax.block_until_ready(
                  j(*j_args)))(jax.jit(g))))

    # TensorFlow: tf.function of the generated function vs tf.function with a GradientTape
    tf = FW.tf
    tf_args = tuple(tf.constant(a) if isinstance(a, np.ndarray) else a for a in args)
    tf_fn = wl.tf_versions()[w.name]

    def taped(*xs: Any) -> Any:
        watched = [xs[i] for i in wrt]
        with tf.GradientTape() as tape:
            tape.watch(watched)
            y = tf_fn(*xs)
        return tape.gradient(y, watched)
    tf_base = tf.function(taped)
    tf_gl = tf.function(df)
    row = bench.row(w.name, dname, "tf", "tf.function(df) vs tf.function+tape",
                    ("gradlab", lambda: tf_gl(*tf_args)), ("tape", lambda: tf_base(*tf_args)),
                    {"gradlab": checker(want, tolb, "tf.function(gradlab)"),
                     "tape": checker(want, tolb, "tf.function+GradientTape"),
                     "generic": checker(want, tolb, "tf.function(gradlab's generic code)")},
                    extra=beside(generic, lambda g: (lambda f: lambda: f(*tf_args))(
                        tf.function(g))))
    if row.gl.error:   # show what it would cost without AutoGraph (not a target row)
        tf_gl_noag = tf.function(df, autograph=False)
        bench.row(w.name, dname, "tf-noag", "  (info) tf.function(df, autograph=False)",
                  ("gradlab", lambda: tf_gl_noag(*tf_args)),
                  ("tape", lambda: tf_base(*tf_args)),
                  {"gradlab": checker(want, tolb, "tf.function(gradlab, autograph=False)")})


def jvp_row(bench: Bench, w: Workload, dtype: Any) -> None:
    import gradlab
    dname = np.dtype(dtype).name
    if w.floats and dtype != np.float64:
        bench.na(w.name, dname, "jvp", "jvp: gradlab.jvp vs forward f",
                 "inputs are Python floats (float64 only)")
        return
    args = w.make(dtype)
    rng = np.random.default_rng(7)
    if w.floats:
        tangents: tuple[Any, ...] = (1.0,)
    else:
        tangents = tuple(rng.normal(size=np.shape(args[i])).astype(dtype) for i in w.wrt_tuple)
    tangent = tangents if isinstance(w.wrt, tuple) else tangents[0]
    hand = to_numpy(w.hand(*args))
    want_dd = sum(float(np.sum(g * np.asarray(t, dtype=np.float64)))
                  for g, t in zip(hand, tangents))
    want_value = float(w.fn(*args))
    rtol = tolerance_backend(dtype) * (10 if dtype != np.float64 else 1)
    try:
        jv = gradlab.jvp(w.fn, w.wrt)
    except Exception as e:
        record_failure(f"{w.name} {dname} gradlab.jvp")
        print(f"{w.name:<4} {dname:<8}{'gradlab.jvp(...)':<44}ERROR: {short(e)}", flush=True)
        return

    def check(result: Any) -> None:
        value, dd = result
        scale = max(abs(want_dd), 1e-300)
        assert abs(float(dd) - want_dd) <= rtol * scale + 1e-12, (
            f"jvp directional derivative {float(dd)!r} != <hand-written gradient, tangent> "
            f"{want_dd!r}")
        assert abs(float(value) - want_value) <= rtol * max(abs(want_value), 1e-300), (
            f"jvp value {float(value)!r} != f(...) {want_value!r}")
    bench.row(w.name, dname, "jvp", "jvp: gradlab.jvp vs forward f",
              ("gradlab", lambda: jv(*args, tangent)), ("forward", lambda: w.fn(*args)),
              {"gradlab": check})


def hvp_row(bench: Bench, w: Workload, dtype: Any) -> None:
    import gradlab
    jax, jnp = FW.jax, FW.jnp
    dname = np.dtype(dtype).name
    args = w.make(dtype)
    rng = np.random.default_rng(8)
    j_args = tuple(jnp.asarray(a) for a in args)
    v = tuple(jnp.asarray(rng.normal(size=args[i].shape).astype(dtype)) for i in w.wrt_tuple)
    n = len(w.wrt_tuple)
    grad_f = jax.grad(wl.jax_versions()[w.name], argnums=w.wrt)

    def jax_hvp(*xs: Any) -> Any:
        *primals, vs = xs
        params, rest = tuple(primals[:n]), tuple(primals[n:])
        return jax.jvp(lambda *p: grad_f(*p, *rest), params, tuple(vs))[1]
    j_base = jax.jit(jax_hvp)
    try:
        h = gradlab.hvp(w.fn, w.wrt)
        j_gl = jax.jit(h)
    except Exception as e:
        record_failure(f"{w.name} {dname} gradlab.hvp")
        print(f"{w.name:<4} {dname:<8}{'gradlab.hvp(...)':<44}ERROR: {short(e)}", flush=True)
        return
    want = jax.block_until_ready(jax_hvp(*j_args, v))   # eager: both first calls stay cold
    bench.row(w.name, dname, "hvp", "hvp: jax.jit(gradlab.hvp) vs jax.jvp(grad)",
              ("gradlab", lambda: jax.block_until_ready(j_gl(*j_args, v))),
              ("jax", lambda: jax.block_until_ready(j_base(*j_args, v))),
              {"gradlab": checker(want, tolerance_backend(dtype) * 10, "jax.jit(gradlab.hvp)")})


def transform_section(bench: Bench, repeats: int) -> dict[str, float | None]:
    """Cold: ``gradlab.grad(f)`` with ``gradlab.api._cache`` cleared (gradlab.codegen already
    imported); cached: the same call again."""
    import gradlab
    import gradlab.api
    f = wl.transform_subject
    lines = sum(len(inspect.getsourcelines(g)[0])
                for g in (f, wl._softplus, wl._normalize))
    body = len(inspect.getsourcelines(f)[0])
    out: dict[str, float | None] = {"cold": None, "cached": None}
    print(f"transform_subject: {body} lines + 2 helpers ({lines} lines in all): loops, while, "
          f"break, branches, early return, list append, helper calls")
    try:
        gradlab.api._cache.clear()
        start = time.perf_counter()
        gradlab.grad(f, wrt=0)
        very_first = time.perf_counter() - start
        cold = []
        for _ in range(repeats):
            gradlab.api._cache.clear()
            start = time.perf_counter()
            gradlab.grad(f, wrt=0)
            cold.append(time.perf_counter() - start)
        timer = timeit.Timer(lambda: gradlab.grad(f, wrt=0))
        number, total = timer.autorange()
        number = max(1, round(number * 0.05 / max(total, 1e-9)))
        cached = statistics.median(t / number for t in timer.repeat(repeats, number))
        out["cold"], out["cached"] = statistics.median(cold), cached
        print(f"  cold   (api._cache cleared): median {ms(out['cold'])} ms, min "
              f"{ms(min(cold))} ms over {repeats}; first in this process {ms(very_first)} ms")
        print(f"  cached (the same call again): median {cached * 1e6:.1f} µs")
    except Exception as e:
        record_failure("transform_subject gradlab.grad")
        print(f"  ERROR: {short(e)}")
        return out

    # Not targets, but a benchmark should not time wrong code: run what was generated.
    inputs = wl.make_transform_inputs()
    try:
        start = time.perf_counter()
        gradlab.grad(f, wrt=0)(*inputs)
        print(f"  check: the gradient w.r.t. params (a list of arrays) runs, first call "
              f"{ms(time.perf_counter() - start)} ms")
    except Exception as e:
        record_failure("transform_subject: gradient w.r.t. params, first call")
        print(f"  check: the gradient w.r.t. params (a list of arrays): ERROR: {short(e)}")
    try:
        got = gradlab.grad(f, wrt=1)(*inputs)
        want = FW.autograd.grad(wl.autograd_transform_subject(), 1)(*inputs)
        ok, err = close(got, want, 1e-9)
        assert ok, (f"gradlab's gradient w.r.t. X differs from HIPS autograd's: max relative "
                    f"difference {err:.3g}")
        print("  check: the gradient w.r.t. X matches HIPS autograd")
    except Exception as e:
        record_failure("transform_subject: gradient w.r.t. X vs HIPS autograd")
        print(f"  check: the gradient w.r.t. X vs HIPS autograd: ERROR: {short(e)}")
    return out


def verify_hand_written(ws: dict[str, Workload]) -> None:
    """The baselines must be right before anything is timed: each hand-written gradient equals
    HIPS autograd's in float64 (gradlab's is compared on its own row, where a mismatch is an
    ERROR of that row rather than the end of the run)."""
    ag = wl.autograd_versions()
    for name, w in ws.items():
        args = w.make(np.float64)
        ok, err = close(w.hand(*args), FW.autograd.grad(ag[name], w.wrt)(*args), 1e-10)
        assert ok, f"hand-written gradient of {name} is wrong: {err:.3g} from HIPS autograd"


# --- targets -------------------------------------------------------------------------------------
def targets(bench: Bench, transform: dict[str, float | None]) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []

    def judge(text: str, row: Row | None, limit: float, strict: bool = False) -> None:
        if row is None:
            out.append(("----", f"{text}: not measured in this run (--only)"))
        elif row.na:
            out.append(("n/a ", f"{text}: {row.na}"))
        elif row.error or row.ratio is None:
            out.append(("FAIL", f"{text}: ERROR: {row.error}"))
        else:
            ok = row.ratio < limit if strict else row.ratio <= limit
            out.append(("PASS" if ok else "FAIL", f"{text}: {row.ratio:.2f}x"))

    d = "float64"
    for work, limit in NUMPY_LIMITS.items():
        judge(f"NumPy backend <= {limit}x hand-written on {work}", bench.get(work, d, "numpy"),
              limit)
    for work in FRAMEWORK_TARGETS:
        if work == "W5":
            out.append(("n/a ", "torch backend faster than torch.autograd on W5: inputs are "
                                "Python floats, no tensors"))
            continue
        limit = TORCH_LIMITS[work]
        text = (f"torch backend faster than torch.autograd on {work}" if limit == 1.0 else
                f"torch backend <= {limit}x torch.autograd on {work}")
        judge(text, bench.get(work, d, "torch"), limit, strict=limit == 1.0)
    for work in FRAMEWORK_TARGETS:
        judge(f"jax.jit(df) <= {JIT_LIMIT}x jax.jit(jax.grad) on {work}",
              bench.get(work, d, "jit"), JIT_LIMIT)
    for work in FRAMEWORK_TARGETS:
        judge(f"tf.function(df) <= {TF_LIMIT}x tf.function+GradientTape on {work}",
              bench.get(work, d, "tf"), TF_LIMIT)
    judge(f"W5 gradient / forward <= {W5_FORWARD_LIMIT}", bench.get("W5", d, "w5fwd"),
          W5_FORWARD_LIMIT)
    judge(f"W6 gradient / forward <= {W6_FORWARD_LIMIT}", bench.get("W6", d, "w6fwd"),
          W6_FORWARD_LIMIT)
    if "W6 lines" in figures:
        generated, hand = figures["W6 lines"]
        out.append(("PASS" if generated <= W6_LINES_LIMIT * hand else "FAIL",
                    f"W6 generated code <= {W6_LINES_LIMIT:g}x the hand-written gradient's "
                    f"lines: {generated} vs {hand} ({generated / hand:.2f}x)"))
    else:
        out.append(("----", "W6 generated code lines: not measured in this run (--only)"))
    if "W3 bytes" in figures:
        mine, hand = figures["W3 bytes"]
        out.append(("PASS" if mine is not None and mine <= hand else "FAIL",
                    f"W3 bytes saved for the backward pass == hand-written's: {mine} vs {hand}"))
    else:
        out.append(("----", "W3 bytes saved: not measured in this run (--only)"))
    cold, cached = transform["cold"], transform["cached"]
    out.append(("FAIL" if cold is None or cold > COLD_LIMIT_S else "PASS",
                f"transform of a ~40-line function, cold <= {COLD_LIMIT_S * 1e3:.0f} ms: "
                + (f"{cold * 1e3:.1f} ms" if cold is not None else "ERROR")))
    out.append(("FAIL" if cached is None or cached > CACHED_LIMIT_S else "PASS",
                f"transform, cached <= {CACHED_LIMIT_S * 1e3:.0f} ms: "
                + (f"{cached * 1e3:.3f} ms" if cached is not None else "ERROR")))
    for work in WORKLOADS:
        judge(f"jvp <= {JVP_LIMIT}x forward on {work} (NumPy)", bench.get(work, d, "jvp"),
              JVP_LIMIT)
    judge(f"hvp under jax.jit <= {HVP_LIMIT}x jax.jit(jax.jvp(jax.grad)) on W2",
          bench.get("W2", d, "hvp"), HVP_LIMIT)
    out.extend(specialised_targets(bench))
    return out


def specialised_targets(bench: Bench) -> list[tuple[str, str]]:
    """Issue 19: on every row where a gradient has code specialised for its shapes, that code
    runs at least as fast as its generic code, side by side (within the noise margin
    SPECIALISED_LIMIT). Judged on float64 and float32 alike; rows without specialised code
    are counted, not judged (both forms are one code there)."""
    out: list[tuple[str, str]] = []
    same = []
    for row in bench.rows:
        if row.kind not in ("numpy", "torch", "jit", "tf") or row.na or row.error:
            continue
        generic = row.extra.get("generic")
        if generic is None:
            same.append(f"{row.work} {row.kind}")
            continue
        text = f"specialised <= {SPECIALISED_LIMIT}x generic code on {row.work} {row.dtype} " \
               f"{row.label.split(':')[0].split(' vs ')[0]}"
        if generic.error or generic.median is None or row.gl.median is None:
            out.append(("FAIL", f"{text}: ERROR: {generic.error}"))
            continue
        ratio = row.gl.median / generic.median
        out.append(("PASS" if ratio <= SPECIALISED_LIMIT else "FAIL", f"{text}: {ratio:.2f}x"))
    if same:
        out.append(("n/a ", f"specialised vs generic: one code (nothing to specialise) on "
                            f"{len(same)} rows ({', '.join(sorted(set(same)))})"))
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer, shorter repeats")
    parser.add_argument("--strict", action="store_true", help="exit 1 when a target fails")
    parser.add_argument("--only", default=",".join(WORKLOADS),
                        help="comma-separated workloads (default: all)")
    args = parser.parse_args()
    repeats, target = (3, 0.015) if args.quick else (21, 0.08)
    started = time.perf_counter()
    warnings.filterwarnings("ignore", category=DeprecationWarning)

    print("gradlab gradients vs hand-written and framework autodiff (median of interleaved "
          "repeats, one thread)")
    print(f"python {platform.python_version()} on {platform.machine()}, {os.cpu_count()} CPUs; "
          f"OMP/MKL/OPENBLAS_NUM_THREADS=1; XLA_FLAGS={os.environ['XLA_FLAGS']!r}")
    coretype = os.environ.get("OPENBLAS_CORETYPE")
    print(f"OPENBLAS_CORETYPE={coretype}" if coretype else "OPENBLAS_CORETYPE is not set")
    import_frameworks()
    print(f"numpy {np.__version__} ({blas()}), scipy {version('scipy')}, torch "
          f"{FW.torch.__version__} ({FW.torch.get_num_threads()} thread), tensorflow "
          f"{FW.tf.__version__}, jax {FW.jax.__version__}, jaxlib {version('jaxlib')}, "
          f"autograd {version('autograd')}")
    print(f"{'quick: ' if args.quick else ''}{repeats} interleaved repeats per comparison, "
          f"~{target * 1e3:.0f} ms per round; loops per repeat from timeit.Timer.autorange "
          f"{'of the whole group' if args.quick else 'of each statement'}")
    print("W2 is differentiated w.r.t. all of W1, b1, W2, b2; W3 w.r.t. W; W4 is the "
          "max-shifted formula with np.max, W4b scipy.special.logsumexp; W5 w.r.t. k.")
    print("Every result is checked against the hand-written gradient (float64: 1e-10 relative "
          "for NumPy, 1e-9 elsewhere; float32: 2e-4 / 1e-3) before it is timed.")
    print("JAX: jax_enable_x64 on for the float64 rows, off for the float32 rows.")

    import gradlab
    print(f"gradlab {gradlab.__version__} from {Path(gradlab.__file__).parent}")
    ws = workloads()
    verify_hand_written(ws)
    print("hand-written gradients: equal to HIPS autograd's to 1e-10 (float64), all workloads")

    bench = Bench(repeats, target, per_statement=not args.quick)
    print("\n== transform time ==")
    gradlab.grad(wl.w1_tanh_sq)    # import gradlab.codegen before timing anything cold
    transform = transform_section(bench, max(5, repeats))

    chosen = [w for w in args.only.split(",") if w]
    for dtype in (np.float64, np.float32):
        set_jax_x64(dtype == np.float64)
        print(f"\n== {np.dtype(dtype).name} ==")
        print(HEADER)
        print("-" * len(HEADER))
        for name in chosen:
            gradient_rows(bench, ws[name], dtype)
        for name in chosen:
            jvp_row(bench, ws[name], dtype)
        if "W2" in chosen:
            hvp_row(bench, ws["W2"], dtype)
    set_jax_x64(True)

    print("\nratio = gradlab / baseline (lower is better); '1st' = the first call of that "
          "statement in this run\n(transform instantiation, JAX trace+compile, TF trace), "
          "not included in the medians.")
    results = targets(bench, transform)
    print()
    for verdict, text in results:
        print(f"{verdict}  {text}")
    if failures:
        count = sum(len(f["labels"]) for f in failures)
        print(f"\n== {count} failure(s), {len(failures)} distinct: full tracebacks ==")
        for f in failures:
            print(f"\n--- {f['labels'][0]}")
            if len(f["labels"]) > 1:
                print(f"    (the same failure, same frames, also in: {'; '.join(f['labels'][1:])})")
            print(f["traceback"].rstrip())
    print(f"\n({time.perf_counter() - started:.0f} s)")
    failed = any(v == "FAIL" for v, _ in results)
    return 1 if args.strict and failed else 0


if __name__ == "__main__":
    sys.exit(main())
