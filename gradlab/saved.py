"""What a gradient saves for its backward pass, and why: ``df.saved`` and ``df.saved_for(*args)``.

The forward pass of a generated gradient keeps the values its backward pass reads on stacks
(``h_stack.append(h)`` after the user's line that computes ``h``; ``h = h_stack.pop()`` where
the loop is run backward). Everything here is read from the generated text itself, so it
describes exactly the code that runs (an edited gradient too):

- :func:`saved_values`: each stack of the main function: the value pushed, the user's line
  that computes it, and the backward lines that read it once popped;
- :func:`measure`: the same function run once on given inputs, compiled again with a hook
  where the backward pass starts (every push done, no pop yet), which counts the pushes and
  their bytes. Stacks of helper functions' vjps live only while the helper's vjp runs and are
  not counted.
"""
from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field, replace
from typing import Any

from .calls import require_call
from .codegen.emit import compile_source
from .tensor.detect import common_framework
from .tensor.registry import backend

#: The hook's name inside measuring code.
_HOOK = "__gradlab_saved__"
_BACKWARD = "── backward ──"


@dataclass(frozen=True)
class SavedValue:
    """One value the forward pass saves on every step of a loop.

    ``name``: the variable pushed (``gl.shape(v)`` where only its shape is); ``stack``: the
    list it is pushed on; ``user_line`` and ``user_text``: the line of the user's code that
    computes it (0 and "" where none); ``push_line``: the generated line that pushes it;
    ``read_by``: the generated lines of the backward pass that read it (line number, text).
    After :func:`measure`: ``steps`` (pushes), ``shape``/``dtype`` (of the first value pushed),
    ``bytes_per_step`` and ``total_bytes``."""

    name: str
    stack: str
    user_line: int
    user_text: str
    push_line: int
    read_by: tuple[tuple[int, str], ...]
    steps: int | None = None
    shape: tuple[int, ...] | None = None
    dtype: str | None = None
    bytes_per_step: float | None = None
    total_bytes: int | None = None


@dataclass
class SavedReport:
    """The values a gradient saves (a list of :class:`SavedValue`), printed as a table."""

    function: str
    values: list[SavedValue] = field(default_factory=list)
    measured: bool = False

    def __iter__(self) -> Any:
        return iter(self.values)

    def __len__(self) -> int:
        return len(self.values)

    def __getitem__(self, i: int) -> SavedValue:
        return self.values[i]

    @property
    def names(self) -> list[str]:
        return [v.name for v in self.values]

    @property
    def total_bytes(self) -> int | None:
        if not self.measured:
            return None
        return sum(v.total_bytes or 0 for v in self.values)

    def __repr__(self) -> str:
        if not self.values:
            return f"{self.function} saves nothing for its backward pass"
        head = f"{self.function} saves {len(self.values)} value(s) for its backward pass"
        rows = [("saved", "computed at (your line)", "read by (backward lines)")
                + (("steps", "shape", "dtype", "bytes/step", "total bytes")
                   if self.measured else ())]
        for v in self.values:
            where = f"{v.user_line}: {v.user_text}" if v.user_line else "-"
            reads = "; ".join(f"{n}: {t}" for n, t in v.read_by) or "-"
            row: tuple[str, ...] = (v.name, _clip(where, 44), _clip(reads, 60))
            if self.measured:
                row += (str(v.steps), str(v.shape), str(v.dtype),
                        f"{v.bytes_per_step:g}" if v.bytes_per_step is not None else "-",
                        str(v.total_bytes))
            rows.append(row)
        widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
        lines = [head] + ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip()
                          for r in rows]
        if self.measured:
            lines.append(f"total: {self.total_bytes} bytes")
        return "\n".join(lines)

    def _repr_pretty_(self, p: Any, cycle: bool) -> None:
        p.text(repr(self))


def _clip(text: str, width: int) -> str:
    return text if len(text) <= width else text[:width - 1] + "…"


def saved_values(source: Any, name: str) -> SavedReport:
    """The stacks of generated function ``name`` in ``source`` (a
    :class:`~gradlab.codegen.emit.Source`), with where each value comes from and what reads it."""
    lines = source.text.splitlines()
    tree = ast.parse(source.text)
    fn = next((n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == name), None)
    report = SavedReport(name)
    if fn is None:
        return report
    end = max(getattr(n, "end_lineno", 0) or 0 for n in ast.walk(fn))
    mark = next((i for i in range(fn.lineno, end + 1) if _BACKWARD in lines[i - 1]), end)
    stacks = _stacks(fn, lines)
    pushes: dict[str, tuple[str, int]] = {}
    popped: dict[str, set[str]] = {}
    for node in ast.walk(fn):
        if (isinstance(node, ast.Expr) and isinstance(node.value, ast.Call)
                and isinstance(node.value.func, ast.Attribute)
                and node.value.func.attr == "append"
                and isinstance(node.value.func.value, ast.Name)
                and node.value.func.value.id in stacks and len(node.value.args) == 1):
            stack = node.value.func.value.id
            pushed = node.value.args[0]     # a value, or its shape: ``gl.shape(v)``
            pushes.setdefault(stack, (pushed.id if isinstance(pushed, ast.Name)
                                      else ast.unparse(pushed), node.lineno))
        if (isinstance(node, ast.Assign) and len(node.targets) == 1
                and isinstance(node.targets[0], ast.Name) and isinstance(node.value, ast.Call)
                and isinstance(node.value.func, ast.Attribute) and node.value.func.attr == "pop"
                and isinstance(node.value.func.value, ast.Name)):
            popped.setdefault(node.value.func.value.id, set()).add(node.targets[0].id)
    for stack, (value, push_line) in pushes.items():
        targets = popped.get(stack, {value})
        reads = []
        for i in range(mark + 1, end + 1):
            text = lines[i - 1].strip()
            if text.startswith("#") or re.match(rf"\w+ = {re.escape(stack)}\.pop\(\)$", text):
                continue
            if any(re.search(rf"(?<![\w.]){re.escape(t)}(?!\w)", _code(text)) for t in targets):
                reads.append((i, text))
        report.values.append(SavedValue(
            value, stack, source.line_map.get(push_line, 0),
            source.line_text.get(push_line, "").strip(), push_line, tuple(reads)))
    report.values.sort(key=lambda v: v.push_line)
    return report


def _stacks(fn: ast.FunctionDef, lines: list[str]) -> set[str]:
    """The stacks: the empty lists the function makes before its first quoted line (a list
    of the user's, ``ys = []``, comes after the line that quotes it)."""
    out = set()
    for s in fn.body:
        if any(lines[i - 1].strip().startswith("#") for i in range(fn.lineno + 1, s.lineno)):
            break
        if (isinstance(s, ast.Assign) and len(s.targets) == 1
                and isinstance(s.targets[0], ast.Name) and isinstance(s.value, ast.List)
                and not s.value.elts):
            out.add(s.targets[0].id)
    return out


def _code(text: str) -> str:
    """A line without what it assigns: ``dh = 2 * h`` reads ``h``, not ``dh``."""
    head, sep, rest = text.partition(" = ")
    return rest if sep and re.fullmatch(r"[\w, ]+", head) else text


def measure(df: Any, args: tuple[Any, ...], kwargs: dict[str, Any] | None = None
            ) -> SavedReport:
    """Run the generated code these inputs run (the variant specialised for their shapes,
    where one is) once, and count what its forward pass saved: pushes per stack, the first
    value's shape and dtype, bytes per step and in all."""
    require_call(df, args, kwargs or {})
    variant = df.running_variant(args)
    report = saved_values(variant.source, variant.name)
    stacks = [v.stack for v in report.values]
    if not stacks:
        report.measured = True
        return report
    lines = variant.source.text.splitlines()
    seen: dict[str, list[Any]] = {}

    def hook(found: dict[str, list[Any]]) -> None:
        for k, items in found.items():
            seen[k] = list(items)

    def instrument(tree: ast.Module) -> None:
        for node in tree.body:
            if isinstance(node, ast.FunctionDef) and node.name == variant.name:
                mark = next((i + 1 for i, line in enumerate(lines)
                             if _BACKWARD in line and i + 1 > node.lineno), None)
                at = next((k for k, s in enumerate(node.body)
                           if mark is not None and s.lineno > mark), len(node.body) - 1)
                call = ast.Expr(ast.Call(
                    func=ast.Name(_HOOK, ast.Load()),
                    args=[ast.Dict(keys=[ast.Constant(s) for s in stacks],
                                   values=[ast.Name(s, ast.Load()) for s in stacks])],
                    keywords=[]))
                ast.copy_location(call, node.body[at])
                node.body.insert(at, call)
        ast.fix_missing_locations(tree)

    values = dict(variant.free)
    values["gl"] = backend(common_framework(args))
    values[_HOOK] = hook
    factory, _ = compile_source(variant.source.text, df.fn.__globals__, values,
                                f"saved:{variant.name}", transform=instrument)
    factory(**values)[variant.name](*args, **(kwargs or {}))
    measured = []
    for v in report.values:
        items = seen.get(v.stack, [])
        total = sum(_nbytes(x) for x in items)
        first = items[0] if items else None
        measured.append(replace(
            v, steps=len(items), shape=_shape(first) if items else None,
            dtype=_dtype(first) if items else None,
            bytes_per_step=total / len(items) if items else 0.0, total_bytes=total))
    report.values = measured
    report.measured = True
    return report


def _shape(x: Any) -> tuple[int, ...] | None:
    if isinstance(x, (int, float)):
        return ()
    if isinstance(x, tuple) and all(type(d) is int for d in x):
        return (len(x),)        # a saved shape (torch.Size too)
    shape = getattr(x, "shape", None)
    try:
        return tuple(int(d) for d in shape) if shape is not None else None
    except TypeError:
        return None


def _dtype(x: Any) -> str:
    if type(x) in (bool, int, float):
        return f"Python {type(x).__name__}"
    if isinstance(x, tuple):
        return "shape"
    dtype = getattr(x, "dtype", None)
    return str(getattr(dtype, "name", dtype)) if dtype is not None else type(x).__name__


def _nbytes(x: Any) -> int:
    """The bytes of a saved value's data: 8 for a Python number, ``nbytes`` for an array (a
    list or tuple: the sum of its items')."""
    if isinstance(x, (bool, int, float)):
        return 8
    if isinstance(x, (list, tuple)):
        return sum(_nbytes(i) for i in x)
    nbytes = getattr(x, "nbytes", None)
    if isinstance(nbytes, int):
        return nbytes
    if hasattr(x, "element_size") and hasattr(x, "numel"):    # torch
        return int(x.element_size() * x.numel())
    shape, dtype = _shape(x), getattr(x, "dtype", None)
    size = getattr(dtype, "size", None)                          # tensorflow
    if shape is not None and isinstance(size, int):
        count = 1
        for d in shape:
            count *= d
        return count * size
    return 0
