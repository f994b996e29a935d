"""One dispatch for what a mode makes of a statement (gradlab.codegen.dispatch)."""
from __future__ import annotations

import numpy as np
import pytest

from gradlab.codegen import ir
from gradlab.codegen.dispatch import StatementRules, rule_for
from gradlab.codegen.ir import Op, OpKind
from gradlab.codegen.rules import ADJOINTS
from gradlab.errors import NoRuleError
from tests.codegen.ir_text import normalized


class MethodNames(StatementRules[str]):
    """A mode that says which method each statement reached."""

    def nothing(self, s):
        return "nothing"

    def primitive(self, s):
        return f"primitive {s.op.prim}"

    def list_item(self, s):
        return "list_item"

    def copy(self, s):
        return "copy"

    def sequence(self, s):
        return "sequence"

    def user_call(self, s):
        return "user_call"

    def pop(self, s):
        return "pop"

    def append(self, s):
        return "append"

    def list_set(self, s):
        return "list_set"

    def kept_effect(self, s):
        return "kept_effect"


def helper(v):
    return v * 2.0


def every_kind(x):
    xs = [x, x]
    xs.append(helper(x))
    xs[0] = np.tanh(x)
    y = xs.pop()
    z = xs[1]
    w = z
    print(w)
    return np.sum(y + w)


def test_each_statement_reaches_the_method_of_its_kind() -> None:
    mode = MethodNames()
    got = [mode.rules_for(s) for s in normalized(every_kind).ir.body]
    assert got == ["sequence", "user_call", "append", "primitive tanh", "list_set", "pop",
                   "list_item", "copy", "kept_effect", "primitive add", "primitive sum"]


def test_what_a_mode_does_not_define_is_nothing() -> None:
    class OnlyNothing(StatementRules[str]):
        def nothing(self, s):
            return "nothing"
    mode = OnlyNothing()
    assert {mode.rules_for(s) for s in ir.walk(normalized(every_kind).ir.body)} == {"nothing"}
    with pytest.raises(NotImplementedError):
        StatementRules().rules_for(ir.Break(None))


def test_rule_for_a_primitive_without_a_rule_names_it() -> None:
    assert rule_for(ADJOINTS, Op(OpKind.PRIM, "tanh"), "no rule for {}") is ADJOINTS["tanh"]
    assert rule_for(ADJOINTS, Op(OpKind.PRIM, "argmax"), "no rule for {}") is None
    with pytest.raises(NoRuleError, match="no rule for np.made_up"):
        rule_for(ADJOINTS, Op(OpKind.PRIM, "made_up", source="np.made_up"), "no rule for {}")
