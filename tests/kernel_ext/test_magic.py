"""%%grad on an InteractiveShell: the happy path and every bad input — each gives one clear
message, the kernel goes on, and the namespace is as it was."""
from __future__ import annotations

import numpy as np
import pytest
from IPython.core.error import UsageError
from IPython.core.interactiveshell import InteractiveShell

LOSS = "def loss(W, x):\n    h = np.tanh(x @ W)\n    return np.mean(h ** 2)\n"


@pytest.fixture()
def shell():
    ip = InteractiveShell.instance()
    ip.run_line_magic("load_ext", "gradlab")
    ip.run_cell("import numpy as np\nW = np.ones((3, 2)) * 0.1\nx = np.ones((4, 3))")
    yield ip
    ip.run_line_magic("unload_ext", "gradlab")
    for name in ("loss", "dloss", "f", "g", "df", "grad_of_loss", "inputs"):
        ip.user_ns.pop(name, None)


def test_help_is_documented(shell):
    doc = shell.magics_manager.magics["cell"]["grad"].__doc__
    for option in ("--wrt", "--mode", "--backend", "--device", "--no-optimize", "--check",
                   "--run", "--name"):
        assert option in doc


def test_cell_runs_and_gradient_lands_in_namespace(shell):
    panel = shell.run_cell_magic("grad", "", LOSS)
    assert callable(shell.user_ns["loss"]) and shell.user_ns["loss"].__name__ == "loss"
    dloss = shell.user_ns["dloss"]
    assert panel.session.source == dloss.source
    np.testing.assert_allclose(dloss(shell.user_ns["W"], shell.user_ns["x"]),
                               _reference(shell.user_ns["W"], shell.user_ns["x"]))


def _reference(W, x):
    h = np.tanh(x @ W)
    return x.T @ ((1 - h * h) * 2 * h / h.size)


def test_options(shell):
    panel = shell.run_cell_magic("grad", '--wrt W,x --name grad_of_loss --no-optimize --run "W, x" --check', LOSS)
    g = shell.user_ns["grad_of_loss"]
    assert g.wrt == ("W", "x")
    assert len(panel.results) == 1 and not panel.results[0].error
    assert "numpy · cpu" in panel.result_line and "median of" in panel.result_line
    assert panel.results[0].check.ok
    forward = shell.run_cell_magic("grad", '--mode forward --name df --run "W, x, W"', LOSS)
    assert forward.session.source.startswith("def loss_jvp_W(")
    assert not forward.results[0].error


def test_backend_all(shell):
    panel = shell.run_cell_magic("grad", '--backend all --run "W, x"', LOSS)
    frameworks = [r.framework for r in panel.results]
    assert frameworks[0] == "numpy" and len(frameworks) >= 2
    assert all(not r.error for r in panel.results), panel.result_line


def test_text_rendering_for_terminals(shell):
    panel = shell.run_cell_magic("grad", '--run "W, x"', LOSS)
    text = panel.text(color="never")
    header, _, rest = text.partition("\n\n")
    assert header == "dloss(W, x) → ∂loss/∂W · generated"
    assert rest.startswith("# specialised for W: 2-d, x: 2-d\ndef dloss_dW(W, x, *, seed=1.0):")
    assert "gradient dW shape (3, 2)" in text and "numpy · cpu" in text
    bundle = panel._repr_mimebundle_()
    assert "text/plain" in bundle


BAD_CELLS = [
    ("", "x = 1\n", "defines no function"),
    ("", "def f(x):\n    return x +\n", "syntax error on line 3"),
    ("", "def f(x):\n    try:\n        return x\n    except Exception:\n        return x\n",
     "try/except"),
    ("", "f = lambda x: x\n", "defines no function"),
    ("", "def f(x):\n    return x\ndef g(x):\n    return x\n", "choose the one to differentiate"),
    ("--func h", LOSS, "defines no function 'h'"),
    ("--wrt z", LOSS, "not a parameter"),
    ("--wrt 7", LOSS, "has 2 parameters"),
    ("--backend pandas", LOSS, "unknown --backend 'pandas'"),
    ("--device tpu", LOSS, "unknown --device 'tpu'"),
    ('--device cuda --run "W, x"', LOSS, "no GPU is available"),
    ("--name 1bad", LOSS, "not a Python name"),
    ("--mode sideways", LOSS, "sideways"),
    ("--frobnicate", LOSS, "unrecognized arguments"),
    ('--run "undefined_name"', LOSS, "--run 'undefined_name' failed: NameError"),
    ('--run "1 / 0"', LOSS, "ZeroDivisionError"),
    ("", "def f(x):\n    y = x * 2\n", "returns nothing"),
    ("", "def f(x):\n    return np.sum(missing_helper(x))\n", "name 'missing_helper' is not defined"),
    ("", "def f(x):\n    global counter\n    return x\n", "global"),
    ("", "def f(x):\n    return np.sum(np.sinc(x))\n", "no derivative rule for np.sinc"),
    ("", "def f(x):\n    return np.sum(v for v in x)\n", "generator expression"),
    ("", "def f(x):\n    y = x * 2\n    y.sort()\n    return np.sum(y)\n", "in-place update"),
]


@pytest.mark.parametrize("line, cell, message", BAD_CELLS,
                         ids=[f"{i}-{m[:24]}" for i, (_, _, m) in enumerate(BAD_CELLS)])
def test_bad_input_gives_one_clear_message(shell, line, cell, message):
    shell.user_ns["f"] = sentinel = object()
    shell.user_ns["loss"] = sentinel_loss = object()
    before = dict(shell.user_ns)
    with pytest.raises(UsageError) as info:
        shell.run_cell_magic("grad", line, cell)
    assert message in str(info.value)
    assert shell.user_ns["f"] is sentinel and shell.user_ns["loss"] is sentinel_loss
    assert "dloss" not in shell.user_ns and "df" not in shell.user_ns
    changed = {k for k in shell.user_ns if k in before and shell.user_ns[k] is not before[k]
               and not k.startswith("_")}
    assert not changed, changed
    result = shell.run_cell("1 + 1")   # the kernel goes on
    assert result.result == 2


def test_failing_inputs_are_reported_in_the_panel(shell):
    shell.run_cell("bad_W = np.ones((5, 5))")
    panel = shell.run_cell_magic("grad", '--run "bad_W, x"', LOSS)
    assert panel.results[0].error
    assert "matmul" in panel.results[0].error or "shape" in panel.results[0].error
    assert "error:" in panel.result_line


@pytest.mark.parametrize("line", ['--wrt ""', "--wrt=", "--wrt 'W,'"])
def test_an_empty_wrt_is_a_usage_error_and_the_cell_does_not_run(shell, line):
    shell.user_ns.pop("loss", None)
    with pytest.raises(UsageError, match="names no parameter"):
        shell.run_cell_magic("grad", line, LOSS)
    assert "loss" not in shell.user_ns


def test_a_quoted_wrt_list_is_read(shell):
    panel = shell.run_cell_magic("grad", '--wrt "W, x"', LOSS)
    assert panel.session.df.wrt == ("W", "x")


def test_run_on_a_non_scalar_output_says_what_the_gradient_is(shell):
    panel = shell.run_cell_magic("grad", '--run "x"', "def f(x):\n    return np.tanh(x)\n")
    assert "not a scalar: the gradient shown is that of sum(f(...))" in panel.text(
        color="never")


# --- the notebook's name follows the panel's active version --------------------------------------
def test_surgery_rebinds_the_notebooks_name_and_reset_restores_it(shell):
    panel = shell.run_cell_magic("grad", '--run "W, x"', LOSS)
    W, x = shell.user_ns["W"], shell.user_ns["x"]
    generated = shell.user_ns["dloss"]
    before = generated(W, x)
    assert panel.recompile(panel.session.source.replace("    return dW",
                                                        "    dW = dW * 0.5\n    return dW"))
    assert shell.user_ns["dloss"] is panel.session.active
    np.testing.assert_allclose(shell.run_cell("dloss(W, x)").result, 0.5 * before)
    assert panel.header == "dloss(W, x) → ∂loss/∂W · edited: 1 line changed"
    panel.reset()
    assert shell.user_ns["dloss"] is generated
    assert panel.header == "dloss(W, x) → ∂loss/∂W · generated"


def test_a_name_the_user_gave_to_something_else_is_left_alone(shell):
    panel = shell.run_cell_magic("grad", "", LOSS)
    shell.run_cell("dloss = 'mine now'")
    assert panel.recompile(panel.session.source)
    assert shell.user_ns["dloss"] == "mine now"
    newer = shell.run_cell_magic("grad", "", LOSS)      # a newer cell's gradient, same name
    assert panel.recompile(panel.session.source)
    assert shell.user_ns["dloss"] is newer.session.df


def test_an_exercise_names_its_gradient_only_once_solved(shell):
    panel = shell.run_cell_magic("grad", '--exercise --run "W, x"', LOSS)
    assert "dloss" not in shell.user_ns
    head, sep, tail = panel.exercise.starter.partition("# ── backward ──")
    tail = tail.replace("    # return np.mean(h ** 2)\n", "    # return np.mean(h ** 2)\n"
                        "    dh = 2 * h * (seed / gl.size(h_pow2))\n")
    tail = tail.replace("    # h = np.tanh(x @ W)\n", "    # h = np.tanh(x @ W)\n"
                        "    dxW = (1.0 - h * h) * dh\n    dW = gl.matmul_grad_y(dxW, x, W)\n")
    assert panel.check_exercise(head + sep + tail).ok
    assert shell.user_ns["dloss"] is panel.session.active


def test_an_exercise_in_forward_mode_is_refused_before_showing_the_answer(shell):
    """--exercise hides the backward pass; with --mode forward the panel showed the whole
    tangent code, the answer."""
    with pytest.raises(UsageError, match="exercise on the backward pass"):
        shell.run_cell_magic("grad", '--exercise --mode forward --run "W, x, W"', LOSS)


# --- small things ---------------------------------------------------------------------------------
def test_usage_says_the_cell_magic(shell):
    doc = shell.magics_manager.magics["cell"]["grad"].__doc__
    usage = doc.split("::", 1)[1].strip().splitlines()[0]
    assert usage.startswith("%%grad [--wrt WRT]"), usage


def test_a_mistyped_option_gets_a_suggestion(shell):
    with pytest.raises(UsageError) as info:
        shell.run_cell_magic("grad", '--runn "W, x"', LOSS)
    assert "unrecognized arguments: --runn" in str(info.value)
    assert "--runn: did you mean --run?" in str(info.value)
    with pytest.raises(UsageError) as info:
        shell.run_cell_magic("grad", "--chekc", LOSS)
    assert "did you mean --check?" in str(info.value)


def test_line_numbers_are_the_cell_editors(shell):
    """The %%grad line is line 1 of the cell, as the editor shows it."""
    cell = "def f(x):\n    y = x * 2\n    try:\n        return y\n    except Exception:\n" \
           "        return y\n"
    with pytest.raises(UsageError, match="at cell line 4: try:"):
        shell.run_cell_magic("grad", "", cell)
    panel = shell.run_cell_magic("grad", '--run "W, x"', LOSS)
    stepper = panel.step_through()
    assert stepper.forward_line == (4, "return np.mean(h ** 2)")
    stepper.go(1)
    assert stepper.forward_line == (3, "h = np.tanh(x @ W)")


def test_terminal_output_has_no_colour_when_asked(shell, monkeypatch):
    panel = shell.run_cell_magic("grad", '--run "W, x"', LOSS)
    monkeypatch.setattr(shell, "colors", "nocolor", raising=False)
    assert "\x1b[" not in panel._repr_mimebundle_()["text/plain"]
    from gradlab.workbench.display import terminal_palette
    assert terminal_palette("auto") is None
    monkeypatch.setattr(shell, "colors", "linux", raising=False)
    assert terminal_palette("always") == "dark"
    monkeypatch.setattr(shell, "colors", "lightbg", raising=False)
    assert terminal_palette("always") == "light"
