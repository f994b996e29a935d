"""Shift invariance (codegen/invariance.py): which shifts get no gradient code, and that the
generated code says so. Values are checked on every backend by the corpus
(r_logsumexp_by_hand, r_log_softmax_by_hand, r_shift_near_misses, r_logsumexp_in_loop)."""
from __future__ import annotations

import re

import numpy as np
import pytest

import gradlab
from tests.codegen import corpus

NOTE = "# no gradient for"


def _mask_code(source: str) -> int:
    """How many times the max's rule (its mask of the maximal elements) was emitted."""
    return source.count("gl.equal(")


def test_logsumexp_by_hand_has_no_shift_gradient() -> None:
    df = gradlab.grad(corpus.r_logsumexp_by_hand)
    assert df.source.count(NOTE) == 2
    assert "# no gradient for m: m + log(sum(exp(x - m))) does not depend on m" in df.source
    assert _mask_code(df.source) == 0
    assert "dm " not in df.source and "drows" not in df.source


def test_log_softmax_by_hand_has_no_shift_gradient() -> None:
    df = gradlab.grad(corpus.r_log_softmax_by_hand)
    assert "(x - m) - log(sum(exp(x - m))) does not depend on m" in df.source
    assert _mask_code(df.source) == 0


def test_softmax_by_hand_has_no_shift_gradient() -> None:
    df = gradlab.grad(corpus.r_softmax_logsoftmax)
    assert "exp(x - m) / sum(exp(x - m)) does not depend on m" in df.source
    assert _mask_code(df.source) == 0


def test_mlp_example_drops_the_shift() -> None:
    from gradlab.examples import mlp_loss
    df = gradlab.grad(mlp_loss, wrt=(0, 1, 2, 3))
    assert "no gradient for m: (logits - m) - log(sum(exp(logits - m)))" in df.source
    assert _mask_code(df.source) == 0


def test_near_misses_keep_the_shift_gradient() -> None:
    df = gradlab.grad(corpus.r_shift_near_misses)
    assert NOTE not in df.source
    assert _mask_code(df.source) == 2     # the max rule of m0 and of m (shared by two uses)
    assert "dlifted" in df.source
    x = corpus.CORPUS[[c.name for c in corpus.CORPUS].index("r_shift_near_misses")].inputs()[0]
    eps, g = 1e-6, np.zeros_like(x)
    for i in np.ndindex(x.shape):
        xp, xm = x.copy(), x.copy()
        xp[i] += eps
        xm[i] -= eps
        g[i] = (corpus.r_shift_near_misses(xp) - corpus.r_shift_near_misses(xm)) / (2 * eps)
    np.testing.assert_allclose(df(x), g, rtol=1e-6, atol=1e-8)


def test_loop_body_shift_is_dropped() -> None:
    df = gradlab.grad(corpus.r_logsumexp_in_loop)
    assert NOTE in df.source and _mask_code(df.source) == 0


@pytest.mark.parametrize("fn", [corpus.r_logsumexp_by_hand, corpus.r_log_softmax_by_hand])
def test_forward_mode_drops_the_shift_tangent(fn) -> None:
    jvp = gradlab.jvp(fn)
    assert _mask_code(jvp.source) == 0
    assert not re.search(r"^\s*(m|rows)_dot =", jvp.source, re.M), jvp.source


def test_unoptimized_code_also_says_why() -> None:
    df = gradlab.grad(corpus.r_logsumexp_by_hand, optimized=False)
    assert df.source.count(NOTE) == 2
