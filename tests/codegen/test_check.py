"""Refusals that need the activity analysis (gradlab.codegen.check): code kept as written is
refused only where a value carrying a gradient flows into it, at the user's line."""
from __future__ import annotations

import numpy as np
import pytest

import gradlab
from gradlab.errors import GradlabSyntaxError, NoRuleError


def and_of_values(x, n):
    scale = (n > 1) and 3.0                      # reads n only
    y = np.sum(x) * scale                        # y carries x's gradient
    z = (n > 1) and y
    return z


def and_of_constants(x, n):
    scale = (n > 1) and 3.0
    return np.sum(x) * scale


def test_and_or_is_refused_only_where_a_gradient_flows_through_it() -> None:
    with pytest.raises(GradlabSyntaxError, match="`and`/`or` between values that carry a "
                                                 "gradient") as info:
        gradlab.grad(and_of_values)
    assert info.value.line == "z = (n > 1) and y"
    np.testing.assert_allclose(gradlab.grad(and_of_constants)(np.ones(2), 2.0), [3.0, 3.0])


def through_a_dict(x, n):
    d = {"a": x * 2.0, "n": n}
    return np.sum(d["a"]) * n * len(d)


def test_a_dict_built_from_a_differentiated_value_names_it() -> None:
    """A dict gradlab cannot replace by its entries (codegen/dicts.py): here passed whole to
    len()."""
    with pytest.raises(GradlabSyntaxError, match="a dict is built from x, which carries a "
                                                 "gradient.*d is passed to a call"):
        gradlab.grad(through_a_dict, wrt="x")
    with pytest.raises(GradlabSyntaxError, match="a dict is built from n"):
        gradlab.grad(through_a_dict, wrt="n")


def unknown_on_a_constant(x, n):
    return np.sum(x) * 2.0 + np.sinc(n)


def unknown_on_a_value(x, n):
    return np.sum(np.sinc(x)) + n


def test_a_function_without_a_rule_is_refused_only_on_a_value_with_a_gradient() -> None:
    np.testing.assert_allclose(gradlab.grad(unknown_on_a_constant)(np.ones(2), 0.5), [2.0, 2.0])
    with pytest.raises(NoRuleError, match=r"no derivative rule for np.sinc \(line \d+: return "
                                          r"np.sum\(np.sinc\(x\)\) \+ n\)"):
        gradlab.grad(unknown_on_a_value)
    assert gradlab.grad(unknown_on_a_value, wrt="n")(np.ones(2), 0.5) == 1.0


def list_item_set(x, n):
    xs = [x, x * n]
    xs[0] = x * 2.0
    return np.sum(xs[0]) + np.sum(xs[1])


def test_a_list_changed_in_place_is_refused_in_reverse_mode_only() -> None:
    with pytest.raises(GradlabSyntaxError, match="changing a list that carries a gradient .* "
                                                 "cannot be differentiated in reverse mode"):
        gradlab.grad(list_item_set)
    value, tangent = gradlab.jvp(list_item_set)(np.ones(2), 2.0, np.ones(2))
    assert value == 8.0 and tangent == 8.0     # d/dx of sum(2x) + sum(nx), n = 2, along ones


def through_getattr(x):
    return getattr(np, "sum")(x ** 2)


def test_a_computed_callable_is_refused_without_a_rule_template_that_cannot_parse() -> None:
    """The suggestion was ``def getattr(np, 'sum')_adjoint(...)``, not Python."""
    with pytest.raises(NoRuleError, match="call it by its name") as info:
        gradlab.grad(through_getattr)(np.ones(2))
    assert "_adjoint(" not in str(info.value)
