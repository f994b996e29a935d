"""Names for what generated code computes (gradlab.codegen.naming): readable, never a clash."""
from __future__ import annotations

import gast
import pytest

from gradlab.codegen.naming import Names, binop_hint, describe


def test_a_fresh_name_avoids_the_users_names_keywords_and_earlier_fresh_names() -> None:
    names = Names({"h", "h_2"})
    assert names.fresh("h") == "h_3"
    assert names.fresh("h") == "h_4"
    assert names.fresh("lambda") == "lambda_2"
    assert names.fresh("dx") == "dx"
    assert names.fresh("dx") == "dx_2"
    names.reserve("y")
    assert names.fresh("y") == "y_2"


@pytest.mark.parametrize("hint, name", [("x.T @ W", "x_T_W"), ("2x", "v2x"), ("---", "t"),
                                        ("a" * 40, "a" * 32), ("w_" * 20, "w_" * 15 + "w")])
def test_a_hint_is_made_an_identifier_of_at_most_32_characters(hint, name) -> None:
    got = Names(set()).fresh(hint)
    assert got == name and got.isidentifier() and len(got) <= 32


def test_describe_names_literals_and_names() -> None:
    assert describe(gast.Name("h", gast.Load(), None, None)) == "h"
    assert describe(gast.Constant(2.0, None)) == "2"
    assert describe(gast.Constant(0.5, None)) == "0_5"
    assert describe(gast.Constant(-3, None)) == "neg3"
    assert describe(gast.Call(gast.Name("f", gast.Load(), None, None), [], [])) == ""


@pytest.mark.parametrize("op, left, right, hint", [
    (gast.MatMult(), "x", "W", "xW"), (gast.MatMult(), "inputs", "weights", "inputs_at_weights"),
    (gast.Pow(), "h", "2", "h_pow2"), (gast.Add(), "a", "b", "a_plus_b"),
    (gast.Div(), "a", "", "a_over_t"), (gast.Mult(), "activations", "weights", "product"),
    (gast.BitAnd(), "a", "b", "a_op_b")])
def test_binop_hint_says_what_the_operation_gives(op, left, right, hint) -> None:
    assert binop_hint(op, left, right) == hint
