"""The optimizer (codegen/optimize.py) on the generated code a person reads: what it folds
and what it leaves. Values are checked by the corpus on every backend; here, the text."""
from __future__ import annotations

import gast
import numpy as np

import gradlab
from gradlab.codegen.optimize import optimize, subtract_negations


def spring(k, x, v, c):
    a = -k * x - c * v
    v = v + 0.1 * a
    return v * v


def negated_twice(x, y):
    d = x - y
    return np.sum(d * d) + np.sum(np.exp(-d))


def test_a_negated_term_folds_into_a_subtraction() -> None:
    source = gradlab.grad(spring, wrt="v").variant_source(2.0, 0.5, 0.3, 0.1)
    assert "dc_times_v" not in source
    assert "dv = dv - c * da" in source
    kept = gradlab.grad(spring, wrt="v", optimized=False).variant_source(2.0, 0.5, 0.3, 0.1)
    assert "dc_times_v = -" in kept


def test_the_folded_code_computes_the_same_gradient() -> None:
    args = (2.0, 0.5, 0.3, 0.1)
    for wrt in range(4):
        folded = gradlab.grad(spring, wrt=wrt)(*args)
        kept = gradlab.grad(spring, wrt=wrt, optimized=False)(*args)
        assert folded == kept


def test_a_negation_used_otherwise_keeps_its_line() -> None:
    """``-d`` inside exp, and ``dy = -...`` of the subtraction read by an unbroadcast."""
    df = gradlab.grad(negated_twice)
    x, y = np.array([0.3, -0.2]), np.array([0.1, 0.4])
    d = x - y
    np.testing.assert_allclose(df(x, y), 2 * d - np.exp(-d))
    assert "neg_d = -d" in df.source


def cost(u, T0):
    T = T0
    c = 0.0
    for t in range(u.shape[0]):
        T = T + 0.2 * u[t]
        c = c + 0.3 * u[t] * u[t] + (T - 21.0) ** 2
    return c


def test_a_gradient_passed_through_unchanged_is_not_copied() -> None:
    """``dc_plus_product = dc`` ... ``dc = dc_plus_product``: the copies go, the gradient
    stays the one that keeps them."""
    u = np.array([0.5, -1.0, 2.0])
    df = gradlab.grad(cost)
    source = df.variant_source(u, 20.0)
    assert "dc_plus_product" not in source and "dc = dc" not in source
    kept = gradlab.grad(cost, optimized=False)
    assert "dc_plus_product" in kept.variant_source(u, 20.0)
    np.testing.assert_allclose(df(u, 20.0), kept(u, 20.0), rtol=1e-12)


def test_a_copy_whose_source_changes_before_its_last_read_stays() -> None:
    fn = gast.parse("def f(b, x):\n    a = b\n    b = x\n    y = a + b\n    return y").body[0]
    optimize(fn, set(), {"f", "b", "x", "y"})
    assert "a" in {n.id for n in gast.walk(fn) if isinstance(n, gast.Name)}


def test_an_added_negation_is_a_subtraction() -> None:
    fn = gast.parse("def f(p, q):\n    return p + -q").body[0]
    subtract_negations(fn)
    ret = fn.body[0].value
    assert isinstance(ret.op, gast.Sub) and isinstance(ret.right, gast.Name)


def unused_accumulator(x, n):
    total = 0.0
    count = 0.0
    for i in range(n):
        total = total + np.sum(x * i)
        count = count + np.sum(x * x)     # never returned: a loop reading only itself
    return total


def test_an_accumulator_nothing_returns_is_left_out() -> None:
    """A loop's ``count = count + ...`` reads itself, so its name is never unread; the liveness
    pass sees that nothing after the loop needs it, in the gradient and its hvp alike."""
    df = gradlab.grad(unused_accumulator)
    source = df.variant_source(np.ones(3), 4)
    code = [line for line in source.splitlines() if not line.strip().startswith("#")]
    assert not [line for line in code if "count" in line], source
    x = np.array([0.5, -1.0, 2.0])
    np.testing.assert_allclose(df(x, 4), np.full(3, 6.0))
    np.testing.assert_allclose(gradlab.hvp(unused_accumulator)(x, 4, np.ones(3)), np.zeros(3))


def _body(text: str) -> gast.FunctionDef:
    fn = gast.parse(text).body[0]
    assert isinstance(fn, gast.FunctionDef)
    return fn


def test_what_a_push_a_condition_or_an_update_reads_is_kept() -> None:
    fn = _body(
        "def f(x, s):\n"
        "    a = x * 2.0\n"
        "    s.append(a)\n"
        "    b = x + 1.0\n"
        "    while b < 3.0:\n"
        "        b = b + 1.0\n"
        "    c = x * 3.0\n"
        "    d = gl.zeros_like(x)\n"
        "    d[0] += c\n"
        "    e = x * 4.0\n"
        "    return d\n")
    optimize(fn, set(), set())
    text = gast.unparse(fn) if hasattr(gast, "unparse") else ""
    names = {n.targets[0].id for n in gast.walk(fn) if isinstance(n, gast.Assign)
             and isinstance(n.targets[0], gast.Name)}
    assert {"a", "b", "c", "d"} <= names and "e" not in names, text


def test_code_with_a_break_loses_nothing_it_reads() -> None:
    fn = _body(
        "def f(x):\n"
        "    y = x * 2.0\n"
        "    for i in range(3):\n"
        "        if i > 1:\n"
        "            break\n"
        "        y = y + 1.0\n"
        "    z = y * 0.0\n"
        "    return x\n")
    optimize(fn, set(), set())
    names = {n.targets[0].id for n in gast.walk(fn) if isinstance(n, gast.Assign)
             and isinstance(n.targets[0], gast.Name)}
    assert "y" in names          # (z is unread anywhere: removed by the simple rule)
