"""The exceptions gradlab raises (gradlab.errors): one base class to catch, and a syntax error
that points into the user's file."""
from __future__ import annotations

import numpy as np
import pytest

import gradlab
from gradlab.errors import BackendError, GradlabError, GradlabSyntaxError, NoRuleError


def test_every_error_is_a_gradlab_error_and_a_backend_error_a_type_error_too() -> None:
    for error in (GradlabSyntaxError, NoRuleError, BackendError):
        assert issubclass(error, GradlabError)
    assert issubclass(BackendError, TypeError)   # code that catches TypeError still catches it
    assert gradlab.GradlabError is GradlabError and gradlab.BackendError is BackendError


def test_a_syntax_error_quotes_the_users_line_and_where_it_is() -> None:
    error = GradlabSyntaxError("cannot differentiate through a generator", construct="yield",
                               filename="model.py", lineno=12, line="    yield x * 2\n")
    assert str(error) == ("cannot differentiate through a generator\n  at model.py, line 12:\n"
                          "    yield x * 2")
    assert (error.construct, error.filename, error.lineno, error.line) == \
        ("yield", "model.py", 12, "yield x * 2")


def test_a_syntax_error_without_a_line_names_the_file_only() -> None:
    error = GradlabSyntaxError("no source")
    assert str(error) == "no source\n  at <unknown>"
    assert error.lineno is None and error.line == ""


def uses_try(x):
    try:
        return np.sum(x)
    except ValueError:
        return 0.0


def test_a_refused_construct_points_into_this_file() -> None:
    with pytest.raises(GradlabSyntaxError) as info:
        gradlab.grad(uses_try)(np.ones(2))
    assert info.value.filename == __file__
    assert info.value.line == "try:"
    assert info.value.lineno == uses_try.__code__.co_firstlineno + 1
