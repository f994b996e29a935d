"""What a primitive is, as data: the record type of the table in :mod:`gradlab.tensor.spec`.

A record says everything gradlab knows about one primitive in one place: its canonical
signature (what ``gl.<name>`` takes on every backend), its kinds (what the analyses may assume
about its result's shape and memory), which of its parameters carry values and so gradients,
why no gradient flows through it when none does by nature, and how each framework spells it,
with how that framework's arguments map onto the canonical ones. Every other name set in
gradlab is derived from the table, so a fact is written once.
"""
from __future__ import annotations

import inspect
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence, Union

# --- kinds ------------------------------------------------------------------------------------
#: Elementwise on one array: the result has the argument's shape (``tanh``, ``floor``).
UNARY = "unary"
#: Elementwise on ``x`` and ``y`` with NumPy broadcasting (``add``, ``maximum``, ``less``).
BINARY = "binary"
#: Elementwise over several array operands, broadcasting them all (``binary``, ``where``).
BROADCASTING = "broadcasting"
#: The result has the shape of ``x`` (every unary primitive, ``copy``, ``astype``...).
SAME_SHAPE = "same_shape"
#: Reduces ``x`` over ``axis`` (all axes when ``axis`` is None, unless ``keepdims``).
REDUCTION = "reduction"
#: Makes an array of the backend from numbers and shapes (``zeros``, ``arange``).
CREATION = "creation"
#: Tells about an array without being one (``shape``, ``dtype``).
INSPECTION = "inspection"
#: In NumPy the result may share memory with its first argument (``reshape``, ``x.T``).
VIEW = "view"
#: Called by generated gradient code, so forward mode over that code (hvp) needs its tangent
#: rule; nothing differentiates it in reverse mode (``unbroadcast``).
GRADIENT_CODE = "gradient_code"
#: A helper of gradient code that the tensor layer's contract leaves out (installed beside the
#: backends' primitives by ``tensor/backends/adjoint_helpers.py``): ``matmul_grad_x``...
HELPER = "helper"
#: Never differentiated by gradlab, so it needs no rules: no spelling reaches it from code
#: gradlab differentiates (``topk``, ``crossentropy``), or only tangent code calls it, which
#: nothing differentiates again (``prod_others_jvp``).
TENSOR_ONLY = "tensor_only"
#: Written out by ``codegen/expand.py`` as other primitives before any rule is looked up
#: (``divmod`` as ``floor_divide`` and ``mod``; the builtin ``max(xs)`` as the item it picks,
#: by ``codegen/normalize.py``), so it needs no rules of its own.
EXPANDED = "expanded"
#: Written by the code generator itself, never as a ``gl`` function (``copy`` is the value
#: itself, ``sum_list`` the builtin ``sum``, ``list_getitem`` a subscript).
CODEGEN = "codegen"

KINDS = frozenset({UNARY, BINARY, BROADCASTING, SAME_SHAPE, REDUCTION, CREATION, INSPECTION,
                   VIEW, GRADIENT_CODE, HELPER, TENSOR_ONLY, EXPANDED, CODEGEN})

#: Parameter names that hold values (arrays, numbers, lists of arrays) rather than options
#: (axes, shapes, flags). A record may list others in ``arrays=``.
VALUE_PARAMS = ("x", "y", "xs", "condition", "values", "a", "b", "a_min", "a_max", "g", "dz",
                "like", "fill_value", "logits", "labels", "logits_p", "logits_q", "operands")


@dataclass(frozen=True, kw_only=True)
class ArgumentMapping:
    """How a framework's arguments map to a primitive's canonical ones (see :class:`Meaning`
    for each field); shared by a spelling as written in the table and by its resolved
    meaning."""

    rename: Mapping[str, str] = field(default_factory=dict)
    defaults: Mapping[str, Any] = field(default_factory=dict)
    positional: tuple[str, ...] | None = None
    drop: tuple[str, ...] = ()
    literals: Mapping[str, tuple[str, Mapping[Any, Any]]] = field(default_factory=dict)
    varargs: str = ""
    transforms: Mapping[str, tuple[str, str, tuple[Any, ...]]] = field(default_factory=dict)
    with_indices: str = ""
    arity: int | None = None
    conversion: str = "copy"


@dataclass(frozen=True)
class Meaning(ArgumentMapping):
    """One spelling, resolved: the primitive it means and how its arguments map.

    ``rename`` maps the framework's keyword names to canonical ones (applied only to keywords
    the canonical signature does not have: ``a`` stays ``a`` for ``solve(a, b)``);
    ``defaults`` are canonical arguments the framework fixes differently (``torch.var`` is
    unbiased: ``ddof=1``); ``positional`` names the framework's positional parameters in its
    own order where they differ from the canonical one (``tf.reduce_sum(x, 1, True)``);
    ``literals`` turn a keyword whose literal value means something else into a canonical one
    (``unbiased=False`` is ``ddof=0``); ``varargs`` collects positional arguments into one
    parameter (``x.reshape(2, 3)``); ``transforms`` apply a primitive to an argument when a
    literal flag says so (``tf.matmul(a, b, transpose_a=True)``); ``with_indices`` names the
    primitive of the indices a call returns beside the values when an axis is given
    (``torch.max(x, dim=1)`` is ``(values, indices)``); ``arity`` is the number of
    positional arguments this spelling needs to mean the primitive (builtin ``max(a, b)``).
    ``conversion`` says what converting values gives: ``copy`` a new array (``np.array``),
    ``same`` the array itself (``np.asarray``), ``detached`` a new tensor cut from the graph
    (``torch.tensor``), ``lists_detached`` the array itself but, of a list, a new tensor cut
    from the graph (``torch.as_tensor``).
    """

    prim: str


@dataclass(frozen=True)
class Spelling(ArgumentMapping):
    """How a record writes one or more of its names in one family (``np``, ``torch``...):
    the names (space-separated, relative to the family's roots) and the argument mapping."""

    names: str


def S(names: str, **how: Any) -> Spelling:
    """A spelling with an argument mapping: ``S("var", defaults={"ddof": 1})``."""
    return Spelling(names, **how)


SpellingArg = Union[None, str, Spelling, Sequence[Union[str, Spelling]]]


@dataclass(frozen=True)
class Primitive:
    """One row of the table. ``spellings`` maps a family (``np``, ``math``, ``builtin``,
    ``scipy``, ``torch``, ``tf``, ``jax``, ``gradlab``, ``method``, ``torch_method``,
    ``attr``) to its spellings."""

    name: str
    signature: str
    kinds: frozenset[str]
    arrays: tuple[str, ...]
    #: value parameters no gradient flows to: only their shape, dtype or truth value matters
    #: (``full_like``'s ``x``, ``where``'s ``condition``)
    no_gradient: tuple[str, ...] = ()
    nondifferentiable: str = ""
    linear: tuple[int, ...] = ()
    spellings: Mapping[str, tuple[Spelling, ...]] = field(default_factory=dict)

    @property
    def differentiable(self) -> bool:
        return not self.nondifferentiable

    @property
    def gradient_params(self) -> tuple[str, ...]:
        """The parameters a gradient flows to (none, for a non-differentiable primitive)."""
        if self.nondifferentiable:
            return ()
        return tuple(p for p in self.arrays if p not in self.no_gradient)

    def parameters(self) -> Mapping[str, inspect.Parameter]:
        return parse_signature(self.signature).parameters


_parsed: dict[str, inspect.Signature] = {}


def parse_signature(text: str) -> inspect.Signature:
    """``"(x, axis=None, *, keepdims=False)"`` as an :class:`inspect.Signature`."""
    try:
        return _parsed[text]
    except KeyError:
        pass
    namespace: dict[str, Any] = {}
    exec(f"def _{text}: pass", namespace)
    sig = inspect.signature(namespace["_"])
    _parsed[text] = sig
    return sig


def prim(name: str, signature: str, *kinds: str, arrays: Sequence[str] | None = None,
         no_gradient: Sequence[str] = (), nondiff: str = "", linear: Sequence[int] = (),
         **spellings: SpellingArg) -> Primitive:
    """One record. ``arrays`` defaults to the signature's parameters named in
    :data:`VALUE_PARAMS`; ``nondiff`` is the reason no gradient flows through it (empty when
    one does); the keywords ``np=``, ``torch=``... give the spellings (see :class:`Primitive`)."""
    unknown = set(kinds) - KINDS
    if unknown:
        raise ValueError(f"{name}: unknown kinds {sorted(unknown)}")
    if HELPER in kinds:
        kinds = kinds + (GRADIENT_CODE,)
    params = parse_signature(signature).parameters
    if arrays is None:
        arrays = [p for p in params if p in VALUE_PARAMS]
    table: dict[str, tuple[Spelling, ...]] = {}
    for family, given in spellings.items():
        if not given:
            continue
        items = [given] if isinstance(given, (str, Spelling)) else list(given)
        table[family] = tuple(Spelling(i) if isinstance(i, str) else i for i in items)
    unknown_params = (set(arrays) | set(no_gradient)) - set(params)
    if unknown_params:
        raise ValueError(f"{name}: {sorted(unknown_params)} are not parameters of {signature}")
    return Primitive(name, signature, frozenset(kinds), tuple(arrays), tuple(no_gradient),
                     nondiff, tuple(linear), table)
