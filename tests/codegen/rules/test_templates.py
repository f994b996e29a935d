"""Rule templates and their tables (gradlab.codegen.rules.templates): a template is parsed when
first asked for, and a template that breaks the conventions is refused by name."""
from __future__ import annotations

import pytest

from gradlab.codegen.rules.templates import (ADJOINTS, TANGENTS, RuleTable, derivative_name,
                                             parse_template)
from gradlab.errors import GradlabError


def tanh_adjoint(y, x):
    """Docstrings are not part of the rule."""
    dx = (1.0 - y * y) * dy  # noqa: F821 - a template names the result's adjoint freely


def power_tangent(y, x, p=2.0):
    y_dot = p * x ** (p - 1) * x_dot  # noqa: F821


def test_a_template_is_parsed_into_its_parameters_reads_and_body() -> None:
    rule = parse_template(tanh_adjoint, "tanh", "adjoint")
    assert (rule.prim, rule.kind, rule.params) == ("tanh", "adjoint", ["y", "x"])
    assert rule.reads == {"y"} and rule.reads_result()
    assert len(rule.body) == 1                       # the docstring is dropped
    tangent = parse_template(power_tangent, "power", "tangent")
    assert tangent.defaults == {"p": 2.0} and tangent.reads == {"x", "p"}
    assert not tangent.reads_result()


def assigns_result_adjoint(y, x):
    dy = x


def tangent_assigns_argument(y, x):
    x_dot = y


def star_args(y, *xs):
    pass


@pytest.mark.parametrize("template, kind, message", [
    (assigns_result_adjoint, "adjoint", "assigns dy, the result's adjoint"),
    (tangent_assigns_argument, "tangent", "assigns x_dot; it should assign only y_dot"),
    (star_args, "adjoint", r"\*args/\*\*kwargs are not allowed"),
])
def test_a_template_breaking_the_conventions_is_refused(template, kind, message) -> None:
    with pytest.raises(GradlabError, match=message):
        parse_template(template, "p", kind)


def test_derivative_names() -> None:
    assert derivative_name("x", "adjoint") == "dx"
    assert derivative_name("x", "tangent") == "x_dot"


def test_a_table_parses_on_first_use_and_forgets_a_replaced_rule() -> None:
    table = RuleTable("adjoint")

    def counting(y, x):
        dx = dy  # noqa: F821
    table.register("p", counting)
    assert "p" in table and list(table) == ["p"] and len(table) == 1
    first = table["p"]
    assert table["p"] is first                        # parsed once
    table.register("p", tanh_adjoint)
    assert table["p"] is not first and table["p"].reads == {"y"}
    del table["p"]
    assert "p" not in table and len(table) == 0
    with pytest.raises(KeyError):
        del table["p"]


def test_the_built_in_tables_hold_both_modes_of_common_primitives() -> None:
    for prim in ("tanh", "exp", "matmul", "sum"):
        assert ADJOINTS[prim].kind == "adjoint" and TANGENTS[prim].kind == "tangent"
        assert ADJOINTS[prim].prim == prim
