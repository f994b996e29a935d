"""Differential checks of one program: gradlab's reverse mode on every backend against central
finite differences (float64), the backends against each other, forward mode against reverse
mode. Shared by ``test_generated`` (hypothesis programs) and ``test_regressions`` (saved ones).
"""
from __future__ import annotations

import hashlib
import os
import re
import textwrap
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np
import pytest

import gradlab
from gradlab.errors import GradlabSyntaxError, NoRuleError
from gradlab.tensor import FRAMEWORKS, is_installed
from tests.conftest import REQUIRE_ALL, _setup_framework, to_framework, to_numpy

RTOL = 1e-5          # gradlab vs finite differences
ATOL = 1e-5          # (times max(1, largest |gradient|))
BACKEND_RTOL = 1e-7  # backends vs NumPy, jvp vs <grad, v>
REGRESSIONS = os.path.join(os.path.dirname(__file__), "regressions")


def frameworks() -> list[str]:
    """The installed frameworks (all four required under GRADLAB_REQUIRE_ALL_BACKENDS=1)."""
    out = []
    for name in FRAMEWORKS:
        if is_installed(name):
            _setup_framework(name)
            out.append(name)
        elif REQUIRE_ALL:
            pytest.fail(f"{name} is not installed (GRADLAB_REQUIRE_ALL_BACKENDS=1)")
    return out


class Unstable(Exception):
    """Finite differences are not trustworthy at these inputs (a kink or branch boundary
    lies within a step of them, or the values are huge): the program is skipped."""


class Refused(Exception):
    def __init__(self, construct: str, mode: str, error: Exception) -> None:
        super().__init__(f"{mode}: {construct}")
        self.construct = construct
        self.mode = mode
        self.error = error


def construct_of(error: Exception) -> str:
    if isinstance(error, GradlabSyntaxError):
        return error.construct or str(error).splitlines()[0]
    match = re.search(r"no derivative rule for (\S+)", str(error))
    return f"no rule: {match.group(1)}" if match else str(error).splitlines()[0]


def _fresh(args: list[Any]) -> list[Any]:
    """Copies of the inputs: a program may change an input in place through an alias
    (``v = x; v += 1.0``, see generator.ALIASED_UPDATES), and each call must start afresh."""
    return [a.copy() if isinstance(a, np.ndarray) else a for a in args]


def _with(args: list[Any], position: int, value: np.ndarray) -> list[Any]:
    out = _fresh(args)
    out[position] = value
    return out


def finite_difference_gradient(f: Callable[..., Any], args: list[np.ndarray],
                               wrt: tuple[int, ...]) -> list[np.ndarray]:
    """Five-point central differences (step 1e-3, error O(h^4)), checked against plain central
    differences (step 1e-5): if the two disagree a kink or branch boundary is within a step of
    the inputs and :class:`Unstable` is raised."""
    h5, h2 = 1e-3, 1e-5
    grads = []
    for position in wrt:
        x = np.asarray(args[position], dtype=np.float64)
        g5 = np.zeros_like(x)
        g2 = np.zeros_like(x)
        for idx in np.ndindex(x.shape):
            def at(step: float) -> float:
                xp = x.copy()
                xp[idx] += step
                return float(f(*_with(args, position, xp)))
            g5[idx] = (-at(2 * h5) + 8 * at(h5) - 8 * at(-h5) + at(-2 * h5)) / (12 * h5)
            g2[idx] = (at(h2) - at(-h2)) / (2 * h2)
        if not (np.all(np.isfinite(g5)) and np.all(np.isfinite(g2))):
            raise Unstable("non-finite finite differences")
        if np.max(np.abs(g5), initial=0.0) > 1e6:
            raise Unstable("huge gradient")
        if not np.allclose(g5, g2, rtol=1e-6, atol=1e-6 * max(1.0, np.max(np.abs(g5),
                                                                               initial=0.0))):
            raise Unstable(f"finite differences disagree: {np.max(np.abs(g5 - g2))}")
        grads.append(g5)
    return grads


@dataclass
class Reference:
    """What every backend is checked against, computed once per program with NumPy."""

    f: Callable[..., Any]
    args: list[np.ndarray]
    wrt: tuple[int, ...]
    value: float
    fd: list[np.ndarray]
    scale: float
    tangents: list[np.ndarray]


def reference(f: Callable[..., Any], args: list[np.ndarray], wrt: tuple[int, ...],
              seed: int) -> Reference:
    value = f(*_fresh(args))
    assert np.shape(value) == (), f"the program returns shape {np.shape(value)} (generator bug)"
    value = float(value)
    if not np.isfinite(value) or abs(value) > 1e6:
        raise Unstable(f"value {value}")
    fd = finite_difference_gradient(f, args, wrt)
    scale = max([1.0] + [float(np.max(np.abs(g), initial=0.0)) for g in fd])
    rng = np.random.default_rng(seed + 1)
    tangents = [np.asarray(rng.normal(size=np.shape(args[w])), dtype=np.float64) for w in wrt]
    return Reference(f, args, wrt, value, fd, scale, tangents)


def decided_by_round_off(ref: Reference, tries: int = 8) -> bool:
    """Whether the program's value jumps when its inputs move by a part in 10^12: a branch
    on a quantity that is zero but for round-off (``sum(a - mean(a)) < 0``), which another
    backend, summing in another order, may decide the other way. Such a program is unstable,
    not a backend computing wrongly."""
    rng = np.random.default_rng(0)
    for _ in range(tries):
        moved = [a + 1e-12 * (np.abs(a) + 1e-3) * rng.normal(size=np.shape(a)) for a in ref.args]
        if not np.isclose(float(ref.f(*_fresh(moved))), ref.value, rtol=1e-9, atol=1e-9):
            return True
    return False


def transforms(f: Callable[..., Any], wrt: Any) -> tuple[Any, Any]:
    """``(value_and_grad(f, wrt), jvp(f, wrt))``; a refusal raises :class:`Refused`."""
    try:
        vg = gradlab.value_and_grad(f, wrt)
    except (GradlabSyntaxError, NoRuleError) as e:
        raise Refused(construct_of(e), "grad", e) from e
    try:
        fwd = gradlab.jvp(f, wrt)
    except (GradlabSyntaxError, NoRuleError) as e:
        raise Refused(construct_of(e), "jvp", e) from e
    return vg, fwd


def check_backend(framework: str, ref: Reference, vg: Any, fwd: Any, wrt: Any,
                  numpy_grads: list[np.ndarray] | None = None, forward: bool = True
                  ) -> list[np.ndarray]:
    """Check one backend (reverse mode, and forward mode unless ``forward`` is false);
    returns its gradients as NumPy arrays."""
    fargs = [to_framework(a, framework) for a in ref.args]
    context = f"on {framework}"
    value, grads = vg(*fargs)
    grads = list(grads) if isinstance(wrt, tuple) else [grads]
    assert len(grads) == len(ref.wrt)
    value = float(to_numpy(value))
    if not np.isclose(value, ref.value, rtol=1e-9, atol=1e-9) and decided_by_round_off(ref):
        raise Unstable(f"a branch decided by round-off: {value} {context}, {ref.value} in NumPy")
    np.testing.assert_allclose(value, ref.value, rtol=1e-9, atol=1e-9,
                               err_msg=f"forward value {context}")
    out = []
    for k, (position, g) in enumerate(zip(ref.wrt, grads)):
        if framework != "numpy":
            assert type(g).__module__.split(".")[0] == type(fargs[position]).__module__.split(
                ".")[0], f"gradient {k} left the inputs' framework {context}: {type(g)}"
        got = np.asarray(to_numpy(g), dtype=np.float64)
        assert got.shape == ref.args[position].shape, (
            f"gradient {k} has shape {got.shape}, parameter {position} has "
            f"{ref.args[position].shape} {context}")
        np.testing.assert_allclose(got, ref.fd[k], rtol=RTOL, atol=ATOL * ref.scale,
                                   err_msg=f"gradient wrt parameter {position} vs finite "
                                           f"differences {context}")
        if numpy_grads is not None:
            np.testing.assert_allclose(got, numpy_grads[k], rtol=BACKEND_RTOL,
                                       atol=1e-9 * ref.scale,
                                       err_msg=f"gradient wrt parameter {position}: {framework}"
                                               f" vs numpy")
        out.append(got)
    if forward:
        check_jvp(framework, ref, fwd, wrt, numpy_grads if numpy_grads is not None else out)
    return out


def check_jvp(framework: str, ref: Reference, fwd: Any, wrt: Any, grads: list[np.ndarray]
              ) -> None:
    """Forward mode: the jvp is <grad, v> (``grads``: NumPy's, checked against finite
    differences)."""
    fargs = [to_framework(a, framework) for a in ref.args]
    context = f"on {framework}"
    ftangents = [to_framework(t, framework) for t in ref.tangents]
    tangent = tuple(ftangents) if isinstance(wrt, tuple) else ftangents[0]
    jvalue, derivative = fwd(*fargs, tangent)
    np.testing.assert_allclose(float(to_numpy(jvalue)), ref.value, rtol=1e-9, atol=1e-9,
                               err_msg=f"jvp value {context}")
    dot = sum(float(np.sum(g * t)) for g, t in zip(grads, ref.tangents))
    tscale = max(1.0, sum(float(np.sum(np.abs(g * t))) for g, t in zip(grads, ref.tangents)))
    np.testing.assert_allclose(float(to_numpy(derivative)), dot, rtol=BACKEND_RTOL,
                               atol=1e-9 * tscale, err_msg=f"jvp vs <grad, v> {context}")


# --- regression files ---------------------------------------------------------------------------
def regression_source(source: str, shapes: Any, wrt: Any, seed: int, reason: str,
                      xfail: str | None = None) -> str:
    doc = textwrap.indent(reason.strip()[:1500], "    ").replace('"""', "'''")
    body = source.split("\n", 1)[1] if source.startswith("import numpy as np\n") else source
    return (f'"""A generated program gradlab got wrong, shrunk by hypothesis '
            f'(tests/hardening/test_generated.py).\n\nFailure:\n{doc}\n"""\n'
            f"import numpy as np\n{body.rstrip()}\n\n\n"
            f"SHAPES = {tuple(tuple(s) for s in shapes)!r}\n"
            f"WRT = {wrt!r}\n"
            f"SEED = {seed!r}\n"
            f"XFAIL = {xfail!r}\n")


def save_regression(source: str, shapes: Any, wrt: Any, seed: int, reason: str,
                    xfail: str | None = None) -> str:
    os.makedirs(REGRESSIONS, exist_ok=True)
    digest = hashlib.sha1(f"{source}{shapes}{wrt}{seed}".encode()).hexdigest()[:10]
    path = os.path.join(REGRESSIONS, f"{digest}.py")
    if not os.path.exists(path):
        with open(path, "w") as fh:
            fh.write(regression_source(source, shapes, wrt, seed, reason, xfail))
    return path
