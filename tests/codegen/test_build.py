"""The builders of gast nodes every code-writing stage uses (gradlab.codegen.build)."""
from __future__ import annotations

import ast

import gast
import pytest

from gradlab.codegen.build import (REQUIRED, assign, call, comment, const, for_, function_def,
                                   if_, index_value, is_comment, name, not_plain_index, note,
                                   subscript_index, while_)
from gradlab.errors import GradlabError


def source(node) -> str:
    if isinstance(node, list):
        return "\n".join(source(n) for n in node)
    tree = gast.gast_to_ast(node)
    return ast.unparse(ast.fix_missing_locations(tree))


def index(text: str):
    return gast.parse(f"x[{text}]").body[0].value.slice


def test_constants_and_assignments_read_as_written() -> None:
    assert source(const(-2.5)) == "-2.5" and source(const((1, [2, None]))) == "(1, [2, None])"
    assert source(assign("y", call(name("f"), [name("x")], {"axis": const(0)}))) == \
        "y = f(x, axis=0)"
    assert source(assign(["a", "b"], name("t"))) == "a, b = t"
    assert source(assign(["a"], name("t"))) == "a = t"


def test_an_if_is_written_as_a_person_would() -> None:
    body, other = [assign("y", const(1))], [assign("y", const(2))]
    assert if_(name("c"), [], []) == []
    assert source(if_(name("c"), [], other)) == "if not c:\n    y = 2"
    assert source(if_(name("c"), body + [gast.Break()], other)) == \
        "if c:\n    y = 1\n    break\ny = 2"                # no else after a break
    assert source(if_(name("c"), body, other)) == "if c:\n    y = 1\nelse:\n    y = 2"


def test_empty_loops_get_pass() -> None:
    assert source(for_("i", name("r"), [])) == "for i in r:\n    pass"
    assert source(while_(name("c"), [])) == "while c:\n    pass"


@pytest.mark.parametrize("written, value", [
    ("1:", "slice(1, None)"), ("::2", "slice(None, None, 2)"), ("1:, 0", "(slice(1, None), 0)"),
    ("i", "i")])
def test_an_index_becomes_a_value_and_back(written, value) -> None:
    as_value = index_value(index(written))
    assert source(as_value) == value
    assert source(gast.Subscript(name("x"), subscript_index(as_value), gast.Load())) == \
        source(gast.Subscript(name("x"), index(written), gast.Load()))


@pytest.mark.parametrize("written, odd", [("[0, 2]", True), ("::-1", True), ("::k", True),
                                          ("::2", False), ("1:3", False), ("i", False)])
def test_indices_a_framework_reads_otherwise(written, odd) -> None:
    assert not_plain_index(index(written)) is odd
    assert not_plain_index(index_value(index(written))) is odd
    assert not_plain_index(3) is False


def test_comments_are_marked_statements_until_emitted() -> None:
    quoted, explained = comment("h = tanh(x)", 12), note("why")
    assert is_comment(quoted) and is_comment(explained)
    assert not is_comment(assign("y", const(1)))
    assert source(explained) == "__comment__(-1, 'why')"


def test_a_gradient_keeps_the_users_parameters_and_adds_its_own() -> None:
    args = gast.parse(ast.unparse(ast.parse(
        "def f(W, x, *, scale=2.0):\n    pass"))).body[0].args
    body = [gast.Return(value=name("dW"))]
    called = function_def("df", args, ["seed"], [1.0], body, keyword_only=True)
    assert source(called).splitlines()[0] == "def df(W, x, *, scale=2.0, seed=1.0):"
    helper = function_def("vjp", args, ["g"], [REQUIRED], body, keep_defaults=False)
    assert source(helper).splitlines()[0] == "def vjp(W, x, scale, g):"   # callers pass all
    with pytest.raises(GradlabError, match="a required parameter after defaults"):
        function_def("vjp", args, ["g"], [REQUIRED], body)
