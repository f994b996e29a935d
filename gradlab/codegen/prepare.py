"""The function as one derivative needs it, made from its normalized program: the stage between
the checks on the code as written and the generator of reverse or forward mode.

- ``y = f(y)`` where the mode's rule needs both the old and the new ``y`` becomes
  ``y_new = f(y)`` then ``y = y_new``, so each value keeps a name of its own. (Outside loops
  renaming already gives the new value a new name; inside a loop ``y`` must stay ``y``.)
  Which statements need it depends on the mode: reverse mode when the adjoint reads the result
  (``y = tanh(y)``), forward mode when the tangent reads the old value, since the tangent line
  is written after the primal one.
- Loop-invariant code is hoisted (:mod:`.hoist`) in reverse mode when optimizing: a value a
  loop no longer recomputes is no longer saved on every iteration for the backward pass.
  Forward mode keeps its loops as written (it saves nothing, and its generated code is
  unchanged by this stage on purpose). With it, an entry ``u[t]`` read twice in one step is
  read once (:mod:`.cse`).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from . import ir
from .analyze import Activity
from .cse import share_entries
from .hoist import hoist
from .ir import Assign, Op, OpKind
from .naming import Names
from .primal import Emitter

@dataclass
class Prepared:
    """What the generator of one derivative starts from: the function prepared for it (a copy
    of the normalized one, with names of its own), the writer of its primal code, and the
    analysis of the prepared code (which values carry a gradient, which share a shape)."""

    fn: ir.Function
    names: Names
    emitter: Emitter
    activity: Activity
    classes: dict[str, Any]


#: Whether an assignment ``y = f(..y..)`` needs its new value under a name of its own.
NeedsOwnName = Callable[[Assign], bool]


def prepare(fn: ir.Function, names: Names, needs_own_name: NeedsOwnName, hoisting: bool) -> None:
    """Prepare ``fn`` (a copy: it is changed in place) for one derivative."""
    split_self_updates(fn.body, names, needs_own_name)
    if hoisting:
        hoist(fn.body)
        share_entries(fn)


def split_self_updates(stmts: list[ir.Stmt], names: Names, needs_own_name: NeedsOwnName) -> None:
    """``y = f(y)`` becomes ``y_new = f(y)`` then ``y = y_new`` where ``needs_own_name``."""
    i = 0
    while i < len(stmts):
        s = stmts[i]
        for block in ir.children(s):
            split_self_updates(block, names, needs_own_name)
        if isinstance(s, Assign) and len(s.targets) == 1 and needs_own_name(s):
            target = s.targets[0]
            fresh = names.fresh(f"{target}_new")
            stmts[i:i + 1] = [Assign(s.origin, [fresh], s.op),
                              Assign(s.origin, [target], Op(OpKind.COPY, args=[fresh]))]
            i += 1
        i += 1
