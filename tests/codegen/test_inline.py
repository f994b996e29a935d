"""Single-use temporaries folded back into their use (gradlab/codegen/inline.py): on small
functions whose answer is known (what folds, and each reason not to), then end to end."""
from __future__ import annotations

import ast
import textwrap

import gast
import numpy as np

import gradlab
from gradlab.codegen.inline import inline_temporaries

USER = {"f", "x", "y", "z", "w", "W", "dz"}


def folded(code: str, user: set[str] = USER) -> str:
    fn = gast.parse(textwrap.dedent(code)).body[0]
    inline_temporaries(fn, user, set())
    module = gast.gast_to_ast(gast.Module(body=[fn], type_ignores=[]))
    return ast.unparse(ast.fix_missing_locations(module))


def body(code: str) -> list[str]:
    return [line.strip() for line in code.splitlines()[1:]]


def test_a_chain_of_temporaries_becomes_the_users_line() -> None:
    out = folded("""
        def f(x, y):
            v10_minus_x = 10.0 - x
            scaled = v10_minus_x * 0.1
            y_half = y * 0.5
            z = scaled + y_half
            return z
        """)
    assert body(out) == ["z = (10.0 - x) * 0.1 + y * 0.5", "return z"]


def test_a_name_written_in_between_stops_the_fold() -> None:
    code = """
        def f(x, y):
            v = x + 1.0
            x = y
            z = v * 2.0
            return z
        """
    assert body(folded(code)) == ["v = x + 1.0", "x = y", "z = v * 2.0", "return z"]


def test_an_item_write_or_a_call_in_between_stops_the_fold() -> None:
    for between in ("w[0] = 1.0", "w += 1.0", "show(x)", "y = helper(x)"):
        code = f"""
            def f(x, y, w):
                v = x[0] + 1.0
                {between}
                z = v * 2.0
                return z
            """
        assert "v = x[0] + 1.0" in folded(code), between


def test_a_name_read_twice_keeps_its_line() -> None:
    out = folded("""
        def f(x):
            v = x + 1.0
            z = v * v
            return z
        """)
    assert "v = x + 1.0" in out


def test_calls_and_matrix_products_keep_what_they_take() -> None:
    out = folded("""
        def f(x, W):
            dxW = (1.0 - x) * x
            dW = x.T @ dxW
            s = x + 1.0
            z = gl.exp(s)
            return (dW, z)
        """, USER | {"dW"})
    assert "dW = x.T @ dxW" in out and "z = gl.exp(s)" in out


def test_the_users_names_their_values_and_their_gradients_stay() -> None:
    out = folded("""
        def f(x):
            y = x + 1.0
            y_2 = y * 2.0
            dx = 3.0 * y_2
            z = dx * 2.0
            return z
        """)
    assert body(out) == ["y = x + 1.0", "y_2 = y * 2.0", "dx = 3.0 * y_2", "z = dx * 2.0",
                         "return z"]


def test_no_fold_across_a_quoted_line_of_the_users() -> None:
    out = folded("""
        def f(x):
            __comment__(1, 'a = x + 1.0')
            v = x + 1.0
            __comment__(2, 'z = a * 2.0')
            z = v * 2.0
            return z
        """)
    assert "v = x + 1.0" in out


def state(u, T0):
    T = T0
    c = 0.0
    for t in range(u.shape[0]):
        dT = (10.0 - T) * 0.1 + u[t] * 0.5
        T = T + 0.2 * dT
        c = c + (T - 21.0) ** 2
    return c


def test_the_generated_lines_read_as_the_users_and_compute_the_same() -> None:
    u, T0 = np.random.default_rng(1).normal(size=8), 20.0
    df = gradlab.grad(state)
    source = df.variant_source(u, T0)
    assert "dT = (10.0 - T) * 0.1 + u[t] * 0.5" in source   # the user's own line
    assert "T = T + 0.2 * dT" in source
    np.testing.assert_allclose(df(u, T0), gradlab.grad(state, optimized=False)(u, T0),
                               rtol=1e-12)
