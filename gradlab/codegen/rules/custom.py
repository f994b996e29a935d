"""The user's own primitives: ``@gradlab.adjoint(fn)``, ``@gradlab.tangent_rule(fn)`` and
``gradlab.nondifferentiable(fn)`` make a function of the user's a primitive, with the template
given (checked against the function's signature) or with no gradient at all.

A user primitive is known by the identity of its function; its primitive name is the function's
name (with ``_`` appended until it is unique).
"""
from __future__ import annotations

import inspect
from typing import Any, Callable

from ...errors import GradlabError
from .templates import ADJOINTS, NONDIFFERENTIABLE, TANGENTS, parse_template

_custom: dict[int, str] = {}        # id(user function) -> primitive name
_custom_functions: dict[str, Any] = {}


def register_custom(fn: Any, template: Callable[..., Any], kind: str) -> None:
    """Make the user's function ``fn`` a primitive with the given template (checked here)."""
    if not callable(fn):
        raise GradlabError(f"@gradlab.{'adjoint' if kind == 'adjoint' else 'tangent_rule'} "
                           f"expects the function the rule is for, got {fn!r}")
    prim = _custom.get(id(fn)) or f"{getattr(fn, '__name__', 'fn')}"
    while prim in _custom_functions and _custom_functions[prim] is not fn:
        prim += "_"
    try:
        parameters = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        raise GradlabError(f"cannot read the signature of {fn!r}") from None
    fn_params = list(parameters)
    required = [n for n, p in parameters.items() if p.default is p.empty and p.kind in (
        p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    rule = parse_template(template, prim, kind)
    expected = ["<result>"] + (required or fn_params)
    if rule.params[1:] not in (fn_params, required):
        raise GradlabError(
            f"the {kind} rule {template.__name__}{inspect.signature(template)} does not match "
            f"{getattr(fn, '__name__', fn)}{inspect.signature(fn)}: its parameters must be the "
            f"result followed by {', '.join(required or fn_params)} (expected "
            f"{', '.join(expected)})")
    _custom[id(fn)] = prim
    _custom_functions[prim] = fn
    (ADJOINTS if kind == "adjoint" else TANGENTS)[prim] = rule


def register_nondifferentiable(fn: Any) -> None:
    prim = getattr(fn, "__name__", "fn")
    while prim in _custom_functions and _custom_functions[prim] is not fn:
        prim += "_"
    _custom[id(fn)] = prim
    _custom_functions[prim] = fn
    NONDIFFERENTIABLE.add(prim)


def custom_rule_for(obj: Any) -> str | None:
    if obj is None:
        return None
    return _custom.get(id(obj))


def custom_function(prim: str) -> Any:
    return _custom_functions.get(prim)


def custom_signature(prim: str) -> inspect.Signature:
    """The signature calls of a user primitive are bound with: the function's own, or just
    the parameters its rules name (for ufuncs and other functions with many options)."""
    sig = inspect.signature(_custom_functions[prim])
    rule = ADJOINTS.get(prim) or TANGENTS.get(prim)
    if rule is not None and rule.params[1:] != list(sig.parameters):
        sig = sig.replace(parameters=[p for p in sig.parameters.values()
                                      if p.name in rule.params[1:]])
    return sig


def is_custom(prim: str) -> bool:
    return prim in _custom_functions
