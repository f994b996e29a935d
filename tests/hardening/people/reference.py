"""What a program's derivatives really are: finite differences of the original function, and,
where the program is written in a framework with autodiff, that framework's own answer.

The parameters gradlab differentiates are seen as real coordinates (a complex entry is two: its
real and imaginary parts; an int or bool input is promoted to float64, as JAX would refuse and
gradlab may promote). ``F(coords)`` is the program's value there. Every finite difference is
taken with two step sizes; when they disagree a kink or a branch boundary is within a step of
the inputs and :class:`Unstable` is raised: no verdict on that check, never a false alarm.
"""
from __future__ import annotations

import re
import warnings
from typing import Any, Callable

import numpy as np

from tests.hardening.people.inputs import (FRAMEWORK_OF, Param, fresh, leaf_params, map_leaves,
                                           rebuild, to_dialect, to_numpy, value_leaves)
from tests.hardening.people.program import PeopleProgram


_STOPS = re.compile(r"stop_gradient\(|\.detach\(\)|\.numpy\(\)|torch\.detach\(")
#: calls that make Python numbers (TensorFlow turns them into float32 tensors)
_PYTHON_NUMBERS = re.compile(r"\bmath\.\w+\(|\bfloat\(|\.item\(\)")
#: casts to a narrower float: the value past them has float32 precision, whatever the inputs'
_NARROW_CASTS = re.compile(r"float32|float16|\.float\(\)|\.half\(\)")
_GRADLAB_STOPS = re.compile(r"gradlab\.(api\.)?stop_gradient\(")


def stops_gradient(source: str, dialect: str) -> bool:
    """Whether the program stops a gradient on purpose (``stop_gradient``, ``x.detach()``,
    ``torch.tensor(x)`` of a tensor, ``torch.as_tensor`` of a list of tensors,
    ``tf.constant(x.numpy())``): then its own framework's
    autodiff, not finite differences, says what the derivative is."""
    body = source.split("def f(", 1)[-1] if "def f(" in source else source
    return bool(_STOPS.search(source)) or (
        dialect == "torch" and ("torch.tensor(" in body      # (of x.tolist() too: a new leaf)
                                or "torch.as_tensor(" in body))   # (of a list: a new leaf)


class Unstable(Exception):
    """Finite differences cannot be trusted here (a kink, a jump, a huge derivative)."""


class Undefined(Exception):
    """The derivative asked for has no single right answer here (an int input whose program
    means something else on floats, the Hessian of a complex input)."""


class NotScalar(Exception):
    pass


def real_scalar(out: Any) -> float:
    """The program's output as a float; :class:`NotScalar` when it is not one real number."""
    if isinstance(out, (tuple, list, dict)):
        raise NotScalar(f"returns a {type(out).__name__}")
    a = to_numpy(out)
    if a.shape != ():
        raise NotScalar(f"returns shape {a.shape}")
    if a.dtype.kind not in "fiub":
        raise NotScalar(f"returns {a.dtype}")
    return float(a)


def close(got: np.ndarray, want: np.ndarray, rtol: float, atol: float) -> bool:
    return bool(np.all(np.abs(got - want) <= atol + rtol * np.abs(want)))


class Coordinates:
    """The differentiated parameters as one real vector, and back. A list (or tuple, or dict)
    parameter's coordinates are its items' entries, flattened item after item (a pair's two
    arrays in order, a dict's in its ``Param``'s key order: the leaves of
    :func:`~tests.hardening.people.inputs.value_leaves`, which the oracle's gradient in the
    same structure is joined by); ``sizes`` has one entry per differentiated parameter, its items' sizes summed."""

    def __init__(self, params: tuple[Param, ...], values: list[Any], wrt: tuple[int, ...],
                 promote32: bool) -> None:
        self.params, self.values, self.wrt = params, values, wrt
        self.promote32 = promote32
        self.sizes = []
        parts = []
        for i in wrt:
            size = 0
            for leaf in value_leaves(values[i]):
                a = np.asarray(leaf)
                if a.dtype.kind == "c":
                    parts += [a.real.ravel(), a.imag.ravel()]
                    size += 2 * a.size
                else:
                    parts.append(a.astype(np.float64).ravel())
                    size += a.size
            self.sizes.append(size)
        self.x0 = np.concatenate(parts) if parts else np.zeros(0)

    @staticmethod
    def _leaf_size(p: Param) -> int:
        n = int(np.prod(p.shape)) if p.shape else 1
        return 2 * n if p.dtype == "complex128" else n

    def args(self, coords: np.ndarray) -> list[Any]:
        """The program's arguments (NumPy values) at ``coords``."""
        out = list(fresh(self.values))
        if self.promote32:
            out = [map_leaves(lambda v: v.astype(np.float64) if isinstance(v, np.ndarray) and
                              v.dtype == np.float32 else v, v) for v in out]
        k = 0
        for i, size in zip(self.wrt, self.sizes):
            chunk, k = coords[k:k + size], k + size
            leaves, j = [], 0
            for leaf in self.params[i].leaves():
                n = self._leaf_size(leaf)
                leaves.append(self._leaf_value(leaf, chunk[j:j + n]))
                j += n
            out[i] = rebuild(self.params[i], iter(leaves))
        return out

    def _leaf_value(self, p: Param, chunk: np.ndarray) -> Any:
        if p.dtype == "pyfloat" or p.dtype == "pyint":
            return float(chunk[0])
        if p.dtype == "complex128":
            half = chunk.size // 2
            return (chunk[:half] + 1j * chunk[half:]).reshape(p.shape)
        if p.dtype == "float32" and not self.promote32:
            return chunk.astype(np.float32).reshape(p.shape)
        return chunk.astype(np.float64).reshape(p.shape)

    def split(self, vec: np.ndarray) -> list[Any]:
        """A coordinate vector (a gradient) as one value per parameter (a list of arrays for a
        list parameter); complex parameters get ``d/dRe + i d/dIm``."""
        out, k = [], 0
        for i, size in zip(self.wrt, self.sizes):
            chunk, k = vec[k:k + size], k + size
            leaves, j = [], 0
            for leaf in self.params[i].leaves():
                n = self._leaf_size(leaf)
                part = chunk[j:j + n]
                j += n
                if leaf.dtype == "complex128":
                    leaves.append((part[:n // 2] + 1j * part[n // 2:]).reshape(leaf.shape))
                else:
                    leaves.append(part.reshape(leaf.shape))
            out.append(rebuild(self.params[i], iter(leaves)))
        return out

    def join(self, arrays: list[Any]) -> np.ndarray:
        """Per-parameter values (tangents, gradients; lists of arrays for list parameters) as
        one coordinate vector."""
        parts = []
        for a in value_leaves(list(arrays)):
            a = np.asarray(a)
            if a.dtype.kind == "c":
                parts += [a.real.ravel(), a.imag.ravel()]
            else:
                parts.append(a.astype(np.float64).ravel())
        return np.concatenate(parts) if parts else np.zeros(0)


class Reference:
    """The program's value and derivatives at its inputs, computed lazily and cached."""

    def __init__(self, program: PeopleProgram, f: Callable[..., Any]) -> None:
        self.program = program
        self.f = f
        self.dialect = program.dialect
        self.params = program.params
        self.wrt = program.wrt_indices
        self.inputs = program.inputs()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            self.raw = f(*[to_dialect(v, self.dialect) for v in fresh(self.inputs)])
        # float32 precision: a float32 input, a cast to float32, or TensorFlow/PyTorch code on
        # Python numbers (both make them float32 tensors: the program's own value is float32)
        self.float32 = any(p.dtype == "float32" for p in leaf_params(self.params)) or bool(
            _NARROW_CASTS.search(program.source)) or (
            program.dialect in ("tensorflow", "torch") and (
                any(p.is_python for p in leaf_params(self.params)) or
                bool(_PYTHON_NUMBERS.search(program.source))))
        #: the differentiated parameters' arrays and numbers, lists opened (see _flat_autodiff)
        self.wrt_leaves = leaf_params([self.params[i] for i in self.wrt])
        self.complex = any(p.dtype == "complex128" for p in self.wrt_leaves)
        #: the program stops gradients on purpose (stop_gradient, detach): its own framework's
        #: autodiff is the reference, finite differences only find kinks
        self.stops_gradient = stops_gradient(program.source, program.dialect)
        #: gradlab.stop_gradient: no framework's autodiff knows it (it is the identity there)
        self.gradlab_stops = bool(_GRADLAB_STOPS.search(program.source))
        #: math.erf(w[0]) or float(w[0]) of a torch/TF value: the framework's autodiff drops
        #: the gradient there (a Python number is a constant to it), gradlab follows it
        self.numbers_leave_the_tape = program.dialect in ("tensorflow", "torch") and bool(
            _PYTHON_NUMBERS.search(program.source))
        self.value = real_scalar(self.raw) if program.output == "scalar" else None
        self._cache: dict[str, Any] = {}
        self.coords = self._coordinates()
        rng = np.random.default_rng(program.seed + 1)
        self.tangents = [self._tangent(rng, self.params[i]) for i in self.wrt]
        self.direction = self.coords.join(self.tangents)

    @staticmethod
    def _tangent(rng: np.random.Generator, p: Param) -> Any:
        """A tangent (and hvp vector) for parameter ``p``: its dtype for floats and complex
        numbers, float64 for int and bool inputs, a Python float for a Python number; for a
        list or tuple, a list or tuple of tangents of its items, for a dict a dict of them
        under its keys (gradlab takes the argument's structure)."""
        if p.is_dict:
            return {item.name: Reference._tangent(rng, item) for item in p.items}
        if p.is_container:
            items = [Reference._tangent(rng, item) for item in p.items]
            return items if p.dtype == "list" else tuple(items)
        if p.is_python:
            return float(rng.normal())
        if p.dtype == "complex128":
            return (rng.normal(size=p.shape) + 1j * rng.normal(size=p.shape)).astype(p.dtype)
        dtype = p.dtype if p.dtype in ("float64", "float32") else "float64"
        return np.asarray(rng.normal(size=p.shape), dtype=dtype)

    # --- the scalar function of the coordinates -------------------------------------------------
    def _coordinates(self) -> Coordinates:
        """Float32 inputs are promoted to float64 for finite differences when the program
        means the same there (its value within float32 precision); else differences are taken
        in float32 with larger steps."""
        if self.float32 and self.value is not None:
            c = Coordinates(self.params, self.inputs, self.wrt, promote32=True)
            try:
                v = self.F(c.x0, c)
                if np.isclose(v, self.value, rtol=1e-4, atol=1e-5):
                    return c
            except Exception:
                pass
            c = Coordinates(self.params, self.inputs, self.wrt, promote32=False)
            c.native32 = True  # type: ignore[attr-defined]
            return c
        return Coordinates(self.params, self.inputs, self.wrt, promote32=False)

    @property
    def native32(self) -> bool:
        return bool(getattr(self.coords, "native32", False))

    def F(self, coords: np.ndarray, c: Coordinates | None = None) -> float:
        c = c or self.coords
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                out = self.f(*[to_dialect(v, self.dialect) for v in c.args(coords)])
            except Exception as e:     # (w[w > 0] + x: a step changed which entries pass)
                raise Unstable(f"the program fails next to its inputs "
                               f"({type(e).__name__})") from None
        return real_scalar(out)

    def steps(self) -> tuple[float, float]:
        return (3e-2, 1e-2) if self.native32 else (1e-3, 1e-5)

    def check_defined(self) -> None:
        self.check_promotion()
        self.check_precision()

    def check_precision(self) -> None:
        """A value computed in float16 (``np.cbrt`` of a mask, in NumPy's float16, plus a float):
        its rounding steps are larger than any finite-difference step, which sees 0 where the
        function's derivative is not (people fuzzer seed 5151)."""
        if self.value is not None and to_numpy(self.raw).dtype == np.float16:
            raise Undefined("the program's value is float16: finite differences see its rounding")

    def check_promotion(self) -> None:
        """An int or bool input differentiated: the program must mean the same on floats."""
        ints = [p for p in self.wrt_leaves if p.dtype in ("int64", "bool", "pyint")]
        if not ints:
            return
        try:
            v = self.F(self.coords.x0)
        except Exception as e:
            raise Undefined(f"the program fails on float values of its int/bool input: "
                            f"{type(e).__name__}") from None
        if not np.isclose(v, self.value, rtol=1e-12, atol=1e-12):
            raise Undefined("the program means something else on float values of its int input")

    # --- finite differences -------------------------------------------------------------------
    def _partial(self, x: np.ndarray, e: np.ndarray, h: float, five: bool) -> float:
        if five:
            return (-self.F(x + 2 * h * e) + 8 * self.F(x + h * e) - 8 * self.F(x - h * e)
                    + self.F(x - 2 * h * e)) / (12 * h)
        return (self.F(x + h * e) - self.F(x - h * e)) / (2 * h)

    def _fd_gradient(self, x: np.ndarray, h: float, five: bool = True) -> np.ndarray:
        g = np.zeros_like(x)
        for k in range(x.size):
            e = np.zeros_like(x)
            e[k] = 1.0
            g[k] = self._partial(x, e, h, five)
        return g

    def _agree(self, a: np.ndarray, b: np.ndarray, what: str, rtol: float) -> np.ndarray:
        if not (np.all(np.isfinite(a)) and np.all(np.isfinite(b))):
            raise Unstable(f"{what}: non-finite differences")
        scale = max(1.0, float(np.max(np.abs(a), initial=0.0)))
        if scale > 1e6:
            raise Unstable(f"{what}: huge derivative")
        if not close(a, b, rtol, rtol * scale):
            raise Unstable(f"{what}: the two step sizes disagree by "
                           f"{float(np.max(np.abs(a - b))):.2e}")
        return a

    def gradient(self) -> np.ndarray:
        """d value / d coordinates (five-point differences, checked at a second step)."""
        if "gradient" not in self._cache:
            try:
                self.check_defined()
                h5, h2 = self.steps()
                x = self.coords.x0
                g5 = self._fd_gradient(x, h5)
                g2 = self._fd_gradient(x, h2, five=not self.native32)
                self._cache["gradient"] = self._agree(g5, g2, "gradient", self.fd_rtol)
            except (Unstable, Undefined) as e:
                self._cache["gradient"] = e
        hit = self._cache["gradient"]
        if isinstance(hit, Exception):
            raise hit
        return hit  # type: ignore[no-any-return]

    def directional(self) -> float:
        """The derivative along the tangents (jvp)."""
        if "directional" not in self._cache:
            try:
                self.check_defined()
                h5, h2 = self.steps()
                d = self.direction
                a = self._partial(self.coords.x0, d, h5, True)
                b = self._partial(self.coords.x0, d, h2, not self.native32)
                self._cache["directional"] = float(self._agree(np.array([a]), np.array([b]),
                                                               "jvp", self.fd_rtol)[0])
            except (Unstable, Undefined) as e:
                self._cache["directional"] = e
        hit = self._cache["directional"]
        if isinstance(hit, Exception):
            raise hit
        return hit  # type: ignore[no-any-return]

    def hessian_vector(self) -> np.ndarray:
        """H @ v in coordinates: differences of the (finite-difference) gradient along v."""
        if "hvp" not in self._cache:
            try:
                if self.complex:
                    raise Undefined("the Hessian of a complex input (conventions differ)")
                self.gradient()              # raises when first derivatives are unstable
                self.check_defined()
                h = 3e-2 if self.native32 else 1e-3
                x, d = self.coords.x0, self.direction
                g = lambda t: self._fd_gradient(x + t * d, h)      # noqa: E731
                k = 3e-2 if self.native32 else 1e-3
                five = (-g(2 * k) + 8 * g(k) - 8 * g(-k) + g(-2 * k)) / (12 * k)
                k2 = k / 3
                two = (g(k2) - g(-k2)) / (2 * k2)
                self._cache["hvp"] = self._agree(five, two, "hvp", 1e-3 if not self.native32
                                                 else 3e-2)
            except (Unstable, Undefined) as e:
                self._cache["hvp"] = e
        hit = self._cache["hvp"]
        if isinstance(hit, Exception):
            raise hit
        return hit  # type: ignore[no-any-return]

    @property
    def fd_rtol(self) -> float:
        return 2e-3 if self.native32 else 1e-6

    # --- the framework's own autodiff -----------------------------------------------------------
    def autodiff(self, what: str) -> np.ndarray | float | None:
        """``what`` (``grad``, ``jvp``, ``hvp``) by the program's own framework's autodiff, in
        coordinates; None when it has none here (NumPy, a Python number, a conversion that
        leaves the framework, an exception)."""
        key = f"autodiff {what}"
        if key not in self._cache:
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    self._cache[key] = AUTODIFF[self.dialect](self, what)
            except Exception:
                self._cache[key] = None
        return self._cache[key]  # type: ignore[no-any-return]

    def frozen(self, values: list[Any]) -> Callable[..., Any]:
        """f as a function of the differentiated parameters' arrays and numbers, one argument
        each (dialect values): a list parameter is rebuilt from its items, so that each
        framework's autodiff sees plain arrays (what ``jax.grad`` does with a list anyway;
        torch's and TensorFlow's tapes watch tensors, not lists)."""
        base = [to_dialect(v, self.dialect) for v in fresh(self.inputs)]

        def g(*leaves: Any) -> Any:
            given = iter(leaves)
            args = [list(v) if isinstance(v, list) else dict(v) if isinstance(v, dict) else v
                    for v in base]
            for i in self.wrt:
                args[i] = rebuild(self.params[i], given)
            return self.f(*args)
        return g

    def primal_leaves(self) -> list[Any]:
        """The differentiated parameters' arrays and numbers at the inputs (NumPy values, as
        the coordinates make them), lists opened: the arguments of :meth:`frozen`."""
        args = self.coords.args(self.coords.x0)
        return value_leaves([args[i] for i in self.wrt])

    @property
    def tangent_leaves(self) -> list[Any]:
        """The tangents of :meth:`primal_leaves`, one by one."""
        return value_leaves(list(self.tangents))


def _float_params(ref: Reference, numbers: bool = False) -> bool:
    """Whether every differentiated parameter (every item of a list parameter) is a float
    array (or, with ``numbers``, a Python float too: HIPS autograd traces a 0-d array in its
    place)."""
    kinds = ("float64", "float32", "complex128") + (("pyfloat",) if numbers else ())
    return all(p.dtype in kinds for p in ref.wrt_leaves)


def _torch_autodiff(ref: Reference, what: str) -> Any:
    import torch
    if not _float_params(ref) or ref.native32:
        return None
    # copies: a program's ``w *= -1.0`` under torch.func.jvp scales its primal and tangent in
    # place, which must not be the reference's own coordinates and tangents
    prim = [torch.as_tensor(np.array(a)) for a in ref.primal_leaves()]
    tangents = [torch.as_tensor(np.array(t, dtype=np.asarray(prim_i.numpy()).dtype))
                for t, prim_i in zip(ref.tangent_leaves, prim)]
    g = ref.frozen([])
    if what == "jvp":
        from torch.func import jvp
        _, d = jvp(lambda *w: g(*w), tuple(prim), tuple(tangents))
        return real_scalar(d)
    leaves = [p.clone().requires_grad_(True) for p in prim]
    out = g(*leaves)
    if not isinstance(out, torch.Tensor) or not out.requires_grad:
        return None
    if what == "grad":
        grads = torch.autograd.grad(out, leaves, allow_unused=True)
        return ref.coords.join([np.zeros(p.shape) if d is None else d.detach().numpy()
                                for d, p in zip(grads, leaves)])
    grads = torch.autograd.grad(out, leaves, allow_unused=True, create_graph=True)
    s = sum((d * t).sum() for d, t in zip(grads, tangents) if d is not None)
    if not isinstance(s, torch.Tensor) or not s.requires_grad:
        return ref.coords.join([np.zeros(p.shape) for p in leaves])
    hv = torch.autograd.grad(s, leaves, allow_unused=True)
    return ref.coords.join([np.zeros(p.shape) if d is None else d.detach().numpy()
                            for d, p in zip(hv, leaves)])


def _jax_autodiff(ref: Reference, what: str) -> Any:
    import jax
    import jax.numpy as jnp
    if not _float_params(ref) or ref.native32:
        return None
    prim = [jnp.asarray(np.asarray(a)) for a in ref.primal_leaves()]
    tangents = [jnp.asarray(t, dtype=p.dtype) for t, p in zip(ref.tangent_leaves, prim)]
    g = ref.frozen([])
    argnums = tuple(range(len(prim)))
    if what == "jvp":
        _, d = jax.jvp(lambda *w: g(*w), tuple(prim), tuple(tangents))
        return real_scalar(d)
    grad = jax.grad(lambda *w: g(*w), argnums=argnums)
    if what == "grad":
        grads = grad(*prim)
        return ref.coords.join([np.asarray(d) for d in grads])
    _, hv = jax.jvp(lambda *w: grad(*w), tuple(prim), tuple(tangents))
    return ref.coords.join([np.asarray(d) for d in hv])


def _tf_autodiff(ref: Reference, what: str) -> Any:
    import tensorflow as tf
    if not _float_params(ref) or ref.native32 or ref.complex:
        return None
    prim = [tf.constant(np.asarray(a)) for a in ref.primal_leaves()]
    tangents = [tf.constant(np.asarray(t, dtype=p.dtype.as_numpy_dtype))
                for t, p in zip(ref.tangent_leaves, prim)]
    g = ref.frozen([])
    if what == "jvp":
        with tf.autodiff.ForwardAccumulator(prim, tangents) as acc:
            out = g(*prim)
        d = acc.jvp(out)
        return None if d is None else real_scalar(d)
    if what == "grad":
        with tf.GradientTape() as tape:
            for p in prim:
                tape.watch(p)
            out = g(*prim)
        grads = tape.gradient(out, prim)
        return ref.coords.join([np.zeros(p.shape) if d is None else d.numpy()
                                for d, p in zip(grads, prim)])
    with tf.GradientTape() as outer:
        for p in prim:
            outer.watch(p)
        with tf.GradientTape() as inner:
            for p in prim:
                inner.watch(p)
            out = g(*prim)
        grads = inner.gradient(out, prim)
        s = tf.add_n([tf.reduce_sum(d * t) for d, t in zip(grads, tangents) if d is not None]) \
            if any(d is not None for d in grads) else None
    if s is None:
        return ref.coords.join([np.zeros(p.shape) for p in prim])
    hv = outer.gradient(s, prim)
    return ref.coords.join([np.zeros(p.shape) if d is None else d.numpy()
                            for d, p in zip(hv, prim)])


def _autograd_autodiff(ref: Reference, what: str) -> Any:
    import autograd
    if not _float_params(ref, numbers=True) or ref.native32 or ref.complex:
        return None
    prim = [np.asarray(a, dtype=np.float64) for a in ref.primal_leaves()]
    tangents = ref.tangent_leaves
    g = ref.frozen([])
    argnums = list(range(len(prim)))
    grad = autograd.grad(lambda *w: g(*w), argnums) if len(prim) > 1 else \
        autograd.grad(lambda w: g(w))
    if what == "jvp":
        if len(prim) != 1:   # (autograd's forward mode takes one argument) the gradient's
            grads = grad(*prim)                # product with the tangents, as reverse mode
            return real_scalar(sum(np.sum(np.asarray(d) * np.asarray(t))
                                   for d, t in zip(grads, tangents)))
        from autograd import make_jvp
        _, d = make_jvp(lambda w: g(w))(prim[0])(tangents[0])
        return real_scalar(d)
    if what == "grad":
        grads = grad(*prim)
        grads = grads if len(prim) > 1 else [grads]
        return ref.coords.join([np.asarray(d) for d in grads])
    if len(prim) != 1:
        import autograd.numpy as anp

        def along(*w: Any) -> Any:
            return sum(anp.sum(d * t) for d, t in zip(grad(*w), tangents))
        return ref.coords.join([np.asarray(d) for d in autograd.grad(along, argnums)(*prim)])
    hv = autograd.grad(lambda w: np.sum(autograd.grad(lambda u: g(u))(w) * tangents[0]))
    return ref.coords.join([np.asarray(hv(prim[0]))])


AUTODIFF: dict[str, Callable[[Reference, str], Any]] = {
    "numpy": lambda ref, what: None,
    "autograd": _autograd_autodiff,
    "torch": _torch_autodiff,
    "jax": _jax_autodiff,
    "tensorflow": _tf_autodiff,
}


def backends_for(program: PeopleProgram, installed: list[str]) -> list[str]:
    """NumPy-written programs run on every backend (gradlab's promise); a program written in a
    framework runs on that framework."""
    if program.dialect in ("numpy", "autograd"):
        return list(installed)
    return [FRAMEWORK_OF[program.dialect]] if FRAMEWORK_OF[program.dialect] in installed else []
