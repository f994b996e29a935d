"""Dicts built in the function with constant string keys, replaced by a variable per entry.

``p = {"a": x, "b": w}`` followed by reads ``p["a"]`` and stores ``p["c"] = ...`` is, for
differentiation, three variables: rewriting the function (before normalization reads it) as::

    p_a = x
    p_b = w
    ... p_a ...
    p_c = ...

lets every later stage handle it with what it already knows, and the generated code shows the
entries under names a reader recognises (scalar replacement, as compilers do for structs).

Only a dict whose every use can be rewritten so is replaced: each assignment to its name is a
dict literal (or ``dict(a=..., b=...)``) with constant string keys, the same keys every time
(nested dicts get the same treatment, ``p["l1"]["W"]`` becomes ``p_l1_W``), and every other
use reads or writes one entry with a constant string key. Any other use — a key computed at run
time, the dict returned, passed to a call, iterated, copied, read by a nested function — leaves
the dict as written, where :mod:`.check` refuses it if a gradient flows through it; the reason
is kept on the literal (:func:`why_kept`) so the refusal names the use. A dict kept as written
that the function writes into (``p[k] = v``) is refused here, whatever flows through it: its
entries' gradients could not be followed.

A loop over such a dict (``for k in p``, ``p.keys()``, ``p.values()``, ``p.items()``) is
written out once per key, in Python's order, with the key a constant in each copy (so that
``p[k]`` there is ``p_a``); where the keys are not known at the loop (a key added by
``p["c"] = ...``, literals with different keys), the loop rebinds the dict, or its body has a
``break``, ``continue`` or ``return``, it is refused at its line.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import gast

from ..errors import GradlabError
from . import trees
from .naming import Names
from .parse import ParsedFunction

#: The attribute a dict literal left as written carries: why it could not be replaced.
_KEPT = "gradlab_dict_kept"


def why_kept(node: Any) -> str | None:
    """Why the dict literal ``node`` was left as written (None: not a dict this pass saw)."""
    return getattr(node, _KEPT, None)


def replace_dicts(parsed: ParsedFunction, names: Names) -> None:
    """Rewrite, in place, every dict of ``parsed``'s function built and used with constant
    string keys as one variable per entry (nested dicts one level per round). Each round
    replaces a dict or writes out a loop over one, so there are fewer rounds than nodes."""
    for _ in range(sum(1 for _ in trees.walk(parsed.node)) + 1):
        if not _replace_once(parsed, names):
            return
    raise GradlabError(f"gradlab could not finish replacing the dicts of {parsed.name} by "
                       f"their entries: please report this function (the rounds did not end)")


@dataclass
class _Dict:
    """One name bound to dict literals: where, with which keys, and what stops replacing it."""

    name: str
    literals: list[gast.Assign] = field(default_factory=list)
    orders: set[tuple[Any, ...]] = field(default_factory=set)  # each literal's keys, in order
    keys: list[str] = field(default_factory=list)        # in order of first appearance
    stores: list[gast.AST] = field(default_factory=list)  # subscripts written
    reads: list[gast.Subscript] = field(default_factory=list)   # entries read
    reason: str = ""


def _replace_once(parsed: ParsedFunction, names: Names) -> bool:
    root = parsed.node
    dicts = _dict_names(root, parsed.scope.lookup("dict")[1] is dict)
    if not dicts:
        return False
    if _unroll_loops(parsed, dicts):
        return True
    parents = _parents(root)
    for node in trees.walk(root):
        if isinstance(node, gast.Name) and node.id in dicts:
            _classify(node, dicts[node.id], parents, parsed)
    replaced = {}
    for d in dicts.values():
        _require_keys_held(d, parsed)
        if d.reason:
            _keep(d, parsed)
        else:
            replaced[d.name] = {k: names.fresh(f"{d.name}_{k}") for k in d.keys}
    if replaced:
        _Replacer(replaced).visit(root)
    return bool(replaced)


def _parents(root: gast.AST) -> dict[Any, Any]:
    return {child: node for node in trees.walk(root) for child in gast.iter_child_nodes(node)}


def _entries(value: Any, dict_is_builtin: bool = True) -> list[tuple[Any, gast.expr]] | None:
    """The (key, value) pairs of a dict literal or ``dict(a=...)`` call (key None for
    ``**other``); None for anything else (``dict`` when the function's module rebinds it)."""
    if isinstance(value, gast.Dict):
        return [(k.value if isinstance(k, gast.Constant) else k, v)
                for k, v in zip(value.keys, value.values)]
    if (isinstance(value, gast.Call) and isinstance(value.func, gast.Name)
            and value.func.id == "dict" and not value.args and dict_is_builtin):
        return [(kw.arg, kw.value) for kw in value.keywords]
    return None


def _dict_names(root: gast.AST, dict_is_builtin: bool) -> dict[str, _Dict]:
    """The names some plain assignment binds to a dict literal."""
    dicts: dict[str, _Dict] = {}
    for node in trees.walk(root):
        if not (isinstance(node, gast.Assign) and len(node.targets) == 1
                and isinstance(node.targets[0], gast.Name)):
            continue
        entries = _entries(node.value, dict_is_builtin)
        if entries is None:
            continue
        d = dicts.setdefault(node.targets[0].id, _Dict(node.targets[0].id))
        d.literals.append(node)
        keys = [k for k, _ in entries]
        d.orders.add(tuple(dict.fromkeys(keys)))     # Python keeps the first place of a key
        if not all(isinstance(k, str) for k in keys):
            d.reason = d.reason or "is built with a key that is not a constant string"
        elif len(d.literals) > 1 and set(keys) != set(d.keys):
            d.reason = d.reason or "is assigned dicts with different keys"
        elif any(n.id == d.name for _, v in entries for n in trees.walk(v)
                 if isinstance(n, gast.Name)):
            d.reason = d.reason or "is built from its own entries"
        else:
            d.keys.extend(k for k in keys if k not in d.keys)
    return dicts


def _classify(node: gast.Name, d: _Dict, parents: dict[Any, Any],
              parsed: ParsedFunction) -> None:
    """Note a use of ``d``'s name: an entry read or written, a literal bound, or (the reason
    it stays as written) anything else."""
    parent = parents.get(node)
    if _in_nested_scope(node, parents, parsed.node):
        use = "read by a nested function or lambda"
    elif isinstance(parent, gast.Assign) and parent in d.literals:
        return
    elif isinstance(parent, gast.Subscript) and parent.value is node:
        use = _entry_use(parent, d, parents)
        if not use:
            return
    else:
        use = _whole_use(node, parent)
    if not d.reason:
        line = parsed.origin(node).lineno
        d.reason = f"is {use} (line {line})"


def _entry_use(sub: gast.Subscript, d: _Dict, parents: dict[Any, Any]) -> str:
    """'' for ``p["a"]`` read or written; otherwise what stops the rewriting."""
    key = sub.slice
    if isinstance(sub.ctx, gast.Store):
        d.stores.append(sub)
    if not (isinstance(key, gast.Constant) and isinstance(key.value, str)):
        return "read or written with a key that is not a constant string"
    if isinstance(sub.ctx, gast.Del):
        return f"changed by del {d.name}[{key.value!r}]"
    if isinstance(parents.get(sub), gast.AugAssign):
        d.reads.append(sub)          # an update reads the entry first
    elif isinstance(sub.ctx, gast.Store):
        if key.value not in d.keys:
            d.keys.append(key.value)
    else:
        d.reads.append(sub)
    return ""


def _require_keys_held(d: _Dict, parsed: ParsedFunction) -> None:
    """An entry read at a key the dict is never built with nor given is a KeyError in Python:
    the dict stays as written (so the error is Python's own)."""
    for sub in d.reads:
        if not d.reason and sub.slice.value not in d.keys:
            line = parsed.origin(sub).lineno
            d.reason = f"read at the key {sub.slice.value!r}, which it never holds (line {line})"


def _whole_use(node: gast.Name, parent: Any) -> str:
    if isinstance(parent, gast.Return):
        return "returned"
    if isinstance(parent, gast.For) and parent.iter is node:
        return "iterated over"
    if isinstance(parent, gast.Attribute):
        return f"used through .{parent.attr}"
    if isinstance(parent, gast.Call):
        return "passed to a call"
    if isinstance(parent, gast.Assign) and parent.value is node:
        return "assigned to another name"
    if isinstance(node.ctx, (gast.Store, gast.Param, gast.Del)):
        return "bound to something other than a dict literal"
    return "used as a whole"


def _in_nested_scope(node: gast.AST, parents: dict[Any, Any], root: gast.AST) -> bool:
    up = parents.get(node)
    while up is not None and up is not root:
        if isinstance(up, (gast.FunctionDef, gast.AsyncFunctionDef, gast.Lambda,
                           gast.ClassDef)):
            return True
        up = parents.get(up)
    return False


def _keep(d: _Dict, parsed: ParsedFunction) -> None:
    """Leave ``d`` as written, its literals marked with why; refuse writes into it."""
    for assign in d.literals:
        setattr(assign.value, _KEPT, f"{d.name} {d.reason}")
    if d.stores:
        raise parsed.error(
            f"gradlab cannot follow the entries of the dict {d.name}, which is changed here "
            f"and {d.reason}: gradlab differentiates a dict built in the function and read "
            f"and written with constant string keys ({d.name}[\"key\"]); keep the arrays in "
            f"variables of their own otherwise", d.stores[0], "a dict")


class _Replacer(gast.NodeTransformer):
    """Literals become one assignment per entry, ``p["a"]`` the entry's variable."""

    def __init__(self, replaced: dict[str, dict[str, str]]) -> None:
        self.replaced = replaced

    def visit_Assign(self, node: gast.Assign) -> Any:
        self.generic_visit(node)
        target = node.targets[0] if len(node.targets) == 1 else None
        if not (isinstance(target, gast.Name) and target.id in self.replaced):
            return node
        entries = _entries(node.value) or []
        variables = self.replaced[target.id]
        if not entries:                  # p = {}: its entries are bound where written
            return gast.copy_location(gast.Pass(), node)
        return [gast.copy_location(
            gast.Assign(targets=[gast.Name(variables[k], gast.Store(), None, None)],
                        value=v, type_comment=None), node) for k, v in entries]

    def visit_Subscript(self, node: gast.Subscript) -> Any:
        self.generic_visit(node)
        if isinstance(node.value, gast.Name) and node.value.id in self.replaced:
            name = self.replaced[node.value.id][node.slice.value]
            return gast.copy_location(gast.Name(name, node.ctx, None, None), node)
        return node


# --- loops over a dict ------------------------------------------------------------------------
_ITERATORS = ("keys", "values", "items")


def _unroll_loops(parsed: ParsedFunction, dicts: dict[str, _Dict]) -> bool:
    """Unroll each ``for`` over a dict's keys, values or items, one copy of the body per key
    (whose constant key then lets the entries be replaced); refuse the loops it cannot."""
    unroller = _Unroller(parsed, dicts)
    unroller.visit(parsed.node)
    return unroller.unrolled


def _loop_over(loop: gast.For, dicts: dict[str, _Dict]) -> tuple[_Dict, str] | None:
    """The dict ``loop`` iterates over (``p``, ``p.keys()``, ``p.values()``, ``p.items()``)
    and what it takes from it."""
    it = loop.iter
    if isinstance(it, gast.Name) and it.id in dicts:
        return dicts[it.id], "keys"
    if (isinstance(it, gast.Call) and not it.args and not it.keywords
            and isinstance(it.func, gast.Attribute) and it.func.attr in _ITERATORS
            and isinstance(it.func.value, gast.Name) and it.func.value.id in dicts):
        return dicts[it.func.value.id], it.func.attr
    return None


def _static_keys(d: _Dict, parsed: ParsedFunction) -> tuple[tuple[str, ...] | None, str]:
    """The dict's keys, in Python's order, where every binding gives the same ones and no
    key is added later; else None and why."""
    root = parsed.node
    if len(d.orders) != 1:
        return None, "it is built with different keys in different places"
    keys = next(iter(d.orders))
    if not all(isinstance(k, str) for k in keys):
        return None, "it is built with a key that is not a constant string"
    own = _stores_at_loop_keys(d, root)
    for node in trees.walk(root):
        if (isinstance(node, gast.Subscript) and isinstance(node.ctx, gast.Store)
                and isinstance(node.value, gast.Name) and node.value.id == d.name
                and not (isinstance(node.slice, gast.Constant) and node.slice.value in keys)
                and node not in own):
            return None, f"a key is added to it at line {parsed.origin(node).lineno}"
    return keys, ""


def _stores_at_loop_keys(d: _Dict, root: gast.AST) -> set[gast.Subscript]:
    """``p[k] = ...`` inside ``for k in p`` (or ``.items()``): a key it already has."""
    own = set()
    for loop in trees.walk(root):
        over = isinstance(loop, gast.For) and _loop_over(loop, {d.name: d})
        if not over or over[1] == "values":
            continue
        target = loop.target if isinstance(loop.target, gast.Name) else (
            loop.target.elts[0] if isinstance(loop.target, gast.Tuple) and loop.target.elts
            else None)
        own |= {n for s in loop.body for n in trees.walk(s)
                if isinstance(n, gast.Subscript) and isinstance(n.ctx, gast.Store)
                and isinstance(n.value, gast.Name) and n.value.id == d.name
                and isinstance(n.slice, gast.Name) and isinstance(target, gast.Name)
                and n.slice.id == target.id}
    return own


def _loop_problem(loop: gast.For, dict_name: str, what: str) -> str:
    target = loop.target
    names = [target] if isinstance(target, gast.Name) else (
        list(target.elts) if isinstance(target, gast.Tuple) else [])
    if not names or not all(isinstance(n, gast.Name) for n in names) or (
            what == "items") != (len(names) == 2) or len(names) > 2:
        return "its loop variables are not plain names (k, or k, v for .items())"
    if loop.orelse:
        return "it has an else block"
    stored = {n.id for s in loop.body for n in trees.walk(s)
              if isinstance(n, gast.Name) and not isinstance(n.ctx, gast.Load)}
    if names[0].id in stored and what != "values":
        return f"the loop assigns its variable {names[0].id}"
    if dict_name in stored:      # Python goes on over the old dict's entries
        return f"the loop binds {dict_name} to a new dict"
    jumps = [n for s in loop.body for n in trees.outside_inner_loops(s)
             if isinstance(n, (gast.Break, gast.Continue, gast.Return))]
    if jumps:
        return f"it has a {type(jumps[0]).__name__.lower()} inside"
    return ""


class _Unroller(gast.NodeTransformer):
    """``for k, v in p.items(): body`` becomes, per key, ``k = "a"``, ``v = p["a"]`` and the
    body with ``k`` read as ``"a"``."""

    def __init__(self, parsed: ParsedFunction, dicts: dict[str, _Dict]) -> None:
        self.parsed = parsed
        self.dicts = dicts
        self.unrolled = False

    def visit_For(self, node: gast.For) -> Any:
        self.generic_visit(node)
        over = _loop_over(node, self.dicts)
        if over is None:
            return node
        d, what = over
        keys, why = _static_keys(d, self.parsed)
        why = why or _loop_problem(node, d.name, what)
        if keys is None or why:
            raise self.parsed.error(
                f"gradlab differentiates a loop over the dict {d.name} by writing out its body "
                f"once per key, which it cannot do here: {why}; loop over a list of the keys "
                f"you need instead", node, "a loop over a dict")
        self.unrolled = True
        return [s for key in keys for s in _one_key(node, d.name, what, key)]


def _one_key(loop: gast.For, name: str, what: str, key: str) -> list[gast.stmt]:
    target = loop.target
    names = [target] if isinstance(target, gast.Name) else list(target.elts)
    key_name = names[0].id if what != "values" else None
    head = []
    if key_name is not None:
        head.append(_assign(key_name, gast.Constant(key, None), loop))
    if what != "keys":
        entry = gast.Subscript(gast.Name(name, gast.Load(), None, None),
                               gast.Constant(key, None), gast.Load())
        head.append(_assign(names[-1].id, entry, loop))
    body = trees.clone(loop.body)
    if key_name is not None:
        body = [_KeyAsConstant(key_name, key).visit(s) for s in body]
    return head + body


def _assign(name: str, value: gast.expr, where: gast.AST) -> gast.Assign:
    """``name = value``, quoting the header line of ``where``."""
    node = gast.copy_location(gast.Assign(targets=[gast.Name(name, gast.Store(), None, None)],
                                          value=value, type_comment=None), where)
    node.end_lineno = node.lineno
    return node


class _KeyAsConstant(gast.NodeTransformer):
    def __init__(self, name: str, key: str) -> None:
        self.name = name
        self.key = key

    def visit_Name(self, node: gast.Name) -> Any:
        if node.id == self.name and isinstance(node.ctx, gast.Load):
            return gast.copy_location(gast.Constant(self.key, None), node)
        return node
