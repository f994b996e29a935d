"""Every call and method resolved to what it means: a primitive, the user's own function, or
code that is never differentiated (``len``, ``range``, ``print``...).

Names are looked up where the user's function was defined (closure, module, builtins), and a
module attribute is spelled from the module's real name, so ``np.tanh``, ``numpy.tanh`` and
``from numpy import tanh`` all resolve to the primitive ``tanh``.
"""
from __future__ import annotations

import ast
import inspect
import sys
import types
from dataclasses import dataclass, field, replace
from typing import Any

import gast

from ..errors import gradlab_refuses
from ..tensor.primitive import Meaning
from ..tensor.spec import STATIC_CALLS
from .parse import Scope
from .opaque import framework_function_without_rule, is_opaque_callable
from .primitives import DIALECT_SENSITIVE, METHODS, PATHS, signature
from .rules import custom_rule_for, custom_signature, is_custom
from .rules.definitions import DEFINITIONS, METHOD_DEFINITIONS, is_definition


def gives_no_gradient(path: str) -> bool:
    """``builtins.len``, ``math.floor``: a call kept as written, whose result carries no
    gradient (the table says why)."""
    return path in STATIC_CALLS

_FRAMEWORK_ROOTS = ("numpy", "torch", "tensorflow", "jax", "jaxlib", "autograd", "math",
                    "scipy", "builtins", "gradlab", "keras")


@dataclass(frozen=True)
class Transform:
    """A primitive applied to an argument first (``tf.matmul(a, b, transpose_a=True)``):
    always, or where ``flag`` (the user's expression, not a literal) is true at run time."""

    prim: str
    extra: tuple[Any, ...]
    flag: gast.expr | None = None


@dataclass
class Resolution:
    """What a call means. ``kind``: 'prim', 'user', 'static' (never differentiated, kept as
    written), 'append' (list.append), 'opaque' (a callable gradlab cannot read that a
    framework's autodiff can: see :mod:`.opaque`), 'unknown' (a callable with no rule)."""

    kind: str
    prim: str = ""
    args: dict[str, gast.expr] = field(default_factory=dict)   # canonical parameter -> expression
    callee: Any = None
    label: str = ""                                            # how the user spelled it
    #: the array a method is called on, where a definition stands for it: its first argument
    receiver: gast.expr | None = None
    #: parameter -> what to apply to it first (``transpose_a=True``)
    transforms: dict[str, Transform] = field(default_factory=dict)
    #: the primitive of the indices returned beside the values (``torch.max(x, dim=1)``)
    with_indices: str = ""
    #: what a conversion of an array gives (see :class:`gradlab.tensor.primitive.Meaning`)
    conversion: str = "copy"
    #: the module of the function called (``torch`` for ``torch.tanh``, however it is spelled)
    module: str = ""

    @property
    def as_written(self) -> bool:
        """Only the plain canonical call: nothing applied first, one value returned."""
        return not self.transforms and not self.with_indices


def dotted(node: gast.expr) -> list[str] | None:
    """``np.linalg.norm`` -> ['np', 'linalg', 'norm']; None if not a plain dotted name."""
    parts: list[str] = []
    while isinstance(node, gast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, gast.Name):
        parts.append(node.id)
        return parts[::-1]
    return None


class Resolver:
    """Resolves calls in one function. ``dialect`` is the array dialect methods are read in
    (``numpy`` or ``torch``, see :mod:`.primitives`); ``dialect_used`` becomes true when a
    method whose meaning depends on it was resolved, so the caller knows the generated code
    differs between frameworks."""

    def __init__(self, scope: Scope, local_names: set[str], dialect: str = "numpy") -> None:
        self.scope = scope
        self.locals = local_names
        self.dialect = dialect
        self.dialect_used = False

    # --- calls --------------------------------------------------------------------------------
    def call(self, node: gast.Call) -> Resolution:
        func = node.func
        parts = dotted(func)
        if parts is None:
            if isinstance(func, gast.Attribute):   # a method of a computed value: (a @ b).sum()
                return self._method(func.attr, node, callee_text(func))
            return Resolution("unknown", label=callee_text(func))
        label = ".".join(parts)
        if parts[0] in self.locals:
            if len(parts) >= 2:        # x.sum(), and x.T.clip(...): a method of x.T
                return self._method(parts[-1], node, label)
            return Resolution("opaque", label=label)   # model(x), model an argument: known
                                                       # when it runs
        found, obj = self.scope.lookup(parts[0])
        if not found:
            return Resolution("unknown", label=label)
        if isinstance(obj, types.ModuleType) and obj.__name__.startswith(
                "gradlab.tensor.backends") and len(parts) == 2:
            if parts[1] in ("numpy_call", "torch_call"):   # a kept call, as kept again (hvp)
                return Resolution("static", label=label)
            return self._bind(Meaning(parts[1]), node, label)   # gl.tanh in generated code
        if isinstance(obj, types.ModuleType):
            path = ".".join([obj.__name__] + parts[1:])
            target = getattr_chain(obj, parts[1:])
        else:
            target = getattr_chain(obj, parts[1:])
            path = ""
            if len(parts) == 1 and getattr(sys.modules.get("builtins"), parts[0], None) is obj:
                path = f"builtins.{parts[0]}"
        custom = custom_rule_for(target)
        if custom is not None:
            return self._bind(Meaning(custom), node, label, custom=True)
        meaning = PATHS.get(path) if path else None
        if meaning is None and target is not None:
            meaning = _by_identity(target)
        if meaning is not None:
            res = self._spelled(meaning, node, label)
            module = getattr(target, "__module__", None) or path
            return replace(res, module=module) if isinstance(module, str) else res
        if target is gradlab_refuses:        # a definition's refusal, kept as written
            return Resolution("static", label=label)
        definition = DEFINITIONS.get(path) if path else None
        if definition is not None or is_definition(target):   # np.trace, written out
            return Resolution("user", callee=definition or target, label=label)
        if gives_no_gradient(path):
            return Resolution("static", label=label)
        if is_users_function(target):
            return Resolution("user", callee=target, label=label)
        if is_opaque_callable(target) or framework_function_without_rule(path, target):
            return Resolution("opaque", callee=target, label=label)
        return Resolution("unknown", callee=target, label=label)

    def _spelled(self, meaning: Meaning, node: gast.Call, label: str) -> Resolution:
        """A framework function: its spelling's arity decides whether it means the primitive
        (builtin ``max(a, b)``) or, with more arguments, a chain of it (``max(a, b, c)`` is
        ``max(max(a, b), c)``); with fewer (an iterable), gradlab has no rule for it.
        ``np.where(condition)`` alone is ``np.nonzero``: indices, kept as written (no gradient
        flows into an index)."""
        if meaning.prim == "where" and len(node.args) == 1 and not node.keywords:
            return Resolution("static", label=label)
        if meaning.arity is not None and (len(node.args) != meaning.arity or node.keywords):
            items = node.args[0] if len(node.args) == 1 else None
            if isinstance(items, (gast.List, gast.Tuple)) and len(items.elts) >= meaning.arity \
                    and not node.keywords and not any(
                        isinstance(e, gast.Starred) for e in items.elts):
                # min([a, b, c]) is min(a, b, c): the items are written out
                spread = gast.Call(func=node.func, args=list(items.elts), keywords=[])
                return self._spelled(meaning, spread, label)
            if len(node.args) > meaning.arity and not node.keywords:
                inner = gast.Call(func=node.func, args=node.args[:meaning.arity], keywords=[])
                chained = gast.Call(func=node.func, args=[inner] + node.args[meaning.arity:],
                                    keywords=[])
                return self._spelled(meaning, chained, label)
            if len(node.args) == 1 and not node.keywords and meaning.prim in _OF_ONE_ITERABLE:
                # max(values): the item the builtin picks (codegen/normalize.py)
                return self._bind(Meaning(_OF_ONE_ITERABLE[meaning.prim]), node, label)
            return Resolution("unknown", label=f"{label} of an iterable" if len(
                node.args) == 1 else label)
        if meaning.varargs:
            node = _collected(node, list(signature(meaning.prim).parameters).index(
                meaning.varargs))
        return self._bind(meaning, node, label)

    def _method(self, name: str, node: gast.Call, label: str) -> Resolution:
        receiver = node.func.value  # type: ignore[attr-defined]
        if name == "append":
            return Resolution("append", label=label)
        if name == "pop" and not node.args:
            return Resolution("pop", label=label)
        if name == "size" and node.args:      # torch: x.size(0) is x.shape[0]
            return Resolution("static", label=label)
        meaning = METHODS[self.dialect].get(name)
        if name in DIALECT_SENSITIVE:
            self.dialect_used = True
        if meaning is None:
            definition = METHOD_DEFINITIONS[self.dialect].get(name)
            if METHOD_DEFINITIONS["numpy"].get(name) is not METHOD_DEFINITIONS["torch"].get(name):
                self.dialect_used = True       # (x.tril() is torch's; a NumPy array has none)
            if definition is not None:         # x.trace(): np.trace(x), written out
                return Resolution("user", callee=definition, label=label, receiver=receiver)
            return Resolution("unknown", label=label)
        args = list(node.args)
        if meaning.varargs and (len(args) > 1 or len(args) == 1 and _is_int_literal(args[0])):
            # x.transpose(1, 0) and x.transpose(0) pass the axes one by one
            args = [gast.Tuple(elts=args, ctx=gast.Load())]
        call = gast.Call(func=node.func, args=[receiver] + args, keywords=node.keywords)
        res = self._bind(meaning, call, label)     # (torch code's methods are torch's)
        return replace(res, module="torch") if self.dialect == "torch" else res

    def _bind(self, meaning: Meaning, node: gast.Call, label: str, custom: bool = False
              ) -> Resolution:
        """The call's arguments by canonical parameter: the framework's positional order and
        keyword names mapped, literal flags translated, defaults that differ applied."""
        sig = signature(meaning.prim) if not custom else custom_signature(meaning.prim)
        if meaning.with_indices and len(node.args) >= 2 and not _is_int_literal(node.args[1]):
            # torch.max(x, other) is the elementwise maximum where other is a tensor, the
            # reduction over a dimension where it is an int: the code does not say which
            word = "maximum" if meaning.prim == "max" else "minimum"
            raise BindError(f"{label}(x, {callee_text(node.args[1])}): torch reads the second "
                            f"argument as a dimension if it is an int and as an array to take "
                            f"the elementwise {word} with otherwise; write torch.{word}(x, other) "
                            f"for the elementwise {word}, or dim=... for the reduction")
        positional, given = _as_given(meaning, node, label, sig)
        kwargs, transforms = _canonical_keywords(meaning, given, label, sig)
        for key, value in meaning.defaults.items():   # x.double() is astype(x, "float64")
            if key not in kwargs and key in sig.parameters and list(sig.parameters).index(
                    key) >= len(positional):
                kwargs[key] = gast.Constant(value=value, kind=None)
        try:
            bound = sig.bind(*positional, **kwargs)
        except TypeError as e:
            raise BindError(f"{label}: {e} (gradlab reads it as {meaning.prim}{sig})") from None
        args = dict(bound.arguments)
        for key in _TUPLE_PARAMS & args.keys():   # tf.reduce_sum(x, [0, 1]): axes as a tuple
            if isinstance(args[key], gast.List):
                args[key] = gast.Tuple(elts=args[key].elts, ctx=gast.Load())
        with_indices = ""
        if meaning.with_indices:
            axis = args.get("axis")
            if axis is not None and not (isinstance(axis, gast.Constant) and axis.value is None):
                with_indices = meaning.with_indices
        return Resolution("prim", prim=meaning.prim, args=args, label=label,
                          transforms=transforms, with_indices=with_indices,
                          conversion=meaning.conversion)

    # --- attributes ---------------------------------------------------------------------------
    def is_module_constant(self, node: gast.expr) -> bool:
        """``np.pi``, ``math.e``, a module-level constant: a value, not a computation."""
        parts = dotted(node)
        if parts is None or parts[0] in self.locals:
            return False
        return self.scope.lookup(parts[0])[0]

    def infinity(self, node: gast.expr) -> int:
        """1 for positive infinity (``np.inf``, ``math.inf``, ``torch.inf``, ``float('inf')``),
        -1 for ``float('-inf')``, else 0. A module constant is read from the module it names
        (only attributes of modules: reading another object's attribute could run its code)."""
        if (isinstance(node, gast.Call) and isinstance(node.func, gast.Name) and not node.keywords
                and len(node.args) == 1 and isinstance(node.args[0], gast.Constant)
                and isinstance(node.args[0].value, str) and node.func.id not in self.locals):
            found, fn = self.scope.lookup(node.func.id)
            text = node.args[0].value.strip().lower()
            if not found or fn is not float or text.lstrip("+-") not in ("inf", "infinity"):
                return 0
            return -1 if text.startswith("-") else 1
        parts = dotted(node)
        if parts is None or len(parts) < 2 or parts[0] in self.locals:
            return 0
        found, value = self.scope.lookup(parts[0])
        for part in parts[1:]:
            if not found or not isinstance(value, types.ModuleType):
                return 0
            value = getattr(value, part, None)
        return 1 if isinstance(value, float) and value == float("inf") else 0


#: Canonical parameters that take a tuple of ints, which some frameworks also take as a list.
_TUPLE_PARAMS = {"axis", "axes", "shape", "reps", "source", "destination"}


class BindError(Exception):
    """A call's arguments do not fit the primitive; turned into GradlabSyntaxError by the caller."""


def _as_given(meaning: Meaning, node: gast.Call, label: str, sig: inspect.Signature
              ) -> tuple[list[gast.expr], dict[str, gast.expr]]:
    """The call's arguments as the framework names them: the positional ones left (those a
    spelling does not name, see ``Meaning.positional``) and the others by name."""
    if any(isinstance(a, gast.Starred) for a in node.args):
        raise BindError(f"{label}(*...) cannot be differentiated: pass the arguments one by one")
    given: dict[str, gast.expr] = {}
    positional = list(node.args)
    if meaning.positional is not None:
        if len(positional) > len(meaning.positional):
            raise BindError(f"{label}: too many positional arguments (gradlab reads it as "
                            f"{meaning.prim}{sig})")
        given.update(zip(meaning.positional, positional))
        positional = []
    for kw in node.keywords:
        if kw.arg is None:
            raise BindError(f"{label}(**...) cannot be differentiated: name the arguments")
        if kw.arg in given:
            raise BindError(f"{label}: {kw.arg} is given twice")
        given[kw.arg] = kw.value
    return positional, given


def _canonical_keywords(meaning: Meaning, given: dict[str, gast.expr], label: str,
                        sig: inspect.Signature
                        ) -> tuple[dict[str, gast.expr], dict[str, Transform]]:
    """The named arguments by canonical parameter (options with no meaning dropped, literal
    flags translated), and the primitives to apply to arguments first (``transpose_a=True``;
    a flag that is not a literal is read at run time)."""
    kwargs: dict[str, gast.expr] = {}
    transforms: dict[str, Transform] = {}
    for key, value in given.items():
        if key in meaning.drop:
            continue
        if key in meaning.transforms:
            param, prim, extra = meaning.transforms[key]
            if not isinstance(value, gast.Constant):
                transforms[param] = Transform(prim, extra, value)
            elif value.value:
                transforms[param] = Transform(prim, extra)
            continue
        if key in meaning.literals:
            canonical, table = meaning.literals[key]
            if isinstance(value, gast.Constant) or canonical != key:
                literal = _literal_value(value, label, key)
                value = gast.Constant(value=table.get(literal, literal), kind=None)
            key = canonical
        elif key not in sig.parameters:
            key = meaning.rename.get(key, key)
        if key in kwargs:
            raise BindError(f"{label}: {key} is given twice")
        kwargs[key] = value
    return kwargs, transforms


def _literal_value(node: gast.expr, label: str, key: str) -> Any:
    """The value of a flag that changes what a call means: it must be written as a literal."""
    if isinstance(node, gast.Constant):
        return node.value
    raise BindError(f"{label}: write {key}= as a literal (True/False or a number), so gradlab "
                    f"knows what the call computes")


def callee_text(node: gast.expr) -> str:
    """How the user wrote a callee, for messages."""
    try:
        return ast.unparse(gast.gast_to_ast(node))
    except Exception:  # pragma: no cover - best effort for messages
        return type(node).__name__


def getattr_chain(obj: Any, attrs: list[str]) -> Any:
    for a in attrs:
        try:
            obj = getattr(obj, a)
        except AttributeError:
            return None
    return obj


_identity: dict[int, Meaning] = {}
_indexed_roots: set[str] = set()


def _by_identity(obj: Any) -> Meaning | None:
    """Resolve a function object imported by name (``from numpy import tanh``)."""
    for root in ("numpy", "math", "torch", "tensorflow", "jax", "scipy", "autograd", "gradlab"):
        if root in sys.modules and root not in _indexed_roots:
            _indexed_roots.add(root)
            for path, meaning in PATHS.items():
                if path.split(".")[0] != root:
                    continue
                parts = path.split(".")
                target = getattr_chain(sys.modules[root], parts[1:])
                if target is not None and not isinstance(target, (int, float)):
                    _identity.setdefault(id(target), meaning)
    return _identity.get(id(obj))


def is_users_function(obj: Any) -> bool:
    if not isinstance(obj, types.FunctionType):
        return False
    module = (obj.__module__ or "").split(".")[0]
    return module not in _FRAMEWORK_ROOTS


def bindings(op: Any) -> dict[str, Any]:
    """Every canonical parameter of a primitive operation with its atom (defaults filled in)."""
    sig = custom_signature(op.prim) if is_custom(op.prim) else signature(op.prim)
    out: dict[str, Any] = {}
    required = [p.name for p in sig.parameters.values()
                if p.default is p.empty and p.kind is not p.KEYWORD_ONLY]
    out.update(zip(required, op.args))
    out.update(op.kwargs)
    return out


#: builtin max(a, b) is the primitive maximum; max(values) of one iterable is max_list
_OF_ONE_ITERABLE = {"maximum": "max_list", "minimum": "min_list"}


def _collected(node: gast.Call, start: int) -> gast.Call:
    """``np.einsum('ij,jk', a, b)``: the positional arguments from ``start`` on as one list,
    the parameter the table collects them into. torch's own list form, ``torch.einsum('ij,jk',
    [a, b])``, is that list already (a list with one item per term of a literal subscripts
    string); NumPy reads ``np.einsum('i->', [u, v])`` as one array, and so does gradlab. Sizes
    given one by one (``torch.zeros(3, 4)``) are collected into a tuple, as a method's are."""
    rest = node.args[start:]
    if start == 0:
        if len(rest) > 1 or len(rest) == 1 and _is_int_literal(rest[0]):
            return gast.Call(func=node.func, args=[gast.Tuple(elts=list(rest), ctx=gast.Load())],
                             keywords=node.keywords)
        return node
    if len(rest) == 1 and isinstance(rest[0], (gast.List, gast.Tuple)) and start == 1:
        terms = node.args[0]
        if isinstance(terms, gast.Constant) and isinstance(terms.value, str) and len(
                rest[0].elts) == terms.value.split("->")[0].count(",") + 1 >= 2:
            rest = rest[0].elts
    if any(isinstance(a, gast.Starred) for a in rest):
        return node
    listed = gast.List(elts=list(rest), ctx=gast.Load())
    return gast.Call(func=node.func, args=node.args[:start] + [listed], keywords=node.keywords)


def _is_int_literal(node: gast.expr) -> bool:
    """``0`` or ``-1``: an axis given on its own, not a tuple or a name holding one."""
    if isinstance(node, gast.UnaryOp) and isinstance(node.op, gast.USub):
        node = node.operand
    return isinstance(node, gast.Constant) and type(node.value) is int
