"""Reading an einsum's subscripts (``'ij,jk->ik'``) as explicit terms, one per operand.

einsum's adjoint is an einsum too: each operand's gradient contracts the result's gradient with
the other operands, back into the operand's own subscripts. To write that second einsum, the
gradient code needs the first one spelled out: the ellipsis replaced by letters (as many as
each operand has dimensions there, aligned on the right, as NumPy broadcasts them) and the
output written where the subscripts leave it implicit (the letters used once, in ASCII order,
after the ellipsis). Plain Python on shapes: it runs beside the tensor code on every backend.
"""
from __future__ import annotations

import string
from collections import Counter
from dataclasses import dataclass
from typing import Any, Iterator, Sequence

from ..errors import GradlabError


@dataclass(frozen=True)
class Terms:
    """The subscripts written out: ``inputs[k]`` names operand k's axes, one letter each."""

    inputs: tuple[str, ...]
    output: str

    def unused(self) -> Iterator[str]:
        """Letters no term uses, for the axes the adjoint adds (a diagonal's second axis)."""
        used = set("".join(self.inputs) + self.output)
        return (c for c in string.ascii_letters if c not in used)

    def text(self) -> str:
        return ",".join(self.inputs) + "->" + self.output


def checked(subscripts: Any) -> str:
    """The subscripts, if they are a string: the form with index lists between the operands
    (``np.einsum(a, [0, 1], b, [1, 2])``) is refused."""
    if not isinstance(subscripts, str):
        raise GradlabError(
            f"einsum: gradlab reads the subscripts as a string such as 'ij,jk->ik', not "
            f"{type(subscripts).__name__} (the form with index lists between the operands): "
            f"write the subscripts as a string")
    return subscripts


def with_output(subscripts: Any) -> str:
    """The subscripts with their output written (``'ij,jk'`` -> ``'ij,jk->ik'``), the ellipsis
    kept: TensorFlow's einsum refuses an implicit output beside an ellipsis."""
    text = checked(subscripts).replace(" ", "")
    if "->" in text:
        return text
    counts = Counter(text.replace("...", "").replace(",", ""))
    singles = "".join(sorted(c for c, n in counts.items() if n == 1))
    return text + "->" + ("..." if "..." in text else "") + singles


def parse(subscripts: Any, ndims: Sequence[int]) -> Terms:
    """``subscripts`` for operands of ``ndims`` dimensions, written out (see the module)."""
    text = checked(subscripts).replace(" ", "")
    given, arrow, output = text.partition("->")
    terms = given.split(",")
    if len(terms) != len(ndims):
        raise GradlabError(f"einsum: the subscripts {subscripts!r} name {len(terms)} operands "
                           f"and {len(ndims)} are given")
    letters = set(text) - set(".,->")
    if not letters <= set(string.ascii_letters) or any(
            t.replace("...", "").count(".") for t in terms + [output]):
        raise GradlabError(f"einsum: gradlab reads subscripts of letters, ',', '->' and "
                           f"'...', not {subscripts!r}")
    free = (c for c in string.ascii_letters if c not in letters)
    widths = [n - len(t.replace("...", "")) for t, n in zip(terms, ndims)]
    if any(w < 0 or w and "..." not in t for t, w in zip(terms, widths)):
        shown = ", ".join(map(str, ndims))
        raise GradlabError(f"einsum: the subscripts {subscripts!r} name more axes than an "
                           f"operand has, or fewer without '...' (the operands have {shown})")
    ellipsis = "".join(next(free) for _ in range(max(widths, default=0)))
    inputs = tuple(t.replace("...", ellipsis[len(ellipsis) - w:]) for t, w in zip(terms, widths))
    if arrow:
        output = output.replace("...", ellipsis)
    else:
        counts = Counter("".join(terms).replace("...", ""))
        output = ellipsis + "".join(sorted(c for c, n in counts.items() if n == 1))
    return Terms(inputs, output)
