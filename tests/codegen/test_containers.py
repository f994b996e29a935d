"""Container arguments read as their leaves (gradlab/codegen/containers.py): the function
rewritten for one structure — loops over containers written out, aliases and unpackings
replaced, each constant path the leaf's parameter — and the refusals, at the user's line, of
what cannot be read before the call. (Gradients against finite differences, on every backend:
tests/test_pytrees.py.)"""
from __future__ import annotations

import gast
import numpy as np
import pytest

from gradlab.codegen.containers import LAYOUTS, Layout, layouts_of, read_leaves, shown_names
from gradlab.codegen.parse import parse_function
from gradlab.errors import GradlabSyntaxError


def leaf(name):
    return Layout("leaf", name=name)


DENSE = Layout("dict", "dict", ("W", "b"), (leaf("p_W"), leaf("p_b")))
LAYERS = Layout("dict", "dict", ("layers",), (Layout("list", "list", (0, 1), (
    Layout("dict", "dict", ("W",), (leaf("p_layers_0_W"),)),
    Layout("dict", "dict", ("W",), (leaf("p_layers_1_W"),)))),))
PAIR = Layout("namedtuple", "Pair", ("W", "b"), (leaf("p_W"), leaf("p_b")))


def rewritten(fn, layouts):
    parsed = parse_function(fn)
    read_leaves(parsed, layouts)
    return gast.unparse(parsed.node)


def test_a_layout_names_its_leaves_in_order_and_reads_its_parts():
    assert list(LAYERS.leaves()) == ["p_layers_0_W", "p_layers_1_W"]
    assert DENSE.item("b") is DENSE.children[1] and DENSE.item("c") is None
    assert PAIR.item(-1) is PAIR.children[1] and PAIR.field("W") is PAIR.children[0]
    assert DENSE.field("W") is None and PAIR.item(True) is None


def reads(p, x):
    return np.sum(x @ p["W"] + p["b"])


def test_paths_become_the_leaves_parameters():
    text = rewritten(reads, {"p": DENSE})
    assert "def reads(p_W, p_b, x):" in text and "x @ p_W + p_b" in text


def loops(p, x):
    h = x
    layers = p["layers"]
    for i, layer in enumerate(layers):
        h = h @ layer["W"] * (i + 1)
    for j in range(len(p["layers"])):
        h = h + p["layers"][j]["W"]
    for (W,) in zip(p["layers"]):
        h = h - W["W"]
    return np.sum(h) * len(p["layers"])


def test_loops_aliases_and_len_are_written_out():
    text = rewritten(loops, {"p": LAYERS})
    assert "for " not in text
    assert "h = h @ p_layers_0_W * (0 + 1)" in text
    assert "h = h @ p_layers_1_W * (1 + 1)" in text
    assert "h = h + p_layers_1_W" in text and "* 2" in text
    assert "h = h - p_layers_0_W" in text
    assert "p[" not in text and "layers =" not in text


def test_namedtuples_unpack_and_read_fields():
    def f(p, x):
        W, b = p
        return np.sum(x @ W + p.b + b)
    text = rewritten(f, {"p": PAIR})
    assert "W = p_W" in text and "b = p_b" in text and "x @ W + p_b + b" in text


def items(p):
    s = 0.0
    for k, v in p.items():
        s = s + v * len(k)
    for k in p:
        s = s + p[k]
    return s


def test_a_dicts_items_and_keys_are_unrolled_in_order():
    text = rewritten(items, {"p": DENSE})
    assert text.index("s = s + p_W * len('W')") < text.index("s = s + p_b * len('b')")
    assert "s = s + p_W\n    s = s + p_b\n" in text


def sliced(p):
    return p["layers"][0:1]


def missing(p):
    return p["V"]


def rebound(p):
    p = 2.0
    return p


def zipped(p, xs):
    for layer, x in zip(p["layers"], xs):
        pass
    return 0.0


def aliased_twice(p):
    q = p["layers"]
    q = 1.0
    return q


def whole(p):
    return p


def read_after(p):
    for layer in p["layers"]:
        pass
    return layer["W"]


def two_loops(p):
    s = 0.0
    for layer in p["layers"]:
        s = s + layer["W"]
    for layer in p["layers"]:
        s = s * layer["W"]
    return s


WS = Layout("dict", "dict", ("ws",), (Layout("tuple", "tuple", (0, 1), (
    leaf("p_ws_0"), leaf("p_ws_1"))),))


def read_whole(p, t):
    return np.sum(np.stack(p["ws"])) + p["ws"][t]


def test_a_list_of_leaves_read_whole_is_the_literal_of_its_leaves():
    text = rewritten(read_whole, {"p": WS})
    assert "np.stack((p_ws_0, p_ws_1))" in text and "(p_ws_0, p_ws_1)[t]" in text


def test_loops_binding_the_same_name_are_both_written_out():
    assert "s = s * p_layers_1_W" in rewritten(two_loops, {"p": LAYERS})


@pytest.mark.parametrize("fn, layout, said, line", [
    (sliced, LAYERS, "is sliced", 'return p["layers"][0:1]'),
    (missing, DENSE, "has no entry 'V'", 'return p["V"]'),
    (rebound, DENSE, "the argument p is assigned", "p = 2.0"),
    (zipped, LAYERS, "zip of a container argument", "for layer, x in zip"),
    (aliased_twice, LAYERS, "also assigned elsewhere", 'q = p["layers"]'),
    (whole, DENSE, "p (a dict) is returned", "return p"),
    (items, PAIR, "has no .items()", "for k, v in p.items():"),
    (read_after, LAYERS, "layer is read outside the loop", 'return layer["W"]'),
], ids=lambda v: getattr(v, "__name__", None))
def test_what_is_not_static_is_refused_at_its_line(fn, layout, said, line):
    with pytest.raises(GradlabSyntaxError) as info:
        rewritten(fn, {"p": layout})
    message = str(info.value)
    assert said in message and line in message, message


def test_a_gradient_is_named_after_the_container():
    def flat(p_W, p_b, x):
        return 0.0
    setattr(flat, LAYOUTS, {"p": DENSE})
    assert layouts_of(flat) == {"p": DENSE} and layouts_of(reads) == {}
    assert shown_names(flat, ["p_W", "x", "p_b"]) == ["p", "x"]


def affine(q, x, scale=2.0):
    z = x @ q["W"]
    if "b" in q:
        z = z + q["b"]
    return z * scale if "W" in q else z


def calls_a_helper(p, x):
    return affine(p, x) + affine(q=p, x=x, scale=3.0)


def test_a_container_given_to_a_helper_is_passed_as_its_leaves():
    """The helper is read as taking the part's leaves, named after its own parameter, and the
    call passes them, with the defaults it leaves out (as the function given to gradlab is read
    for its container arguments)."""
    parsed = parse_function(calls_a_helper)
    read_leaves(parsed, {"p": DENSE})
    text = gast.unparse(parsed.node)
    assert "affine__q_leaves(p_W, p_b, x, 2.0) + affine__q_leaves(p_W, p_b, x, 3.0)" in text
    helper = parsed.scope.closure["affine__q_leaves"]
    assert list(layouts_of(helper)["q"].leaves()) == ["q_W", "q_b"]
    inner = parse_function(helper)
    read_leaves(inner, layouts_of(helper))
    assert "z = z + q_b" in gast.unparse(inner.node)
    assert "return z * scale" in gast.unparse(inner.node)


def test_a_key_tested_with_in_takes_its_branch_before_the_call():
    parsed = parse_function(affine)
    read_leaves(parsed, {"q": Layout("dict", "dict", ("W",), (leaf("q_W"),))})
    text = gast.unparse(parsed.node)
    assert "q_b" not in text and "if" not in text and "return z * scale" in text
