"""Everything the notebook panel does, without the notebook: build the generated code for a
function, keep an edited version, run either on a chosen backend and device, time it, check it.

:class:`GradSession` knows nothing of IPython or widgets; the panel in
:mod:`gradlab.kernel_ext.panel` is a view of one, and ``gradlab.show(df)`` makes one from plain
Python. Every failure is caught and kept as a message on the session (``.error``), so a bad
edit or a missing framework never raises into the notebook.
"""
from __future__ import annotations

import traceback
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from ..errors import GradlabError
from ..codegen.opaque import model_framework
from ..pytrees import has_containers
from ..tensor import available_devices, convert, frameworks, installed_frameworks
from ..tensor.detect import common_framework
from ..tensor.registry import get as get_backend
from .health import is_parameter_tree, named_leaves, parameter_norms
from .leafcalls import leaf_call, tree_map
from .timing import Timing, format_ms, measure


@dataclass
class RunResult:
    framework: str
    device: str
    timing: Timing | None
    value: Any = None
    gradients: Any = None
    error: str = ""
    check: Any = None
    diagnosis: str = ""      # where a NaN/Inf first appeared, when the gradient has one
    note: str = ""           # what the numbers shown are, when it is not the plain gradient
    #: a gradient whose shape is not its parameter's, in words (an edit returning ``dW.T``)
    shape_problems: list[str] = field(default_factory=list)
    #: with ``'all'``: the largest difference from the first framework's gradient
    difference: float | None = None
    names: tuple[str, ...] = ()   # the gradients' names (dW, db...)
    #: what each gradient is taken with respect to, where a model (a Keras model names the
    #: entries of its gradient's list)
    models: tuple[Any, ...] = ()

    @property
    def ok(self) -> bool:
        """Ran, finite, shaped like its parameters, and checked fine when checked."""
        return not (self.error or self.diagnosis or self.shape_problems) and (
            self.check is None or self.check.ok)

    @property
    def line(self) -> str:
        if self.error:
            return f"{self.framework} · {self.device} · error: {self.error}"
        return self.timing.line() if self.timing else f"{self.framework} · {self.device}"

    def summary(self) -> str:
        """The value, each gradient's shape and a preview."""
        if self.error:
            return self.line
        return "\n".join(self.value_lines() + self.warnings() + [self.line])

    def value_lines(self) -> list[str]:
        """The value and each gradient: shape, dtype and its first entries."""
        parts = [f"value {_preview(self.value)}"] if self.value is not None else []
        grads = self.gradients if isinstance(self.gradients, tuple) else (self.gradients,)
        names = self.names if len(self.names) == len(grads) else ("",) * len(grads)
        models = self.models if len(self.models) == len(grads) else (None,) * len(grads)
        for name, g, model in zip(names, grads, models):
            if _per_parameter(g):
                parts.extend(_parameter_lines(name, g, model))
                continue
            dtype = getattr(g, "dtype", type(g).__name__)
            dtype = str(dtype).replace("torch.", "").replace("<dtype: '", "").rstrip("'>")
            label = f"gradient {name} " if name else "gradient "
            parts.append(f"{label}shape {tuple(np.shape(_numpy(g)))} {dtype} {_preview(g)}")
        return parts

    def warnings(self) -> list[str]:
        """What is wrong with the numbers shown (in red in the panel), then notes."""
        parts = list(self.shape_problems)
        if self.diagnosis:
            parts.append(self.diagnosis)
        if self.note:
            parts.append(f"note: {self.note}")
        return parts


def _per_parameter(g: Any) -> bool:
    """A gradient shown one line per parameter: a model's (a dict keyed like
    ``named_parameters()``, Keras's list of its variables' gradients), a ``params`` dict's."""
    if is_parameter_tree(g):
        return True
    return isinstance(g, (list, tuple)) and len({tuple(getattr(x, "shape", ())) for x in g}) > 1


def _parameter_lines(name: str, g: Any, model: Any = None) -> list[str]:
    """A gradient with respect to parameters as a table: each parameter's shape and the norm
    of its gradient (which layer's gradient vanishes or explodes, what clipping would cut)."""
    norms = parameter_norms(g, model)
    shapes = dict(zip(norms, (tuple(np.shape(_numpy(leaf))) for _, leaf in named_leaves(g))))
    width = max((len(n) for n in norms), default=0)
    lines = [f"gradient {name} by parameter ({len(norms)}): shape, norm".replace("  ", " ")]
    for n, norm in norms.items():
        flag = "  NaN/Inf!" if not np.isfinite(norm) else ""
        lines.append(f"  {n:{width}s}  {str(shapes.get(n, '')):12s} |·|={norm:.4g}{flag}")
    return lines


def _numpy(x: Any) -> Any:
    from ..tensor.convert import to_float64_numpy
    try:
        return to_float64_numpy(x)
    except Exception:
        return np.asarray(x, dtype=object)


def _preview(x: Any, n: int = 6) -> str:
    arr = np.asarray(_numpy(x))
    if arr.dtype == object:
        return repr(x)
    if arr.ndim == 0:
        return f"{float(arr):.6g}"
    flat = arr.ravel()
    text = ", ".join(f"{v:.4g}" for v in flat[:n])
    return f"[{text}{', ...' if flat.size > n else ''}]"


@dataclass
class GradSession:
    """A generated function, its (possibly edited) current version, and runs of it.

    ``active`` is the version that runs: the generated function, or the last edit that
    compiled. ``on_active`` callbacks hear of every change of it (the notebook rebinds its name
    for the gradient to the active version); ``listeners`` hear of any change at all."""

    df: Any
    args: tuple[Any, ...] | None = None
    active: Any = None
    error: str = ""
    error_line: int | None = None
    #: the last failed edit's message without its line (``error`` has both)
    error_message: str = ""
    diff_text: str = ""
    results: list[RunResult] = field(default_factory=list)
    listeners: list[Callable[[], None]] = field(default_factory=list)
    on_active: list[Callable[[Any], None]] = field(default_factory=list)
    #: what runs now, as "torch · cpu" (empty when idle): the panel's busy state
    running: str = ""
    #: the version the results shown come from
    results_of: Any = None

    def __post_init__(self) -> None:
        self.active = self.df
        self._kept: dict[int, tuple[Any, list[RunResult]]] = {}   # id(version) -> its results

    # --- the code -------------------------------------------------------------------------
    @property
    def source(self) -> str:
        """The code shown: the edited version's, else :attr:`generated_source`."""
        if self.edited:
            return self.active.source  # type: ignore[no-any-return]
        return self.generated_source

    @property
    def generated_source(self) -> str:
        """The generated code; once the session has arguments, the code specialised for
        their shapes (``dW = x.T @ dz``; its first line says so), which their run runs."""
        if self.args is not None and has_containers(self.args):
            return self.df.source_for(*self.args)  # type: ignore[no-any-return]
        if self.args is None or not getattr(self.df, "_specializes", False):
            return self.df.source  # type: ignore[no-any-return]
        try:
            return self.df.source_for(*self.args)  # type: ignore[no-any-return]
        except Exception:      # arguments the code cannot take: the run will say why
            return self.df.source  # type: ignore[no-any-return]

    @property
    def edited(self) -> bool:
        return self.active is not self.df

    @property
    def stale(self) -> bool:
        """Whether the results shown come from another version than the active one (another
        code: compiling the same text again makes no difference)."""
        return bool(self.results) and self.results_of is not self.active and (
            getattr(self.results_of, "source", None) != self.active.source)

    def changed_lines(self) -> int:
        """How many lines of the generated code the active version changes (added, removed
        or rewritten lines, counted once per pair)."""
        import difflib
        if not self.edited:
            return 0
        matcher = difflib.SequenceMatcher(a=self.generated_source.splitlines(),
                                          b=self.source.splitlines(), autojunk=False)
        return sum(max(i2 - i1, j2 - j1) for tag, i1, i2, j1, j2 in matcher.get_opcodes()
                   if tag != "equal")

    def version(self) -> str:
        """``generated`` or ``edited: 2 lines changed``."""
        if not self.edited:
            return "generated"
        n = self.changed_lines()
        return f"edited: {n} line{'s' if n != 1 else ''} changed" if n else "edited: no change"

    def header(self, name: str | None = None) -> str:
        """What the function is and which version runs, e.g.
        ``dloss(W, x) → ∂loss/∂W · edited: 1 line changed``; ``name`` is what the caller
        calls it (the notebook's name), the generated function's own name by default."""
        df = self.df
        fn_name = getattr(df.fn, "__name__", "f")
        called = f"{name or df.name}({', '.join(df.params)})"
        if df.mode == "jvp":
            what = f"{fn_name} and its derivative along " + ", ".join(f"{w}_dot" for w in df.wrt)
            called = f"{name or df.name}({', '.join(df.params)}, " + ", ".join(
                f"{w}_dot" for w in df.wrt) + ")"
        elif df.mode == "hvp":
            what = "Hessian-vector product of " + fn_name
        else:
            what = ", ".join(f"∂{fn_name}/∂{w}" for w in df.wrt)
        return f"{called} → {what} · {self.version()}"

    def recompile(self, edited: str) -> bool:
        """Compile an edit; on failure keep the previous version and record the error."""
        from .edit import EditError, diff, recompile
        self.error, self.error_line, self.error_message = "", None, ""
        try:
            new = recompile(edited, like=self.df)
        except EditError as e:
            self.error, self.error_line, self.error_message = str(e), e.lineno, e.message
            self._changed()
            return False
        except Exception as e:  # anything else an edit can provoke: report, keep the old one
            self.error = self.error_message = f"{type(e).__name__}: {e}"
            self._changed()
            return False
        self.diff_text = diff(self.df, new, generated=self.generated_source)
        self._activate(new)
        return True

    def reset(self) -> None:
        """Back to the generated code, with the results it last had (none if it never ran)."""
        self.diff_text, self.error, self.error_line, self.error_message = "", "", None, ""
        version, results = self._kept.get(id(self.df), (self.df, []))
        self.results, self.results_of = list(results), version if results else None
        self._activate(self.df)

    def _activate(self, version: Any) -> None:
        self.active = version
        for callback in self.on_active:
            try:
                callback(version)
            except Exception as e:  # a binding that fails must not lose the new version
                self.error = f"could not pass on the new version: {type(e).__name__}: {e}"
        self._changed()

    # --- running --------------------------------------------------------------------------
    def frameworks(self) -> list[str]:
        return installed_frameworks()

    def run(self, framework: str = "numpy", device: str = "cpu", check: bool = False,
            repeats: int = 20) -> list[RunResult]:
        """Run the current version on ``framework`` (or ``'all'``) and ``device``."""
        if self.args is None:
            self.error = "no inputs: give them with --run \"ARGS\" or session.args = (...)"
            self._changed()
            return []
        targets = self.frameworks() if framework == "all" else [framework]
        native = model_framework(self.args) or _pytree_model_framework(self.args)
        if native is not None:     # a model runs on its own framework only
            targets = [native]
        results = []
        try:
            for i, fw in enumerate(targets):
                self.running = f"{fw} · {device}"
                self._changed()
                # with 'all', the checks run once (on the first): one table, not four blocks
                results.append(self._run_one(fw, device, check and i == 0, repeats))
        finally:
            self.running = ""
        if len(results) > 1:
            _compare_with_first(results)
        self.results, self.results_of = results, self.active
        self._kept[id(self.active)] = (self.active, results)
        if len(self._kept) > 2:      # the generated version's and the active one's
            self._kept = {k: v for k, v in self._kept.items()
                          if k in (id(self.df), id(self.active))}
        self.error = next((r.error for r in self.results if r.error), "")
        self._changed()
        return self.results

    def comparison(self) -> str:
        """The results of a run on several frameworks as one table: framework, device, median
        time, first call and the largest difference from the first framework's gradient."""
        rows = [("framework", "device", "median", "first call", "max |Δ| vs " + (
            self.results[0].framework if self.results else "first"), "")]
        for r in self.results:
            if r.error:
                rows.append((r.framework, r.device, "", "", "", "error: " + r.error))
                continue
            t = r.timing
            diff = "—" if r.difference is None else f"{r.difference:.2e}"
            status = "; ".join(r.shape_problems) or ("NaN/Inf" if r.diagnosis else "ok")
            rows.append((r.framework, r.device, format_ms(t.median_ms) if t else "",
                         format_ms(t.first_ms) if t else "", diff, status))
        widths = [max(len(row[i]) for row in rows) for i in range(5)]
        return "\n".join("  ".join(c.ljust(w) for c, w in zip(row, widths)) + "  " + row[5]
                         for row in rows).rstrip()

    def _run_one(self, framework: str, device: str, check: bool, repeats: int) -> RunResult:
        label = framework
        try:
            if framework not in frameworks():
                raise GradlabError(f"unknown backend {framework!r}; choose one of "
                                   f"{', '.join(frameworks())} or all")
            if framework not in installed_frameworks():
                raise GradlabError(f"{framework} is not installed here")
            target_device = device_for(framework, device)
            inputs = tuple(_to(a, framework, target_device) for a in self.args)  # type: ignore[union-attr]
            # container arguments: the code for their leaves runs on them (the gradients are
            # given back in the arguments' structure)
            leaves = leaf_call(self.active, inputs)
            code, args = (leaves.df, leaves.args) if leaves is not None else (self.active, inputs)
            value_grads = _value_and_gradients(code)
            original = _before_first_run(code, args)
            (value, grads), timing = measure(lambda *a: value_grads(*a), args, repeats=repeats)
            _after_first_run(code, original, value, args)
            problems = _shape_problems(code, grads, args)
            result = RunResult(framework, timing.device, timing, value, grads if leaves is None
                               else leaves.gradients(grads), note=_output_note(code, value),
                               shape_problems=problems,
                               names=tuple(f"d{w}" for w in getattr(self.active, "wrt", ())),
                               models=_models(self.active, inputs))
            if not _finite(grads):   # the NaN hunt: say where it started
                result.diagnosis = self._hunt_nan(inputs, NAN_HUNT_STEPS)
            if check and not result.shape_problems:
                from .checking import check_gradient
                result.check = check_gradient(code.fn, code, args)
            return result
        except KeyboardInterrupt:
            return RunResult(label, device, None, error="interrupted (the kernel is fine; the "
                                                        "previous results are kept above)")
        except Exception as e:
            message = str(e) if isinstance(e, GradlabError) else f"{type(e).__name__}: {e}"
            tb = traceback.extract_tb(e.__traceback__)
            generated = [f for f in tb if f.filename.startswith("<gradlab")]
            if generated:
                message += f" (generated line {generated[-1].lineno}: {generated[-1].line})"
            return RunResult(label, device, None, error=message)

    def _hunt_nan(self, inputs: tuple[Any, ...], max_steps: int | None) -> str:
        from .tracing import trace
        report = trace(self.active, limit=NAN_HUNT_RECORDED, max_steps=max_steps)(*inputs)
        text = report.explain()
        if report.stopped and report.first_nonfinite is None:
            text += (" — the run was longer; session.diagnose() traces all of it (it takes "
                     "a while)")
        return text

    def diagnose(self, framework: str = "numpy", device: str = "cpu") -> str:
        """Where the first NaN/Inf of the current version appears, tracing the whole run
        (the automatic search after a run stops after :data:`NAN_HUNT_STEPS` steps)."""
        if self.args is None:
            return "no inputs: give them with --run \"ARGS\" or session.args = (...)"
        inputs = tuple(_to(a, framework, device_for(framework, device)) for a in self.args)
        return self._hunt_nan(inputs, None)

    def _changed(self) -> None:
        for listener in self.listeners:
            listener()




def _shape_problems(df: Any, grads: Any, inputs: tuple[Any, ...]) -> list[str]:
    """Each gradient whose shape differs from its parameter's, in words: an edit that
    returns ``dW.T`` runs, but its result is no gradient of W."""
    if getattr(df, "mode", "") not in ("grad", "value_and_grad"):
        return []
    items = grads if isinstance(grads, tuple) and df.many else (grads,)
    problems = []
    for w, g in zip(df.wrt, items):
        position = df.params.index(w) if w in df.params else None
        if position is None or position >= len(inputs):
            continue
        x = inputs[position]
        if not (hasattr(x, "shape") or isinstance(x, (int, float))) or not (
                hasattr(g, "shape") or isinstance(g, (int, float))):
            continue
        want, got = tuple(np.shape(_numpy(x))), tuple(np.shape(_numpy(g)))
        if want != got:
            problems.append(f"d{w} has shape {got} but {w} has shape {want}: it cannot be "
                            f"{w}'s gradient")
    return problems


def _compare_with_first(results: list[RunResult]) -> None:
    """Each result's largest difference from the first one's gradients (in float64)."""
    first = results[0]
    if first.error:
        return
    reference = [leaf for _, leaf in named_leaves(first.gradients)]
    for r in results:
        if r.error:
            continue
        mine = [leaf for _, leaf in named_leaves(r.gradients)]
        try:
            r.difference = max((float(np.max(np.abs(
                np.asarray(_numpy(a), dtype=np.float64) - np.asarray(_numpy(b), dtype=np.float64)),
                initial=0.0)) for a, b in zip(mine, reference)), default=0.0)
        except (TypeError, ValueError):   # shapes that do not match: said elsewhere
            r.difference = None


#: The automatic search for the first NaN/Inf after a run records this many steps in full
#: and stops after NAN_HUNT_STEPS: a cell stays responsive whatever the loop's length.
NAN_HUNT_RECORDED = 200
NAN_HUNT_STEPS = 200_000


def _before_first_run(df: Any, inputs: tuple[Any, ...]) -> Any:
    """What a gradient's first call checks (see ``GradientFunction._first_call``): inputs
    without a gradient refused, and the original function's value, for the semantic guard."""
    if getattr(df, "mode", "") not in ("grad", "value_and_grad"):
        return None
    from .. import guard
    from ..calls import refuse_without_gradient
    refuse_without_gradient(df, inputs)
    if guard.layout(inputs) in df._checked or not df.options.get("check", True) or \
            df.value_name is None \
            or guard.is_tracing(inputs):
        return None
    original = guard.run_original(df, inputs, {})
    guard.refuse_several_outputs(df, original)    # (a run has no seed to give)
    return original


def _after_first_run(df: Any, original: Any, value: Any, inputs: tuple[Any, ...]) -> None:
    if original is None:
        return
    from .. import guard
    from ..tensor.detect import common_framework
    note = guard.verify(df, original, value, inputs, {})
    if note:
        guard.note_unchecked(df.unchecked, guard.layout(inputs), note)
    guard.remember(df._checked, guard.layout(inputs))


def _output_note(df: Any, value: Any) -> str:
    """A gradient run on a function whose output is not a scalar shows the gradient of the
    sum of its outputs (the seed is ones): said, since ``df(...)`` itself would ask for one."""
    if getattr(df, "mode", "") not in ("grad", "value_and_grad"):
        return ""
    shape = tuple(getattr(value, "shape", ()) or ())
    if not shape or all(d == 1 for d in shape):
        return ""
    name = getattr(df.fn, "__qualname__", "the function")
    return (f"{name} returns shape {shape}, not a scalar: the gradient shown is that of "
            f"sum({name}(...)) (a seed of ones); call {df.name}(..., seed=...) with the "
            f"output's gradient for another")


def _pytree_model_framework(args: tuple[Any, ...]) -> str | None:
    """The framework of a model of the user's own type whose arrays are its parameters (a
    JAX callable pytree, as an Equinox module): it runs on its arrays' framework only."""
    for a in args:
        if callable(a) and not hasattr(a, "shape") and is_parameter_tree(a):
            arrays = [leaf for _, leaf in named_leaves(a) if hasattr(leaf, "shape")]
            if arrays:
                return common_framework(arrays)
    return None


def _models(df: Any, inputs: tuple[Any, ...]) -> tuple[Any, ...]:
    """Per gradient, the model it is taken with respect to (None for other values)."""
    params = list(getattr(df, "params", ()))
    values = [inputs[params.index(w)] if w in params and params.index(w) < len(inputs) else None
              for w in getattr(df, "wrt", ())]
    return tuple(v if callable(v) and not hasattr(v, "shape") else None for v in values)


def _finite(grads: Any) -> bool:
    """Whether every gradient (each parameter's of a model's, each leaf of a container's) is
    finite: the question that starts the NaN hunt."""
    items = [leaf for _, leaf in named_leaves(grads)]
    try:
        return all(bool(np.all(np.isfinite(np.asarray(_numpy(g), dtype=np.float64))))
                   for g in items)
    except (TypeError, ValueError):
        return True


def _value_and_gradients(df: Any) -> Callable[..., Any]:
    """A callable returning (value, gradients) for a gradient function, whatever its mode."""
    mode = getattr(df, "mode", "grad")
    if mode in ("jvp", "hvp"):
        return lambda *a: df(*a) if mode == "jvp" else (None, df(*a))

    def call(*args: Any) -> Any:
        impl, fw = df._select(args)
        value, grads = impl(*args)
        if df.many and len(df.wrt) == 1:    # wrt=("x",), or a container of one array:
            grads = (grads,)                # the code returns it bare, the call a tuple
        from ..api import conform_gradients
        return value, conform_gradients(grads, args, df, fw)
    return call


def device_for(framework: str, device: str) -> Any:
    """The framework's own name for the device asked for (``"cuda"``, ``"gpu"``, ``"cuda:1"``;
    None for the CPU), or a GradlabError naming the devices there are."""
    if device in ("", "cpu", None):
        return None
    wanted = "gpu" if device in ("cuda", "gpu") else device
    have = available_devices(framework)
    gpus = [d for d in have if d != "cpu"]
    if not gpus:
        raise GradlabError(f"no GPU is available to {framework} here (devices: "
                           f"{', '.join(have)})")
    if wanted == "gpu":
        return gpus[0]
    normalized = get_backend(framework).spell_device(wanted)
    if normalized not in have:
        raise GradlabError(f"{framework} has no device {device!r} (devices: {', '.join(have)})")
    return normalized


def _to(value: Any, framework: str, device: Any) -> Any:
    if has_containers((value,)):     # a dict, namedtuple, dataclass: each array converted
        return tree_map(lambda leaf: _to(leaf, framework, device), value)
    if isinstance(value, (int, float)) or value is None or model_framework([value]) or (
            callable(value) and not hasattr(value, "shape")):
        return value           # a model stays what it is (see model_framework), a JAX
                               # callable pytree of the user's own type too
    if isinstance(value, (list, tuple)) and value and not hasattr(value[0], "shape") and (
            not isinstance(value[0], (list, tuple))):
        value = np.asarray(value, dtype=np.float64)
    if isinstance(value, (list, tuple)):
        return type(value)(_to(v, framework, device) for v in value)
    return convert(value, framework, device)
