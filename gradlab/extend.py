"""Teaching gradlab new primitives, in the same template style as the built-in rules.

    @gradlab.adjoint(my_softsign)
    def my_softsign_adjoint(y, x):
        dx = dy / (1.0 + gl.abs(x)) ** 2

    @gradlab.tangent_rule(my_softsign)
    def my_softsign_tangent(y, x):
        y_dot = x_dot / (1.0 + gl.abs(x)) ** 2

The template's parameters are the result followed by the function's own parameters; a template
whose parameters do not match is refused when it is registered. ``gradlab.nondifferentiable(f)``
says no gradient flows through ``f``.
"""
from __future__ import annotations

from typing import Any, Callable

from .codegen import rules

_version = [0]


def rules_version() -> int:
    """Changes whenever a rule is registered, so cached transforms are redone."""
    return _version[0]


def adjoint(fn: Callable[..., Any]) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register a reverse-mode template for the user function ``fn``."""
    def decorate(template: Callable[..., Any]) -> Callable[..., Any]:
        rules.register_custom(fn, template, "adjoint")
        _version[0] += 1
        return template
    return decorate


def tangent_rule(fn: Callable[..., Any]) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register a forward-mode template for the user function ``fn``."""
    def decorate(template: Callable[..., Any]) -> Callable[..., Any]:
        rules.register_custom(fn, template, "tangent")
        _version[0] += 1
        return template
    return decorate


def nondifferentiable(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Declare that no gradient flows through ``fn`` (usable as a decorator)."""
    rules.register_nondifferentiable(fn)
    _version[0] += 1
    return fn
