"""Every call resolved to what it means (gradlab.codegen.resolve): a primitive however it is
spelled, the user's own function, or code kept as written."""
from __future__ import annotations

import math

import numpy
import numpy as np
import pytest
from numpy import tanh

from gradlab.codegen import ir
from gradlab.codegen.resolve import bindings, dotted
from tests.codegen.ir_text import normalized, text


def helper(a):
    return a * 2.0


def three_spellings(x):
    return np.tanh(x) + numpy.tanh(x) + tanh(x)


def test_a_primitive_is_found_however_the_module_is_named() -> None:
    assert text(three_spellings) == [                 # one primitive, so computed once
        "tanh_x = tanh(x)",
        "tanh_x_plus_tanh_x = add(tanh_x, tanh_x)",
        "three_spellings = add(tanh_x_plus_tanh_x, tanh_x)",
    ]


def calls_of_every_kind(x, xs):
    b = x.sum(axis=0) + np.sum(x, 0) + len(xs)
    c = helper(x)
    n = math.sqrt(2.0)
    print(n)
    return np.sum(b + c) * n


def test_methods_user_functions_and_builtins_each_resolve_to_their_kind() -> None:
    assert text(calls_of_every_kind) == [
        "sum_x = sum(x, axis=0)",                 # the method and the function: one primitive
        "sum_x_2 = sum(x, axis=0)",               # the positional axis bound by name
        "sum_x_plus_sum_x_2 = add(sum_x, sum_x_2)",
        "b = add(sum_x_plus_sum_x_2, len(xs))",   # len: kept as written, inline
        "c = user(x)",                            # the user's own function
        "n = sqrt(2.0)",
        "static: print(n)",
        "b_plus_c = add(b, c)",
        "sum_b_plus_c = sum(b_plus_c)",
        "calls_of_every_kind = multiply(sum_b_plus_c, n)",
    ]
    user = next(s for s in ir.walk(normalized(calls_of_every_kind).ir.body)
                if isinstance(s, ir.Assign) and s.op.kind is ir.OpKind.USER)
    assert user.op.callee is helper


def test_bindings_name_each_argument_by_its_parameter() -> None:
    sums = [s.op for s in ir.walk(normalized(calls_of_every_kind).ir.body)
            if isinstance(s, ir.Assign) and s.op.kind is ir.OpKind.PRIM and s.op.prim == "sum"]
    assert [s.source for s in sums] == ["x.sum", "np.sum", "np.sum"]
    first, second, third = (bindings(op) for op in sums)
    assert first.keys() == second.keys() == {"x", "axis"} and third.keys() == {"x"}
    assert first["x"] == second["x"] == "x" and third["x"] == "b_plus_c"


def test_dotted_reads_a_chain_of_attributes() -> None:
    import gast
    node = gast.parse("np.linalg.norm").body[0].value
    assert dotted(node) == ["np", "linalg", "norm"]
    assert dotted(gast.parse("f(x).T").body[0].value) is None


def torch_spelling(x):
    return torch.sum(torch.tanh(x), dim=0)  # noqa: F821 - bound by the test (torch is optional)


def test_a_frameworks_argument_names_map_to_the_primitives() -> None:
    globals()["torch"] = pytest.importorskip("torch")
    assert text(torch_spelling) == ["tanh_x = tanh(x)", "torch_spelling = sum(tanh_x, axis=0)"]


def norms_of_infinity(x):
    a = np.linalg.norm(x, np.inf) + np.linalg.norm(x, -math.inf)
    return a + np.linalg.norm(x, ord=float("inf")) + np.linalg.norm(x, float("-inf"), axis=0)


def norm_of_a_local_named_inf(x, np):
    return numpy.linalg.norm(x, np.inf)


def test_infinity_as_an_option_is_the_literal_rules_read() -> None:
    """np.inf, -math.inf and float('inf') as an option are written float('inf'); an attribute
    of something that is not a module (a parameter named np) is left as written."""
    lines = text(norms_of_infinity)
    assert lines[:2] == ["linalg_norm_x = linalg_norm(x, ord=float('inf'))",
                         "linalg_norm_x_2 = linalg_norm(x, ord=-float('inf'))"]
    assert "linalg_norm(x, ord=float('inf'))" in lines[3]
    assert lines[5] == "linalg_norm_x_4 = linalg_norm(x, ord=-float('inf'), axis=0)"
    assert text(norm_of_a_local_named_inf)[0] == \
        "norm_of_a_local_named_inf = linalg_norm(x, ord=np.inf)"
