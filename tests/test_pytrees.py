"""Container arguments (gradlab/pytrees.py): dicts, lists, tuples, namedtuples and dataclasses
of arrays in, gradients (and Hessian-vector products) in the same structure and type out,
tangents given in that structure; grad, jvp and hvp against central finite differences on every
backend; non-differentiated containers; and what is refused, with the argument it names."""
from __future__ import annotations

import dataclasses
from collections import namedtuple

import numpy as np
import pytest

import gradlab
from gradlab.pytrees import build, leaves_of, structure_of
from tests.conftest import central_difference, require, to_framework, to_numpy

RNG = np.random.default_rng(7)
X = RNG.normal(size=(4, 3))
Pair = namedtuple("Pair", "W b")


@dataclasses.dataclass
class Dense:
    W: np.ndarray
    b: np.ndarray


def dict_loss(params, x):
    h = np.tanh(x @ params["W"] + params["b"])
    return np.sum(h ** 2)


def layers_loss(params, x):
    h = x
    for layer in params["layers"]:
        h = np.tanh(h @ layer["W"] + layer["b"])
    return np.sum(h ** 2) + 0.1 * sum(np.sum(l["W"] ** 2) for l in params["layers"])


def enumerate_zip_loss(params, x):
    h = x
    for i, (W, b) in enumerate(zip(params["Ws"], params["bs"])):
        h = np.tanh(h @ W + b) * (1.0 + 0.5 * i)
    out_W, out_b = params["out"]
    return np.sum((h @ out_W + out_b) ** 2)


def items_loss(params, x):
    s = 0.0
    for name, w in params.items():
        s = s + np.sum(np.sin(w) * 0.5)
    layers = params["first"]
    return s + np.sum(np.tanh(x @ layers) ** 2) * len(params)


def record_loss(p, x):
    return np.sum(np.tanh(x @ p.W + p.b) ** 2)


def list_of_dicts_loss(layers, x):
    h = x
    for layer in layers:
        h = np.tanh(h @ layer["W"] + layer["b"])
    return np.sum(h ** 2)


def configured_loss(params, x, cfg):
    h = x @ params["W"] * cfg["scale"]
    if cfg["act"] == "tanh":
        h = np.tanh(h)
    return np.sum(h ** 2) + cfg["shift"]


def list_leaves_loss(params, x):
    s = np.sum(np.stack(params["ws"]) ** 2)
    for t in range(2):
        s = s + np.sum(np.tanh(x @ params["ws"][t]))
    return s


def dense_layer(p, x, act=True):
    z = x @ p["W"]
    if "b" in p:
        z = z + p["b"]
    return np.tanh(z) if act else z


def residual_block(p, x):
    return dense_layer(p["inner"], x) * 2.0 + dense_layer(p["skip"], x, act=False)


def helpers_loss(params, x):
    h = residual_block(params["enc"], x)
    h = dense_layer(params["out"], h, act=False)
    return np.sum(h ** 2) + np.sum(dense_layer(p=params["head"], x=h))


def record_layer(layer, x):
    return np.sin(x @ layer.W + layer.b)


def records_to_a_helper_loss(layers, x):
    for layer in layers:
        x = record_layer(layer, x)
    return np.sum(x ** 2)


def named_layers_loss(params, x):
    for name in ("first", "second"):
        x = dense_layer(params[name], x)
    return np.sum(x ** 2)


def repeated(p, x, n):
    return x if n == 0 else repeated(p, np.tanh(x @ p["W"] + p["b"]), n - 1)


def recursive_helper_loss(params, x):
    return np.sum(repeated(params, x, 2) ** 2)


def dense(n_in, n_out):
    return {"W": RNG.normal(size=(n_in, n_out)) * 0.5, "b": RNG.normal(size=n_out) * 0.5}


CASES = [
    (dict_loss, dense(3, 2)),
    (layers_loss, {"layers": [dense(3, 3), dense(3, 2)]}),
    (enumerate_zip_loss, {"Ws": [RNG.normal(size=(3, 3)), RNG.normal(size=(3, 2))],
                          "bs": (RNG.normal(size=3), RNG.normal(size=2)),
                          "out": (RNG.normal(size=(2, 1)), 0.3)}),
    (items_loss, {"first": RNG.normal(size=(3, 2)), "second": RNG.normal(size=4)}),
    (record_loss, Pair(**dense(3, 2))),
    (record_loss, Dense(**dense(3, 2))),
    (list_of_dicts_loss, [dense(3, 3), dense(3, 2)]),
    (list_leaves_loss, {"ws": [RNG.normal(size=(3, 2)), RNG.normal(size=(3, 2))]}),
    (helpers_loss, {"enc": {"inner": dense(3, 3), "skip": {"W": RNG.normal(size=(3, 3))}},
                    "out": dense(3, 3), "head": {"W": RNG.normal(size=(3, 2))}}),
    (records_to_a_helper_loss, [Pair(**dense(3, 3)), Dense(**dense(3, 2))]),
    (named_layers_loss, {"first": dense(3, 3), "second": dense(3, 2), "unused": dense(2, 2)}),
    (recursive_helper_loss, dense(3, 3)),
]
IDS = ["dict", "layers", "enumerate-zip", "items", "namedtuple", "dataclass", "list-of-dicts",
       "list-read-whole", "helpers", "records-to-a-helper", "keys-in-a-loop",
       "recursive-helper"]


def numeric(tree):
    """The tree with its leaves as NumPy float arrays (numbers stay numbers)."""
    s = structure_of(tree)
    return build(s, iter([v if isinstance(v, float) else np.asarray(v, float)
                          for v in leaves_of(tree, s)]))


def on(tree, framework):
    s = structure_of(tree)
    return build(s, iter([v if isinstance(v, float) else to_framework(v, framework)
                          for v in leaves_of(tree, s)]))


def expected_gradient(f, params, *rest):
    """Central differences, leaf by leaf, in the structure of ``params``."""
    s = structure_of(params)
    leaves = list(leaves_of(params, s))
    grads = []
    for i, leaf in enumerate(leaves):
        def with_leaf(value, i=i):
            if isinstance(leaves[i], float):
                value = float(value)
            return f(build(s, iter(leaves[:i] + [value] + leaves[i + 1:])), *rest)
        g = central_difference(with_leaf, np.asarray(leaf, float))
        grads.append(float(g) if isinstance(leaf, float) else g)
    return build(s, iter(grads))


def assert_same_tree(got, want, tol=1e-6):
    assert type(got) is type(want)
    s = structure_of(want)
    assert structure_of(got) == s
    for g, w in zip(leaves_of(got, s), leaves_of(want, s)):
        np.testing.assert_allclose(to_numpy(g), w, rtol=tol, atol=tol)


def direction(tree):
    s = structure_of(tree)
    return build(s, iter([float(np.cos(i)) if isinstance(v, float) else
                          np.cos(np.arange(np.size(v)) + i).reshape(np.shape(v))
                          for i, v in enumerate(leaves_of(tree, s))]))


def dot(a, b):
    s = structure_of(b)
    return sum(float(np.sum(np.asarray(to_numpy(u)) * np.asarray(v)))
               for u, v in zip(leaves_of(a, s), leaves_of(b, s)))


def axpy(alpha, v, p):
    s = structure_of(p)
    return build(s, iter([alpha * a + b for a, b in zip(leaves_of(v, s), leaves_of(p, s))]))


@pytest.mark.parametrize("f, params", CASES, ids=IDS)
def test_grad_jvp_and_hvp_on_every_backend(f, params, framework):
    require(framework)
    params = numeric(params)
    expected = expected_gradient(f, params, X)
    g = gradlab.grad(f)(on(params, framework), to_framework(X, framework))
    assert_same_tree(g, expected)
    v = direction(params)
    _, tangent = gradlab.jvp(f)(on(params, framework), to_framework(X, framework),
                                on(v, framework))
    assert float(to_numpy(tangent)) == pytest.approx(dot(expected, v), rel=1e-6, abs=1e-6)
    grad = gradlab.grad(f)
    eps = 1e-5
    up, down = grad(axpy(eps, v, params), X), grad(axpy(-eps, v, params), X)
    s = structure_of(params)
    hessian_v = build(s, iter([(a - b) / (2 * eps) for a, b in zip(leaves_of(up, s),
                                                                  leaves_of(down, s))]))
    hv = gradlab.hvp(f)(on(params, framework), to_framework(X, framework), on(v, framework))
    assert_same_tree(hv, hessian_v, tol=1e-5)


def test_the_gradient_keeps_the_structure_and_types():
    g = gradlab.grad(dict_loss, wrt="params")({"b": np.ones(2), "W": np.ones((3, 2))}, X)
    assert list(g) == ["b", "W"] and g["W"].shape == (3, 2)
    assert type(gradlab.grad(record_loss)(Pair(np.ones((3, 2)), np.ones(2)), X)) is Pair
    assert type(gradlab.grad(record_loss)(Dense(np.ones((3, 2)), np.ones(2)), X)) is Dense
    g = gradlab.grad(enumerate_zip_loss)(numeric(CASES[2][1]), X)
    assert type(g["Ws"]) is list and type(g["bs"]) is tuple and type(g["out"][1]) is float


def test_several_wrt_and_a_container_not_differentiated():
    params = numeric(dense(3, 2))
    cfg = {"scale": 0.7, "act": "tanh", "shift": 2.0}
    dparams, dx = gradlab.grad(configured_loss, wrt=("params", 1))(params, X, cfg)
    assert_same_tree(dparams, expected_gradient(configured_loss, params, X, cfg))
    np.testing.assert_allclose(dx, central_difference(
        lambda x: configured_loss(params, x, cfg), X), rtol=1e-6, atol=1e-6)
    value, g = gradlab.value_and_grad(configured_loss)(params, X, cfg)
    assert value == pytest.approx(configured_loss(params, X, cfg))
    g2, value2 = gradlab.grad(configured_loss, preserve_result=True)(params, X, cfg=cfg)
    assert value2 == pytest.approx(value)
    assert_same_tree(g2, g)
    assert list(gradlab.grad(configured_loss, wrt=(0,))(params, X, cfg)[0]) == ["W", "b"]


def test_the_code_shown_reads_the_leaves():
    params = numeric(CASES[1][1])
    source = gradlab.grad(layers_loss).source_for(params, X)
    assert "def dlayers_loss_dparams(params_layers_0_W, params_layers_0_b," in source
    code = [line for line in source.splitlines() if not line.strip().startswith("#")]
    assert not any("params[" in line or "layer[" in line for line in code), source
    assert "h_1 = gl.tanh(total)" in source and 'layer["W"]' in source   # the user's line


def test_a_list_of_arrays_is_still_a_list():
    def f(ps, x):
        return np.sum(np.tanh(x @ ps[0]) + ps[1])
    ps = [np.ones((3, 2)) * 0.1, np.ones(2)]
    g = gradlab.grad(f)(ps, X)
    assert type(g) is list
    np.testing.assert_allclose(g[0], central_difference(lambda w: f([w, ps[1]], X), ps[0]),
                               rtol=1e-6, atol=1e-6)
    assert "ps" in gradlab.grad(f).source.split("\n")[0]


def test_a_fresh_closure_per_step_reuses_the_transform():
    params = numeric(dense(3, 2))
    grads, made = [], []
    for step in range(3):
        batch = X * (step + 1)

        def loss(p):
            return np.sum(np.tanh(batch @ p["W"] + p["b"]) ** 2)
        df = gradlab.grad(loss)
        grads.append(df(params))
        spec, _ = df.containers.specialised(df.containers.bind((params,), {}))
        made.append(spec.inner.transform_seconds)   # the same transform: the same figure
    assert made[0] == made[1] == made[2]
    assert_same_tree(grads[2], expected_gradient(
        lambda p: np.sum(np.tanh(3 * X @ p["W"] + p["b"]) ** 2), params))


def keyed_at_run_time(params, x):
    k = "W"
    return np.sum(x @ params[k])


def passed_on(params, x):
    return np.sum(x @ helper(params))


def helper(*ps):
    return ps[0]["W"]


def written_into(params, x):
    params["W"] = params["W"] * 2.0
    return np.sum(x @ params["W"])


def with_a_break(params, x):
    s = 0.0
    for layer in params["layers"]:
        s = s + np.sum(x @ layer["W"])
        break
    return s


def keys_listed(params, x):
    return np.sum(x @ params["W"]) * len(list(params.keys()))


@pytest.mark.parametrize("f, said, line", [
    (keyed_at_run_time, "a key or index computed at run time", "return np.sum(x @ params[k])"),
    (passed_on, "params (a dict) is passed to a call", "helper(params)"),
    (written_into, "params['W'] is changed", 'params["W"] = params["W"] * 2.0'),
    (with_a_break, "has a break inside", "break"),
    (keys_listed, "used through .keys", "list(params.keys())"),
], ids=lambda v: getattr(v, "__name__", None))
@pytest.mark.parametrize("mode", ["grad", "jvp", "hvp"])
def test_what_cannot_be_read_statically_is_refused_at_its_line(f, said, line, mode):
    params = {"W": np.ones((3, 2)), "layers": [{"W": np.ones((3, 2))}]}
    with pytest.raises(gradlab.GradlabSyntaxError) as info:
        if mode == "grad":
            gradlab.grad(f)(params, X)
        else:
            getattr(gradlab, mode)(f)(params, X, params)
    message = str(info.value)
    assert said in message and line in message, message


def test_other_refusals_name_the_argument():
    with pytest.raises(gradlab.GradlabError, match="holds str 'tanh'"):
        gradlab.grad(configured_loss, wrt="cfg")(dense(3, 2), X, {"scale": 1.0, "act": "tanh",
                                                                  "shift": 0.0})
    with pytest.raises(gradlab.GradlabError, match="must have params's structure"):
        gradlab.jvp(dict_loss)(dense(3, 2), X, {"W": np.ones((3, 2))})

    @dataclasses.dataclass
    class Hidden:
        W: np.ndarray
        n: int = dataclasses.field(default=0, init=False)
    with pytest.raises(gradlab.GradlabError, match="init=False"):
        gradlab.grad(record_loss)(Hidden(np.ones((3, 2))), X)


def test_attribute_reads_with_arrays_get_the_error_for_arrays():
    df = gradlab.grad(record_loss)
    with pytest.raises(gradlab.GradlabSyntaxError, match="attribute .W"):
        df(np.ones((3, 2)), X)
    with pytest.raises(gradlab.GradlabError, match="source_for"):
        df.source
    assert "p_W" in df.source_for(Pair(np.ones((3, 2)), np.ones(2)), X)


def test_the_code_shown_ends_with_the_structure_given_back():
    source = gradlab.grad(enumerate_zip_loss).source_for(numeric(CASES[2][1]), X)
    assert source.rstrip().endswith(
        "#   dparams = {'Ws': [dparams_Ws_0, dparams_Ws_1], 'bs': (dparams_bs_0, dparams_bs_1), "
        "'out': (dout_W, dout_b)}"), source
    source = gradlab.grad(record_loss).source_for(Dense(**dense(3, 2)), X)
    assert source.rstrip().endswith("#   dp = Dense(W=dp_W, b=dp_b)"), source


def test_jvp_and_hvp_along_an_array_beside_a_container_not_differentiated():
    params = numeric(dense(3, 2))
    cfg = {"scale": 0.7, "act": "tanh", "shift": 2.0}
    v = np.cos(np.arange(12.0)).reshape(4, 3)

    def of_x(x):
        return configured_loss(params, x, cfg)
    expected = central_difference(of_x, X)
    value, tangent = gradlab.jvp(configured_loss, wrt="x")(params, X, cfg, v)
    assert value == pytest.approx(of_x(X))
    assert float(tangent) == pytest.approx(float(np.sum(expected * v)), rel=1e-6)
    grad = gradlab.grad(configured_loss, wrt="x")
    eps = 1e-5
    hessian_v = (grad(params, X + eps * v, cfg) - grad(params, X - eps * v, cfg)) / (2 * eps)
    np.testing.assert_allclose(gradlab.hvp(configured_loss, wrt="x")(params, X, cfg, v),
                               hessian_v, rtol=1e-5, atol=1e-5)


def test_keywords_defaults_and_what_is_saved():
    def with_default(x, params={"W": np.eye(3), "b": np.zeros(3)}):  # noqa: B006
        return np.sum(np.tanh(x @ params["W"] + params["b"]) ** 2)
    df = gradlab.grad(with_default, wrt=("x", "params"))
    params = numeric(dense(3, 3))
    dx, dparams = df(x=X, params=params)
    assert_same_tree(dparams, expected_gradient(lambda p: with_default(X, p), params))
    assert df(X)[1]["W"].shape == (3, 3)
    report = gradlab.grad(layers_loss).saved_for(numeric(CASES[1][1]), X)
    assert "dlayers_loss_dparams" in str(report)


def test_the_semantic_guard_checks_the_function_taking_leaves():
    df = gradlab.grad(dict_loss)
    params = numeric(dense(3, 2))
    df(params, X)
    spec, _ = df.containers.specialised([params, X])
    assert not spec.inner.unchecked


def test_only_container_reads_defer_the_error_for_arrays():
    from gradlab.pytrees import may_take_containers

    def sets_an_attribute(x):
        x.flags = None
        return np.sum(x)
    assert may_take_containers(record_loss) and may_take_containers(items_loss)
    assert not may_take_containers(sets_an_attribute)
    with pytest.raises(gradlab.GradlabSyntaxError, match="attributes"):
        gradlab.grad(sets_an_attribute)


def test_a_callable_dataclass_is_a_model_not_a_container():
    """An Equinox or Flax module is a dataclass the function calls: it is run as one call
    (the framework differentiates it), not read as a container of its fields."""
    from dataclasses import dataclass

    from gradlab.pytrees import is_container

    @dataclass
    class Record:
        W: object

    @dataclass
    class Module:
        W: object

        def __call__(self, x):
            return x @ self.W
    assert is_container(Record(np.eye(2))) and not is_container(Module(np.eye(2)))
    assert is_container({"model": Module(np.eye(2))})
