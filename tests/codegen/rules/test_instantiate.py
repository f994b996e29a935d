"""A rule applied to one statement (gradlab.codegen.rules.instantiate): the template's names
replaced by the user's, branches on literal options decided, contributions only for arguments
that carry a gradient, and a refusal where a rule would give a silent zero."""
from __future__ import annotations

import ast
import itertools

import gast
import pytest

from gradlab.codegen.build import const, name
from gradlab.codegen.rules import ADJOINTS, TANGENTS, Contribution, RuleGap, instantiate
from gradlab.codegen.rules.templates import parse_template


def text(node) -> str:
    return ast.unparse(ast.fix_missing_locations(gast.gast_to_ast(node)))


def steps(rule, bindings, active=lambda e: isinstance(e, gast.Name), shape_of=None):
    counter = itertools.count()
    inst = instantiate(rule, bindings, lambda n: "d" + n, lambda h: f"{h}_{next(counter)}",
                       active, shape_of, label="the call")
    return [f"{s.target} += {text(s.expr)}" if isinstance(s, Contribution) else text(s.stmt)
            for s in inst.steps]


def test_the_users_names_replace_the_templates() -> None:
    assert steps(ADJOINTS["tanh"], {"y": name("h"), "x": name("a")}) == \
        ["a += (1.0 - h * h) * dh"]
    assert steps(TANGENTS["tanh"], {"y": name("h"), "x": name("a")}) == \
        ["h += (1.0 - h * h) * da"]


def test_an_argument_without_a_gradient_gets_no_contribution() -> None:
    bindings = {"z": name("p"), "x": name("a"), "y": name("b")}
    both = steps(ADJOINTS["multiply"], bindings)
    assert len(both) == 2 and both[0].startswith("a += ") and both[1].startswith("b += ")
    only_a = steps(ADJOINTS["multiply"], bindings, active=lambda e: text(e) == "a")
    assert only_a == [both[0]]


def test_a_branch_on_a_literal_option_is_decided_while_instantiating() -> None:
    full = steps(ADJOINTS["sum"], {"y": name("s"), "x": name("a"), "axis": const(None),
                                   "keepdims": const(False)})
    along = steps(ADJOINTS["sum"], {"y": name("s"), "x": name("a"), "axis": const(1),
                                    "keepdims": const(False)})
    assert full == ["a += gl.broadcast_like(ds, a)"]
    assert along == ["a += gl.broadcast_like(gl.expand_dims(ds, 1), a)"]


def test_shape_classes_drop_an_unbroadcast_that_can_do_nothing() -> None:
    bindings = {"z": name("p"), "x": name("a"), "y": name("b")}
    same = {"p": "c1", "a": "c1", "b": "c2"}
    kept = steps(ADJOINTS["multiply"], bindings)
    dropped = steps(ADJOINTS["multiply"], bindings, shape_of=lambda e: same.get(text(e)))
    assert "unbroadcast" in kept[0] and "unbroadcast" not in dropped[0]
    assert "unbroadcast" in dropped[1]                     # b may have been broadcast


def only_for_ord_one(y, x, ord=None):
    if ord == 1:
        dx = gl.sign(x) * dy  # noqa: F821


def test_a_rule_without_a_line_for_an_argument_with_a_gradient_is_refused() -> None:
    rule = parse_template(only_for_ord_one, "partial", "adjoint")
    assert steps(rule, {"y": name("n"), "x": name("a"), "ord": const(1)}) == \
        ["a += gl.sign(a) * dn"]
    with pytest.raises(RuleGap, match="the call"):
        steps(rule, {"y": name("n"), "x": name("a"), "ord": const(2)})
    assert steps(rule, {"y": name("n"), "x": name("a"), "ord": const(2)},
                 active=lambda e: False) == []          # no gradient asked: nothing missing


def test_a_value_the_rule_computes_once_is_a_temporary_with_a_fresh_name() -> None:
    lines = steps(ADJOINTS["max"], {"y": name("m"), "x": name("a"), "axis": const(None),
                                    "keepdims": const(False)})
    assert lines[0].startswith("mask_0 = gl.astype(gl.equal(a, m)")
    assert lines[1].startswith("a += ") and "mask_0" in lines[1]
