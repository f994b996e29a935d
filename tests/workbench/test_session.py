"""The panel's engine, without a notebook: what a run shows, and a bounded NaN search."""
from __future__ import annotations

import numpy as np
import pytest

import gradlab
from gradlab.workbench import session as session_module
from gradlab.workbench.session import GradSession


def elementwise(x):
    return np.tanh(x) * 2.0


def test_a_non_scalar_output_is_said_to_show_the_gradient_of_its_sum():
    s = GradSession(gradlab.grad(elementwise), (np.array([0.1, 0.2, 0.3]),))
    (result,) = s.run()
    assert not result.error
    assert "returns shape (3,), not a scalar" in result.summary()
    assert "sum(elementwise(...))" in result.note
    np.testing.assert_allclose(result.gradients, 2.0 * (1 - np.tanh([0.1, 0.2, 0.3]) ** 2))


def sliding(x, n):
    h = x
    for i in range(n):
        h = h - 0.001
        s = np.sqrt(h)
    return np.sum(s)


def test_the_automatic_nan_search_is_bounded_and_a_full_one_can_be_asked(monkeypatch):
    monkeypatch.setattr(session_module, "NAN_HUNT_STEPS", 300)
    s = GradSession(gradlab.grad(sliding, check=False), (np.array([1.0005, 2.0]), 1500))
    (result,) = s.run(repeats=1)
    assert "stopped after 300 steps" in result.diagnosis
    assert "session.diagnose()" in result.diagnosis
    found = s.diagnose()
    assert found.startswith("first NaN/Inf at step") and "np.sqrt(h)" in found


def test_a_run_is_checked_by_the_semantic_guard(monkeypatch):
    from gradlab.tensor import backend
    ops = backend("numpy")
    right = ops.tanh
    monkeypatch.setattr(ops, "tanh", lambda x: 2.0 * right(x))
    s = GradSession(gradlab.grad(squashed), (np.array([0.1, 0.2]),))
    (result,) = s.run(repeats=1)
    assert "different forward value" in result.error


def squashed(x):
    return np.sum(np.tanh(x))


def loss(W, x):
    h = np.tanh(x @ W)
    return np.mean(h ** 2)


W, X = np.full((3, 2), 0.1), np.ones((4, 3))


def test_the_header_says_which_version_runs():
    s = GradSession(gradlab.grad(loss), (W, X))
    assert s.header() == "dloss_dW(W, x) → ∂loss/∂W · generated"
    assert s.header("dloss") == "dloss(W, x) → ∂loss/∂W · generated"
    assert s.recompile(s.source.replace("    return dW", "    dW = dW * 0.5\n    return dW"))
    assert s.version() == "edited: 1 line changed" and s.changed_lines() == 1
    assert s.recompile(s.source.replace("dW * 0.5", "dW * 0.25").replace("dh\n", "dh * 1\n"))
    assert s.header("dloss") == "dloss(W, x) → ∂loss/∂W · edited: 2 lines changed"
    many = GradSession(gradlab.grad(loss, wrt=(0, 1)))
    assert many.header() == "dloss_dW_dx(W, x) → ∂loss/∂W, ∂loss/∂x · generated"
    assert GradSession(gradlab.jvp(loss)).header().startswith(
        "loss_jvp_W(W, x, W_dot) → loss and its derivative along W_dot")


def test_blank_lines_left_at_the_end_of_an_edit_change_nothing():
    s = GradSession(gradlab.grad(loss), (W, X))
    s.run()
    edit = s.source.replace("    return dW", "    dW = dW * 0.5\n    return dW")
    assert s.recompile(edit + "\n\n   \n")
    assert s.version() == "edited: 1 line changed"
    added = [line for line in s.diff_text.splitlines()
             if line.startswith("+") and not line.startswith("+++")]
    assert added == ["+    dW = dW * 0.5"], s.diff_text
    s.run()
    assert s.recompile(edit + "\n")                     # the same code: its results stand
    assert not s.stale


def test_on_active_hears_each_new_version_and_reset_brings_back_the_results():
    s = GradSession(gradlab.grad(loss), (W, X))
    heard = []
    s.on_active.append(heard.append)
    (generated,) = s.run()
    assert s.recompile(s.source.replace("    return dW", "    dW = dW * 0.5\n    return dW"))
    assert heard == [s.active] and s.stale
    s.run()
    assert not s.stale
    assert not s.recompile("def broken(:\n")                   # a failed edit changes nothing
    assert heard == [s.active]
    s.reset()
    assert heard[-1] is s.df and s.results == [generated] and not s.stale


def test_compiling_the_same_text_again_does_not_make_results_stale():
    s = GradSession(gradlab.grad(loss), (W, X))
    edited = s.source.replace("    return dW", "    dW = dW * 0.5\n    return dW")
    s.recompile(edited)
    s.run()
    s.recompile(edited)
    assert not s.stale


def test_a_gradient_shaped_unlike_its_parameter_is_a_problem():
    s = GradSession(gradlab.grad(loss), (W, X))
    assert s.recompile(s.source.replace("return dW", "return dW.T"))
    (result,) = s.run(check=True)
    assert result.shape_problems == [
        "dW has shape (2, 3) but W has shape (3, 2): it cannot be W's gradient"]
    assert not result.ok and result.check is None
    assert result.summary().splitlines()[2] == result.shape_problems[0]


def test_several_frameworks_make_one_comparison():
    pytest.importorskip("torch")
    s = GradSession(gradlab.grad(loss), (W, X))
    results = s.run("all", check=True)
    assert [r.check is not None for r in results] == [True] + [False] * (len(results) - 1)
    assert results[0].difference == 0.0
    assert all(r.difference < 1e-6 for r in results)
    rows = s.comparison().splitlines()
    assert len(rows) == len(results) + 1 and all(row.rstrip().endswith("ok") for row in rows[1:])


def test_container_inputs_run_the_code_for_their_leaves_and_checks_see_it():
    """(More in tests/workbench/test_leafcalls.py.) The code shown is the leaves' code, the
    gradient comes back as a dict, and --check compares it with central differences."""
    def of_dict(params, x):
        return np.sum(np.tanh(x @ params["W"]) ** 2)
    s = GradSession(gradlab.grad(of_dict), ({"W": W}, X))
    assert "def dof_dict_dparams(params_W, x" in s.source
    (result,) = s.run(check=True)
    assert not s.error and result.ok, (s.error, result)
    h = np.tanh(X @ W)
    np.testing.assert_allclose(result.gradients["W"], X.T @ (2 * h * (1 - h ** 2)), rtol=1e-12)
    assert result.check is not None and result.check.ok


def loss_of_a_model(model, x):
    pred = model(x)
    return (pred ** 2).sum()


def test_a_model_runs_on_its_own_framework():
    """A torch module among the inputs: the run is on torch (the default NumPy cannot run it),
    the other inputs converted, and the model's gradient keyed like named_parameters()."""
    torch = pytest.importorskip("torch")
    model = torch.nn.Linear(3, 2).double()
    session = GradSession(gradlab.grad(loss_of_a_model, ("model", "x")),
                          (model, np.ones((4, 3))))
    (result,) = session.run("numpy")
    assert result.framework == "torch" and not result.error, result.error
    dmodel, dx = result.gradients
    assert list(dmodel) == ["weight", "bias"] and dx.shape == (4, 3)


def test_a_tuple_of_one_wrt_gives_a_tuple_of_one_gradient():
    """wrt=("W",): the code returns dW bare, the call (and so a run) a tuple of it."""
    (result,) = GradSession(gradlab.grad(loss, wrt=("W",)), (W, X)).run()
    assert not result.shape_problems and isinstance(result.gradients, tuple)
    np.testing.assert_allclose(result.gradients[0], gradlab.grad(loss)(W, X), rtol=1e-12)
