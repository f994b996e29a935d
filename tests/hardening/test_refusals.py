"""Refuse, never guess: programs gradlab cannot differentiate (beyond tests/codegen/test_errors.py)
must raise a GradlabError naming the construct and quoting the user's line, in reverse and in
forward mode, and never produce a function.

The programs live in ``refusal_programs.py``. A case given a ``bug`` is marked xfail(strict): a
gradlab bug, where gradlab *produces* a function (whose gradient is silently wrong, or which fails
only when called); the reason says what it does instead. None is open: the 18 found by the
hardening work (out=, np.copyto, np.put, ufunc.at, operator.iadd, fill_diagonal, math and
builtin functions without a rule, eval, `+=` on an alias or a view, writes into views, unbound
names, async def) are refused now.
"""
from __future__ import annotations

import inspect
from dataclasses import dataclass

import numpy as np
import pytest

import gradlab
from gradlab.errors import GradlabError, GradlabSyntaxError
from tests.hardening import refusal_programs as P


@dataclass
class Refusal:
    fn: object
    construct: tuple[str, ...]   # the message names one of these
    line: str                    # and quotes this (part of the) line
    bug: str | None = None       # xfail reason: what gradlab does instead


CASES = [
    # unsupported syntax
    Refusal(P.uses_yield_from, ("yield from",), "yield from [np.sum(x)]"),
    Refusal(P.uses_set_comprehension, ("set comprehension",), "s = {float(v) for v in x}"),
    Refusal(P.uses_dict_comprehension, ("dict comprehension",), "d = {i: x[i] for i in range(3)}"),
    Refusal(P.uses_dict_iterated, ("a loop over the dict d",), "for k in d:"),
    Refusal(P.uses_dict_written_at_computed_key, ("the dict d",), "d[k] = x"),
    Refusal(P.uses_while_else, ("while...else",), "while i < 3:"),
    Refusal(P.uses_match, ("match statements",), "match x.ndim:"),
    Refusal(P.uses_async, ("async",), "async def uses_async(x):"),
    Refusal(P.uses_star_unpacking, ("*-unpacking",), "a, *rest = x * 2.0"),
    Refusal(P.uses_nested_subscript_store, ("only a variable's items can be assigned",),
            "y[0][1] = x[0]"),
    Refusal(P.uses_attribute_subscript_store, ("only a variable's items can be assigned",),
            "y.T[0] = x[:3]"),
    Refusal(P.uses_attribute_augassign, ("updated in place",), "SCALER.k += 1.0"),
    Refusal(P.uses_iter_loop, ("loops over range",), "for v in iter(x):"),
    Refusal(P.uses_map_loop, ("loops over range",), "for v in map(np.sin, x):"),
    Refusal(P.uses_ifexp_in_condition, ("conditional expression",),
            "if (x[0] if x[1] > 0 else x[2]) > 0.0:"),
    Refusal(P.uses_with_errstate, ("with-blocks",), 'with np.errstate(divide="ignore"):'),
    Refusal(P.uses_lambda_default, ("lambda",), "def uses_lambda_default(x, f=lambda v: v):"),
    # mutations the transformer cannot follow
    Refusal(P.uses_augassign_on_alias, ("in-place", "same array"), "y += x"),
    Refusal(P.uses_augassign_on_view, ("in-place", "same array", "view"), "y += x"),
    Refusal(P.uses_augassign_on_parameter, ("in-place", "same array"), "y *= 2.0"),
    Refusal(P.uses_index_write_into_view, ("in-place", "same array", "view"), "z[0] = 0.0"),
    Refusal(P.uses_fill, ("in-place update",), "y.fill(1.0)"),
    Refusal(P.uses_out_argument, ("out=", "in-place"), "np.add(a, x, out=a)"),
    Refusal(P.uses_out_argument_unary, ("out=", "in-place"), "np.sin(x, out=y)"),
    Refusal(P.uses_copyto, ("copyto", "in-place"), "np.copyto(y, x * x)"),
    Refusal(P.uses_put, ("np.put", "in-place"), "np.put(y, [0], x[1] ** 2)"),
    Refusal(P.uses_ufunc_at, ("add.at", "in-place"), "np.add.at(y, [0, 0, 1], x[:3])"),
    Refusal(P.uses_dunder_iadd, ("in-place update",), "y.__iadd__(x)"),
    Refusal(P.uses_operator_iadd, ("iadd", "in-place"), "operator.iadd(y, x)"),
    Refusal(P.uses_torch_style_inplace, ("in-place update",), "y.add_(x)"),
    Refusal(P.uses_fill_diagonal, ("fill_diagonal", "in-place"), "np.fill_diagonal(y, 0.0)"),
    Refusal(P.uses_inplace_on_parameter, ("in-place update",), "x.sort()"),
    Refusal(P.uses_resize, ("in-place update",), "y.resize((2, 2))"),
    # calls with no rule
    Refusal(P.uses_no_rule_scipy, ("no derivative rule for scipy.special.gamma",),
            "return np.sum(scipy.special.gamma(x * x + 1.0))"),
    Refusal(P.uses_no_rule_cbrt, ("no derivative rule for np.cbrt",),
            "return np.sum(np.cbrt(x * 2.0))"),
    Refusal(P.uses_no_rule_math, ("math.gamma",), "return math.gamma(x * x + 1.0)"),
    Refusal(P.uses_math_without_rule, ("math.gamma",), "return math.gamma(x) * 2.0"),
    Refusal(P.uses_math_radians, ("math.lgamma",), "return math.lgamma(x) * x"),
    Refusal(P.uses_method_of_object, ("no derivative rule for SCALER.apply",),
            "return np.sum(SCALER.apply(x))"),
    Refusal(P.uses_dict_of_functions, ("no derivative rule for OPS",),
            'return np.sum(OPS["sin"](x))'),
    Refusal(P.uses_getattr_dispatch, ("no derivative rule for getattr",),
            'return np.sum(getattr(np, "sin")(x))'),
    Refusal(P.uses_eval, ("eval",), 'y = eval("x * 2.0")'),
    Refusal(P.uses_varargs_helper, ("*args/**kwargs",), "return np.sum(_varargs_helper(x))"),
    Refusal(P.uses_non_literal_default, ("not a literal",), "return np.sum(_array_default(x))"),
    # closures and names that cannot be resolved
    Refusal(P.uses_unbound_closure, ("'k'",), "return np.sum(x * k)"),
    Refusal(P.uses_nonlocal, ("nonlocal",), "nonlocal n"),
    Refusal(P.uses_undefined_name, ("UNDEFINED_SCALE",), "return np.sum(x * UNDEFINED_SCALE)"),
]


def _param(case: Refusal, mode: str) -> object:
    marks = [pytest.mark.xfail(strict=True, reason=case.bug)] if case.bug else []
    return pytest.param(case, mode, marks=marks, id=f"{case.fn.__name__}-{mode}")  # type: ignore[attr-defined]


def test_corpus_is_large_enough() -> None:
    assert len(CASES) >= 25
    names = {c.fn.__name__ for c in CASES}  # type: ignore[attr-defined]
    defined = {n for n in dir(P) if n.startswith("uses_")} - set(HELPER_CASES)
    assert names == defined, defined ^ names


def _user_line(fn: object, text: str) -> int:
    lines, first = inspect.getsourcelines(fn)  # type: ignore[arg-type]
    return first + next(i for i, line in enumerate(lines) if text in line)


@pytest.mark.parametrize("case, mode", [_param(c, m) for c in CASES for m in ("grad", "jvp")])
def test_refused_with_construct_and_line(case: Refusal, mode: str) -> None:
    transform = gradlab.grad if mode == "grad" else gradlab.jvp
    with pytest.raises(GradlabError) as info:
        transform(case.fn)
    message = str(info.value)
    assert any(c in message for c in case.construct), (case.construct, message)
    assert case.line in message, (case.line, message)
    lineno = _user_line(case.fn, case.line)
    if isinstance(info.value, GradlabSyntaxError):
        assert info.value.lineno == lineno, (info.value.lineno, lineno)
        assert info.value.filename.endswith("refusal_programs.py")
    else:
        assert f"line {lineno}" in message, (lineno, message)


def test_annotations_are_not_names_to_resolve() -> None:
    """An annotation naming a type imported only for a type checker is not an undefined name."""
    g = gradlab.grad(P.annotated_with_a_type_only_a_checker_knows)(np.array([1.0, -2.0]))
    assert list(g) == [2.0, -4.0]


#: A helper that changes its argument in place: refused at the helper's line (the caller's
#: array changes in NumPy), statically, so ``check=False`` gives no gradient of a misread
#: program (found probing realistic programs, stop 28: [2.4, -7.6, 8.4, 6.0] where
#: differences give [0, -7.6, 8.4, 6.0]).
HELPER_CASES = {"uses_helper_writing_its_argument": "a[0] = 0.0",
                "uses_helper_scaling_its_argument": "a *= 2.0"}


@pytest.mark.parametrize("name", sorted(HELPER_CASES))
@pytest.mark.parametrize("mode", ["grad", "jvp", "hvp"])
def test_a_helper_changing_the_caller_s_array_is_refused(name: str, mode: str) -> None:
    transform = {"grad": gradlab.grad, "jvp": gradlab.jvp, "hvp": gradlab.hvp}[mode]
    with pytest.raises(GradlabError, match="the array the caller passed") as info:
        transform(getattr(P, name), check=False)
    assert HELPER_CASES[name] in str(info.value)
