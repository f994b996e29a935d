"""The normalized program every pass works on: one operation per statement, in the user's names.

A gast tree is the right shape for parsing and emitting but a poor one for analysis, so the
normalizer turns a function into these small records. Expressions that are never differentiated
(comparisons, index arithmetic, keyword arguments such as ``axis=0``) stay gast expressions
inside the records ("inline" expressions); everything that can carry a gradient is an
:class:`Op` over *atoms* — variable names or literal numbers.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Iterator, Union

import gast

from ..errors import GradlabSyntaxError
from . import trees


@dataclass(frozen=True)
class Origin:
    """The user's line a statement came from: quoted in comments, used to map errors back."""

    lineno: int          # line number in the user's file
    text: str            # the statement as the user wrote it, on one line
    filename: str = "<unknown>"


@dataclass(frozen=True)
class Const:
    """A literal number, string, None or tuple of them."""

    value: Any


def refusal(message: str, origin: Origin | None, construct: str = "") -> GradlabSyntaxError:
    """The error refusing a construct, pointing at the user's line it came from."""
    return GradlabSyntaxError(message, construct=construct,
                              filename=origin.filename if origin else "<unknown>",
                              lineno=origin.lineno if origin else None,
                              line=origin.text if origin else "")


#: An operand: a variable name, a literal, or an inline (never differentiated) gast expression.
Atom = Union[str, Const, gast.expr]


class Kind(str, Enum):
    """A kind of operation or effect. Its value is the word it is shown as (a graph's label)."""

    def __str__(self) -> str:
        return str(self.value)

    def __format__(self, spec: str) -> str:
        return format(str(self.value), spec)


class OpKind(Kind):
    """What an :class:`Op` computes."""

    PRIM = "prim"        # a primitive of the tensor layer (``tanh``, ``add``, ``getitem``...)
    USER = "user"        # a call of the user's own function (``Op.callee``), differentiated too
    COPY = "copy"        # the value of one atom (``a = b``, ``a = 2.0``)
    TUPLE = "tuple"      # a tuple of atoms (``a, b = b, a``; a framework's pair of results)
    LIST = "list"        # a Python list of atoms (``xs = [a, b]``)
    STATIC = "static"    # an inline expression kept as written (``Op.node``): no gradient
    #: a call gradlab cannot read (a torch module, a framework function without a rule: the
    #: callable is ``Op.node``), differentiated by the framework's own autodiff. Its statement
    #: has two targets: the result, and the framework's backward for it (see opaque.py)
    OPAQUE = "opaque"
    POP = "pop"          # ``xs.pop()``: the last item of a list, which loses it


class EffectKind(Kind):
    """Why an :class:`Effect` statement is kept."""

    APPEND = "append"        # ``xs.append(v)``: the list grows
    LIST_SET = "list_set"    # ``xs[i] = v`` on a Python list
    INPLACE = "inplace"      # ``x.sort()``, ``x.fill_(...)``: an array method that changes it
    STATIC = "static"        # code kept as written for its effect: ``print``, ``assert``...


@dataclass
class Op:
    """One operation: a primitive (``tanh``, ``add``, ``getitem``...), a call of the user's own
    function (``callee``), or one of the structural kinds (see :class:`OpKind`)."""

    kind: OpKind
    prim: str = ""                              # primitive name for kind 'prim'
    args: list[Atom] = field(default_factory=list)
    kwargs: dict[str, Atom] = field(default_factory=dict)
    style: str = "call"                         # how the forward line is written: 'call'|'binop'|'unary'|'subscript'|'attribute'
    callee: Any = None                          # a UserFunction for kind 'user'
    node: gast.expr | None = None               # the inline expression for kind 'static'
    source: Any = None                          # what the user called (for error messages)
    #: for a 'tuple' a framework returns with named items (``torch.max(x, 1).values``)
    fields: tuple[str, ...] = ()
    #: a 'static' call of something with no rule (a function of a library gradlab does not
    #: know): refused if a gradient flows into it (there is no rule to give one back)
    unknown: bool = False
    #: a 'static' attribute gradlab does not know on one of the user's values (``x.foo``):
    #: refused if that value carries a gradient
    attribute: str = ""
    #: options given as variables that this call is known not to get None for (the branch
    #: of ``if axis is None:`` where it is not): a rule's ``axis is None`` is settled
    not_none: frozenset[str] = frozenset()


@dataclass
class Stmt:
    origin: Origin | None


@dataclass
class Assign(Stmt):
    """``targets = op``; several targets unpack a tuple (``a, b = helper(x)``)."""

    targets: list[str]
    op: Op
    augmented: bool = False      # written ``y += ...``: in place on NumPy and torch arrays
    #: operands whose gradient through this statement cancels exactly (see invariance.py)
    frozen: dict[str, str] = field(default_factory=dict)   # name -> why


@dataclass
class Effect(Stmt):
    """A statement kept for its effect (see :class:`EffectKind`): ``xs.append(v)``,
    ``xs[i] = v``, an in-place method, or inline code such as ``print(...)``/``assert``."""

    kind: EffectKind
    target: str = ""
    value: Atom | None = None
    node: gast.stmt | None = None
    call: str = ""               # a call kept for its effect on its arguments: np.copyto...


def popped_list(s: "Stmt") -> str | None:
    """``xs.pop()`` on a line of its own (the value dropped): the list's name, else None."""
    if not isinstance(s, Effect) or s.kind is not EffectKind.STATIC or s.node is None:
        return None
    call = getattr(s.node, "value", None)
    if (isinstance(call, gast.Call) and isinstance(call.func, gast.Attribute)
            and call.func.attr == "pop" and isinstance(call.func.value, gast.Name)
            and not call.args and not call.keywords):
        return call.func.value.id
    return None


#: Primitives whose result is a Python list of arrays: ``split``/``unstack`` in the user's code,
#: and the list helpers of gradient code (``hvp`` reads that code as a program too).
LIST_RESULTS = frozenset({"split", "unstack", "zeros_like_list", "unconcatenate", "add_lists",
                          "as_list", "einsum_adjoint", "einsum_adjoint_tangent"})


@dataclass
class If(Stmt):
    test: gast.expr
    body: list[Stmt]
    orelse: list[Stmt]
    cond: str | None = None      # the variable holding the test's value, when it must be kept


@dataclass
class For(Stmt):
    """``for target in range(...)`` — every ``for`` is normalized to this form."""

    target: str
    range_args: list[gast.expr]
    body: list[Stmt]
    counter: str | None = None   # iterations done, when the loop can exit early (break)
    reverse: bool = False        # ``for i in reversed(range(...))``: the indices count down


@dataclass
class While(Stmt):
    """A loop counter (set to 0 by an assignment before the loop, counted up at the top of each
    iteration) tells the backward pass how often to run; the increments are not statements, so
    they are never saved or restored."""

    test: gast.expr
    body: list[Stmt]
    counter: str | None = None


@dataclass
class Break(Stmt):
    pass


@dataclass
class Continue(Stmt):
    pass


@dataclass
class Return(Stmt):
    """Only before :mod:`returns` lowering; afterwards the result is an assignment."""

    value: Atom | None


@dataclass
class GradOf(Stmt):
    """``with gradlab.insert_grad_of(x) as dx:`` — statements for the backward pass."""

    name: str
    alias: str
    body: list[gast.stmt]


@dataclass
class Function:
    name: str
    params: list[str]
    defaults: dict[str, Any]
    body: list[Stmt]
    result: str = ""             # the variable holding the return value
    origin: Origin | None = None
    #: names the normalizer gave to parts of the user's expressions (``x_times_2`` in
    #: ``(x * 2)[0]``): no user code can read them, so their memory is not the user's concern
    temporaries: set[str] = field(default_factory=set)


def walk(stmts: list[Stmt]) -> Iterator[Stmt]:
    """Every statement, depth first, in program order."""
    for s in stmts:
        yield s
        for block in children(s):
            yield from walk(block)


def children(s: Stmt) -> list[list[Stmt]]:
    if isinstance(s, If):
        return [s.body, s.orelse]
    if isinstance(s, (For, While)):
        return [s.body]
    return []


def as_expr(atom: Any) -> gast.expr:
    """An atom as an expression: a name read, a constant, or the inline expression itself."""
    if isinstance(atom, str):
        return gast.Name(atom, gast.Load(), None, None)
    if isinstance(atom, Const):
        return gast.Constant(value=atom.value, kind=None)
    return atom


def atom_names(atom: Any) -> set[str]:
    """Variable names an atom (or inline expression) reads."""
    if isinstance(atom, str):
        return {atom}
    if isinstance(atom, Const) or atom is None:
        return set()
    if isinstance(atom, gast.AST):
        return {n.id for n in trees.walk(atom) if isinstance(n, gast.Name)
                and isinstance(n.ctx, gast.Load)}
    if isinstance(atom, (list, tuple)):
        out: set[str] = set()
        for a in atom:
            out |= atom_names(a)
        return out
    return set()


def op_reads(op: Op) -> set[str]:
    names = atom_names(op.args) | atom_names(list(op.kwargs.values()))
    if op.node is not None:
        names |= atom_names(op.node)
    return names


def stmt_reads(s: Stmt) -> set[str]:
    """Names a statement reads itself (not counting nested blocks)."""
    if isinstance(s, Assign):
        return op_reads(s.op) | (atom_names(s.op.args[0]) if s.op.kind is OpKind.POP else set())
    if isinstance(s, Effect):
        names = atom_names(s.value) | ({s.target} if s.target else set())
        if s.node is not None:
            names |= {n.id for n in trees.walk(s.node) if isinstance(n, gast.Name)}
        return names
    if isinstance(s, (If, While)):
        return atom_names(s.test)
    if isinstance(s, For):
        return atom_names(s.range_args)
    if isinstance(s, Return):
        return atom_names(s.value)
    if isinstance(s, GradOf):
        return {s.name}
    return set()


def stmt_writes(s: Stmt) -> set[str]:
    """Names a statement assigns itself (not counting nested blocks)."""
    if isinstance(s, Assign):
        return set(s.targets)
    if isinstance(s, Effect) and s.kind in (EffectKind.APPEND, EffectKind.LIST_SET):
        return {s.target}
    if isinstance(s, For):
        return {s.target}
    if isinstance(s, If):
        return {s.cond} if s.cond else set()
    return set()


def writes_in(stmts: list[Stmt]) -> set[str]:
    out: set[str] = set()
    for s in walk(stmts):
        out |= stmt_writes(s)
    return out


def reads_in(stmts: list[Stmt]) -> set[str]:
    out: set[str] = set()
    for s in walk(stmts):
        out |= stmt_reads(s)
    return out


def list_names(fn: Function) -> set[str]:
    """The names that hold a Python list (of arrays): built from a list literal, by ``append``,
    by a primitive that returns one (``split``), or read with ``list_getitem``."""
    out: set[str] = set()
    for s in walk(fn.body):
        if isinstance(s, Assign) and s.op.kind is OpKind.LIST:
            out.update(s.targets)
        if isinstance(s, Assign) and s.op.kind is OpKind.PRIM and s.op.prim in LIST_RESULTS:
            out.update(s.targets)
        if isinstance(s, Effect) and s.kind is EffectKind.APPEND:
            out.add(s.target)
        if isinstance(s, Assign) and s.op.kind is OpKind.PRIM and s.op.prim == "list_getitem":
            if isinstance(s.op.args[0], str):
                out.add(s.op.args[0])
    return out
