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
from ..tensor import available_devices, convert, frameworks, installed_frameworks
from ..tensor.registry import get as get_backend
from .timing import Timing, measure


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

    @property
    def line(self) -> str:
        if self.error:
            return f"{self.framework} · {self.device} · error: {self.error}"
        return self.timing.line() if self.timing else f"{self.framework} · {self.device}"

    def summary(self) -> str:
        """The value, each gradient's shape and a preview."""
        if self.error:
            return self.line
        parts = [f"value {_preview(self.value)}"] if self.value is not None else []
        grads = self.gradients if isinstance(self.gradients, tuple) else (self.gradients,)
        for g in grads:
            dtype = getattr(g, "dtype", type(g).__name__)
            dtype = str(dtype).replace("torch.", "").replace("<dtype: '", "").rstrip("'>")
            parts.append(f"gradient shape {tuple(np.shape(_numpy(g)))} {dtype} {_preview(g)}")
        if self.note:
            parts.append(f"note: {self.note}")
        if self.diagnosis:
            parts.append(self.diagnosis)
        return "\n".join(parts + [self.line])


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
    """A generated function, its (possibly edited) current version, and runs of it."""

    df: Any
    args: tuple[Any, ...] | None = None
    active: Any = None
    error: str = ""
    error_line: int | None = None
    diff_text: str = ""
    results: list[RunResult] = field(default_factory=list)
    listeners: list[Callable[[], None]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.active = self.df

    # --- the code -------------------------------------------------------------------------
    @property
    def source(self) -> str:
        return self.active.source  # type: ignore[no-any-return]

    @property
    def generated_source(self) -> str:
        return self.df.source  # type: ignore[no-any-return]

    def recompile(self, edited: str) -> bool:
        """Compile an edit; on failure keep the previous version and record the error."""
        from .edit import EditError, diff, recompile
        self.error, self.error_line = "", None
        try:
            new = recompile(edited, like=self.df)
        except EditError as e:
            self.error, self.error_line = str(e), e.lineno
            self._changed()
            return False
        except Exception as e:  # anything else an edit can provoke: report, keep the old one
            self.error = f"{type(e).__name__}: {e}"
            self._changed()
            return False
        self.active = new
        self.diff_text = diff(self.df, new)
        self._changed()
        return True

    def reset(self) -> None:
        self.active, self.diff_text, self.error, self.error_line = self.df, "", "", None
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
        self.results = [self._run_one(fw, device, check, repeats) for fw in targets]
        self.error = next((r.error for r in self.results if r.error), "")
        self._changed()
        return self.results

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
            value_grads = _value_and_gradients(self.active)
            original = _before_first_run(self.active, inputs)
            (value, grads), timing = measure(lambda *a: value_grads(*a), inputs,
                                             repeats=repeats)
            _after_first_run(self.active, original, value, inputs)
            result = RunResult(framework, timing.device, timing, value, grads,
                               note=_output_note(self.active, value))
            if not _finite(grads):   # the NaN hunt: say where it started
                result.diagnosis = self._hunt_nan(inputs, NAN_HUNT_STEPS)
            if check:
                from .checking import check_gradient
                result.check = check_gradient(self.df.fn, self.active, inputs)
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
    types = tuple(map(type, inputs))
    if types in df._checked or not df.options.get("check", True) or df.value_name is None \
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
    types = tuple(map(type, inputs))
    note = guard.verify(df, original, value, inputs, {})
    if note:
        df.unchecked[types] = note
    df._checked.add(types)


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


def _finite(grads: Any) -> bool:
    items = grads if isinstance(grads, tuple) else (grads,)
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
    if isinstance(value, (int, float)) or value is None:
        return value
    if isinstance(value, (list, tuple)) and value and not hasattr(value[0], "shape") and (
            not isinstance(value[0], (list, tuple))):
        value = np.asarray(value, dtype=np.float64)
    if isinstance(value, (list, tuple)):
        return type(value)(_to(v, framework, device) for v in value)
    return convert(value, framework, device)
