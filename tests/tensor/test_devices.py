"""Where a value lives (gradlab.tensor.devices): each question goes to the value's backend."""
from __future__ import annotations

import numpy as np
import pytest

from gradlab.errors import BackendError
from gradlab.tensor import registry
from gradlab.tensor.devices import available_devices, device_label, device_of, synchronize
from tests.conftest import require, to_framework


def test_values_on_the_cpu(framework) -> None:
    x = to_framework(np.zeros(2), framework)
    assert device_label(x) == "cpu"
    assert "cpu" in str(device_of(x)).lower()
    assert available_devices(framework)[0] == "cpu"


def test_what_no_framework_holds_is_on_the_cpu_and_labelled_as_written() -> None:
    assert device_of("not an array") == "cpu" and device_of(1.5) == "cpu"
    assert device_label("cuda:3") == "cuda:3"
    assert available_devices("np") == ["cpu"]          # by an alias too


def test_a_device_of_a_framework_is_labelled_by_that_framework() -> None:
    require("torch")
    import torch
    assert device_label(torch.device("cpu"), "torch") == "cpu"
    assert device_label(torch.zeros(1)) == "cpu"


def test_synchronize_waits_for_every_value_in_nested_lists(monkeypatch) -> None:
    waited = []
    numpy_backend = registry.get("numpy")
    monkeypatch.setattr(numpy_backend, "synchronize", lambda v: waited.append(v),
                        raising=False)
    a, b = np.zeros(1), np.ones(2)
    synchronize([a, (b, "label", 3)])
    assert len(waited) == 2 and {id(v) for v in waited} == {id(a), id(b)}


def test_an_unknown_framework_is_refused_by_name() -> None:
    with pytest.raises(BackendError, match="unknown backend 'mxnet'; choose one of numpy, torch"):
        available_devices("mxnet")
