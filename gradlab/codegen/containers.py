"""Container arguments (dicts, lists, tuples, namedtuples, dataclasses), read as their leaves.

A gradient with respect to ``params = {"W": W, "b": b}`` is, for differentiation, a gradient
with respect to two arrays. The call that brings such an argument fixes its structure (its
keys, fields and lengths: a :class:`Layout`), and for that structure the function is read with
one parameter per leaf (``params_W``, ``params_b``): every place the function reaches into the
argument with constant keys, indices or field names becomes the leaf's parameter, so that the
code generated is the code for separate arrays, under names a reader recognises
(``gradlab.pytrees`` flattens the call's arguments and gives the gradients back in their
structure).

What the structure makes static is written out before the leaves are read:

- a loop over a container (``for layer in params["layers"]``, ``enumerate(...)``, ``zip`` of
  containers, ``range(len(...))``, a dict's ``.items()``, ``.keys()``, ``.values()``) is
  unrolled, one copy of its body per element, the loop variable read as that element;
- ``len(container)`` is its length; ``W, b = params["layer"]`` one assignment per element;
- a list or tuple of leaves passed to a call (``np.stack(params["Ws"])``) or read at an index
  computed at run time (``params["Ws"][t]``) is the literal of its leaves
  (``[params_Ws_0, params_Ws_1]``), which gradlab differentiates as any list;
- a name bound once to a part of an argument (``layers = params["layers"]``) is that part.

Anything else that needs the container as a value — a key computed at run time, the container
passed to a call, returned, changed, or iterated by a loop that cannot be unrolled — is refused
at the user's line, naming the use and what to write instead: a container whose structure is
not read statically could have its gradient silently mis-assigned.
"""
from __future__ import annotations

import builtins
import inspect
import re
import types
from dataclasses import dataclass
from typing import Any, Iterator

import gast

from ..errors import GradlabError
from . import trees
from .parse import ORIGINAL, ParsedFunction
from .resolve import is_users_function

#: Layout kinds that are sequences (read by integer index, unpacked, enumerated).
SEQUENCES = ("list", "tuple", "namedtuple")
#: Layout kinds whose parts are fields read as attributes.
RECORDS = ("namedtuple", "dataclass")


@dataclass(frozen=True)
class Layout:
    """The structure of one argument: a leaf (``name``: its parameter) or a container of
    ``kind`` (``what``: its type's name, for messages) with ``children`` under ``keys`` (a
    dict's keys, a record's field names; indices for a list or tuple)."""

    kind: str
    what: str = ""
    keys: tuple[Any, ...] = ()
    children: tuple[Layout, ...] = ()
    name: str = ""

    @property
    def is_leaf(self) -> bool:
        return self.kind == "leaf"

    def leaves(self) -> Iterator[str]:
        """The leaves' parameter names, in the order the structure holds them."""
        if self.is_leaf:
            yield self.name
        for child in self.children:
            yield from child.leaves()

    def item(self, key: Any) -> Layout | None:
        """The part ``container[key]`` reads, or None where Python would raise."""
        if self.kind == "dict":
            return self.children[self.keys.index(key)] if key in self.keys else None
        if self.kind in SEQUENCES and type(key) is int and -len(self.children) <= key < len(
                self.children):
            return self.children[key]
        return None

    def field(self, attr: str) -> Layout | None:
        """The part ``container.attr`` reads (a namedtuple's or dataclass's field)."""
        if self.kind in RECORDS and attr in self.keys:
            return self.children[self.keys.index(attr)]
        return None


#: The attribute of a function made by :mod:`gradlab.pytrees` to take leaves: the layouts of
#: the parameters it flattens, by name (read by :func:`layouts_of`).
LAYOUTS = "__gradlab_layouts__"


def layouts_of(fn: Any) -> dict[str, Layout]:
    """The container parameters ``fn`` takes as leaves (empty for a user's function)."""
    return getattr(fn, LAYOUTS, None) or {}


def shown_names(fn: Any, wrt: list[str]) -> list[str]:
    """``wrt`` as a name shows it: a container's leaves by the container's name
    (``dloss_dparams``, not one ``_d`` per leaf)."""
    owner = {leaf: p for p, layout in layouts_of(fn).items() for leaf in layout.leaves()}
    return list(dict.fromkeys(owner.get(w, w) for w in wrt))


def read_leaves(parsed: ParsedFunction, layouts: dict[str, Layout]) -> None:
    """Rewrite ``parsed``'s function, in place, to take the leaves of the parameters named in
    ``layouts`` instead of the containers, and to read them where it read the containers."""
    node = parsed.node
    _replace_parameters(node, layouts)
    reader = _Reader(parsed, layouts)
    for _ in range(sum(1 for _ in trees.walk(node)) + 1):
        if not reader.one_round():
            break
    else:
        raise GradlabError(f"gradlab could not finish reading the container arguments of "
                           f"{parsed.name}: please report this function (the rounds did not end)")
    reader.replace_paths()


def _replace_parameters(node: gast.FunctionDef, layouts: dict[str, Layout]) -> None:
    args = []
    for a in node.args.args:
        layout = layouts.get(a.id)
        if layout is None:
            args.append(a)
        else:
            args.extend(gast.Name(leaf, gast.Param(), None, None) for leaf in layout.leaves())
    node.args.args = args
    node.args.defaults = []      # the call passes every argument (see gradlab.pytrees)
    node.args.posonlyargs = []


# --- paths: an argument's name followed by constant subscripts and field names ------------------
def _parents(root: gast.AST) -> dict[Any, Any]:
    return {child: node for node in trees.walk(root) for child in gast.iter_child_nodes(node)}


def _constant_key(node: gast.Subscript) -> tuple[bool, Any]:
    key = node.slice
    if isinstance(key, gast.Constant) and not isinstance(key.value, bool):
        return True, key.value
    if (isinstance(key, gast.UnaryOp) and isinstance(key.op, gast.USub)
            and isinstance(key.operand, gast.Constant) and type(key.operand.value) is int):
        return True, -key.operand.value
    return False, None


def _describe(path: gast.AST) -> str:
    return gast.unparse(path).strip()


class _Reader:
    """One round finds the first container path it can write out (a loop, an alias, an
    unpacking); the rounds end when none is left, then every path is replaced."""

    def __init__(self, parsed: ParsedFunction, layouts: dict[str, Layout]) -> None:
        self.parsed = parsed
        self.roots = dict(layouts)
        self._refuse_rebinding()

    # the layout a path expression reaches (None: not a path into an argument)
    def layout_of(self, node: gast.AST) -> Layout | None:
        if isinstance(node, gast.Name):
            return self.roots.get(node.id) if isinstance(node.ctx, gast.Load) else None
        if isinstance(node, gast.Subscript):
            outer = self.layout_of(node.value)
            if outer is None or outer.is_leaf:
                return None
            static, key = _constant_key(node)
            if not static and _of_leaves(outer) and not isinstance(node.slice, gast.Slice):
                return None      # [leaf, leaf][i]: a list read at run time (see _replacement)
            if isinstance(node.slice, gast.Slice):
                raise self._refusal(node, f"{_describe(node.value)} is sliced", "a slice of a "
                                    "container argument", "read its parts by index, or loop "
                                    "over it with for")
            if not static:
                raise self._refusal(node, f"{_describe(node.value)} is read with a key or "
                                    f"index computed at run time", "a key read at run time",
                                    f"use a constant key ({_describe(node.value)}[\"W\"], "
                                    f"[0]), or loop over the container itself")
            part = outer.item(key)
            if part is None:
                raise self._refusal(node, f"{_describe(node.value)} (a {outer.what}) has no "
                                    f"entry {key!r}", "a missing key",
                                    "read a key or index the argument has")
            return part
        if isinstance(node, gast.Attribute):
            outer = self.layout_of(node.value)
            if outer is None or outer.is_leaf:
                return None
            part = outer.field(node.attr)
            if part is None:
                return None          # a method (.items()): judged where it is used
            return part
        return None

    def _refusal(self, node: gast.AST, what: str, construct: str, instead: str) -> GradlabError:
        return self.parsed.error(
            f"gradlab reads a container argument (dict, list, tuple, namedtuple, dataclass) "
            f"as its arrays, and cannot here: {what}. Instead, {instead}", node, construct)

    def _refuse_rebinding(self) -> None:
        for node in trees.walk(self.parsed.node):
            if isinstance(node, gast.Name) and node.id in self.roots and isinstance(
                    node.ctx, (gast.Store, gast.Del)):
                raise self._refusal(node, f"the argument {node.id} is assigned in the "
                                    f"function", "rebinding a container argument",
                                    "give the new value a name of its own")

    # --- the rounds ----------------------------------------------------------------------------
    def one_round(self) -> bool:
        for node in trees.walk(self.parsed.node):
            if isinstance(node, gast.For):
                parts = self._loop_parts(node)
                if parts is not None:
                    self._unroll(node, parts)
                    return True
            elif isinstance(node, gast.Assign) and len(node.targets) == 1:
                if self._alias(node) or self._unpack(node):
                    return True
            elif isinstance(node, gast.Call) and self._helper_call(node):
                return True
            elif isinstance(node, (gast.If, gast.IfExp)) and self._has_key(node.test) is not None:
                self._take_branch(node, bool(self._has_key(node.test)))
                return True
        return False

    def _has_key(self, test: gast.expr) -> bool | None:
        """``"b" in params``, of a dict argument: known before the call (None: not such a
        test)."""
        if not (isinstance(test, gast.Compare) and len(test.ops) == 1 and isinstance(
                test.ops[0], (gast.In, gast.NotIn)) and isinstance(test.left, gast.Constant)):
            return None
        container = self._container(test.comparators[0])
        if container is None or container.kind != "dict":
            return None
        return (test.left.value in container.keys) == isinstance(test.ops[0], gast.In)

    def _take_branch(self, node: gast.If | gast.IfExp, taken: bool) -> None:
        """The branch a test known before the call takes, in place of the ``if``: the other
        may read a key the argument does not have."""
        root = self.parsed.node
        if isinstance(node, gast.If):
            _replace_statement(root, node, (node.body if taken else node.orelse) or [
                gast.copy_location(gast.Pass(), node)])
        else:
            _Swap({id(node): node.body if taken else node.orelse}).visit(root)

    def _flattened(self, value: gast.expr) -> Layout | None:
        """The layout of a container a call to a helper passes as its leaves: a list or tuple
        of leaves stays a list (the helper may index it at run time, see _replacement)."""
        part = self._container(value)
        return None if part is None or _of_leaves(part) else part

    def _helper_call(self, call: gast.Call) -> bool:
        """``layer(params["l1"], x)``, ``layer`` a function of the user's: the helper is read
        as taking the part's leaves (as the function given to gradlab takes its arguments'),
        and the call passes them, one argument per leaf."""
        given = list(call.args) + [k.value for k in call.keywords]
        if not isinstance(call.func, gast.Name) or not any(self._flattened(a) for a in given):
            return False
        found, helper = self.parsed.scope.lookup(call.func.id)
        if not found or not is_users_function(helper) or any(
                isinstance(a, gast.Starred) for a in call.args) or any(
                k.arg is None for k in call.keywords):
            return False
        sig = inspect.signature(helper)
        if any(p.kind not in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
               for p in sig.parameters.values()):
            return False
        try:
            bound = sig.bind(*call.args, **{k.arg: k.value for k in call.keywords})
        except TypeError:
            return False               # the call's own error, reported where it is read
        code = helper.__code__
        taken = set(code.co_varnames) | set(code.co_names) | set(code.co_freevars) | set(
            code.co_cellvars) | set(sig.parameters)
        layouts: dict[str, Layout] = {}
        args: list[gast.expr] = []
        for name, param in sig.parameters.items():
            value = bound.arguments.get(name)
            part = self._flattened(value) if value is not None else None
            if part is not None:
                layouts[name] = renamed(part, [name], taken)
                args.extend(_leaf_paths(value, part))
            elif value is not None:
                args.append(value)
            elif _is_literal(param.default):
                args.append(gast.Constant(param.default, None))
            else:
                return False
        stand_in = _stand_in(helper, layouts)
        alias = f"{helper.__name__}__{'_'.join(layouts)}_leaves"
        closure, n = self.parsed.scope.closure, 2
        while alias in closure and getattr(closure[alias], LAYOUTS) != layouts:
            alias = f"{helper.__name__}__{'_'.join(layouts)}_leaves_{n}"
            n += 1
        closure[alias] = stand_in
        call.func = gast.copy_location(gast.Name(alias, gast.Load(), None, None), call.func)
        call.args, call.keywords = args, []
        return True

    def _container(self, node: gast.AST) -> Layout | None:
        layout = self.layout_of(node)
        return layout if layout is not None and not layout.is_leaf else None

    def _loop_parts(self, loop: gast.For) -> list[gast.expr] | None:
        """The values the loop's target takes, one per step, where the loop is over a
        container, or over constant keys the body reads a container with (``for name in
        ("l1", "l2"): params[name]``) (None: neither)."""
        it = loop.iter
        if isinstance(it, (gast.List, gast.Tuple)) and it.elts and all(
                isinstance(e, gast.Constant) for e in it.elts) and isinstance(
                loop.target, gast.Name) and any(
                isinstance(n, gast.Subscript) and isinstance(n.slice, gast.Name)
                and n.slice.id == loop.target.id and self._container(n.value) is not None
                for s in loop.body for n in trees.walk(s)):
            return [gast.Constant(e.value, None) for e in it.elts]   # type: ignore[attr-defined]
        return self._elements(it, loop)

    def _elements(self, it: gast.expr, loop: gast.For) -> list[gast.expr] | None:
        """The elements iterating ``it`` gives, as expressions, where they are known before
        the call: a container's, a dict's ``.items()``, ``.keys()``, ``.values()``, and
        ``enumerate``, ``zip`` and ``range(len(...))`` of those."""
        container = self._container(it)
        if container is not None:
            if container.kind == "dict":
                return [gast.Constant(k, None) for k in container.keys]
            if container.kind == "dataclass":
                raise self._refusal(loop, f"a loop over the dataclass {_describe(it)}",
                                    "a loop over a dataclass", "read its fields by name")
            return [self._item(it, i) for i in range(len(container.children))]
        if not isinstance(it, gast.Call) or it.keywords:
            return None
        func = it.func
        if isinstance(func, gast.Attribute) and not it.args:
            container = self._container(func.value)
            if container is None or func.attr not in ("items", "keys", "values"):
                return None
            if container.kind != "dict":
                raise self._refusal(loop, f"{_describe(func.value)} is a {container.what}, "
                                    f"which has no .{func.attr}()", f".{func.attr}()",
                                    "loop over the container itself")
            keys = [gast.Constant(k, None) for k in container.keys]
            values = [self._item(func.value, k) for k in container.keys]
            return keys if func.attr == "keys" else values if func.attr == "values" else [
                gast.Tuple([k, v], gast.Load()) for k, v in zip(keys, values)]
        if not isinstance(func, gast.Name) or self.parsed.scope.lookup(func.id)[1] is not \
                getattr(builtins, func.id, None):
            return None       # not a builtin (or the module rebinds its name)
        return self._builtin_elements(loop, func.id, it.args)

    def _builtin_elements(self, loop: gast.For, builtin: str, args: list[gast.expr]
                          ) -> list[gast.expr] | None:
        if builtin == "range" and len(args) == 1 and isinstance(args[0], gast.Call) and \
                isinstance(args[0].func, gast.Name) and args[0].func.id == "len" and \
                len(args[0].args) == 1:
            c = self._container(args[0].args[0])
            return None if c is None else [gast.Constant(i, None) for i in range(len(
                c.children))]
        if builtin not in ("enumerate", "zip") or not args or (
                builtin == "enumerate" and len(args) != 1):
            return None
        parts = [self._elements(a, loop) for a in args]
        if all(p is None for p in parts):
            return None
        if any(p is None for p in parts):
            raise self._refusal(loop, "zip of a container argument with something whose "
                                "length is not known before the call", "zip",
                                "zip containers of the arguments only, or index by position")
        if builtin == "enumerate":
            return [gast.Tuple([gast.Constant(i, None), e], gast.Load())
                    for i, e in enumerate(parts[0] or [])]
        return [gast.Tuple(list(row), gast.Load()) for row in zip(*parts)]  # type: ignore

    def _item(self, path: gast.expr, key: Any) -> gast.expr:
        return gast.Subscript(trees.clone(path), gast.Constant(key, None), gast.Load())

    def _bind(self, target: gast.AST, value: gast.expr, bound: dict[str, gast.expr],
              loop: gast.For) -> None:
        """What each name of a loop's target stands for in one step."""
        if isinstance(target, gast.Name):
            bound[target.id] = value
            return
        if not isinstance(target, (gast.Tuple, gast.List)):
            raise self._refusal(loop, "the loop's variables are not plain names",
                                "a loop over a container", "write them as plain names")
        if isinstance(value, gast.Tuple):
            values = value.elts
        else:
            container = self._container(value)
            if container is None or container.kind not in SEQUENCES:
                raise self._refusal(loop, f"{_describe(value)} is unpacked, but is not a "
                                    f"list or tuple of the arguments", "unpacking in a loop",
                                    "unpack it with its parts read by index")
            values = [self._item(value, i) for i in range(len(container.children))]
        if len(values) != len(target.elts):
            raise self._refusal(loop, f"{len(values)} values are unpacked into "
                                f"{len(target.elts)} names", "unpacking in a loop",
                                "unpack as many names as there are values")
        for t, v in zip(target.elts, values):
            self._bind(t, v, bound, loop)

    def _unroll(self, loop: gast.For, steps: list[gast.expr]) -> None:
        targets = [n.id for n in trees.walk(loop.target) if isinstance(n, gast.Name)]
        self._require_plain_body(loop, targets)
        self._refuse_read_after(loop, targets)
        copies: list[gast.stmt] = []
        for value in steps:
            bound: dict[str, gast.expr] = {}
            self._bind(loop.target, value, bound, loop)
            copies.extend(_Substitute(bound).visit(trees.clone(s)) for s in loop.body)
        _replace_statement(self.parsed.node, loop, copies or [
            gast.copy_location(gast.Pass(), loop)])

    def _refuse_read_after(self, loop: gast.For, targets: list[str]) -> None:
        """In Python a loop's variable keeps its last value after the loop; written out, the
        loop binds it nowhere, so a read outside it (but in another loop binding the same
        name) is refused rather than left to find another binding."""
        def reads(node: gast.AST) -> Iterator[gast.Name]:
            if node is loop:
                return
            if isinstance(node, gast.For) and any(
                    isinstance(n, gast.Name) and n.id in targets for n in trees.walk(node.target)):
                return
            if isinstance(node, gast.Name) and node.id in targets and isinstance(
                    node.ctx, gast.Load):
                yield node
            for child in gast.iter_child_nodes(node):
                yield from reads(child)
        after = next(reads(self.parsed.node), None)
        if after is not None:
            raise self._refusal(after, f"{after.id} is read outside the loop over a container "
                                f"that binds it (gradlab writes that loop out once per "
                                f"element)", "a loop variable read after its loop",
                                "read the element you mean where you need it "
                                "(params[\"layers\"][-1])")

    def _require_plain_body(self, loop: gast.For, targets: list[str]) -> None:
        if loop.orelse:
            raise self._refusal(loop, "a loop over a container argument has an else block",
                                "for ... else", "move the else block after the loop")
        for node in (n for s in loop.body for n in trees.outside_inner_loops(s)):
            if isinstance(node, (gast.Break, gast.Continue, gast.Return)):
                word = type(node).__name__.lower()
                raise self._refusal(node, f"a loop over a container argument, which gradlab "
                                    f"writes out once per element, has a {word} inside",
                                    f"{word} in a loop over a container",
                                    "compute a flag and test it with if")
        for node in (n for s in loop.body for n in trees.walk(s)):
            if isinstance(node, gast.Name) and node.id in targets and not isinstance(
                    node.ctx, gast.Load):
                raise self._refusal(node, f"the loop over a container assigns its variable "
                                    f"{node.id}", "assigning a loop variable",
                                    "give the new value a name of its own")

    def _alias(self, node: gast.Assign) -> bool:
        """``layers = params["layers"]``, the name bound nowhere else: the name is the part."""
        target = node.targets[0]
        if not isinstance(target, gast.Name) or self._container(node.value) is None:
            return False
        stores = [n for n in trees.walk(self.parsed.node) if isinstance(n, gast.Name)
                  and n.id == target.id and not isinstance(n.ctx, gast.Load)]
        if len(stores) != 1:
            raise self._refusal(node, f"{target.id} is bound to a part of a container "
                                f"argument and also assigned elsewhere",
                                "an alias of a container", "read the part where you need "
                                f"it ({_describe(node.value)}[...]), or use another name")
        value = node.value
        _replace_statement(self.parsed.node, node, [])
        body = self.parsed.node.body
        self.parsed.node.body = [_Substitute({target.id: value}).visit(s) for s in body] or [
            gast.copy_location(gast.Pass(), node)]
        return True

    def _unpack(self, node: gast.Assign) -> bool:
        """``W, b = params["layer"]``: one assignment per element."""
        target = node.targets[0]
        container = self._container(node.value)
        if container is None or not isinstance(target, (gast.Tuple, gast.List)):
            return False
        if container.kind not in SEQUENCES or len(target.elts) != len(container.children):
            raise self._refusal(node, f"{_describe(node.value)} is unpacked into "
                                f"{len(target.elts)} names but holds "
                                f"{len(container.children)} parts (or is not a sequence)",
                                "unpacking a container", "read its parts by key or index")
        assigns = [gast.copy_location(gast.Assign(targets=[t], value=self._item(node.value, i),
                                                  type_comment=None), node)
                   for i, t in enumerate(target.elts)]
        _replace_statement(self.parsed.node, node, assigns)
        return True

    # --- the last pass: paths to leaves become their parameters ---------------------------------
    def replace_paths(self) -> None:
        root = self.parsed.node
        parents = _parents(root)
        replace: dict[int, gast.AST] = {}
        for node in list(trees.walk(root)):
            if not (isinstance(node, gast.Name) and node.id in self.roots):
                continue
            top, layout = self._longest_path(node, parents)
            old, new = self._replacement(top, layout, parents)
            replace[id(old)] = new
        _Swap(replace).visit(root)

    def _longest_path(self, node: gast.AST, parents: dict[Any, Any]) -> tuple[gast.AST, Layout]:
        layout = self.roots[node.id]        # type: ignore[attr-defined]
        while not layout.is_leaf:
            up = parents.get(node)
            if not (isinstance(up, (gast.Subscript, gast.Attribute)) and up.value is node):
                break
            part = self.layout_of(up)
            if part is None:
                break
            node, layout = up, part
        return node, layout

    def _replacement(self, top: gast.AST, layout: Layout, parents: dict[Any, Any]
                     ) -> tuple[gast.AST, gast.AST]:
        """The node to replace (the path, or ``len(path)``) and what replaces it."""
        ctx = getattr(top, "ctx", None)
        if not isinstance(ctx, gast.Load):
            raise self._refusal(top, f"{_describe(top)} is changed (the function writes into "
                                f"its argument)", "changing a container argument",
                                "compute the new value under a name of its own")
        if layout.is_leaf:
            return top, gast.copy_location(gast.Name(layout.name, gast.Load(), None, None), top)
        up = parents.get(top)
        if isinstance(up, gast.Call) and isinstance(up.func, gast.Name) and up.func.id == \
                "len" and up.args == [top]:
            return up, gast.copy_location(gast.Constant(len(layout.children), None), up)
        if isinstance(up, gast.Compare) and len(up.ops) == 1 and isinstance(
                up.ops[0], (gast.In, gast.NotIn)) and up.comparators == [top] and isinstance(
                up.left, gast.Constant) and layout.kind == "dict":   # "b" in params
            found = up.left.value in layout.keys
            return up, gast.copy_location(gast.Constant(
                found if isinstance(up.ops[0], gast.In) else not found, None), up)
        if _of_leaves(layout) and (isinstance(up, gast.Call) and top in up.args or isinstance(
                up, gast.Subscript) and up.value is top):
            leaves = [gast.Name(leaf, gast.Load(), None, None) for leaf in layout.leaves()]
            literal = gast.Tuple(leaves, gast.Load()) if layout.kind == "tuple" else gast.List(
                leaves, gast.Load())
            return top, gast.copy_location(literal, top)   # read only: a literal of its leaves
        raise self._refusal(top, f"{_describe(top)} (a {layout.what}) is {_use(top, up)}",
                            "a container used as a whole",
                            "read its arrays with constant keys, indices or field names "
                            "(params[\"W\"], params.W, params[0]), or loop over it with for")


#: A helper read for container arguments, by the helper and the layouts: one function object
#: per structure, so that a helper calling itself with its argument is one function (the
#: program's units are by function). Bounded: the oldest are dropped first.
_STAND_INS: dict[tuple[Any, tuple[tuple[str, Layout], ...]], types.FunctionType] = {}
_STAND_INS_LIMIT = 256


def _stand_in(helper: types.FunctionType, layouts: dict[str, Layout]) -> types.FunctionType:
    """``helper`` as a function taking the leaves of ``layouts``' parameters: its code is the
    helper's own (gradlab reads it with the leaves, see :func:`layouts_of`), its signature the
    one the call is read against."""
    key = (helper, tuple(sorted(layouts.items())))
    found = _STAND_INS.get(key)
    if found is not None:
        return found
    stand_in = types.FunctionType(helper.__code__, helper.__globals__, helper.__name__, None,
                                  helper.__closure__)
    stand_in.__qualname__, stand_in.__module__ = helper.__qualname__, helper.__module__
    setattr(stand_in, LAYOUTS, layouts)
    setattr(stand_in, ORIGINAL, helper)
    params = inspect.signature(helper).parameters
    stand_in.__signature__ = inspect.Signature([   # type: ignore[attr-defined]
        inspect.Parameter(leaf, inspect.Parameter.POSITIONAL_OR_KEYWORD)
        for name in params for leaf in (layouts[name].leaves() if name in layouts else [name])])
    _STAND_INS[key] = stand_in
    while len(_STAND_INS) > _STAND_INS_LIMIT:
        del _STAND_INS[next(iter(_STAND_INS))]
    return stand_in


def renamed(layout: Layout, path: list[str], taken: set[str]) -> Layout:
    """``layout`` with its leaves named after their path from ``path`` (``p_W`` for the leaf
    ``params_l1_W`` given to a helper's parameter ``p``), never after a name in ``taken``."""
    if layout.is_leaf:
        return Layout("leaf", name=leaf_name(path, taken))
    return Layout(layout.kind, layout.what, layout.keys, tuple(
        renamed(child, path + [str(k)], taken) for k, child in zip(layout.keys,
                                                                    layout.children)))


def leaf_name(path: list[str], taken: set[str]) -> str:
    """The parameter of the leaf at ``path`` (``params_layers_0_W``), not one in ``taken``
    (which it joins)."""
    base = re.sub(r"\W+", "_", "_".join(path)).strip("_") or "leaf"
    name, n = base, 2
    while name in taken:
        name, n = f"{base}_{n}", n + 1
    taken.add(name)
    return name


def _leaf_paths(path: gast.expr, layout: Layout) -> list[gast.expr]:
    """The expressions reading each leaf under ``path``, in the order of the leaves."""
    if layout.is_leaf:
        return [path]
    out: list[gast.expr] = []
    for index, (key, child) in enumerate(zip(layout.keys, layout.children)):
        part: gast.expr
        if layout.kind == "dataclass":
            part = gast.Attribute(trees.clone(path), key, gast.Load())
        else:      # a namedtuple's fields by position, as a tuple's
            at = index if layout.kind == "namedtuple" else key
            part = gast.Subscript(trees.clone(path), gast.Constant(at, None), gast.Load())
        out.extend(_leaf_paths(part, child))
    return out


def _is_literal(value: Any) -> bool:
    return value is None or type(value) in (bool, int, float, str)


def _of_leaves(layout: Layout) -> bool:
    """A list or tuple of leaves, which a call or an index read at run time may read as the
    list (or tuple) literal of its leaves' parameters."""
    return layout.kind in ("list", "tuple") and all(c.is_leaf for c in layout.children)


def _use(node: gast.AST, parent: Any) -> str:
    if isinstance(parent, gast.Return):
        return "returned"
    if isinstance(parent, gast.For) and parent.iter is node:
        return "iterated over by a loop gradlab cannot write out"
    if isinstance(parent, gast.Attribute):
        return f"used through .{parent.attr}"
    if isinstance(parent, gast.Call):
        return "passed to a call (gradlab reads a container only inside the function it is " \
               "given to)"
    if isinstance(parent, gast.Subscript):
        return "read with a slice or a key computed at run time"
    if isinstance(parent, gast.Assign):
        return "assigned to another name"
    return "used as a whole"


def _replace_statement(root: gast.AST, old: gast.stmt, new: list[gast.stmt]) -> None:
    """Put ``new`` where ``old`` is, in whichever statement list holds it."""
    for node in trees.walk(root):
        for field_name in ("body", "orelse", "finalbody"):
            block = getattr(node, field_name, None)
            if isinstance(block, list) and any(s is old for s in block):
                i = next(i for i, s in enumerate(block) if s is old)
                block[i:i + 1] = new
                if not block:
                    block.append(gast.copy_location(gast.Pass(), old))
                return


class _Substitute(gast.NodeTransformer):
    """Loads of the names in ``bound`` become (copies of) the expressions they stand for."""

    def __init__(self, bound: dict[str, gast.expr]) -> None:
        self.bound = bound

    def visit_Name(self, node: gast.Name) -> Any:
        if node.id in self.bound and isinstance(node.ctx, gast.Load):
            return gast.copy_location(trees.clone(self.bound[node.id]), node)
        return node


class _Swap(gast.NodeTransformer):
    """Nodes (by identity) replaced by the nodes given for them."""

    def __init__(self, replace: dict[int, gast.AST]) -> None:
        self.replace = replace

    def visit(self, node: Any) -> Any:
        new = self.replace.get(id(node))
        if new is not None:
            return new
        return super().visit(node)
