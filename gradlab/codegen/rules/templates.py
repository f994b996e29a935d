"""Rule templates: the parsed form of a template, the tables of them, and the decorators that
register the built-in ones (see :mod:`gradlab.codegen.rules` for how a template reads).

A template is parsed once, when it is registered: its parameters (the result, then the
primitive's arguments), its body with the docstring dropped, and which parameters the body reads
(a rule that reads the result needs the result's value kept, see ``reads_result``).
"""
from __future__ import annotations

import inspect
import textwrap
from dataclasses import dataclass, field
from collections.abc import Iterator, MutableMapping
from typing import Any, Callable

import gast

from ...errors import GradlabError
from ...tensor.spec import NONDIFFERENTIABLE as BY_NATURE
from .. import trees


@dataclass
class Rule:
    """A parsed template. ``params[0]`` is the result; the rest are the primitive's arguments."""

    prim: str
    kind: str                       # 'adjoint' or 'tangent'
    params: list[str]
    defaults: dict[str, Any]
    body: list[gast.stmt]
    source: str
    reads: set[str] = field(default_factory=set)   # parameters whose values the rule uses

    def reads_result(self) -> bool:
        return self.params[0] in self.reads


class RuleTable(MutableMapping[str, Rule]):
    """The rules of one kind by primitive. A built-in template is registered as its function
    and parsed the first time its rule is asked for: reading ~150 templates' source at import
    would cost ``import gradlab`` a tenth of a second, and a transform needs a few of them."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self._templates: dict[str, Callable[..., Any]] = {}
        self._rules: dict[str, Rule] = {}

    def register(self, prim: str, template: Callable[..., Any]) -> None:
        """``template`` is ``prim``'s rule, parsed when first asked for."""
        self._rules.pop(prim, None)
        self._templates[prim] = template

    def __getitem__(self, prim: str) -> Rule:
        rule = self._rules.get(prim)
        if rule is None:
            rule = parse_template(self._templates[prim], prim, self.kind)
            self._rules[prim] = rule
        return rule

    def __setitem__(self, prim: str, rule: Rule) -> None:
        self._templates.pop(prim, None)
        self._rules[prim] = rule

    def __delitem__(self, prim: str) -> None:
        if prim not in self:
            raise KeyError(prim)
        self._templates.pop(prim, None)
        self._rules.pop(prim, None)

    def __contains__(self, prim: object) -> bool:
        return prim in self._rules or prim in self._templates

    def __iter__(self) -> Iterator[str]:
        return iter({**self._templates, **self._rules})

    def __len__(self) -> int:
        return len(self._templates.keys() | self._rules.keys())


ADJOINTS = RuleTable("adjoint")
TANGENTS = RuleTable("tangent")
#: Primitives through which no gradient flows: the table's (each with its reason) and the
#: user's own functions marked with ``gradlab.nondifferentiable``.
NONDIFFERENTIABLE: set[str] = set(BY_NATURE)


def parse_template(fn: Callable[..., Any], prim: str, kind: str) -> Rule:
    source = textwrap.dedent(inspect.getsource(fn))
    tree = gast.parse(source).body[0]
    assert isinstance(tree, gast.FunctionDef)
    args = tree.args
    if args.vararg is not None or args.kwarg is not None:
        raise GradlabError(f"rule for {prim!r}: *args/**kwargs are not allowed in a template")
    names = [a.id for a in args.posonlyargs + args.args + args.kwonlyargs]
    sig = inspect.signature(fn)
    defaults = {n: p.default for n, p in sig.parameters.items()
                if p.default is not inspect.Parameter.empty}
    body = [s for s in tree.body if not (isinstance(s, gast.Expr) and
                                         isinstance(s.value, gast.Constant) and
                                         isinstance(s.value.value, str))]
    adjoint_names = {derivative_name(n, kind) for n in names}
    reads = set()
    for node in trees.walk(gast.Module(body=body, type_ignores=[])):
        if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Load) and node.id in names:
            reads.add(node.id)
    _check_template(prim, kind, names, body, adjoint_names)
    return Rule(prim, kind, names, defaults, body, source, reads)


def derivative_name(name: str, kind: str) -> str:
    """``dx`` for an adjoint template's ``x``, ``x_dot`` for a tangent template's."""
    return f"{name}_dot" if kind == "tangent" else f"d{name}"


def _check_template(prim: str, kind: str, names: list[str], body: list[gast.stmt],
                    adjoint_names: set[str]) -> None:
    if not names:
        raise GradlabError(f"rule for {prim!r} needs at least the result parameter")
    result_adjoint = derivative_name(names[0], kind)
    for node in trees.walk(gast.Module(body=body, type_ignores=[])):
        if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Store):
            if kind == "adjoint" and node.id == result_adjoint:
                raise GradlabError(f"rule for {prim!r} assigns {node.id}, the result's adjoint; "
                                   f"a rule only reads it and assigns d<argument>")
            if kind == "tangent" and node.id in adjoint_names and node.id != result_adjoint:
                raise GradlabError(f"tangent rule for {prim!r} assigns {node.id}; it should "
                                   f"assign only {result_adjoint}")


def _register(table: RuleTable, prim: str) -> Callable[[Callable[..., Any]], Any]:
    def decorate(fn: Callable[..., Any]) -> Callable[..., Any]:
        table.register(prim, fn)
        return fn
    return decorate


def adjoint(prim: str) -> Callable[[Callable[..., Any]], Any]:
    """Register the reverse-mode template of built-in primitive ``prim``."""
    return _register(ADJOINTS, prim)


def tangent(prim: str) -> Callable[[Callable[..., Any]], Any]:
    """Register the forward-mode template of built-in primitive ``prim``."""
    return _register(TANGENTS, prim)
