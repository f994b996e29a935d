"""One transform request end to end (gradlab.codegen.program): the stages in their order, the
gradient first and the helpers after it, the dialect a function is written in."""
from __future__ import annotations

import inspect
import math
import re

import numpy as np
import pytest

from gradlab.codegen import program as program_module
from gradlab.codegen.program import (STAGES, Program, compile_program, normalize_function,
                                     written_dialect)
from gradlab.tensor import backend


def helper(a):
    return np.tanh(a) * 2.0


def loss(x, W):
    h = helper(x @ W)
    return np.sum(h ** 2)


def test_the_gradient_comes_first_then_what_it_calls() -> None:
    program = Program(normalize_function(loss))
    gradient = program.gradient(["W"])
    assert (gradient.name, gradient.seed) == ("dloss_dW", "seed")
    text = program.source().text
    defs = re.findall(r"^def (\w+)\(", text, flags=re.M)
    assert defs[0] == "dloss_dW" and "helper" in defs and len(defs) == len(set(defs))
    assert text.startswith("def dloss_dW(x, W, *, seed=1.0):")


def test_the_compiled_program_gives_the_gradient() -> None:
    program = Program(normalize_function(loss))
    gradient = program.gradient(["W"])
    factory, source, filename = compile_program(program, "test")
    free = dict(program.free)
    free["gl"] = backend("numpy")
    df = factory(**free)[gradient.name]
    rng = np.random.default_rng(1)
    x, W = rng.normal(size=(3, 2)), rng.normal(size=(2, 2))
    a = np.tanh(x @ W)
    expected = x.T @ (2 * (2 * a) * 2 * (1 - a ** 2))
    np.testing.assert_allclose(df(x, W), expected, rtol=1e-12)
    assert filename.startswith("<gradlab:") and source.text == program.source().text


def test_every_stage_is_marked_on_a_line_of_this_module_that_runs_it() -> None:
    """The README's stages (``STAGES``) can each be found where they run: a line of code
    ending in ``# <stage>``."""
    text = inspect.getsource(program_module)
    marks = re.findall(r"^\s*[^#\s].*\s# (\w+)(?:[:( ].*)?$", text, flags=re.M)
    assert set(STAGES) <= set(marks)
    assert len(STAGES) == len(set(STAGES))


def numpy_code(x):
    return np.sum(x)


def torch_code(x):
    return torch.sum(x)  # noqa: F821 - bound by the test (torch is optional)


def math_code(x):
    return math.sin(x)


def no_framework(x):
    return x.var()


def test_the_dialect_is_the_framework_the_code_names() -> None:
    globals()["torch"] = pytest.importorskip("torch")
    assert written_dialect(numpy_code) == "numpy"
    assert written_dialect(torch_code) == "torch"
    assert written_dialect(no_framework) is None
    assert written_dialect(math_code) is None          # math is not an array framework
    assert written_dialect(np.sum) is None             # no Python code to read
