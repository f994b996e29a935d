"""Names for what the generated code computes: the user's names first, then names that say what
a temporary holds (``xW`` for ``x @ W``, ``h_pow2`` for ``h ** 2``), never a clash."""
from __future__ import annotations

import keyword
import re

import gast

_MAX = 32


class Names:
    """Hands out fresh names, avoiding every name the user's code mentions."""

    def __init__(self, taken: set[str]) -> None:
        self.taken = set(taken)

    def fresh(self, hint: str) -> str:
        base = _clean(hint)
        name, n = base, 2
        while name in self.taken or keyword.iskeyword(name):
            name = f"{base}_{n}"
            n += 1
        self.taken.add(name)
        return name

    def reserve(self, name: str) -> None:
        self.taken.add(name)


def _clean(hint: str) -> str:
    text = re.sub(r"\W+", "_", hint).strip("_") or "t"
    if text[0].isdigit():
        text = "v" + text
    if len(text) > _MAX:
        text = text[:_MAX].rstrip("_")
    return text


def describe(node: gast.AST) -> str:
    """A short name for a literal or a name: ``2`` -> '2', ``0.5`` -> '0_5', ``h`` -> 'h'."""
    if isinstance(node, gast.Name):
        return node.id
    if isinstance(node, gast.Constant):
        value = node.value
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        return str(value).replace("-", "neg").replace(".", "_")
    return ""


_BINOP_WORDS = {
    gast.Add: "plus", gast.Sub: "minus", gast.Mult: "times", gast.Div: "over",
    gast.FloorDiv: "floordiv", gast.Mod: "mod",
}


def binop_hint(op: gast.operator, left: str, right: str) -> str:
    """``x @ W`` -> 'xW'; ``h ** 2`` -> 'h_pow2'; ``a + b`` -> 'a_plus_b'."""
    left = left or "t"
    right = right or "t"
    if len(left) + len(right) > 14:   # long operands: name the kind of result instead
        return {gast.Add: "total", gast.Sub: "difference", gast.Mult: "product",
                gast.Div: "ratio", gast.Pow: "power", gast.MatMult: "matprod"}.get(
                    type(op), "value")
    if isinstance(op, gast.MatMult):
        return f"{left}{right}" if len(left) + len(right) <= 8 else f"{left}_at_{right}"
    if isinstance(op, gast.Pow):
        return f"{left}_pow{right}"
    word = _BINOP_WORDS.get(type(op), "op")
    return f"{left}_{word}_{right}"


_VALUE_SUFFIX = re.compile(r"_\d+$")


def users_value_or_gradient(name: str, users: set[str]) -> bool:
    """Whether ``name`` is one of the user's variables, one of its values (``y_2``) or its
    gradient (``dy``, ``dy_2``): the names a reader looks for next to the function, which the
    optimizer never renames away or folds into an expression."""
    return name in users or _VALUE_SUFFIX.sub("", name) in users or (
        name.startswith("d") and _VALUE_SUFFIX.sub("", name[1:]) in users)
