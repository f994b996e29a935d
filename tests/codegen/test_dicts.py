"""Dicts built in the function with constant string keys are differentiated as one variable
per entry (gradlab/codegen/dicts.py): gradients, tangents and Hessian-vector products against
central finite differences on every backend, the entries' names in the generated code, and the
refusals, at the user's line, of the dicts it cannot replace."""
from __future__ import annotations

import numpy as np
import pytest

import gradlab
from gradlab.errors import GradlabSyntaxError
from tests.conftest import central_difference, require, to_framework, to_numpy


def literal_reads(x):
    p = {"a": x, "b": np.sin(x)}
    return np.sum(p["a"] * 2.0 + p["b"] * p["a"])


def stores_and_updates(x):
    p = {"a": x, "w": 0.3}
    p["c"] = np.tanh(p["a"] * p["w"])
    p["c"] += x ** 2
    p["a"] = p["c"] * p["a"]
    return np.sum(p["a"] + p["c"])


def nested(x):
    params = {"l1": {"W": x * 0.5, "b": x}, "scale": 2.0}
    h = np.tanh(params["l1"]["W"] * x + params["l1"]["b"])
    params["l1"]["b"] = h
    return np.sum(h * params["l1"]["b"]) * params["scale"]


def built_empty(x):
    state = {}
    state["h"] = x
    for i in range(3):
        state["h"] = np.tanh(state["h"] * 1.5 + 0.1 * i)
    return np.sum(state["h"] ** 2)


def in_a_branch(x):
    p = dict(a=x, b=x ** 3)
    if np.sum(x) > 0:
        p["b"] = p["b"] * p["a"]
    else:
        p["a"] = -p["a"]
    return np.sum(p["a"] + p["b"])


def holding_a_list(x):
    p = {"layers": [x, x * x]}
    return np.sum(p["layers"][0] * p["layers"][1])


def rebuilt_in_a_loop(x):
    s = 0.0
    for i in range(2):
        p = {"u": x * i, "v": np.exp(x)}
        s = s + np.sum(p["u"] * p["v"])
    return s


def loops_over_keys_values_items(x):
    p = {"a": x, "b": np.cos(x)}
    s = 0.0
    for k in p:
        s = s + np.sum(p[k] ** 2)
    for k, v in p.items():
        p[k] = v * s
    for v in p.values():
        s = s + np.sum(np.tanh(v))
    return s


CASES = [literal_reads, stores_and_updates, nested, built_empty, in_a_branch, holding_a_list,
         rebuilt_in_a_loop, loops_over_keys_values_items]
X = np.array([0.5, -0.4, 0.8])


@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_grad_jvp_and_hvp_on_every_backend(f, framework):
    require(framework)
    expected = central_difference(f, X)
    g = gradlab.grad(f)(to_framework(X, framework))
    np.testing.assert_allclose(to_numpy(g), expected, rtol=1e-6, atol=1e-6)
    v = np.array([0.2, -0.7, 1.0])
    _, tangent = gradlab.jvp(f)(to_framework(X, framework), to_framework(v, framework))
    assert float(to_numpy(tangent)) == pytest.approx(float(expected @ v), rel=1e-6, abs=1e-6)
    grad = gradlab.grad(f)
    hessian_v = (grad(X + 1e-5 * v) - grad(X - 1e-5 * v)) / 2e-5
    hv = gradlab.hvp(f)(to_framework(X, framework), to_framework(v, framework))
    np.testing.assert_allclose(to_numpy(hv), hessian_v, rtol=1e-5, atol=1e-5)


def two_dicts(x, w):
    p = {"a": x, "b": w}
    return np.sum(p["a"] * 2.0 + p["b"] * x)


def test_gradients_with_respect_to_several_arguments():
    dx, dw = gradlab.grad(two_dicts, (0, 1))(X, X ** 2)
    np.testing.assert_allclose(dx, 2.0 + X ** 2)
    np.testing.assert_allclose(dw, X)


def test_the_generated_code_names_the_entries():
    source = gradlab.grad(nested).source
    assert "params_l1_W = x * 0.5" in source or "params_l1_W = 0.5 * x" in source, source
    assert "params_l1_b = x" in source
    assert "params_scale = 2.0" in source
    assert '# params = {"l1": {"W": x * 0.5, "b": x}, "scale": 2.0}' in source
    assert "{" not in source.split("── backward ──")[1].replace(
        '# params = {"l1": {"W": x * 0.5, "b": x}, "scale": 2.0}', "")


def test_an_entry_name_the_function_uses_is_not_reused():
    def clash(x):
        p_a = 3.0
        p = {"a": x}
        return np.sum(p["a"] * p_a)
    np.testing.assert_allclose(gradlab.grad(clash)(X), 3.0 * np.ones(3))
    assert "p_a_2 = x" in gradlab.grad(clash).source


def test_a_constant_dict_used_whole_still_runs():
    def config(x):
        cfg = {"scale": 2.0, "shift": 1.0}
        return np.sum(x * len(cfg)) + cfg["shift"]
    np.testing.assert_allclose(gradlab.grad(config)(X), 2.0 * np.ones(3))


def iterated(x):
    p = {"a": x, "b": x * 2.0}
    return np.sum(np.stack([p[k] for k in sorted(p)]))


def returned_whole(x):
    p = {"a": x}
    return p


def passed_to_a_call(x):
    p = {"a": x, "b": 2.0}
    return np.sum(p["a"]) * len(p)


def computed_key(x):
    p = {"a": x, "b": x * x}
    k = "a"
    return np.sum(p[k])


def copied(x):
    p = {"a": x}
    q = p
    return np.sum(q["a"])


def read_in_a_lambda(x):
    p = {"a": x}
    f = lambda: p["a"]        # noqa: E731
    return np.sum(f())


def written_then_iterated(x):
    p = {"a": 1.0}
    p["a"] = x
    return np.sum(np.stack(list(p.values())))


@pytest.mark.parametrize("f, use, line", [
    (iterated, "p is passed to a call", 'p = {"a": x, "b": x * 2.0}'),
    (passed_to_a_call, "p is passed to a call", 'p = {"a": x, "b": 2.0}'),
    (computed_key, "a key that is not a constant string", 'p = {"a": x, "b": x * x}'),
    (copied, "p is assigned to another name", 'p = {"a": x}'),
    (written_then_iterated, "dict p, which is changed here and is used through .values",
     'p["a"] = x'),
], ids=lambda v: getattr(v, "__name__", None))
@pytest.mark.parametrize("transform", [gradlab.grad, gradlab.jvp], ids=["grad", "jvp"])
def test_a_dict_it_cannot_replace_is_refused_at_its_line(f, use, line, transform):
    with pytest.raises(GradlabSyntaxError) as info:
        transform(f)(X) if transform is gradlab.grad else transform(f)(X, X)
    message = str(info.value)
    assert use in message and line in message, message
    assert "dict" in message


@pytest.mark.parametrize("f", [returned_whole, read_in_a_lambda], ids=lambda f: f.__name__)
def test_other_uses_are_refused_too(f):
    with pytest.raises(gradlab.GradlabError):
        gradlab.grad(f)(X)


def loop_with_break(x):
    p = {"a": x, "b": x * 2.0}
    s = 0.0
    for k in p:
        s = s + np.sum(p[k])
        if s > 10.0:
            break
    return s


def loop_over_keys_added_later(x):
    p = {"a": x}
    p["b"] = x * 2.0
    s = 0.0
    for v in p.values():
        s = s + np.sum(v)
    return s


def loop_rebinding_the_dict(x):
    p = {"a": x, "b": x * 2.0}
    s = 0.0
    for v in p.values():
        s = s + np.sum(v)
        p = {"a": x * 3.0, "b": x}
    return s


@pytest.mark.parametrize("f, why, line", [
    (loop_rebinding_the_dict, "the loop binds p to a new dict", "for v in p.values():"),
    (loop_with_break, "it has a break inside", "for k in p:"),
    (loop_over_keys_added_later, "a key is added to it at line", "for v in p.values():"),
], ids=lambda v: getattr(v, "__name__", None))
def test_a_loop_over_a_dict_it_cannot_write_out_is_refused(f, why, line):
    with pytest.raises(GradlabSyntaxError) as info:
        gradlab.grad(f)
    message = str(info.value)
    assert "a loop over the dict p" in message and why in message and line in message, message


def test_a_loop_over_a_dict_is_written_out_per_key():
    source = gradlab.grad(loops_over_keys_values_items).source
    assert not [line for line in source.splitlines() if line.strip().startswith("for ")], source
    assert "# for k, v in p.items():\n" in source, source
    assert "gl.sum(p_a_pow2)" in source and "gl.sum(p_b_pow2)" in source, source
