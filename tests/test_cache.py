"""The transform cache keeps no user values alive and stays bounded (memory measured with
tracemalloc and weak references, never with a clock)."""
from __future__ import annotations

import gc
import tracemalloc
import weakref

import numpy as np
import pytest

import gradlab
from gradlab import api
from gradlab.cache import TransformCache


class Anchor:
    pass


def test_least_recently_used_entries_go_first():
    cache = TransformCache(limit=3)
    for k in "abcd":
        cache.put(k, k.upper())
    assert len(cache) == 3 and cache.get("a") is None
    cache.get("b")                  # now the most recent
    cache.put("e", "E")
    assert "b" in cache and "c" not in cache


def test_an_entry_goes_when_an_object_its_key_names_is_collected():
    cache = TransformCache()
    anchor = Anchor()
    cache.put("k", "v", anchors=[anchor, np.tanh, 3])    # the last two cannot be weakly held
    assert cache.get("k") == "v"
    del anchor
    gc.collect()
    assert "k" not in cache


def _train(steps: int, refs: list) -> None:
    """A training loop that makes a fresh closure over each step's 1 MB batch."""
    W = np.ones((100, 10))
    for _ in range(steps):
        batch = np.random.default_rng(0).random((1250, 100))
        refs.append(weakref.ref(batch))

        def loss(W):
            return np.mean((batch @ W) ** 2)

        W = W - 1e-3 * gradlab.grad(loss)(W)


def test_a_fresh_closure_per_step_keeps_no_batch_alive():
    _train(2, [])                    # imports and the first transform, outside the measure
    before = len(api._cache)
    refs: list = []
    gc.collect()
    tracemalloc.start()
    try:
        start = tracemalloc.get_traced_memory()[0]
        _train(30, refs)
        gc.collect()
        grown = tracemalloc.get_traced_memory()[0] - start
    finally:
        tracemalloc.stop()
    assert not any(r() is not None for r in refs)      # every batch was freed
    assert grown < 3_000_000, grown                    # 30 batches held would be 30 MB
    assert len(api._cache) == before                   # one transform, reused every step


def make_loss(batch):
    def predict(W):
        return batch @ W

    def loss(W):
        return np.sum(predict(W) ** 2)
    return loss


def test_a_fresh_helper_per_step_frees_its_batch_and_its_entry():
    W = np.ones((100, 10))
    before = len(api._cache)
    refs = []
    for _ in range(5):
        batch = np.random.default_rng(1).random((1250, 100))
        refs.append(weakref.ref(batch))
        gradlab.grad(make_loss(batch))(W)
    del batch
    gc.collect()
    assert not any(r() is not None for r in refs)
    assert len(api._cache) <= before + 1


def two_args(a, b):
    return np.sum(a * b)


def test_the_cache_is_bounded(monkeypatch):
    monkeypatch.setattr(api._cache, "limit", 3)
    for wrt in (0, 1, (0, 1)):
        for optimized in (True, False):
            gradlab.grad(two_args, wrt, optimized=optimized)
    assert len(api._cache) <= 3


def test_a_closed_over_value_of_another_type_is_another_transform():
    def make(c):
        def f(x):
            return np.sum(x * c)
        return f

    a, b = gradlab.grad(make(2.0)), gradlab.grad(make(np.array([1.0, 2.0])))
    assert a._transform is not b._transform
    np.testing.assert_allclose(b(np.ones(2)), [1.0, 2.0])
    assert gradlab.grad(make(3.0))._transform is a._transform
    np.testing.assert_allclose(gradlab.grad(make(3.0))(np.ones(2)), [3.0, 3.0])


@pytest.mark.parametrize("check", [True, False])
def test_each_function_computes_with_its_own_closed_over_values(check):
    fs = [make_loss(np.full((2, 2), float(k))) for k in (1, 2, 3)]
    W = np.eye(2)
    for k, f in zip((1, 2, 3), fs):
        np.testing.assert_allclose(gradlab.grad(f, check=check)(W), 2 * (k * k * 2) * np.ones(
            (2, 2)))


@pytest.mark.parametrize("check", [True, False])
def test_each_closure_gets_the_hessian_of_its_own_values(check):
    """hvp shares the gradient's transform among closures over values of one type: each
    runs with its own batch (the first closure's batch was used for every later one)."""
    W, V = np.eye(2), np.ones((2, 2))
    for k in (1.0, 2.0, 3.0):
        batch = np.full((2, 2), k)
        f = make_loss(batch)
        want = gradlab.grad(make_loss(batch))(W + 1e-3 * V)   # linear in W: exact difference
        want = (want - gradlab.grad(make_loss(batch))(W)) / 1e-3
        np.testing.assert_allclose(gradlab.hvp(f, check=check)(W, V), want, rtol=1e-6)


def test_the_same_text_in_two_modules_reads_each_modules_globals(tmp_path, monkeypatch):
    """Equal code objects ignore their file: two modules' identical functions (same lines)
    are two transforms, each reading its own module's globals (grad, jvp and hvp)."""
    import importlib
    monkeypatch.syspath_prepend(str(tmp_path))
    for name, g in (("same_text_a", 2.0), ("same_text_b", 10.0)):
        (tmp_path / f"{name}.py").write_text(
            f"import numpy as np\nG = {g}\n\n\ndef f(x):\n    return np.sum(G * x ** 2)\n")
    a, b = importlib.import_module("same_text_a"), importlib.import_module("same_text_b")
    x, v = np.array([1.0, 2.0]), np.ones(2)
    for module, g in ((a, 2.0), (b, 10.0)):
        np.testing.assert_allclose(gradlab.grad(module.f)(x), 2 * g * x)
        np.testing.assert_allclose(gradlab.grad(module.f).implementation("numpy")(x)[1],
                                   2 * g * x)
        np.testing.assert_allclose(gradlab.jvp(module.f)(x, v)[1], 2 * g * 3.0)
        np.testing.assert_allclose(gradlab.hvp(module.f, check=False)(x, v), 2 * g * v)
