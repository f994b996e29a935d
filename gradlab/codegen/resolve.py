"""Every call and method resolved to what it means: a primitive, the user's own function, or
code that is never differentiated (``len``, ``range``, ``print``...).

Names are looked up where the user's function was defined (closure, module, builtins), and a
module attribute is spelled from the module's real name, so ``np.tanh``, ``numpy.tanh`` and
``from numpy import tanh`` all resolve to the primitive ``tanh``.
"""
from __future__ import annotations

import inspect
import sys
import types
from dataclasses import dataclass, field
from typing import Any

import gast

from ..tensor.spec import SIGNATURES
from .parse import Scope
from .primitives import METHODS, PATHS, VARARG_METHODS, Meaning

#: Pseudo-primitives that exist only in generated code (identity and list helpers).
EXTRA_SIGNATURES = {"copy": "(x)", "sum_list": "(xs)", "list_getitem": "(x, index)"}

#: Calls whose result never carries a gradient (an int, a bool, a string, an iterator over
#: indices), kept as written. Any other builtin, ``math`` or ``numpy.random`` function without
#: a rule is kept as written only while no gradient flows through it, and refused otherwise:
#: ``math.erfc(x)`` or ``sorted([a, b])`` silently giving a zero gradient would be a wrong answer.
NO_GRADIENT_CALLS = {
    "builtins": {"len", "range", "print", "int", "bool", "str", "isinstance", "type", "round",
                 "divmod", "any", "all", "enumerate", "zip", "repr", "format", "hasattr",
                 "callable", "id", "hash", "ord", "chr", "reversed"},
    "math": {"floor", "ceil", "trunc", "isnan", "isinf", "isfinite", "isclose", "factorial",
             "comb", "perm", "gcd", "lcm", "isqrt"},
}


def gives_no_gradient(path: str) -> bool:
    """``builtins.len``, ``math.floor``: a call whose result carries no gradient."""
    module, _, name = path.partition(".")
    return name in NO_GRADIENT_CALLS.get(module, ())

_FRAMEWORK_ROOTS = ("numpy", "torch", "tensorflow", "jax", "jaxlib", "autograd", "math",
                    "scipy", "builtins", "gradlab", "keras")


@dataclass
class Resolution:
    """What a call means. ``kind``: 'prim', 'user', 'static' (never differentiated, kept as
    written), 'append' (list.append), 'unknown' (a callable with no rule)."""

    kind: str
    prim: str = ""
    args: dict[str, gast.expr] = field(default_factory=dict)   # canonical parameter -> expression
    callee: Any = None
    label: str = ""                                            # how the user spelled it


_signatures: dict[str, inspect.Signature] = {}


def signature(prim: str) -> inspect.Signature:
    """The canonical signature of a primitive (from :mod:`gradlab.tensor.spec`)."""
    try:
        return _signatures[prim]
    except KeyError:
        pass
    from ..tensor.backends.adjoint_helpers import SIGNATURES as HELPERS
    text = (SIGNATURES.get(prim) or EXTRA_SIGNATURES.get(prim) or HELPERS.get(prim)
            or "(*args, **kwargs)")
    namespace: dict[str, Any] = {}
    exec(f"def _{text}: pass", namespace)
    sig = inspect.signature(namespace["_"])
    _signatures[prim] = sig
    return sig


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
    def __init__(self, scope: Scope, local_names: set[str]) -> None:
        self.scope = scope
        self.locals = local_names

    # --- calls --------------------------------------------------------------------------------
    def call(self, node: gast.Call) -> Resolution:
        func = node.func
        parts = dotted(func)
        if parts is None:
            if isinstance(func, gast.Attribute):   # a method of a computed value: (a @ b).sum()
                return self._method(func.attr, node, _label(func))
            return Resolution("unknown", label=_label(func))
        label = ".".join(parts)
        if parts[0] in self.locals:
            if len(parts) == 2:
                return self._method(parts[1], node, label)
            return Resolution("unknown", label=label)
        found, obj = self.scope.lookup(parts[0])
        if not found:
            return Resolution("unknown", label=label)
        if isinstance(obj, types.ModuleType) and obj.__name__.startswith(
                "gradlab.tensor.backends") and len(parts) == 2:
            return self._bind(Meaning(parts[1]), node, label)   # gl.tanh in generated code
        if isinstance(obj, types.ModuleType):
            path = ".".join([obj.__name__] + parts[1:])
            target = _getattr_chain(obj, parts[1:])
        else:
            target = _getattr_chain(obj, parts[1:])
            path = ""
            if len(parts) == 1 and getattr(sys.modules.get("builtins"), parts[0], None) is obj:
                path = f"builtins.{parts[0]}"
        from .rules import custom_rule_for   # registered by users with @gradlab.adjoint
        custom = custom_rule_for(target)
        if custom is not None:
            return self._bind(Meaning(custom), node, label, custom=True)
        meaning = PATHS.get(path) if path else None
        if meaning is None and target is not None:
            meaning = _by_identity(target)
        if meaning is not None:
            if meaning.prim in ("maximum", "minimum") and path.startswith("builtins.") and (
                    len(node.args) != 2 or node.keywords):
                return Resolution("static", label=label)
            return self._bind(meaning, node, label)
        if gives_no_gradient(path):
            return Resolution("static", label=label)
        if _is_user_function(target):
            return Resolution("user", callee=target, label=label)
        return Resolution("unknown", callee=target, label=label)

    def _method(self, name: str, node: gast.Call, label: str) -> Resolution:
        receiver = node.func.value  # type: ignore[attr-defined]
        if name == "append":
            return Resolution("append", label=label)
        if name == "pop" and not node.args:
            return Resolution("pop", label=label)
        if name == "size" and node.args:      # torch: x.size(0) is x.shape[0]
            return Resolution("static", label=label)
        meaning = METHODS.get(name)
        if meaning is None:
            return Resolution("unknown", label=label)
        args = list(node.args)
        if name in VARARG_METHODS and len(args) > 1:
            args = [gast.Tuple(elts=args, ctx=gast.Load())]
        elif name in VARARG_METHODS and len(args) == 1 and name in ("transpose", "permute"):
            pass
        call = gast.Call(func=node.func, args=[receiver] + args, keywords=node.keywords)
        if name in ("transpose",) and len(node.args) == 2 and self._torch_dialect():
            meaning = Meaning("swapaxes")
        return self._bind(meaning, call, label)

    def _torch_dialect(self) -> bool:
        return any(isinstance(v, types.ModuleType) and v.__name__.startswith("torch")
                   for v in self.scope.globals.values() if isinstance(v, types.ModuleType))

    def _bind(self, meaning: Meaning, node: gast.Call, label: str, custom: bool = False
              ) -> Resolution:
        sig = signature(meaning.prim) if not custom else _custom_signature(meaning.prim)
        kwargs = {}
        for kw in node.keywords:
            if kw.arg is None:
                raise BindError(f"{label}(**...) cannot be differentiated: name the arguments")
            if kw.arg in meaning.drop:
                continue
            kwargs[meaning.rename.get(kw.arg, kw.arg)] = kw.value
        if any(isinstance(a, gast.Starred) for a in node.args):
            raise BindError(f"{label}(*...) cannot be differentiated: pass the arguments one by one")
        try:
            bound = sig.bind(*node.args, **kwargs)
        except TypeError as e:
            raise BindError(f"{label}: {e} (gradlab reads it as {meaning.prim}{sig})") from None
        args = dict(bound.arguments)
        for key, value in meaning.defaults.items():
            args.setdefault(key, gast.Constant(value=value, kind=None))
        return Resolution("prim", prim=meaning.prim, args=args, label=label)

    # --- attributes ---------------------------------------------------------------------------
    def is_module_constant(self, node: gast.expr) -> bool:
        """``np.pi``, ``math.e``, a module-level constant: a value, not a computation."""
        parts = dotted(node)
        if parts is None or parts[0] in self.locals:
            return False
        return self.scope.lookup(parts[0])[0]


class BindError(Exception):
    """A call's arguments do not fit the primitive; turned into GradlabSyntaxError by the caller."""


def _label(node: gast.expr) -> str:
    try:
        import ast
        return ast.unparse(gast.gast_to_ast(node))
    except Exception:  # pragma: no cover - best effort for messages
        return type(node).__name__


def _getattr_chain(obj: Any, attrs: list[str]) -> Any:
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
    for root in ("numpy", "math", "torch", "tensorflow", "jax", "scipy", "autograd"):
        if root in sys.modules and root not in _indexed_roots:
            _indexed_roots.add(root)
            for path, meaning in PATHS.items():
                if path.split(".")[0] != root:
                    continue
                parts = path.split(".")
                target = _getattr_chain(sys.modules[root], parts[1:])
                if target is not None and not isinstance(target, (int, float)):
                    _identity.setdefault(id(target), meaning)
    return _identity.get(id(obj))


def _is_user_function(obj: Any) -> bool:
    if not isinstance(obj, types.FunctionType):
        return False
    module = (obj.__module__ or "").split(".")[0]
    return module not in _FRAMEWORK_ROOTS


def _custom_signature(prim: str) -> inspect.Signature:
    from .rules import custom_signature
    return custom_signature(prim)


def bindings(op: Any) -> dict[str, Any]:
    """Every canonical parameter of a primitive operation with its atom (defaults filled in)."""
    from .rules import custom_signature, is_custom
    sig = custom_signature(op.prim) if is_custom(op.prim) else signature(op.prim)
    out: dict[str, Any] = {}
    required = [p.name for p in sig.parameters.values()
                if p.default is p.empty and p.kind is not p.KEYWORD_ONLY]
    out.update(zip(required, op.args))
    out.update(op.kwargs)
    return out
