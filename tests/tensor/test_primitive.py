"""The primitive record (gradlab.tensor.primitive): what ``prim(...)`` makes of a table row, and
the mistakes in a row it refuses."""
from __future__ import annotations

import inspect

import pytest

from gradlab.tensor.primitive import (BROADCASTING, GRADIENT_CODE, HELPER, REDUCTION, Spelling, S,
                                      parse_signature, prim)


def test_a_signature_is_parsed_once_with_its_keyword_only_part() -> None:
    sig = parse_signature("(x, axis=None, *, keepdims=False)")
    assert list(sig.parameters) == ["x", "axis", "keepdims"]
    assert sig.parameters["keepdims"].kind is inspect.Parameter.KEYWORD_ONLY
    assert sig.parameters["axis"].default is None
    assert parse_signature("(x, axis=None, *, keepdims=False)") is sig


def test_value_parameters_are_found_by_name_and_options_are_not() -> None:
    record = prim("where3", "(condition, x, y)", BROADCASTING, no_gradient=("condition",))
    assert record.arrays == ("condition", "x", "y")
    assert record.gradient_params == ("x", "y") and record.differentiable
    reduction = prim("sum2", "(x, axis=None, keepdims=False)", REDUCTION, linear=(0,))
    assert reduction.arrays == ("x",) and reduction.linear == (0,)
    assert list(reduction.parameters()) == ["x", "axis", "keepdims"]


def test_a_nondifferentiable_record_has_no_gradient_parameters() -> None:
    record = prim("argmax2", "(x, axis=None)", nondiff="an index is piecewise constant")
    assert not record.differentiable and record.gradient_params == ()
    assert record.nondifferentiable == "an index is piecewise constant"


def test_spellings_are_collected_by_family() -> None:
    record = prim("var2", "(x, axis=None, ddof=0)", np="var", torch=S("var", defaults={"ddof": 1}),
                  jax=["var", "numpy.var"], tf=None)
    assert record.spellings["np"] == (Spelling("var"),)
    assert record.spellings["torch"][0].defaults == {"ddof": 1}
    assert [s.names for s in record.spellings["jax"]] == ["var", "numpy.var"]
    assert "tf" not in record.spellings


def test_a_helper_is_gradient_code_too() -> None:
    assert GRADIENT_CODE in prim("unbroadcast2", "(g, x)", HELPER).kinds


def test_mistakes_in_a_row_are_refused_by_name() -> None:
    with pytest.raises(ValueError, match=r"bad: unknown kinds \['elementwise'\]"):
        prim("bad", "(x)", "elementwise")
    with pytest.raises(ValueError, match=r"bad: \['z'\] are not parameters of \(x, y\)"):
        prim("bad", "(x, y)", arrays=("x", "z"))
