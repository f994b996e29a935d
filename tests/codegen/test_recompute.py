"""Values the backward pass computes again instead of saving (gradlab/codegen/recompute.py):
on small adjoint-shaped functions whose answer is known, then end to end, where the gradient
must equal the one that saves everything."""
from __future__ import annotations

import ast
import textwrap

import gast
import numpy as np

import gradlab
from gradlab.codegen import trees
from gradlab.codegen.recompute import recompute_saved


def parse(code: str) -> gast.FunctionDef:
    fn = gast.parse(textwrap.dedent(code)).body[0]
    assert isinstance(fn, gast.FunctionDef)
    return fn


def stacks_in(fn: gast.FunctionDef) -> set[str]:
    return {n.id for n in trees.walk(fn) if isinstance(n, gast.Name) and n.id.endswith("_stack")}


ENTRY = """
def g(u, dc):
    u_t_stack = []
    v_stack = []
    for t in range(gl.shape(u)[0]):
        u_t = u[t]
        u_t_stack.append(u_t)
        v = 0.3 * u_t
        v_stack.append(v)
    for t in reversed(range(gl.shape(u)[0])):
        v = v_stack.pop()
        u_t = u_t_stack.pop()
        dc = dc * u_t + v
    return dc
"""


def run(fn: gast.FunctionDef, u: np.ndarray) -> float:
    module = gast.gast_to_ast(gast.Module(body=[fn], type_ignores=[]))
    namespace: dict = {"gl": np}
    exec(compile(ast.fix_missing_locations(module), "<test>", "exec"), namespace)
    return namespace["g"](u, 1.0)


def test_an_entry_at_the_loop_index_and_a_scalar_op_of_it_are_recomputed() -> None:
    fn = parse(ENTRY)
    want = run(parse(ENTRY), np.array([0.5, -1.0, 2.0]))
    assert recompute_saved(fn, {"u_t_stack", "v_stack"}) == {"u_t_stack", "v_stack"}
    assert not stacks_in(fn)
    backward = fn.body[-2]
    assert isinstance(backward, gast.For)
    lines = [gast.dump(s) for s in backward.body]
    # u_t is computed again before v, which reads it
    assert lines[0] == gast.dump(parse("def f():\n    u_t = u[t]").body[0])
    assert lines[1] == gast.dump(parse("def f():\n    v = 0.3 * u_t").body[0])
    assert run(fn, np.array([0.5, -1.0, 2.0])) == want


def test_nothing_is_recomputed_where_the_array_is_changed_in_place() -> None:
    code = ENTRY.replace("        v_stack.append(v)\n",
                         "        v_stack.append(v)\n        u[t] = 0.0\n")
    fn = parse(code)
    assert recompute_saved(fn, {"u_t_stack", "v_stack"}) == set()
    assert stacks_in(fn) == {"u_t_stack", "v_stack"}


def test_nothing_is_recomputed_where_the_array_is_reassigned() -> None:
    code = ENTRY.replace("        v = 0.3 * u_t\n", "        v = 0.3 * u_t\n        u = u * 2.0\n")
    fn = parse(code)
    assert "u_t_stack" not in recompute_saved(fn, {"u_t_stack", "v_stack"})


def test_nothing_is_recomputed_where_a_call_could_change_the_array() -> None:
    code = ENTRY.replace("        v = 0.3 * u_t\n", "        v = 0.3 * u_t\n        touch(u)\n")
    assert recompute_saved(parse(code), {"u_t_stack", "v_stack"}) == set()


def test_an_index_other_than_the_loop_variable_keeps_the_value_saved() -> None:
    code = ENTRY.replace("        u_t = u[t]\n", "        k = t + 1\n        u_t = u[k]\n")
    assert recompute_saved(parse(code), {"u_t_stack", "v_stack"}) == set()


def test_a_backward_loop_over_another_range_keeps_the_value_saved() -> None:
    code = ENTRY.replace("reversed(range(gl.shape(u)[0]))", "reversed(range(2))")
    assert recompute_saved(parse(code), {"u_t_stack", "v_stack"}) == set()


def test_a_name_written_between_the_value_and_its_push_keeps_it_saved() -> None:
    code = ENTRY.replace("        u_t_stack.append(u_t)\n",
                         "        t = 0\n        u_t_stack.append(u_t)\n")
    assert "u_t_stack" not in recompute_saved(parse(code), {"u_t_stack", "v_stack"})


def test_a_call_is_not_cheap() -> None:
    code = ENTRY.replace("v = 0.3 * u_t", "v = gl.exp(u_t)")
    assert recompute_saved(parse(code), {"u_t_stack", "v_stack"}) == {"u_t_stack"}


def w6(u, T0):
    T = T0
    c = 0.0
    for t in range(u.shape[0]):
        dT = (10.0 - T) * 0.1 + u[t] * 0.5
        T = T + 0.2 * dT
        c = c + 0.3 * u[t] * u[t] + (T - 21.0) ** 2
    return c


def overwritten(x):
    a = x * 1.0
    s = 0.0
    for t in range(3):
        s = s + a[t] * a[t]
        a[t] = 2.0 * a[t]
    return s + np.sum(a * a)


def test_the_state_loop_saves_one_value_a_step_and_computes_the_same_gradient() -> None:
    u, T0 = np.random.default_rng(0).normal(size=20), 20.0
    df = gradlab.grad(w6)
    source = df.variant_source(u, T0)
    assert "u_t_stack" not in source and "u_t = u[t]" in source
    assert source.count("_stack = []") == 1     # T - 21.0, which reads the state
    np.testing.assert_allclose(df(u, T0), gradlab.grad(w6, optimized=False)(u, T0), rtol=1e-12)


def test_an_array_written_in_the_loop_keeps_its_entries_saved() -> None:
    x = np.array([0.5, -1.0, 2.0, 0.3])
    df = gradlab.grad(overwritten)
    want = gradlab.grad(overwritten, optimized=False)(x)
    np.testing.assert_allclose(df(x), want, rtol=1e-12)
    h = 1e-6
    numeric = [(overwritten(x + h * e) - overwritten(x - h * e)) / (2 * h) for e in np.eye(4)]
    np.testing.assert_allclose(df(x), numeric, rtol=1e-6)
    assert "a_t = a[t]" not in df.source.split("# ── backward ──")[1]
