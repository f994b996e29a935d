"""Gradient surgery on the text: recompile an edited backward pass, and show what changed.

An edit is validated before it replaces anything: it must parse, define the function with the
same parameters, end with a ``return`` and use only names that exist; every problem is reported
with its line in the edited text. The previous function stays usable whatever happens.
"""
from __future__ import annotations

import ast
import builtins
import difflib
from typing import Any

from ..errors import GradlabError
from .leafcalls import EditedContainers, specialisation_for


class EditError(GradlabError):
    """An edited backward pass that cannot be compiled; ``lineno`` is in the edited text."""

    def __init__(self, message: str, lineno: int | None = None, line: str = "") -> None:
        self.message = message      # what is wrong, without the line (a panel shows it apart)
        self.lineno = lineno
        self.line = line
        where = f" (line {lineno}: {line.strip()})" if lineno else ""
        super().__init__(message + where)


def validate(source: str, like: Any) -> ast.FunctionDef:
    """The edited text's main function, or an :class:`EditError` saying what is wrong."""
    _require_generated(like)
    _require_text(source)
    lines = source.splitlines()
    try:
        tree = ast.parse(source)
    except SyntaxError as e:
        line = lines[e.lineno - 1] if e.lineno and e.lineno <= len(lines) else ""
        raise EditError(f"syntax error: {e.msg}", e.lineno, line) from None
    defs = [n for n in tree.body if isinstance(n, ast.FunctionDef)]
    others = [n for n in tree.body if not isinstance(n, ast.FunctionDef) and not (
        isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant))]
    if others:
        n = others[0]
        raise EditError("the edited code may contain only function definitions", n.lineno,
                        lines[n.lineno - 1])
    main = next((d for d in defs if d.name == like.name), None)
    if main is None:
        if len(defs) != 1:
            raise EditError(f"the edited code must define {like.name}(...)")
        main = defs[0]
    expected, got = _parameters(_original_def(like)), _parameters(main)
    if got != expected and _parameters(main, seed_as=_seed_parameter(like, main)) != expected:
        raise EditError(f"{main.name} must keep the parameters ({expected}); the edit has "
                        f"({got})", main.lineno, lines[main.lineno - 1])
    if not main.body or not isinstance(main.body[-1], ast.Return) or main.body[-1].value is None:
        raise EditError(f"{main.name} must end with `return <gradient>`", main.lineno,
                        lines[main.lineno - 1])
    _check_names(tree, like, lines)
    return main


def _require_text(source: Any) -> None:
    if not isinstance(source, str):
        raise EditError(f"the edited code must be a str (the function's text), not "
                        f"{type(source).__name__}" + (": decode it first, source.decode()"
                                                      if isinstance(source, bytes) else ""))


def _require_generated(like: Any) -> None:
    from ..api import GeneratedFunction
    if not isinstance(like, GeneratedFunction):
        what = getattr(like, "__qualname__", None) or type(like).__name__
        raise EditError(
            f"like= must be a function made by gradlab.grad, value_and_grad, jvp or hvp, whose "
            f"calling convention the edit keeps; got {what!r}. Write "
            f"gradlab.recompile(edited_source, like=gradlab.grad(f)) with the function f whose "
            f"generated code you edited")


def _parameters(fn: ast.FunctionDef, seed_as: tuple[str, str] | None = None) -> str:
    """The parameter list as written, without default values: ``W, x, *, seed``; with
    ``seed_as=(edited, generated)`` the edit's name for the seed is read as the generated one."""
    a = fn.args
    names = [p.arg for p in a.posonlyargs + a.args]
    if a.vararg is not None:
        names.append("*" + a.vararg.arg)
    elif a.kwonlyargs:
        names.append("*")
    names += [seed_as[1] if seed_as and p.arg == seed_as[0] else p.arg for p in a.kwonlyargs]
    if a.kwarg is not None:
        names.append("**" + a.kwarg.arg)
    return ", ".join(names)


def _seed_parameter(like: Any, main: ast.FunctionDef) -> tuple[str, str] | None:
    """An edit may call the seed what it likes (an older ``dloss=1.0``, say): the seed is the
    last keyword-only parameter, where the generated code has it. ``(edit's name, generated
    name)``, or None when the edit has no such parameter."""
    seed = getattr(like, "seed_name", None)
    kwonly = main.args.kwonlyargs
    if not seed or not kwonly or kwonly[-1].arg == seed:
        return None
    return kwonly[-1].arg, seed


def _original_def(like: Any) -> ast.FunctionDef:
    tree = ast.parse(like.source)
    return next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == like.name)


def _bound_names(fn: ast.FunctionDef) -> set[str]:
    """Every name the function binds anywhere in it: its parameters and those of the lambdas
    and functions nested in it, names assigned, loop and comprehension targets, ``except ...
    as e``, ``with ... as f``, imports, nested definitions. (Read as one scope: an edit is
    checked for names that exist nowhere, a typo, not for Python's scoping rules.)"""
    bound: set[str] = set()
    for node in ast.walk(fn):
        if isinstance(node, ast.arguments):
            params = node.posonlyargs + node.args + node.kwonlyargs + [
                a for a in (node.vararg, node.kwarg) if a is not None]
            bound.update(a.arg for a in params)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            bound.add(node.id)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            bound.add(node.name)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            bound.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            bound.update(node.names)
    return bound


def _check_names(tree: ast.Module, like: Any, lines: list[str]) -> None:
    known = set(dir(builtins)) | set(like.fn.__globals__) | set(like._free) | {
        d.name for d in tree.body if isinstance(d, ast.FunctionDef)}
    for fn in (n for n in tree.body if isinstance(n, ast.FunctionDef)):
        local = _bound_names(fn)
        for node in ast.walk(fn):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and (
                    node.id not in local and node.id not in known):
                raise EditError(f"unknown name {node.id!r}", node.lineno, lines[node.lineno - 1])
            if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                    and node.value.id == "gl" and node.attr not in _gl_names()):
                raise EditError(f"the tensor layer has no gl.{node.attr}", node.lineno,
                                lines[node.lineno - 1])


def _gl_names() -> set[str]:
    from ..tensor.registry import backend
    return set(vars(backend("numpy")))


def recompile(source: str, like: Any) -> Any:
    """A callable from edited backward code, with ``like``'s calling convention. The code a
    call with container arguments runs (``like.source_for(params, x)``, whose parameters are
    the containers' leaves) compiles to a callable taking those containers (see
    :class:`~gradlab.workbench.leafcalls.EditedContainers`)."""
    from ..api import GradientFunction, JVPFunction
    from ..transforms import also_return, functional_twin
    from ..codegen.emit import compile_source, to_source
    _require_text(source)
    for_containers = _edit_for_containers(source, like)
    if for_containers is not None:
        return for_containers
    main = validate(source, like)
    value = getattr(like, "value_name", None)
    assigned = {n.id for n in ast.walk(main) if isinstance(n, ast.Name)
                and isinstance(n.ctx, ast.Store)}
    value_name = value if value in assigned else None
    # blank lines left at the end (an Enter after the return) are no change to the code
    text = source.rstrip() + "\n"
    # jvp code returns (value, tangent) itself; gradient and hvp code hand the value back too
    returns_value = like.mode != "jvp"
    returned = also_return(main.name, value_name) if returns_value else None
    factory, filename = compile_source(text, like.fn.__globals__, like._free,
                                       f"edited:{main.name}", transform=returned)
    edited = _EditedTransform(factory, text, filename, main.name, like)
    edited.functional = functional_twin(text, like.fn.__globals__, like._free,
                                        f"edited:{main.name}", returned)
    kind = type(like) if isinstance(like, JVPFunction) else GradientFunction
    # An edit is not compared with the original function by the semantic guard: the user
    # changed the code on purpose, the forward pass included if they wish.
    out = kind(like.fn, edited, edited.source, filename, main.name, like._free,
               like.wrt, like.many, like.mode, like.params, like.seed_name,
               {**like.options, "check": False}, 0.0)
    out.value_name = value_name
    out.edited_from = like
    renamed = _seed_parameter(like, main)
    if renamed is not None:      # the edit named the seed its own way: pass it by that name
        out.seed_name = renamed[0]
    return out


def _edit_for_containers(source: str, like: Any) -> Any | None:
    """An edit of the code for container arguments' leaves, compiled as an edit of that code
    and run for calls with those containers; None where the edit is not one (its parameters
    are no leaves ``like`` has specialised code for)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return None                    # validate says where
    for fn in (n for n in tree.body if isinstance(n, ast.FunctionDef)):
        found = specialisation_for(like, [a.arg for a in fn.args.posonlyargs + fn.args.args])
        if found is not None:
            key, spec = found
            return EditedContainers(like, key, spec, recompile(source, like=spec.inner))
    return None


class _EditedTransform:
    """Stands in for a transform: one compiled text, the same for every input kind."""

    def __init__(self, factory: Any, text: str, filename: str, name: str, like: Any) -> None:
        from ..codegen.emit import Source
        self.factory = factory
        original = like._source
        # keep the user-line mapping for lines that did not change
        mapping = _carry_line_map(original.text, text, original.line_map)
        texts = _carry_line_map(original.text, text, original.line_text)
        self.source = Source(text, mapping, {k: str(v or "") for k, v in texts.items()})
        self.filename = filename
        self.name = name
        self.free = like._free
        self.functional: Any = None     # the text with updates in place written functionally

    def variant(self, scalars: frozenset[str], *ignored: Any) -> Any:
        """The edited code, whatever the inputs (their function or dialect): the user wrote
        it for them all."""
        from ..transforms import Variant
        return Variant(self.factory, self.source, self.filename, self.name, self.free,
                       functional=self.functional)


def _carry_line_map(old: str, new: str, old_map: dict[int, Any]) -> dict[int, Any]:
    """Carry a per-line mapping over an edit: unchanged lines keep theirs, and a new line
    takes the one of the line above it (the block it was written in)."""
    out: dict[int, Any] = {}
    matcher = difflib.SequenceMatcher(a=old.splitlines(), b=new.splitlines(), autojunk=False)
    for block in matcher.get_matching_blocks():
        for k in range(block.size):
            out[block.b + k + 1] = old_map.get(block.a + k + 1, 0)
    previous: Any = 0
    for line in range(1, len(new.splitlines()) + 1):
        if line in out:
            previous = out[line]
        else:
            out[line] = previous
    return out


def diff(df: Any, edited: Any, generated: str | None = None) -> str:
    """What an edit changed, as a unified diff of the generated and the edited code
    (``generated``: the generated text the edit started from, when not ``df.source``: the
    code specialised for a call's shapes)."""
    from ..api import GeneratedFunction
    from ..pytrees import ForContainersOnly
    made = (GeneratedFunction, ForContainersOnly)
    if not isinstance(df, made):
        raise GradlabError(f"diff compares an edit with gradlab's code: its first argument is "
                           f"the function gradlab.grad (or jvp, hvp) made, not "
                           f"{getattr(df, '__qualname__', type(df).__name__)!r}")
    if not isinstance(edited, (str,) + made):
        raise GradlabError(f"diff(df, edited): edited is the edited text or what "
                           f"gradlab.recompile made of it, not {type(edited).__name__}")
    new = edited if isinstance(edited, str) else edited.source
    old = df.source if generated is None else generated
    return "".join(difflib.unified_diff(old.splitlines(True), new.splitlines(True),
                                        fromfile=f"{df.name} (generated)",
                                        tofile=f"{df.name} (edited)"))
