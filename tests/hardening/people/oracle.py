"""The oracle: every answer gradlab gives is right, or refused with a gradlab error.

For one program, each mode (``grad`` through ``value_and_grad``, ``jvp``, ``hvp``) on each
backend gets one :class:`Check`:

* ``right``: the forward value equals the original function's; the derivative equals finite
  differences (and the framework's own autodiff, where the program is written in one and it
  agrees with finite differences); the result keeps the input's framework, shape and dtype.
* ``refused``: a :class:`gradlab.GradlabError` (at transform or at the first call). A pass.
* ``wrong``: a value, a derivative, a shape, a type or a dtype that is not right. A failure.
* ``crash``: any other exception from gradlab or its generated code. A failure.
* ``unstable`` / ``undefined``: no verdict (finite differences disagree between step sizes;
  an int input whose program means something else on floats...).
* ``skipped``: not judged while an open bug class is steered around (``switches.py``).

Programs that return a tuple or an array must be refused by grad and hvp.
"""
from __future__ import annotations

import re
import signal
import time
import traceback
import warnings
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

import gradlab
from gradlab.codegen.primitives import DIALECT_SENSITIVE
from gradlab.codegen.program import written_dialect
from gradlab.errors import GradlabError
from tests.hardening.people import switches
from tests.hardening.people.inputs import (Param, fresh, framework_of_value, leaf_params,
                                           map_leaves, to_backend, to_numpy)
from tests.hardening.people.program import PeopleProgram, load
from tests.hardening.people.reference import (NotScalar, Reference, Undefined, Unstable,
                                              backends_for, close, real_scalar)
from tests.hardening.people.twins import uses_untraceable, with_traceable_math

MODES = ("grad", "jvp", "hvp")
#: a method whose meaning differs between NumPy and torch (x.var() is biased in one only)
_DIALECT_METHOD = re.compile(r"\.(%s)\(" % "|".join(sorted(DIALECT_SENSITIVE)))
FAILURES = ("wrong", "crash")
TIMEOUT_S = 60


@dataclass
class Check:
    mode: str
    backend: str
    status: str           # right, refused, wrong, crash, unstable, undefined, skipped
    kind: str = ""        # wrong: value, gradient, vs autodiff, shape, type, dtype, structure,
    #                       not refused; crash: the exception type; refused: the construct
    detail: str = ""

    def key(self) -> str:
        return f"{self.mode}/{self.backend}"


@dataclass
class Verdict:
    program: PeopleProgram
    checks: list[Check] = field(default_factory=list)
    invalid: str = ""      # the program itself does not run (a generator slip): not checked
    seconds: float = 0.0

    @property
    def failures(self) -> list[Check]:
        return [c for c in self.checks if c.status in FAILURES]


class Timeout(Exception):
    pass


def _alarm(signum: int, frame: Any) -> None:
    raise Timeout(f"no answer within {TIMEOUT_S} s")


def construct_of(error: BaseException) -> str:
    construct = getattr(error, "construct", "")
    first = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
    return f"{type(error).__name__}: {construct or first}"[:200]


def crash_detail(error: BaseException) -> str:
    tb = traceback.extract_tb(error.__traceback__)
    where = ""
    for frame in reversed(tb):
        if "/gradlab/" in frame.filename or frame.filename.startswith("<gradlab") or \
                "gradlab" in frame.filename:
            where = f" [{frame.filename.split('/')[-1]}:{frame.lineno} in {frame.name}]"
            break
    return f"{type(error).__name__}: {str(error).strip()[:300]}{where}"


class Checker:
    """Runs one program through gradlab's three modes on its backends."""

    def __init__(self, installed: list[str], modes: tuple[str, ...] = MODES) -> None:
        self.installed = installed
        self.modes = modes

    def run(self, program: PeopleProgram) -> Verdict:
        start = time.perf_counter()
        verdict = Verdict(program)
        old = signal.signal(signal.SIGALRM, _alarm)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                self._run(program, verdict)
        finally:
            signal.alarm(0)
            signal.signal(signal.SIGALRM, old)
        verdict.seconds = time.perf_counter() - start
        return verdict

    def _run(self, program: PeopleProgram, verdict: Verdict) -> None:
        try:
            module = load(program)
            ref = Reference(program, module.f)
            if program.output == "scalar" and not np.isfinite(ref.value):
                raise NotScalar("not finite")
        except Exception as e:
            verdict.invalid = f"{type(e).__name__}: {e}"[:200]
            return
        backends = backends_for(program, self.installed)
        # code that names no framework (b.var() alone) means what its inputs' framework means:
        # on torch, torch's methods, which the NumPy reference does not compute
        follows_inputs = written_dialect(module.f) is None and bool(
            _DIALECT_METHOD.search(program.source))
        for mode in self.modes:
            transform = {"grad": gradlab.value_and_grad, "jvp": gradlab.jvp,
                         "hvp": gradlab.hvp}[mode]
            signal.alarm(TIMEOUT_S)
            try:
                fn = transform(module.f, program.wrt)
                error = None
            except GradlabError as e:
                fn, error = None, Check(mode, "*", "refused", construct_of(e), str(e)[:500])
            except Exception as e:
                fn, error = None, Check(mode, "*", "crash", type(e).__name__, crash_detail(e))
            finally:
                signal.alarm(0)
            for backend in backends:
                reason = skip_reason(program, mode, backend)
                if follows_inputs and backend == "torch":
                    reason = "methods of code that names no framework mean torch's here"
                if reason:
                    verdict.checks.append(Check(mode, backend, "skipped", reason))
                    continue
                if error is not None:
                    verdict.checks.append(Check(mode, backend, error.status, error.kind,
                                                error.detail))
                    continue
                signal.alarm(TIMEOUT_S)
                try:
                    check = self.check(mode, backend, fn, ref)
                except GradlabError as e:
                    check = Check(mode, backend, "refused", construct_of(e), str(e)[:500])
                except Timeout as e:
                    check = Check(mode, backend, "crash", "Timeout", str(e))
                except Exception as e:
                    check = Check(mode, backend, "crash", type(e).__name__, crash_detail(e))
                finally:
                    signal.alarm(0)
                verdict.checks.append(check)

    # --- one mode on one backend -------------------------------------------------------------
    def check(self, mode: str, backend: str, fn: Any, ref: Reference) -> Check:
        program = ref.program
        args = [to_backend(v, backend) for v in fresh(ref.inputs)]
        many = isinstance(program.wrt, tuple)
        if mode == "grad":
            result = fn(*args)
        else:
            # (a list parameter's tangent is a list of the backend's arrays, as its argument; a
            # dict parameter's a dict with its keys)
            tangents = [to_backend(t, backend) for t in ref.tangents]
            result = fn(*args, tuple(tangents) if many else tangents[0])
        if program.output != "scalar":
            if _one_element(ref.raw):     # x[x > 0] of a vector can come out with one entry:
                return Check(mode, backend, "undefined", "one-element array output")
            if mode == "jvp":
                return Check(mode, backend, "undefined", "non-scalar output")
            return Check(mode, backend, "wrong", "not refused",
                         f"{mode} of a function returning a {program.output} gave "
                         f"{type(result).__name__} instead of a GradlabError")
        try:
            if mode == "grad":
                return self.check_grad(backend, result, ref, many, args)
            if mode == "jvp":
                return self.check_jvp(backend, result, ref)
            return self.check_hvp(backend, result, ref, many, args)
        except Unstable as e:
            return Check(mode, backend, "unstable", "", str(e))
        except Undefined as e:
            return Check(mode, backend, "undefined", "", str(e))

    def tolerances(self, ref: Reference) -> tuple[float, float]:
        """(rtol for values, rtol for derivatives against finite differences)."""
        return (1e-4, 5e-3) if ref.float32 else (1e-9, 1e-5)

    def check_value(self, mode: str, backend: str, value: Any, ref: Reference) -> Check | None:
        vtol, _ = self.tolerances(ref)
        # the program's own value in float16 (np.exp of a bool) or float32 (JAX's log1p of an
        # int): gradlab's float64 value is the same number to the precision the program
        # computed in (a more precise one is not wrong; a less precise one is, see own_value_on)
        narrow = re.search(r"float16|float32", str(getattr(ref.raw, "dtype", "")))
        vtol = max(vtol, _NARROW_PRECISION[narrow.group()] if narrow else 0.0)
        try:
            got = real_scalar(value)
        except NotScalar as e:
            return Check(mode, backend, "wrong", "value",
                         f"{mode} value is {type(value).__module__}.{type(value).__name__} "
                         f"({e}), the function gives {ref.value!r}")
        if not close(np.array(got), np.array(ref.value), vtol, vtol * max(1.0, abs(ref.value))):
            if decided_by_round_off(ref):
                raise Unstable("a branch decided by round-off")
            if own_value_on(ref, backend, got):
                return None
            return Check(mode, backend, "wrong", "value",
                         f"{mode} value {got!r} on {backend}, the function gives {ref.value!r}")
        return None

    def structure(self, mode: str, backend: str, grads: Any, ref: Reference, many: bool,
                  args: list[Any]) -> list[np.ndarray] | Check:
        """The gradients as NumPy arrays, after checking each keeps its input's framework,
        shape and dtype."""
        n = len(ref.wrt)
        if many:
            if not isinstance(grads, (tuple, list)) or len(grads) != n:
                return Check(mode, backend, "wrong", "structure",
                             f"expected a tuple of {n}, got {type(grads).__name__}")
            items = list(grads)
        else:
            items = [grads]
        out = []
        for i, g in zip(ref.wrt, items):
            checked = self.structure_of(mode, backend, g, ref.params[i], args[i],
                                        ref.params[i].name)
            if isinstance(checked, Check):
                return checked
            out.append(checked)
        return out

    def structure_of(self, mode: str, backend: str, g: Any, p: Param, x: Any, path: str
                     ) -> Any:
        """One parameter's gradient as NumPy (a list or tuple of arrays for a list or tuple
        argument), or the Check that says how its structure, framework, shape or dtype is
        wrong. A list argument's gradient is a list of its length (a tuple's a tuple), each
        item checked as the argument's item. A dict argument's gradient is a dict with its keys
        (in any order: it is read back by key, in the ``Param``'s order), each checked so."""
        if p.is_dict:
            keys = [item.name for item in p.items]
            if type(g) is not dict or sorted(g, key=repr) != sorted(keys, key=repr):
                got = f"a {type(g).__name__}" + (f" with keys {sorted(g, key=repr)}" if
                                                  isinstance(g, dict) else "")
                return Check(mode, backend, "wrong", "structure",
                             f"{mode} wrt {path} ({p.describe_type()}) on {backend}: {got}, "
                             f"expected a dict with keys {keys}")
            entries = {}
            for item in p.items:
                checked = self.structure_of(mode, backend, g[item.name], item, x[item.name],
                                            f"{path}[{item.name!r}]")
                if isinstance(checked, Check):
                    return checked
                entries[item.name] = checked
            return entries
        if p.is_container:
            want = list if p.dtype == "list" else tuple
            if type(g) is not want or len(g) != len(p.items):
                got = f"a {type(g).__name__}" + (f" of {len(g)}" if isinstance(
                    g, (list, tuple)) else "")
                return Check(mode, backend, "wrong", "structure",
                             f"{mode} wrt {path} ({p.describe_type()}) on {backend}: {got}, "
                             f"expected a {p.dtype} of {len(p.items)}")
            items = []
            for k, (item, gk, xk) in enumerate(zip(p.items, g, x)):
                checked = self.structure_of(mode, backend, gk, item, xk, f"{path}[{k}]")
                if isinstance(checked, Check):
                    return checked
                items.append(checked)
            return items if p.dtype == "list" else tuple(items)
        where = f"{mode} wrt {path} ({p.describe_type()}) on {backend}"
        if mode == "hvp" and not switches.HVP_ZERO_HESSIAN_SHAPED and not p.is_python and \
                type(g) is float and g == 0.0:
            g = to_backend(np.zeros(p.shape, dtype=p.dtype), backend)   # an open bug
        if p.is_python:
            if framework_of_value(g) not in ("python", "numpy") and not (
                    hasattr(g, "shape") and tuple(g.shape) == ()):
                return Check(mode, backend, "wrong", "type", f"{where}: {type(g).__name__}")
        elif framework_of_value(g) != framework_of_value(x):
            return Check(mode, backend, "wrong", "type",
                         f"{where}: a {type(g).__module__}.{type(g).__name__}")
        a = to_numpy(g)
        if a.dtype == object:
            return Check(mode, backend, "wrong", "type", f"{where}: an object array")
        if a.shape != p.shape:
            return Check(mode, backend, "wrong", "shape",
                         f"{where}: shape {a.shape}, the input's is {p.shape}")
        if p.dtype in ("float64", "float32", "complex128") and a.dtype.name != p.dtype:
            return Check(mode, backend, "wrong", "dtype",
                         f"{where}: dtype {a.dtype}, the input's is {p.dtype}")
        if p.dtype in ("int64", "bool") and a.dtype.kind not in "fc":
            return Check(mode, backend, "wrong", "dtype",
                         f"{where}: dtype {a.dtype} (a gradient truncated to the input's "
                         f"dtype)")
        return a

    def compare(self, mode: str, backend: str, got: np.ndarray, want: np.ndarray,
                ref: Reference, what: str) -> Check | None:
        _, rtol = self.tolerances(ref)
        scale = max(1.0, float(np.max(np.abs(want), initial=0.0)))
        ok = close(got, want, rtol, rtol * scale)
        if not ok and ref.complex:
            ok = any(close(got, alt, rtol, rtol * scale) for alt in self.conventions(ref, want))
        if ok:
            return None
        if what == "finite differences" and close(got, want, 1e-3, 1e-3 * scale) and (
                autodiff_agrees(mode, got, ref)):
            return None         # differences of differences near a kink: autodiff settles it
        if what == "finite differences" and np.isnan(got).any() and nan_like_autodiff(
                mode, got, ref):
            raise Undefined("NaN where the program's own autodiff gives NaN too (0 * inf: "
                            "sqrt of a sum of squares that is 0), not a plausible number")
        return Check(mode, backend, "wrong", "derivative" if what == "finite differences"
                     else "vs autodiff",
                     f"{mode} on {backend} vs {what}: got {_show(got)}, expected {_show(want)}")

    def conventions(self, ref: Reference, want: np.ndarray) -> list[np.ndarray]:
        """A complex input's gradient is d/dRe + i d/dIm (PyTorch) or its conjugate (JAX)."""
        parts = ref.coords.split(want)
        conj = [map_leaves(lambda a: np.conj(a) if np.iscomplexobj(a) else a, p) for p in parts]
        return [ref.coords.join(conj)]

    def against_autodiff(self, mode: str, backend: str, got: np.ndarray, fd: Any,
                         ref: Reference) -> Check | None:
        ad = ref.autodiff(mode)
        if ad is None:
            return None
        ad = np.asarray(ad, dtype=np.float64)
        fd = np.asarray(fd, dtype=np.float64)
        if ad.shape != fd.shape:   # (HIPS autograd's np.diag of a 3x4 matrix: a 3x3 gradient)
            return None
        _, rtol = self.tolerances(ref)
        scale = max(1.0, float(np.max(np.abs(fd), initial=0.0)))
        if not close(ad, fd, rtol, rtol * scale):
            return None          # the framework's autodiff and the mathematics differ here
        tight = rtol if ref.float32 else 1e-6     # autodiff is exact: tighter than differences
        if close(got, ad, tight, tight * scale):
            return None
        return Check(mode, backend, "wrong", "vs autodiff",
                     f"{mode} on {backend} vs {ref.dialect}'s autodiff: got {_show(got)}, "
                     f"expected {_show(ad)}")

    def check_grad(self, backend: str, result: Any, ref: Reference, many: bool,
                   args: list[Any]) -> Check:
        value, grads = result
        bad = self.check_value("grad", backend, value, ref)
        if bad:
            return bad
        arrays = self.structure("grad", backend, grads, ref, many, args)
        if isinstance(arrays, Check):
            return arrays
        got = ref.coords.join(arrays)
        fd = ref.gradient()
        if ref.stops_gradient:
            return self.check_stopped("grad", backend, got, ref)
        bad = self.compare("grad", backend, got, ref.coords.join(ref.coords.split(fd)), ref,
                           "finite differences")
        if bad is None and not ref.complex:
            bad = self.against_autodiff("grad", backend, got, fd, ref)
        return bad or Check("grad", backend, "right")

    def check_jvp(self, backend: str, result: Any, ref: Reference) -> Check:
        value, derivative = result
        bad = self.check_value("jvp", backend, value, ref)
        if bad:
            return bad
        a = to_numpy(derivative)
        if a.dtype == object:
            return Check("jvp", backend, "wrong", "type",
                         f"jvp derivative is a {type(derivative).__name__}")
        if a.shape != ():
            return Check("jvp", backend, "wrong", "shape",
                         f"jvp derivative of shape {a.shape} for a scalar function")
        got = np.array([float(np.real(a))])
        fd = np.array([ref.directional()])
        if ref.stops_gradient:
            return self.check_stopped("jvp", backend, got, ref)
        bad = self.compare("jvp", backend, got, fd, ref, "finite differences")
        if bad is None and not ref.complex:
            bad = self.against_autodiff("jvp", backend, got, fd, ref)
        return bad or Check("jvp", backend, "right")

    def check_hvp(self, backend: str, result: Any, ref: Reference, many: bool,
                  args: list[Any]) -> Check:
        arrays = self.structure("hvp", backend, result, ref, many, args)
        if isinstance(arrays, Check):
            return arrays
        got = ref.coords.join(arrays)
        fd = ref.hessian_vector()
        if ref.stops_gradient:
            return self.check_stopped("hvp", backend, got, ref)
        bad = self.compare("hvp", backend, got, fd, ref, "finite differences")
        if bad is None:
            bad = self.against_autodiff("hvp", backend, got, fd, ref)
        return bad or Check("hvp", backend, "right")


    def check_stopped(self, mode: str, backend: str, got: np.ndarray, ref: Reference) -> Check:
        """A program that stops gradients on purpose: only its framework's autodiff knows the
        answer (finite differences, computed first, have only ruled out a kink)."""
        ad = None if ref.gradlab_stops else ref.autodiff(mode)
        if ad is None:
            raise Undefined("a gradient stopped on purpose, and no autodiff to say what it is")
        if ref.numbers_leave_the_tape:
            raise Undefined("a gradient stopped on purpose, and Python numbers made of values "
                            "(math.*, float()): the framework's autodiff drops those gradients "
                            "too, gradlab does not, so neither reference says what is meant")
        ad = np.atleast_1d(np.asarray(ad, dtype=np.float64))
        _, rtol = self.tolerances(ref)
        scale = max(1.0, float(np.max(np.abs(ad), initial=0.0)))
        if close(np.atleast_1d(got), ad, rtol, rtol * scale):
            return Check(mode, backend, "right")
        return Check(mode, backend, "wrong", "vs autodiff",
                     f"{mode} on {backend} vs {ref.dialect}'s autodiff (the program stops a "
                     f"gradient): got {_show(got)}, expected {_show(ad)}")


_DEFAULTS = re.compile(r"def f\([^)]*=")
_SHAPE_FUNCTIONS = re.compile(
    r"squeeze|expand_dims|reshape|\.view\(|flatten|ravel|\[None|None\]|broadcast_to|tile\(|"
    r"repeat\(|\.T\b|transpose|permute|stack|concat|cat\(|split|axis|dim\b|dim=|"
    r"(sum|mean|max|min|prod|var|std|norm|logsumexp|softmax|cumsum|argmax|argmin)\([^()]*,")
_LOOP = re.compile(r"^\s*(for|while) ", re.MULTILINE)


def skip_reason(program: PeopleProgram, mode: str, backend: str) -> str:
    """Why an oracle switch leaves this check out ("" when it does not)."""
    if mode == "hvp" and not switches.HVP_ONE_ELEMENT_TUPLE and isinstance(program.wrt, tuple) \
            and len(program.wrt) == 1:
        return "switch HVP_ONE_ELEMENT_TUPLE"
    if mode in ("jvp", "hvp") and not switches.FORWARD_DEFAULT_ARGUMENTS and \
            _DEFAULTS.search(program.source):
        return "switch FORWARD_DEFAULT_ARGUMENTS"
    if mode == "hvp" and not switches.HVP_THROUGH_LOOPS and _LOOP.search(program.source):
        return "switch HVP_THROUGH_LOOPS"
    made = program.constructs
    numpy_written = program.dialect in ("numpy", "autograd")
    if backend != "numpy" and numpy_written and not \
            switches.OFF_TABLE_CALLS_ON_OTHER_BACKENDS and any(
                c.startswith("off-table") for c in made):
        return "switch OFF_TABLE_CALLS_ON_OTHER_BACKENDS"
    if mode == "hvp" and not switches.HVP_OF_CONTAINERS and "value: container" in made:
        return "switch HVP_OF_CONTAINERS"
    if mode == "hvp" and backend == "torch" and not switches.HVP_SHAPE_FUNCTIONS_ON_TORCH and \
            _SHAPE_FUNCTIONS.search(program.source):
        return "switch HVP_SHAPE_FUNCTIONS_ON_TORCH"
    if backend in ("torch", "tensorflow") and numpy_written and not \
            switches.PYTHON_FLOATS_ON_TORCH_TF and "value: Python float" in made:
        return "switch PYTHON_FLOATS_ON_TORCH_TF"
    if not switches.MIXED_PRECISION and any(p.dtype == "float32" for p in leaf_params(
            program.params)) and (
            backend in ("torch", "tensorflow") or mode == "hvp"):
        return "switch MIXED_PRECISION"
    ints_judged = {"tensorflow": switches.INT_ARRAYS_ON_TF, "torch": switches.INT_ARRAYS_ON_TORCH}
    if not ints_judged.get(backend, True) and (
            "value: int array" in made or any(p.dtype == "int64" for p in leaf_params(
                program.params))):
        return f"switch INT_ARRAYS_ON_{'TF' if backend == 'tensorflow' else 'TORCH'}"
    return ""


def _own_autodiff(mode: str, ref: Reference) -> np.ndarray | None:
    """The framework's own autodiff of the program (HIPS autograd for NumPy's), flat; None
    where it cannot run. A program that reads ``math`` or ``float`` is differentiated as its
    twin (see :mod:`.twins`), which that autodiff can follow as gradlab does."""
    try:
        if ref.dialect == "numpy":
            ad = _autograd_of_numpy(ref, mode)
        elif uses_untraceable(ref):
            ad = with_traceable_math(ref).autodiff(mode)
        else:
            ad = ref.autodiff(mode)
    except Exception:
        return None
    return None if ad is None else np.asarray(ad, dtype=np.float64).ravel()


def nan_like_autodiff(mode: str, got: np.ndarray, ref: Reference) -> bool:
    """Whether the framework's own autodiff of the program has NaN exactly where ``got`` has,
    and agrees elsewhere: autodiff's answer, visible as NaN."""
    ad = _own_autodiff(mode, ref)
    got = np.asarray(got, dtype=np.float64).ravel()
    if ad is None or ad.shape != got.shape or not np.array_equal(np.isnan(ad), np.isnan(got)):
        return False
    keep = ~np.isnan(got)
    return bool(close(got[keep], ad[keep], 1e-6, 1e-6 * max(1.0, float(np.max(
        np.abs(ad[keep]), initial=0.0)))))


def autodiff_agrees(mode: str, got: np.ndarray, ref: Reference) -> bool:
    """Whether the framework's own autodiff of the program gives ``got`` to 1e-7: where finite
    differences are near, but their truncation error is not small (an hvp of ``std`` over
    three close values: people fuzzer seed 7171)."""
    ad = _own_autodiff(mode, ref)
    got = np.asarray(got, dtype=np.float64).ravel()
    if ad is None or ad.shape != got.shape:
        return False
    return close(got, ad, 1e-7, 1e-7 * max(1.0, float(np.max(np.abs(ad), initial=0.0))))


def _autograd_of_numpy(ref: Reference, mode: str) -> Any:
    """HIPS autograd's ``mode`` of a NumPy program: the same code with ``np`` bound to
    ``autograd.numpy`` (None where it cannot run so)."""
    import autograd.numpy as anp
    return with_traceable_math(ref, "autograd", {"np": anp}).autodiff(mode)


#: the relative precision of a reference value computed in a narrow float
_NARROW_PRECISION = {"float16": 2e-3, "float32": 1e-6}


def own_value_on(ref: Reference, backend: str, got: float) -> bool:
    """Whether ``got`` is what the function itself gives on ``backend``'s inputs, where that
    differs from NumPy's value: NumPy code handed torch tensors can compute in torch's float32
    (``np.isfinite`` of a torch scalar is a torch bool, plus 1.0 a float32), and gradlab's
    contract (its semantic guard) is the function's own value on the inputs it is given."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            raw = ref.f(*[to_backend(v, backend) for v in fresh(ref.inputs)])
        own = real_scalar(raw)
    except Exception:
        return False
    narrow = "float32" in str(getattr(raw, "dtype", ""))
    tol = 1e-6 if narrow else 1e-9
    # (a function computing in float32 on this backend is its own value to float32's precision,
    # even where that happens to round to NumPy's: NumPy code's ``argmin(x) * 1.0`` of a torch
    # tensor, people fuzzer seed 6565)
    return (narrow or not close(np.array(own), np.array(ref.value), 1e-9,
                                1e-9 * max(1.0, abs(own)))) and \
        close(np.array(got), np.array(own), tol, tol * max(1.0, abs(own)))


def _show(a: np.ndarray) -> str:
    a = np.asarray(a)
    text = np.array2string(a.ravel()[:6], precision=6, separator=", ")
    return text + ("..." if a.size > 6 else "")


def decided_by_round_off(ref: Reference, tries: int = 6) -> bool:
    """Whether the value jumps when the inputs move by a part in 10^12: a branch on a quantity
    that only round-off decides, which another backend may decide the other way."""
    rng = np.random.default_rng(0)
    x0 = ref.coords.x0
    for _ in range(tries):
        moved = x0 + 1e-12 * (np.abs(x0) + 1e-3) * rng.normal(size=x0.shape)
        try:
            if not np.isclose(ref.F(moved), ref.value, rtol=1e-9, atol=1e-9):
                return True
        except Exception:
            return True
    return False


def _one_element(out: Any) -> bool:
    """An array output with one entry, which gradlab takes as a scalar (as a seed of 1.0
    reaches it) rather than refusing."""
    if isinstance(out, (tuple, list, dict)):
        return False
    return int(np.size(to_numpy(out))) == 1
