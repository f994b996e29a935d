"""The forward pass saves only what the backward pass reads (gradlab/codegen/saves.py).

The liveness analysis is checked on small programs whose answer is known, then used as the
oracle over the whole corpus: no generated function (a gradient, its variant for Python
numbers, an hvp, which runs forward mode over gradient code with stacks) pushes a value none
of whose pops is read. The gradients themselves are checked against finite differences by
the corpus tests (test_reverse_corpus, test_hvp_corpus)."""
from __future__ import annotations

import textwrap

import gast
import numpy as np
import pytest

import gradlab
from gradlab import examples
from gradlab.codegen import trees
from gradlab.codegen.saves import drop_stacks, save_shapes, shape_only_stacks, unread_stacks
from tests.codegen.corpus import CORPUS, Case


def parse(code: str) -> gast.FunctionDef:
    fn = gast.parse(textwrap.dedent(code)).body[0]
    assert isinstance(fn, gast.FunctionDef)
    return fn


def stacks_of(fn: gast.FunctionDef) -> set[str]:
    """The names the function creates as ``s = []`` and pops from as ``v = s.pop()``, found
    in the text alone (not asked from the generator)."""
    created = {s.targets[0].id for s in trees.walk(fn)
               if isinstance(s, gast.Assign) and len(s.targets) == 1
               and isinstance(s.targets[0], gast.Name) and isinstance(s.value, gast.List)
               and not s.value.elts}
    pushed = {n.value.func.value.id for n in trees.walk(fn)
              if isinstance(n, gast.Expr) and isinstance(n.value, gast.Call)
              and isinstance(n.value.func, gast.Attribute) and n.value.func.attr == "append"
              and isinstance(n.value.func.value, gast.Name)}
    return created & pushed


# --- the analysis on programs whose answer is known -------------------------------------------
def test_a_pop_read_later_is_kept() -> None:
    fn = parse("""
        def f(x):
            a_stack = []
            for i in range(3):
                a = x * i
                a_stack.append(a)
            for i in reversed(range(3)):
                a = a_stack.pop()
                d = a * 2
            return d
    """)
    assert unread_stacks(fn, {"a_stack"}, set()) == set()


def test_a_pop_overwritten_before_any_read_is_dropped() -> None:
    """``h`` restored in the loop, but only the last ``h`` (read before the loop) is used."""
    fn = parse("""
        def f(x):
            h_stack = []
            h = x
            for i in range(3):
                h_stack.append(h)
                h = h * 2
            dh = g(h)
            for i in reversed(range(3)):
                h = h_stack.pop()
                dh = 2 * dh
            return dh
    """)
    assert unread_stacks(fn, {"h_stack"}, set()) == {"h_stack"}
    drop_stacks(fn, {"h_stack"})
    assert "h_stack" not in {n.id for n in trees.walk(fn) if isinstance(n, gast.Name)}


def test_a_pop_read_in_the_next_iteration_is_kept() -> None:
    """Read at the top of the next (reversed) iteration: the loop's back edge."""
    fn = parse("""
        def f(x):
            c_stack = []
            c = x
            for i in range(3):
                c_stack.append(c)
                c = c * 2
            d = 1.0
            for i in reversed(range(3)):
                d = d * c
                c = c_stack.pop()
            return d
    """)
    assert unread_stacks(fn, {"c_stack"}, set()) == set()


def test_a_pop_read_after_continue_or_in_one_branch_is_kept() -> None:
    fn = parse("""
        def f(x, flag):
            c_stack = []
            b_stack = []
            for i in range(3):
                c_stack.append(x)
                b_stack.append(x)
            d = 1.0
            for i in reversed(range(3)):
                if flag:
                    d = d + c
                    continue
                c = c_stack.pop()
                b = b_stack.pop()
                if flag:
                    d = d * b
            return d
    """)
    assert unread_stacks(fn, {"c_stack", "b_stack"}, set()) == set()


def test_the_value_handed_to_the_caller_is_read() -> None:
    fn = parse("""
        def f(x):
            c_stack = []
            c_stack.append(x)
            c = c_stack.pop()
            return x
    """)
    assert unread_stacks(fn, {"c_stack"}, {"c"}) == set()
    assert unread_stacks(fn, {"c_stack"}, set()) == {"c_stack"}


def test_code_it_does_not_model_keeps_every_stack() -> None:
    fn = parse("""
        def f(x):
            c_stack = []
            c_stack.append(x)
            c = c_stack.pop()
            try:
                pass
            except Exception:
                pass
            return x
    """)
    assert unread_stacks(fn, {"c_stack"}, set()) == set()


def test_a_stack_used_otherwise_is_kept() -> None:
    fn = parse("""
        def f(x):
            c_stack = []
            c_stack.append(x)
            n = len(c_stack)
            c = c_stack.pop()
            return n
    """)
    assert unread_stacks(fn, {"c_stack"}, set()) == set()


# --- the whole corpus ---------------------------------------------------------------------------
def _generated(case: Case) -> list[tuple[str, str, str | None]]:
    """(mode, source, value name) of each generated text with stacks for one case."""
    df = gradlab.grad(case.fn, case.wrt)
    out = [("grad", df.source, df._transform.value_name)]
    if case.scalars:
        out.append(("grad-scalars", df.variant_source(*case.inputs()), df._transform.value_name))
    h = gradlab.hvp(case.fn, case.wrt)
    out.append(("hvp", h.source, h._transform.value_name))
    return out


def _unread(source: str, value_name: str | None) -> list[str]:
    found = []
    for fn in gast.parse(source).body:
        if isinstance(fn, gast.FunctionDef):
            exit_live = {value_name} if value_name else set()
            found += [f"{fn.name}: {s}" for s in sorted(unread_stacks(fn, stacks_of(fn),
                                                                      exit_live))]
    return found


# --- a value read only for its shape saves its shape ---------------------------------------
SHAPE_ONLY = """
    def f(x):
        a_stack = []
        for i in range(3):
            a = x * i
            a_stack.append(a)
        d = 1.0
        for i in reversed(range(3)):
            a = a_stack.pop()
            d = gl.unbroadcast(d, a)
        return d
"""


def test_a_value_read_only_for_its_shape_saves_its_shape() -> None:
    fn = parse(SHAPE_ONLY)
    assert shape_only_stacks(fn, {"a_stack"}, set()) == {"a_stack": "a"}
    save_shapes(fn, {"a_stack": "a"})
    code = gast.unparse(fn) if hasattr(gast, "unparse") else __import__("ast").unparse(
        gast.gast_to_ast(fn))
    assert "a_shape_stack.append(gl.shape(a))" in code
    assert "a_shape = a_shape_stack.pop()" in code
    assert "d = gl.unbroadcast_to(d, a_shape)" in code
    assert "a_stack" not in code.replace("a_shape_stack", "")


def test_a_value_read_also_for_its_value_keeps_the_value() -> None:
    fn = parse(SHAPE_ONLY.replace("d = gl.unbroadcast(d, a)", "d = gl.unbroadcast(d, a) * a"))
    assert shape_only_stacks(fn, {"a_stack"}, set()) == {}


def test_a_shape_read_that_may_see_the_forward_value_keeps_the_value() -> None:
    """The first backward iteration reads the shape of the forward pass's last ``a``, before
    any pop: that read would see no saved shape."""
    fn = parse(SHAPE_ONLY.replace("""a = a_stack.pop()
            d = gl.unbroadcast(d, a)""", """d = gl.unbroadcast(d, a)
            a = a_stack.pop()"""))
    assert shape_only_stacks(fn, {"a_stack"}, set()) == {}


def test_the_rnn_saves_the_shape_of_w_at_h_not_the_array() -> None:
    """In the generic code (shapes unknown), ``W @ h`` is read back only by
    ``gl.unbroadcast``: its shape is saved. The code specialised for the call's shapes needs
    neither (see tests/test_saved.py)."""
    source = gradlab.grad(examples.rnn_loss).source
    assert "Wh_shape_stack.append(gl.shape(Wh))" in source
    assert "gl.unbroadcast_to(dWh_plus_xs_t, Wh_shape)" in source
    assert "Wh_stack" not in source


@pytest.mark.parametrize("framework", ["numpy", "torch", "tensorflow", "jax"])
def test_a_saved_shape_gives_the_same_gradients(framework: str, monkeypatch: pytest.MonkeyPatch
                                                ) -> None:
    """The generic code (specialising off) of a loop that saves shapes: grad, jvp and hvp
    against central finite differences."""
    from gradlab import api
    monkeypatch.setattr(api, "_SPECIALISING", False)
    rng = np.random.default_rng(2)
    W, xs, h0 = rng.normal(size=(3, 3)) * 0.4, rng.normal(size=(6, 3)), rng.normal(size=3)
    f = examples.rnn_loss
    v = rng.normal(size=(3, 3))
    eps = 1e-6

    def fd(fun: object, x: np.ndarray, direction: np.ndarray) -> object:
        return (fun(x + eps * direction) - fun(x - eps * direction)) / (2 * eps)  # type: ignore

    numeric = np.array([fd(lambda w: f(w, xs, h0), W, e.reshape(3, 3))
                        for e in np.eye(9)]).reshape(3, 3)
    convert = _converter(framework)
    df, jvp, hvp = gradlab.grad(f), gradlab.jvp(f), gradlab.hvp(f)
    assert "gl.unbroadcast_to(" in df.source and "gl.unbroadcast_to(" in hvp.source
    args = tuple(convert(a) for a in (W, xs, h0))
    np.testing.assert_allclose(_numpy(df(*args)), numeric, rtol=1e-5, atol=1e-8)
    tangent = jvp(*args, convert(v))
    value = tangent[1] if isinstance(tangent, tuple) else tangent
    np.testing.assert_allclose(float(_numpy(value)), np.sum(numeric * v), rtol=1e-5)
    grad_w = gradlab.grad(f)
    numeric_hvp = fd(lambda w: np.asarray(grad_w(w, xs, h0)), W, v)
    np.testing.assert_allclose(_numpy(hvp(*args, convert(v))), numeric_hvp, rtol=1e-4,
                               atol=1e-7)


def _converter(framework: str) -> object:
    if framework == "numpy":
        return lambda a: a
    mod = pytest.importorskip({"torch": "torch", "tensorflow": "tensorflow",
                               "jax": "jax.numpy"}[framework])
    if framework == "torch":
        return lambda a: mod.tensor(a)
    if framework == "tensorflow":
        return lambda a: mod.constant(a)
    return lambda a: mod.asarray(a)


def _numpy(x: object) -> np.ndarray:
    return np.asarray(x.numpy() if hasattr(x, "numpy") else x)


CASES = list(CORPUS) + [Case(examples.rnn_loss, ()), Case(examples.mlp_loss, ())]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_no_generated_function_pushes_a_value_it_never_reads(case: Case) -> None:
    for mode, source, value_name in _generated(case):
        assert stacks_of(gast.parse(source).body[0]) is not None
        unread = _unread(source, value_name)
        assert not unread, f"{case.name} {mode} pushes values it never reads: {unread}\n{source}"
        shapes = _shape_only(source, value_name)
        assert not shapes, f"{case.name} {mode} saves values read only for their shape: {shapes}"


def _shape_only(source: str, value_name: str | None) -> list[str]:
    found = []
    for fn in gast.parse(source).body:
        if isinstance(fn, gast.FunctionDef):
            exit_live = {value_name} if value_name else set()
            found += [f"{fn.name}: {s}" for s in sorted(shape_only_stacks(fn, stacks_of(fn),
                                                                          exit_live))]
    return found


def test_the_corpus_has_loops_that_save() -> None:
    """The check above means something: many corpus gradients do keep stacks."""
    with_stacks = sum(1 for c in CORPUS if stacks_of(gast.parse(
        gradlab.grad(c.fn, c.wrt).source).body[0]))
    assert with_stacks >= 20, with_stacks


def test_a_loop_whose_last_value_is_read_saves_nothing_for_it() -> None:
    """``h`` overwritten in the loop: the sum's backward reads the last one, the loop's
    backward only tanh(h) (found dead in the generated code before saves.py)."""
    def g(x):
        h = x
        for i in range(3):
            h = np.tanh(h) + x
        return np.sum(h)

    df = gradlab.grad(g)
    assert stacks_of(gast.parse(df.source).body[0]) == {"tanh_h_stack"}
    x = np.linspace(-1.0, 1.0, 4)
    eps = 1e-6
    numeric = [(g(x + eps * e) - g(x - eps * e)) / (2 * eps) for e in np.eye(4)]
    np.testing.assert_allclose(df(x), numeric, rtol=1e-6)
