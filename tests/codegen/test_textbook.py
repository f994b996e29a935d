"""The code specialised for a call's shapes (codegen/textbook.py): it reads like the textbook
(the lessons' functions use no helper but the tensor layer's maths), it computes the gradients
the generic code computes, and each call runs the code made for its own shapes."""
from __future__ import annotations

import re

import numpy as np
import pytest

import gradlab
from tests.codegen import lessons
from tests.conftest import to_framework, to_numpy

#: What the backward code of the lessons may call: the tensor layer's maths, nothing that
#: branches on ranks or shapes at run time (``matmul_grad_x``, ``unbroadcast``,
#: ``broadcast_like``...).
ALLOWED = {"size", "sum", "outer", "transpose", "expand_dims", "full_like", "zeros_like",
           "shape", "clip", "sign", "astype", "dtype", "tanh", "exp", "log", "sqrt"}

CASES = lessons.cases()


def _backward(text: str) -> str:
    return text.split("── backward ──", 1)[1]


def _ids(case) -> str:
    return f"{case[0]}:{case[1].__name__}"


@pytest.mark.parametrize("case", CASES, ids=_ids)
def test_lessons_backward_code_uses_only_the_tensor_layers_maths(case) -> None:
    _, fn, wrt, args = case
    text = gradlab.grad(fn, wrt).source_for(*args)
    called = set(re.findall(r"\bgl\.(\w+)\(", _backward(text)))
    assert called <= ALLOWED, (called - ALLOWED, text)


@pytest.mark.parametrize("case", CASES, ids=_ids)
def test_specialised_and_generic_code_give_the_same_gradients(case, framework: str) -> None:
    _, fn, wrt, args = case
    if all(isinstance(a, float) for a in args) and framework != "numpy":
        pytest.skip("Python numbers: one framework")
    converted = [a if isinstance(a, float) else to_framework(a, framework) for a in args]
    special = gradlab.grad(fn, wrt)
    generic = gradlab.grad(fn, wrt)
    generic._specializes = False
    with np.errstate(invalid="ignore", divide="ignore"):
        got, expected = special(*converted), generic(*converted)
    got = got if isinstance(wrt, tuple) else (got,)
    expected = expected if isinstance(wrt, tuple) else (expected,)
    for g, e in zip(got, expected):
        assert type(g) is type(e)
        np.testing.assert_allclose(to_numpy(g), to_numpy(e), rtol=1e-10, atol=1e-12,
                                   equal_nan=True)


def test_readme_example_reads_like_the_textbook() -> None:
    _, fn, wrt, args = CASES[0]
    df = gradlab.grad(fn, wrt)
    text = df.source_for(*args)
    assert text.splitlines()[0] == "# specialised for W: 2-d, x: 2-d"
    assert "    dW = x.T @ dxW" in text
    assert "gl.size(h)" in text and "h_pow2)" not in _backward(text)
    assert "matmul_grad_y" in df.source      # the generic code keeps the helper


def test_matrix_vector_products_are_written_out() -> None:
    def loss(W, h):
        return np.sum(np.tanh(W @ h) ** 2)
    df = gradlab.grad(loss, (0, 1))
    W, h = np.ones((3, 2)), np.ones(2)
    text = df.source_for(W, h)
    assert "dW = gl.outer(dWh, h)" in text and "dh = W.T @ dWh" in text


def test_tensorflow_gets_gl_transpose_and_matmul() -> None:
    tf = pytest.importorskip("tensorflow")
    _, fn, wrt, args = CASES[0]
    text = gradlab.grad(fn, wrt).source_for(*[tf.constant(a) for a in args])
    assert "gl.matmul(gl.transpose(x), dxW)" in text and ".T" not in text


def test_jax_and_tensorflow_get_no_transpose_of_an_operand() -> None:
    """XLA on CPU copies a transposed operand of a product, TensorFlow's matvec transposes
    around it (bench/HISTORY.md): their code writes W.T @ g as g @ W, and JAX's keeps the
    matrix-matrix adjoints as dot_generals."""
    jnp = pytest.importorskip("jax.numpy")

    def loss(W, h):
        return np.sum(np.tanh(W @ h) ** 2)
    df = gradlab.grad(loss, (0, 1))
    W, h = np.linspace(-1, 1, 6).reshape(3, 2), np.array([0.3, -0.2])
    text = df.source_for(jnp.asarray(W), jnp.asarray(h))
    assert "dW = gl.outer(dWh, h)" in text and "dh = dWh @ W" in text and ".T" not in text
    text = df.source_for(*[pytest.importorskip("tensorflow").constant(a) for a in (W, h)])
    assert "dh = gl.matmul(dWh, W)" in text
    got = df(jnp.asarray(W), jnp.asarray(h))
    for g, e in zip(got, df(W, h)):
        np.testing.assert_allclose(np.asarray(g), e, rtol=1e-6)
    _, fn, wrt, args = CASES[0]
    text = gradlab.grad(fn, wrt).source_for(*[jnp.asarray(a) for a in args])
    assert "gl.matmul_grad_y(dxW, x, W)" in text and ".T" not in text


def test_each_call_runs_the_code_for_its_own_shapes() -> None:
    """One gradient called with a matrix, then a vector, then a matrix again (the same
    argument types): every call must get its own shapes' code."""
    def loss(W, x):
        return np.sum(np.tanh(x @ W) ** 2)
    df = gradlab.grad(loss)
    generic = gradlab.grad(loss)
    generic._specializes = False
    rng = np.random.default_rng(3)
    W = rng.normal(size=(3, 2))
    for x in (rng.normal(size=(4, 3)), rng.normal(size=3), rng.normal(size=(1, 3)),
              rng.normal(size=(4, 3)), rng.normal(size=3)):
        np.testing.assert_allclose(df(W, x), generic(W, x), rtol=1e-12)


def test_broadcast_operands_are_summed_back_with_their_axes() -> None:
    def loss(x, b, c):
        return np.sum(np.tanh(x + b) * c)
    df = gradlab.grad(loss, (0, 1, 2))
    x, b, c = np.ones((4, 3)), np.ones((1, 3)), np.ones((4, 1))
    text = df.source_for(x, b, c)
    assert "gl.sum(" in text and "unbroadcast" not in _backward(text), text
    generic = gradlab.grad(loss, (0, 1, 2))
    generic._specializes = False
    rng = np.random.default_rng(0)
    x, b, c = rng.normal(size=(4, 3)), rng.normal(size=(1, 3)), rng.normal(size=(4, 1))
    for g, e in zip(df(x, b, c), generic(x, b, c)):
        assert g.shape == e.shape
        np.testing.assert_allclose(g, e, rtol=1e-12)


def _settled(body: str) -> str:
    import ast

    import gast

    from gradlab.codegen.textbook import settle_choices
    tree = gast.parse("def f(W, x, c, *, seed=1.0):\n" + body)
    settle_choices(tree.body[0], {"W", "x"})
    return ast.unparse(gast.gast_to_ast(tree))


def test_an_adjoint_that_may_still_be_the_number_zero_keeps_the_generic_helper() -> None:
    """A gradient that had no contribution yet on some path is the number 0.0, which
    ``0.0 @ W.T`` refuses and the helper takes: the choice falls on the helper."""
    choice = "    dW = __textbook__(x.T @ dz, gl.matmul_grad_y(dz, x, W), dz)\n    return dW\n"
    maybe_zero = _settled("    dz = 0.0\n    if c:\n        dz = x @ W\n" + choice)
    assert "gl.matmul_grad_y(dz, x, W)" in maybe_zero and "x.T @ dz" not in maybe_zero
    through_a_stack = _settled("    s = []\n    s.append(0.0)\n    dz = s.pop()\n" + choice)
    assert "gl.matmul_grad_y" in through_a_stack
    from_the_seed = _settled("    dz = seed * 2\n" + choice)     # seed=1.0 by default
    assert "gl.matmul_grad_y" in from_the_seed
    an_array = _settled("    dz = gl.tanh(x @ W) * seed\n" + choice)
    assert "dW = x.T @ dz" in an_array and "matmul_grad" not in an_array


def test_gradients_agree_in_a_loop_with_a_branch() -> None:
    def loss(W, x):
        total = 0.0
        for i in range(3):
            if i > 0:
                z = x @ W * i
                total = total + np.sum(np.tanh(z))
        return total
    df = gradlab.grad(loss)
    W, x = np.ones((3, 2)) * 0.1, np.ones((4, 3))
    assert "x.T @ dxW" in df.source_for(W, x)
    generic = gradlab.grad(loss)
    generic._specializes = False
    np.testing.assert_allclose(df(W, x), generic(W, x), rtol=1e-12)
