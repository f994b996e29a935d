"""Compiling generated code: names as shown, and linecache entries that do not pile up."""
from __future__ import annotations

import gc
import linecache

import numpy as np
import pytest

import gradlab
from gradlab.codegen import emit


def loss(W, x):
    return np.sum(np.tanh(x @ W))


def test_a_call_with_the_wrong_arguments_names_the_generated_function():
    df = gradlab.grad(loss)
    with pytest.raises(TypeError) as info:
        df(np.ones((3, 2)), np.ones((4, 3)), 1.0)
    message = str(info.value)
    assert message.startswith("dloss_dW() takes 2 positional arguments but 3 were given")
    assert "__gradlab_factory__" not in message and "seed=" in message
    with pytest.raises(TypeError, match=r"^dloss_dW\(\) missing 1 required positional"):
        df(np.ones((3, 2)))


def _traces() -> list[str]:
    return [name for name in linecache.cache if name.startswith("<gradlab:trace:dloss_dW")]


def test_linecache_keeps_live_texts_and_drops_dead_ones(monkeypatch):
    df = gradlab.grad(loss)
    W, x = np.ones((3, 2)), np.ones((4, 3))
    df(W, x)
    # past the bound, registering a text sweeps the texts whose code is gone
    gc.collect()
    emit._sweep()
    monkeypatch.setattr(emit, "LINECACHE_LIMIT", 5)
    monkeypatch.setattr(emit, "_sweep_at", [len(emit._registered) + 5])
    for _ in range(12):            # every trace compiles an instrumented text, then drops it
        gradlab.trace(df)(W, x)
        gc.collect()
    assert len(_traces()) < 12
    # a sweep keeps exactly the texts of code that is alive
    emit._sweep()
    assert all(any(r() is not None for r in refs) for refs in emit._registered.values())
    assert len(_traces()) == 0
    assert linecache.getline(df.filename, 1).startswith("def dloss_dW(")   # df is alive
