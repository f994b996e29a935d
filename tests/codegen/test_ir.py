"""The intermediate representation (gradlab.codegen.ir): what each statement reads and writes,
walked in program order, and refusals that point at the user's line."""
from __future__ import annotations

import numpy as np

from gradlab.codegen import ir
from gradlab.codegen.ir import Assign, Const, Op, OpKind, Origin
from tests.codegen.ir_text import normalized


def lists_and_loops(x, n):
    xs = []
    for i in range(3):
        xs.append(x * i)
    parts = np.split(x, 2)
    first = xs[0]
    while np.sum(x) < n:
        x = x + first
    return np.sum(np.stack(xs)) + np.sum(parts[0]) + np.sum(x)


def test_walk_visits_every_statement_depth_first_in_program_order() -> None:
    body = normalized(lists_and_loops).ir.body
    kinds = [type(s).__name__ for s in ir.walk(body)]
    assert kinds[:4] == ["Assign", "For", "Assign", "Effect"]     # the loop's body after it
    assert kinds.count("While") == 1 and len(kinds) == len(list(ir.walk(body)))
    loop = next(s for s in body if isinstance(s, ir.For))
    assert ir.children(loop) == [loop.body] and ir.children(body[0]) == []


def test_reads_and_writes_of_statements_and_blocks() -> None:
    fn = normalized(lists_and_loops).ir
    loop = next(s for s in fn.body if isinstance(s, ir.For))
    assert ir.stmt_writes(loop) == {"i"}                            # the counter itself
    assert ir.writes_in(loop.body) == {"x_times_i", "xs"}           # the append grows xs
    assert ir.reads_in(loop.body) == {"x", "i", "xs", "x_times_i"}
    loop2 = next(s for s in fn.body if isinstance(s, ir.While))
    assert {"x", "n"} <= ir.stmt_reads(loop2)                       # its test, not its body
    assert ir.writes_in(loop2.body) == {"x"}


def test_list_names_are_the_python_lists_of_arrays() -> None:
    assert ir.list_names(normalized(lists_and_loops).ir) == {"xs", "parts"}


def test_atom_names_and_op_reads() -> None:
    op = Op(OpKind.PRIM, "add", ["a", Const(2.0)], {"out": "b"})
    assert ir.op_reads(op) == {"a", "b"}
    assert ir.atom_names(Const(1)) == set() and ir.atom_names(None) == set()
    assert ir.atom_names(["a", ("b", Const(0))]) == {"a", "b"}
    assert ir.stmt_reads(Assign(None, ["y"], op)) == {"a", "b"}


def test_a_refusal_points_at_the_users_line() -> None:
    error = ir.refusal("cannot do that", Origin(7, "y = f(x)", "model.py"), "f")
    assert (error.filename, error.lineno, error.line, error.construct) == \
        ("model.py", 7, "y = f(x)", "f")
    assert str(error).startswith("cannot do that\n  at model.py, line 7:")
    assert ir.refusal("no origin", None).lineno is None


def test_kinds_show_as_their_words() -> None:
    assert str(OpKind.PRIM) == "prim" and f"{ir.EffectKind.LIST_SET:>9}" == " list_set"
    assert OpKind("pop") is OpKind.POP
