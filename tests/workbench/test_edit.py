"""Recompiling an edited backward pass: the happy path, every error, and diff."""
import numpy as np
import pytest

import gradlab


def loss(W, x):
    h = np.tanh(x @ W)
    return np.mean(h ** 2)


W = np.array([[0.5, 0.1], [0.2, -0.3], [0.1, 0.4]])
X = np.array([[1.0, 2.0, -1.0]])


def edited_source(df):
    return df.source.replace("dxW = (1.0 - h * h) * dh", "dxW = (1.0 - h * h) * dh * 0.5")


def test_recompile_happy_path_and_diff():
    df = gradlab.grad(loss)
    edited = gradlab.recompile(edited_source(df), like=df)
    np.testing.assert_allclose(edited(W, X), 0.5 * df(W, X))
    assert edited.source == edited_source(df)
    d = gradlab.diff(df, edited)
    assert "-    dxW = (1.0 - h * h) * dh\n" in d
    assert "+    dxW = (1.0 - h * h) * dh * 0.5\n" in d


@pytest.mark.parametrize("change, message, marker", [
    (lambda s: s.replace("dxW = (1.0", "dxW = (1.0 (", 1), "syntax error", "dxW = (1.0 ("),
    (lambda s: s.replace("return dW", "return dWW"), "unknown name 'dWW'", "return dWW"),
    (lambda s: s.replace("(W, x, *, seed=1.0)", "(W, *, seed=1.0)"), "must keep the parameters",
     "def dloss_dW"),
    (lambda s: s.replace("    return dW\n", ""), "must end with `return", "def dloss_dW"),
    (lambda s: s + "print('hello')\n", "only function definitions", "print('hello')"),
    (lambda s: s.replace("gl.tanh(xW)", "gl.tanh(xW_typo)"), "unknown name 'xW_typo'",
     "xW_typo"),
])
def test_recompile_errors_name_the_line(change, message, marker):
    df = gradlab.grad(loss)
    source = change(df.source)
    with pytest.raises(gradlab.EditError) as info:
        gradlab.recompile(source, like=df)
    assert message in str(info.value)
    expected = next(i for i, text in enumerate(source.splitlines(), 1) if marker in text)
    assert info.value.lineno == expected
    np.testing.assert_allclose(df(W, X), gradlab.grad(loss)(W, X))  # the original still works


def test_edit_that_drops_the_value_still_runs():
    df = gradlab.grad(loss)
    source = df.source.replace("    loss = gl.mean(h_pow2)\n", "")
    edited = gradlab.recompile(source, like=df)
    np.testing.assert_allclose(edited(W, X), df(W, X))


def test_recompile_forward_mode_and_hvp_code():
    """jvp and hvp code recompile into callables with their own calling convention: the
    tangent last (jvp returns the value and the derivative), hvp's value checked scalar."""
    v = np.ones_like(W)
    fj = gradlab.jvp(loss)
    tangent_line = "def loss_jvp_W(W, x, *, W_dot):\n"
    assert tangent_line in fj.source
    doubled = gradlab.recompile(fj.source.replace(
        tangent_line, tangent_line + "    W_dot = W_dot * 2.0\n"), like=fj)
    value, derivative = doubled(W, X, v)
    assert value == pytest.approx(fj(W, X, v)[0])
    assert derivative == pytest.approx(2.0 * fj(W, X, v)[1])
    h = gradlab.hvp(loss)
    again = gradlab.recompile(h.source, like=h)
    np.testing.assert_allclose(again(W, X, v), h(W, X, v))


def test_recompile_like_a_plain_function_is_refused_clearly():
    with pytest.raises(gradlab.EditError, match="like= must be a function made by gradlab.grad"):
        gradlab.recompile(gradlab.grad(loss).source, like=loss)


def test_an_edit_may_name_the_seed_its_own_way():
    """Code written for an older generated signature (``*, dloss=1.0``) still recompiles."""
    df = gradlab.grad(loss)
    older = df.source.replace("seed", "dloss")
    assert "*, dloss=1.0)" in older.splitlines()[0]
    edited = gradlab.recompile(older, like=df)
    assert edited.seed_name == "dloss"
    np.testing.assert_allclose(edited(W, X, seed=2.0), df(W, X, seed=2.0))


def test_an_edit_error_keeps_its_message_apart_from_its_line():
    df = gradlab.grad(loss)
    with pytest.raises(gradlab.EditError) as info:
        gradlab.recompile(df.source.replace("return dW", "return dW +"), like=df)
    assert info.value.message == "syntax error: invalid syntax"
    assert str(info.value) == f"syntax error: invalid syntax (line {info.value.lineno}: " \
                              f"return dW +)"


def _squares(x):
    return np.sum(x ** 2)


def test_an_edit_must_return_a_gradient_shaped_like_its_input():
    """``return None`` came back as NaN, ``dx[:2]`` as a shorter gradient."""
    df = gradlab.grad(_squares)
    x = np.array([0.5, -1.0, 2.0])
    for edit, says in [("return None", "returns None"), ("return dx[:2]", "shape \\(2,\\)")]:
        edited = gradlab.recompile(df.source.replace("return dx", edit), like=df)
        with pytest.raises(gradlab.GradlabError, match=says):
            edited(x)


def test_an_edit_may_bind_names_every_way_python_does():
    """Lambda parameters, ``except ... as e``, nested definitions and positional-only
    parameters were read as unknown names."""
    df = gradlab.grad(_squares)
    x = np.array([0.5, -1.0, 2.0])
    body = ("    twice = lambda t: 2 * t\n"
            "    def half(u):\n        return u / 2\n"
            "    try:\n        dx = twice(half(dx))\n    except ValueError as e:\n"
            "        print(e)\n    return dx")
    edited = gradlab.recompile(df.source.replace("    return dx", body), like=df)
    np.testing.assert_allclose(edited(x), 2 * x)


@pytest.mark.parametrize("source", [None, b"def f(x): pass"])
def test_an_edit_that_is_no_text_is_refused(source):
    with pytest.raises(gradlab.GradlabError, match="must be a str"):
        gradlab.recompile(source, like=gradlab.grad(_squares))


def test_diff_says_what_it_compares():
    df = gradlab.grad(_squares)
    for args in [(df, None), (_squares, df.source)]:
        with pytest.raises(gradlab.GradlabError, match="diff"):
            gradlab.diff(*args)
