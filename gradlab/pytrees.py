"""Container arguments at the call: a dict, list, tuple, namedtuple or dataclass of arrays in,
the gradient in the same structure out (as ``jax.grad`` does for pytrees).

The first call with a new structure (its keys, fields, lengths and types: :func:`structure_of`)
specialises the function for it: gradlab compiles the user's function again with one parameter
per leaf (``params_W``, ``params_b``) and a first line that builds the container from them
(so that it computes exactly what the user's function computes, for the semantic guard), and
differentiates it with the container's reads replaced by the leaves
(:mod:`gradlab.codegen.containers`). A call flattens its arguments, runs that function's
gradient, and gives each container argument's gradient back in its structure and type: a dict
with the same keys in the same order, a list, a tuple, the namedtuple's or dataclass's own
type (built with its constructor).

An argument counts as a container when it is a dict, a namedtuple or a dataclass instance, or a
list or tuple holding one of those: a plain list or tuple of arrays keeps gradlab's list
handling (``params[0]`` read in the function, a list of gradients out). Calls with arrays only
never come here (:func:`has_containers` is asked only where the fast paths found nothing).
"""
from __future__ import annotations

import ast
import dataclasses
import inspect
import re
import textwrap
import types
from collections import OrderedDict
from typing import Any, Callable, Iterator, Sequence

from .codegen.containers import LAYOUTS, Layout
from .codegen.parse import ORIGINAL, parse_function
from .errors import GradlabError

#: A leaf's structure.
LEAF = None
#: Flattened functions' code kept (by the user's code and the structures): fresh closures over
#: new values share one code object, and so one cached transform.
_CODES: OrderedDict[Any, tuple[types.CodeType, dict[str, Any]]] = OrderedDict()
_CODES_LIMIT = 256


# --- what is a container, and its structure ------------------------------------------------------
def _is_record(value: Any) -> str | None:
    """'namedtuple' or 'dataclass' for an instance of one, else None. A callable one is a
    model, not a container: an Equinox or Flax module is a dataclass the function calls
    (``model(x)``), run by the framework's autodiff as one call (see codegen/opaque.py)."""
    if callable(value):
        return None
    if isinstance(value, tuple) and hasattr(type(value), "_fields"):
        return "namedtuple"
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return "dataclass"
    return None


#: Types seen to be no container (arrays of every framework, numbers): asked first, so that a
#: call with arrays that comes this far (torch's, whose device picks the code) pays one set
#: lookup per argument.
_LEAF_TYPES: set[type] = {float, int, bool, complex, str, type(None)}


def is_container(value: Any) -> bool:
    """A dict, namedtuple or dataclass instance, or a list or tuple holding one."""
    kind = type(value)
    if kind in _LEAF_TYPES:
        return False
    if isinstance(value, dict) or _is_record(value):
        return True
    if kind is list or kind is tuple:
        return any(is_container(v) for v in value)
    if not isinstance(value, (list, tuple)) and len(_LEAF_TYPES) < 256:
        _LEAF_TYPES.add(kind)
    return False


def has_containers(args: Sequence[Any]) -> bool:
    for a in args:
        if type(a) not in _LEAF_TYPES and is_container(a):
            return True
    return False


def structure_of(value: Any) -> Any:
    """A hashable description of ``value``'s structure (:data:`LEAF` for a leaf): kinds, types,
    keys and lengths, not the leaves' values."""
    record = _is_record(value)
    if record == "namedtuple":
        return ("namedtuple", type(value), type(value)._fields,
                tuple(structure_of(v) for v in value))
    if record == "dataclass":
        fields = dataclasses.fields(value)
        return ("dataclass", type(value), tuple(f.name for f in fields),
                tuple(structure_of(getattr(value, f.name)) for f in fields))
    if isinstance(value, dict):
        return ("dict", type(value), tuple(value), tuple(structure_of(v) for v in value.values()))
    if isinstance(value, (list, tuple)):
        return (type(value).__name__ if type(value) in (list, tuple) else "tuple", type(value),
                len(value), tuple(structure_of(v) for v in value))
    return LEAF


def leaves_of(value: Any, structure: Any) -> Iterator[Any]:
    """The leaves of ``value``, in the order :func:`build` takes them."""
    if structure is LEAF:
        yield value
        return
    kind = structure[0]
    if kind == "dict":
        parts: Any = value.values()
    elif kind == "dataclass":
        parts = (getattr(value, f) for f in structure[2])
    else:
        parts = value
    for part, child in zip(parts, structure[3]):
        yield from leaves_of(part, child)


def build(structure: Any, leaves: Iterator[Any]) -> Any:
    """The container of this structure holding the next leaves of ``leaves``."""
    if structure is LEAF:
        return next(leaves)
    kind, kind_type, keys, children = structure
    parts = [build(child, leaves) for child in children]
    if kind == "dict":
        return dict(zip(keys, parts)) if kind_type is dict else kind_type(zip(keys, parts))
    if kind == "namedtuple":
        return kind_type(*parts)
    if kind == "dataclass":
        return kind_type(**dict(zip(keys, parts)))
    return kind_type(parts)


def layout(structure: Any, path: list[str], taken: set[str]) -> Layout:
    """The code generator's view of a structure, leaves named after their path
    (``params_layers_0_W``) and never after a name the function uses."""
    if structure is LEAF:
        base = re.sub(r"\W+", "_", "_".join(path)).strip("_") or "leaf"
        name, n = base, 2
        while name in taken:
            name, n = f"{base}_{n}", n + 1
        taken.add(name)
        return Layout("leaf", name=name)
    kind, kind_type, keys, children = structure
    if kind in ("list", "tuple"):
        keys = tuple(range(keys))
    return Layout(kind, kind_type.__name__, tuple(keys), tuple(
        layout(child, path + [str(k)], taken) for k, child in zip(keys, children)))


def _refuse_unbuildable(name: str, structure: Any) -> None:
    """A dataclass whose fields the constructor does not all take cannot be built again."""
    if structure is LEAF:
        return
    if structure[0] == "dataclass":
        missing = [f.name for f in dataclasses.fields(structure[1]) if not f.init]
        if missing:
            raise GradlabError(
                f"{name} is a {structure[1].__name__} whose field {missing[0]} is not taken by "
                f"its constructor (init=False): gradlab builds the gradient with the "
                f"constructor. Pass the arrays as a dict or a namedtuple instead")
    for child in structure[3]:
        _refuse_unbuildable(name, child)


# --- the function taking leaves ------------------------------------------------------------------
def flat_function(fn: types.FunctionType, structures: dict[str, Any],
                  layouts: dict[str, Layout]) -> types.FunctionType:
    """``fn`` compiled again with each container parameter replaced by its leaves, and a first
    statement (on the ``def`` line) building the container from them: the same body, the same
    file and lines, the same globals and closure cells."""
    key = (fn.__code__, tuple(sorted((n, s) for n, s in structures.items())))
    hit = _CODES.get(key)
    if hit is None:
        hit = _compile_flat(fn, structures, layouts)
        _CODES[key] = hit
        while len(_CODES) > _CODES_LIMIT:
            _CODES.popitem(last=False)
    else:
        _CODES.move_to_end(key)
    code, builders = hit
    own = dict(zip(fn.__code__.co_freevars, fn.__closure__ or ()))
    closure = tuple(own[n] if n in own else types.CellType(builders[n])
                    for n in code.co_freevars)
    flat = types.FunctionType(code, fn.__globals__, fn.__name__, None, closure)
    flat.__qualname__ = fn.__qualname__
    flat.__module__ = fn.__module__
    setattr(flat, ORIGINAL, fn)
    setattr(flat, LAYOUTS, layouts)
    return flat


def _builder_name(param: str) -> str:
    return f"__gradlab_build_{param}"


def _compile_flat(fn: types.FunctionType, structures: dict[str, Any],
                  layouts: dict[str, Layout]) -> tuple[types.CodeType, dict[str, Any]]:
    parse_function(fn)     # the source is the code Python runs (else: the error to see)
    lines, first = inspect.getsourcelines(fn)
    tree = ast.parse(textwrap.dedent("".join(lines)))
    ast.increment_lineno(tree, (first or 1) - 1)
    fdef = tree.body[0]
    assert isinstance(fdef, (ast.FunctionDef, ast.AsyncFunctionDef))
    fdef.decorator_list = []
    params = [p for p in inspect.signature(fn).parameters]
    flat_params = [leaf for p in params for leaf in (
        layouts[p].leaves() if p in layouts else [p])]
    fdef.args = ast.arguments(posonlyargs=[], args=[ast.arg(arg=p) for p in flat_params],
                              vararg=None, kwonlyargs=[], kw_defaults=[], kwarg=None,
                              defaults=[])
    prologue = [ast.Assign(targets=[ast.Name(p, ast.Store())], value=ast.Call(
        func=ast.Name(_builder_name(p), ast.Load()),
        args=[ast.Name(leaf, ast.Load()) for leaf in layouts[p].leaves()], keywords=[]))
        for p in params if p in layouts]
    for statement in prologue:
        ast.copy_location(statement, fdef)
    fdef.body = prologue + fdef.body
    builders = {_builder_name(p): _Builder(structures[p]) for p in params if p in layouts}
    outer = [*fn.__code__.co_freevars, *builders]
    enclosing = ast.FunctionDef(
        name="__gradlab_enclosing__", args=ast.arguments(
            posonlyargs=[], args=[], vararg=None, kwonlyargs=[], kw_defaults=[], kwarg=None,
            defaults=[]),
        body=[ast.Assign(targets=[ast.Name(n, ast.Store())], value=ast.Constant(None))
              for n in outer] + [fdef], decorator_list=[], returns=None)
    if "type_params" in ast.FunctionDef._fields:       # Python 3.12 and later
        setattr(enclosing, "type_params", [])
    ast.copy_location(enclosing, fdef)
    module = ast.Module(body=[enclosing], type_ignores=[])
    ast.fix_missing_locations(module)
    compiled = compile(module, fn.__code__.co_filename, "exec", dont_inherit=True,
                       flags=fn.__code__.co_flags & _FUTURE_FLAGS)
    outer_code = next(c for c in compiled.co_consts if isinstance(c, types.CodeType))
    code = next(c for c in outer_code.co_consts if isinstance(c, types.CodeType)
                and c.co_name == fdef.name)
    return code, builders


#: ``from __future__ import annotations`` changes how a body compiles.
_FUTURE_FLAGS = 0x1000000


class _Builder:
    """Builds one container argument from its leaves (the flattened function's first line)."""

    def __init__(self, structure: Any) -> None:
        self.structure = structure

    def __call__(self, *leaves: Any) -> Any:
        return build(self.structure, iter(leaves))

    def __repr__(self) -> str:
        return "<gradlab: builds a container argument from its leaves>"


# --- a call with container arguments -------------------------------------------------------------
@dataclasses.dataclass
class Specialised:
    """What one structure of the arguments runs: the derivative of the flattened function, and
    for each parameter differentiated its structure (LEAF for an array)."""

    flat: types.FunctionType
    inner: Any
    structures: list[Any]              # per parameter of the user's function
    wrt_structures: list[Any]          # per parameter differentiated


class ContainerCalls:
    """The calls of one derivative (``grad``, ``value_and_grad``, ``jvp``, ``hvp``) that pass
    container arguments; ``derive(flat, wrt)`` makes the derivative of a flattened function."""

    def __init__(self, fn: Any, wrt: tuple[str, ...], many: bool, params: list[str],
                 mode: str, derive: Callable[[Any, tuple[str, ...]], Any]) -> None:
        self.fn, self.wrt, self.many, self.params, self.mode = fn, wrt, many, params, mode
        self.derive = derive
        self._specialised: dict[Any, Specialised] = {}

    def bind(self, args: Sequence[Any], kwargs: dict[str, Any]) -> list[Any]:
        """Every parameter's value, defaults filled in, in order."""
        signature = inspect.signature(self.fn)
        if any(p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD, p.KEYWORD_ONLY)
               for p in signature.parameters.values()):
            raise GradlabError(f"{self.fn.__qualname__} takes *args, **kwargs or keyword-only "
                               f"parameters: gradlab differentiates container arguments of a "
                               f"function with plain parameters only")
        try:
            bound = signature.bind(*args, **kwargs)
        except TypeError as e:
            raise TypeError(f"{e}: the arguments of {self.fn.__qualname__} are "
                            f"({', '.join(self.params)})") from None
        bound.apply_defaults()
        return [bound.arguments[p] for p in self.params]

    def specialised(self, values: list[Any]) -> tuple[Specialised, list[Any]]:
        """The specialisation for these arguments' structures, and the flat arguments."""
        structures = [structure_of(v) if is_container(v) else LEAF for v in values]
        key = tuple(structures)
        spec = self._specialised.get(key)
        if spec is None:
            spec = self._specialise(structures, values)
            if len(self._specialised) < 64:
                self._specialised[key] = spec
        flat = [leaf for v, s in zip(values, structures) for leaf in leaves_of(v, s)]
        return spec, flat

    def specialisations(self) -> list[tuple[Any, Specialised]]:
        """The structures specialised so far (their keys) and what each runs: where an edit
        of the code shown for one of them finds the code it edits."""
        return list(self._specialised.items())

    def install(self, key: Any, spec: Specialised) -> None:
        """Run ``spec`` for calls whose arguments have the structures ``key`` (an edit of
        their code, see gradlab.workbench.leafcalls)."""
        self._specialised[key] = spec

    def _specialise(self, structures: list[Any], values: list[Any]) -> Specialised:
        code = self.fn.__code__
        taken = set(code.co_varnames) | set(code.co_names) | set(code.co_freevars) | set(
            code.co_cellvars) | set(self.params)
        layouts = {}
        for p, s in zip(self.params, structures):
            if s is not LEAF:
                _refuse_unbuildable(p, s)
                layouts[p] = layout(s, [p], taken)
        flat = flat_function(self.fn, {p: s for p, s in zip(self.params, structures)
                                       if s is not LEAF}, layouts)
        index = {p: i for i, p in enumerate(self.params)}
        wrt = []
        for w in self.wrt:
            if w not in layouts:
                wrt.append(w)
                continue
            leaves = list(layouts[w].leaves())
            self._refuse_non_numbers(w, values[index[w]], structures[index[w]], leaves)
            wrt.extend(leaves)
        return Specialised(flat, self.derive(flat, tuple(wrt)), structures,
                           [structures[index[w]] for w in self.wrt])

    def _refuse_non_numbers(self, name: str, value: Any, structure: Any, leaves: list[str]
                            ) -> None:
        if not leaves:
            raise GradlabError(f"{name} holds no arrays or numbers: there is nothing to "
                               f"differentiate with respect to")
        for leaf, v in zip(leaves, leaves_of(value, structure)):
            if isinstance(v, bool) or not (isinstance(v, (int, float)) or hasattr(v, "dtype")):
                raise GradlabError(
                    f"{name} holds {type(v).__name__} {v!r} (the leaf gradlab calls {leaf}): "
                    f"a container differentiated holds arrays and numbers only. Pass other "
                    f"values in an argument that is not differentiated")

    def gradients(self, spec: Specialised, flat_grads: Sequence[Any]) -> Any:
        """The leaves' gradients given back in their arguments' structures."""
        grads = iter(flat_grads)
        out = tuple(build(s, grads) for s in spec.wrt_structures)
        return out if self.many else out[0]

    def tangents(self, spec: Specialised, given: Any, what: str) -> tuple[Any, ...]:
        """A jvp's tangents (an hvp's vectors) flattened as the arguments are: each in the
        structure of the argument it goes with."""
        given = tuple(given) if self.many else (given,)
        if len(given) != len(self.wrt):
            raise GradlabError(f"one {what} is needed for each of {', '.join(self.wrt)} (a "
                               f"tuple of {len(self.wrt)}), got {len(given)}")
        out: list[Any] = []
        for w, s, t in zip(self.wrt, spec.wrt_structures, given):
            if s is not LEAF and structure_of(t) != s:
                raise GradlabError(f"the {what} for {w} must have {w}'s structure (the same "
                                   f"keys, fields and lengths, the same container types)")
            out.extend(leaves_of(t, s))
        return tuple(out)

    def source_for(self, args: Sequence[Any], kwargs: dict[str, Any]) -> str:
        """The code these arguments run (the leaves' code), with a last comment saying how the
        call gives the leaves' gradients back in their structure."""
        spec, flat = self.specialised(self.bind(args, kwargs))
        text = str(spec.inner.source_for(*flat))
        if self.mode in ("jvp", "hvp"):
            return text
        returned = _returned_names(text)
        wanted = [leaf for w, s in zip(self.wrt, spec.wrt_structures) for leaf in (
            spec.flat.__gradlab_layouts__[w].leaves() if s is not LEAF else [w])]  # type: ignore
        names = iter(returned if len(returned) == len(wanted) else [f"d{n}" for n in wanted])
        lines = [f"d{w} = {spelled(s, names)}" for w, s in zip(self.wrt, spec.wrt_structures)]
        shown = [line for line, s in zip(lines, spec.wrt_structures) if s is not LEAF]
        return text + "# the call gives the gradients back in the arguments' structure:\n" + "".join(
            f"#   {line}\n" for line in shown)


def _returned_names(text: str) -> list[str]:
    """What the generated function's last ``return (a, b)`` gives back, as written."""
    last = [line.strip() for line in text.splitlines() if line.strip().startswith("return ")]
    try:
        value = ast.parse(last[-1]).body[0].value if last else None   # type: ignore[attr-defined]
    except SyntaxError:
        return []
    return [ast.unparse(e) for e in value.elts] if isinstance(value, ast.Tuple) else []


def spelled(structure: Any, names: Iterator[str]) -> str:
    """The structure written as Python, holding the next names: ``{"W": dW, "b": db}``,
    ``Pair(W=dW, b=db)``."""
    if structure is LEAF:
        return next(names)
    kind, kind_type, keys, children = structure
    parts = [spelled(child, names) for child in children]
    if kind == "dict":
        return "{" + ", ".join(f"{k!r}: {p}" for k, p in zip(keys, parts)) + "}"
    if kind in ("namedtuple", "dataclass"):
        return f"{kind_type.__name__}(" + ", ".join(f"{k}={p}" for k, p in zip(keys, parts)) \
            + ")"
    if kind == "list":
        return "[" + ", ".join(parts) + "]"
    return "(" + ", ".join(parts) + ("," if len(parts) == 1 else "") + ")"


# --- a function that may take containers, read before any call -----------------------------------
def may_take_containers(fn: Any, depth: int = 0) -> bool:
    """Whether ``fn`` reads a parameter as a container (``p["W"]``, ``p.W`` not called,
    ``p.items()``), itself or in a function of the user's it passes the parameter to
    (``layer(params, x)``): where the code generated for arrays fails on such a function, the
    failure waits for a call with arrays, and a call with containers is specialised for them."""
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(fn)))
        params = set(inspect.signature(fn).parameters)
    except (OSError, TypeError, ValueError, SyntaxError):
        return False
    called = {id(n.func) for n in ast.walk(tree) if isinstance(n, ast.Call)}
    parts = _parts_of(tree, params)
    for node in ast.walk(tree):
        if isinstance(node, ast.Subscript) and _reaches_into(node.value, parts) and \
                isinstance(node.slice, ast.Constant) and isinstance(node.slice.value, str):
            return True
        if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load) and \
                _reaches_into(node.value, parts) and node.attr not in _ARRAY_ATTRIBUTES and (
                    id(node) not in called or node.attr in ("items", "keys", "values")):
            return True
    return depth < 8 and any(may_take_containers(helper, depth + 1)
                             for helper in _helpers_given_parts(fn, tree, parts))


def _helpers_given_parts(fn: Any, tree: ast.AST, parts: set[str]) -> Iterator[Any]:
    """The user's functions ``fn`` calls by name with a parameter or a part of one."""
    scope = dict(getattr(fn, "__globals__", {}))
    for name, cell in zip(getattr(getattr(fn, "__code__", None), "co_freevars", ()),
                          getattr(fn, "__closure__", None) or ()):
        try:
            scope[name] = cell.cell_contents
        except ValueError:       # a cell not filled yet
            pass
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and any(
                _reaches_into(a, parts) for a in [*node.args, *(k.value for k in node.keywords)]):
            helper = scope.get(node.func.id)
            if isinstance(helper, types.FunctionType) and helper is not fn:
                yield helper


def _parts_of(tree: ast.AST, params: set[str]) -> set[str]:
    """The parameters and the names that hold parts of them: a loop's variable over one
    (``for layer in layers``, ``enumerate``, ``zip``), a name assigned an item of one
    (``layer = layers[0]``), so that ``layer.W`` says ``layers`` holds records."""
    parts = set(params)
    grew = True
    while grew:
        grew = False
        for node in ast.walk(tree):
            if isinstance(node, ast.For) and _reaches_into(node.iter, parts, loops=True):
                target = node.target
            elif isinstance(node, ast.Assign) and isinstance(node.value, ast.Subscript) and \
                    _reaches_into(node.value.value, parts):
                target = node.targets[0]
            else:
                continue
            new = {n.id for n in ast.walk(target) if isinstance(n, ast.Name)} - parts
            if new:
                parts |= new
                grew = True
    return parts


def _reaches_into(node: ast.AST, parts: set[str], loops: bool = False) -> bool:
    """Whether ``node`` is one of ``parts`` or an item of one (and, with ``loops``, what a
    loop iterates of them: ``enumerate(layers)``, ``zip(layers, xs)``, ``d.items()``)."""
    while isinstance(node, ast.Subscript):
        node = node.value
    if isinstance(node, ast.Name):
        return node.id in parts
    if loops and isinstance(node, ast.Call):
        if isinstance(node.func, ast.Name) and node.func.id in ("enumerate", "zip", "reversed",
                                                                 "list", "tuple"):
            return any(_reaches_into(a, parts, loops) for a in node.args)
        if isinstance(node.func, ast.Attribute) and node.func.attr in ("items", "values"):
            return _reaches_into(node.func.value, parts)
    return False


#: Attributes an array has, which say nothing about containers.
_ARRAY_ATTRIBUTES = frozenset(("T", "mT", "H", "shape", "dtype", "ndim", "size", "device",
                               "real", "imag", "data", "grad", "flat", "itemsize", "nbytes"))


# --- the calls ---------------------------------------------------------------------------------
def call_gradient(calls: ContainerCalls, args: Sequence[Any], kwargs: dict[str, Any],
                  seed: Any, preserve_result: bool = False) -> Any:
    """``grad`` or ``value_and_grad`` (``calls.mode``) called with container arguments."""
    spec, flat = calls.specialised(calls.bind(args, kwargs))
    value, flat_grads = spec.inner(*flat) if seed is None else spec.inner(*flat, seed=seed)
    grads = calls.gradients(spec, flat_grads)
    if calls.mode == "value_and_grad":
        return value, grads
    return (grads, value) if preserve_result else grads


def call_jvp(calls: ContainerCalls, args: Sequence[Any], kwargs: dict[str, Any]) -> Any:
    """``jvp(f)(*args, tangent)`` with container arguments (the tangent in the structure of
    the argument it goes with)."""
    if not args:
        raise GradlabError(f"{calls.fn.__name__}'s jvp takes its arguments and then the tangent")
    spec, flat = calls.specialised(calls.bind(args[:-1], kwargs))
    return spec.inner(*flat, calls.tangents(spec, args[-1], "tangent"))


def call_hvp(calls: ContainerCalls, args: Sequence[Any], kwargs: dict[str, Any],
             seed: Any) -> Any:
    """``hvp(f)(*args, v)`` with container arguments: ``v`` in the structure of the argument
    it goes with, and so is the product."""
    if not args:
        raise GradlabError(f"{calls.fn.__name__}'s hvp takes its arguments and then v")
    spec, flat = calls.specialised(calls.bind(args[:-1], kwargs))
    vs = calls.tangents(spec, args[-1], "v")
    hv = spec.inner(*flat, vs) if seed is None else spec.inner(*flat, vs, seed=seed)
    return calls.gradients(spec, hv)


class ForContainersOnly:
    """A derivative of a function that reads its parameters as containers and whose code for
    arrays could not be generated: calls with container arguments are specialised for them;
    anything else raises the error the code for arrays met."""

    def __init__(self, calls: ContainerCalls, error: GradlabError,
                 options: dict[str, Any]) -> None:
        self.calls = calls
        self.error = error
        self.options = options
        self.fn, self.wrt, self.many, self.mode = calls.fn, calls.wrt, calls.many, calls.mode
        self.params = calls.params
        self.__name__ = f"d{calls.fn.__name__}"
        #: its name in the panel's header (the code a call runs has its own: source_for)
        self.name = self.__name__

    @property
    def source(self) -> str:
        raise GradlabError(f"{self.fn.__qualname__} reads its parameters as containers, so "
                           f"its code is written for the structure of a call's arguments: "
                           f"see source_for(*args). (For arrays: {self.error})")

    def source_for(self, *args: Any, **kwargs: Any) -> str:
        if not has_containers(list(args) + list(kwargs.values())):
            raise self.error
        return self.calls.source_for(args[:-1] if self.mode in ("jvp", "hvp") else args,
                                     kwargs)

    def saved_for(self, *args: Any, **kwargs: Any) -> Any:
        """What the code for these container arguments' leaves saves for its backward pass
        (see GeneratedFunction.saved_for)."""
        spec, flat = self.calls.specialised(self.calls.bind(args, kwargs))
        return spec.inner.saved_for(*flat)

    def __repr__(self) -> str:
        return f"<gradlab {self.mode} of {self.fn.__qualname__}, for container arguments>"

    def __call__(self, *args: Any, seed: Any = None, **kwargs: Any) -> Any:
        if not has_containers(list(args) + list(kwargs.values())):
            raise self.error
        if self.mode == "jvp":
            return call_jvp(self.calls, args, kwargs)
        if self.mode == "hvp":
            return call_hvp(self.calls, args, kwargs, seed)
        return call_gradient(self.calls, args, kwargs, seed,
                             bool(self.options.get("preserve_result")))
