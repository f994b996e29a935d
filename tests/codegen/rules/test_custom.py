"""The user's own primitives (gradlab.codegen.rules.custom): each function its own primitive
name, even when two share a ``__name__``; its rule checked against its signature."""
from __future__ import annotations

import numpy as np
import pytest

from gradlab.codegen.rules import ADJOINTS, NONDIFFERENTIABLE
from gradlab.codegen.rules.custom import (custom_function, custom_rule_for, custom_signature,
                                          is_custom, register_custom,
                                          register_nondifferentiable)
from gradlab.errors import GradlabError


def make_twin(scale):
    def twin(x):
        return x * scale
    return twin


def twin_adjoint(y, x):
    dx = dy * 2.0  # noqa: F821


def test_two_functions_of_one_name_become_two_primitives() -> None:
    first, second = make_twin(2.0), make_twin(3.0)
    register_custom(first, twin_adjoint, "adjoint")
    register_custom(second, twin_adjoint, "adjoint")
    a, b = custom_rule_for(first), custom_rule_for(second)
    assert a is not None and b is not None and a != b and a.startswith("twin")
    assert custom_function(a) is first and custom_function(b) is second
    assert is_custom(a) and ADJOINTS[a].params == ["y", "x"]
    register_custom(first, twin_adjoint, "adjoint")              # again: the same name
    assert custom_rule_for(first) == a
    assert custom_rule_for(None) is None and custom_rule_for(np.sin) is None


def scaled(x, scale=2.0):
    return x * scale


def scaled_adjoint(y, x):
    dx = dy * 2.0  # noqa: F821


def test_a_rule_may_name_the_required_parameters_only() -> None:
    register_custom(scaled, scaled_adjoint, "adjoint")
    prim = custom_rule_for(scaled)
    assert list(custom_signature(prim).parameters) == ["x"]      # calls bound by the rule's


def wrong_adjoint(y, a, b):
    da = dy  # noqa: F821


def test_a_rule_that_does_not_match_the_signature_says_what_it_expects() -> None:
    with pytest.raises(GradlabError, match=r"does not match scaled\(x, scale=2.0\): its "
                                           r"parameters must be the result followed by x"):
        register_custom(scaled, wrong_adjoint, "adjoint")
    with pytest.raises(GradlabError, match="@gradlab.tangent_rule expects the function the "
                                           "rule is for, got 3"):
        register_custom(3, twin_adjoint, "tangent")


def picks_an_index(x):
    return int(np.argmax(x))


def test_a_nondifferentiable_function_is_a_primitive_without_rules() -> None:
    register_nondifferentiable(picks_an_index)
    prim = custom_rule_for(picks_an_index)
    assert prim in NONDIFFERENTIABLE and is_custom(prim) and prim not in ADJOINTS
