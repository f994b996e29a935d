"""How the people fuzzer's oracle judges what finite differences cannot: a NaN, by the
framework's own autodiff (for a program that reads ``math`` or ``float``, by its twin,
``people/twins.py``, which that autodiff follows); a value the function itself computes in
float32 on a backend, to float32's precision."""
from __future__ import annotations

import numpy as np
import pytest

from tests.conftest import require
from tests.hardening.people.inputs import setup
from tests.hardening.people.oracle import Checker, nan_like_autodiff
from tests.hardening.people.program import Param, PeopleProgram, load
from tests.hardening.people.reference import Reference

#: Its denominator is sqrt(0) + 1e-6, so autodiff's derivative is 0 * inf = NaN where the
#: function is constant; ``math.acos`` stops JAX's autodiff of the program itself.
COSINE_OF_A_ZERO_VECTOR = '''import math

import jax.numpy as jnp


def f(x):
    v1 = x - x
    v2 = jnp.sum(x * v1) / (jnp.sqrt(jnp.sum(x ** 2)) * jnp.sqrt(jnp.sum(v1 ** 2)) + 1e-6)
    v8 = math.acos(v2 * 0.5)
    v9 = float(jnp.tanh(x[0]))
    return jnp.sum(v2 * x) + v8 + v9
'''


def _program(source: str) -> PeopleProgram:
    return PeopleProgram(source, "jax", (Param("x", (4,), "float64", False),), 0, 7)


def test_a_nan_where_the_twin_s_autodiff_has_one_is_autodiff_s_answer() -> None:
    require("jax")
    setup("jax")
    verdict = Checker(["jax"]).run(_program(COSINE_OF_A_ZERO_VECTOR))
    assert not verdict.invalid
    assert not verdict.failures, [c.detail for c in verdict.failures]
    assert any(c.status == "undefined" or c.status == "right" for c in verdict.checks)


def test_a_nan_elsewhere_is_still_wrong() -> None:
    """The twin's autodiff has NaN in every entry here (the cosine's sqrt(0) reaches all of
    them) and, through ``float``, tanh's derivative in the first: a NaN in one entry only, or
    a finite number where it has NaN, is not its answer."""
    require("jax")
    setup("jax")
    program = _program(COSINE_OF_A_ZERO_VECTOR)
    ref = Reference(program, load(program).f)
    assert nan_like_autodiff("grad", np.full(4, np.nan), ref)
    assert not nan_like_autodiff("grad", np.array([np.nan, 0.0, 0.0, 0.0]), ref)
    assert not nan_like_autodiff("grad", np.zeros(4), ref)


@pytest.mark.parametrize("dialect", ["torch", "tensorflow"])
def test_math_in_a_twin_is_the_framework_s(dialect: str) -> None:
    """``math.atan2(v, 2.0)`` and ``math.log(v, 2)`` of a tensor differentiate as the
    framework's own arctan2 and log."""
    require(dialect)
    setup(dialect)
    source = ("import math\n\n\ndef f(x):\n"
              "    return math.atan2(x[0], 2.0) + math.log(x[1] * x[1] + 1.0, 2) + "
              "float(x[2]) * 3.0\n")
    program = PeopleProgram(source, dialect, (Param("x", (3,), "float64", False),), 0, 3)
    ref = Reference(program, load(program).f)
    from tests.hardening.people.twins import with_traceable_math
    got = np.asarray(with_traceable_math(ref).autodiff("grad"), dtype=np.float64).ravel()
    x = np.asarray(ref.inputs[0], dtype=np.float64)
    want = [2.0 / (4.0 + x[0] ** 2), 2 * x[1] / ((x[1] ** 2 + 1.0) * np.log(2.0)), 3.0]
    np.testing.assert_allclose(got, want, rtol=1e-10)


ARGMIN_TIMES_ONE = '''import math

import numpy as np


def f(x, b):
    v1 = x.argmin(1)
    v2 = math.exp(v1[1])
    return v2 + (v1 * 1.0).mean() + np.sum(b * b)
'''


def test_a_value_the_function_computes_in_float32_is_judged_to_float32() -> None:
    """NumPy code given torch tensors: ``argmin(x) * 1.0`` is float32 on torch, so the
    function's own value is float32, and gradlab's, within float32's precision of it, is
    right even where NumPy's float64 value happens to round to the float32 one (people
    fuzzer seed 6565); a value off by more is still wrong."""
    from tests.hardening.people.oracle import own_value_on
    require("torch")
    setup("torch")
    program = PeopleProgram(ARGMIN_TIMES_ONE, "numpy", (Param("x", (3, 3), "float64", False),
                                                        Param("b", (3,), "float64", False)),
                            (0, 1), 7)
    verdict = Checker(["torch"]).run(program)
    assert not verdict.failures, [c.detail for c in verdict.failures]
    ref = Reference(program, load(program).f)
    assert not own_value_on(ref, "torch", ref.value * (1 + 1e-4))
