"""What a backend is (gradlab.tensor.backends.base): a registration line, and a Backend whose
defaults fit a framework with one device and no autodiff of its own."""
from __future__ import annotations

import numpy as np
import pytest

from gradlab.errors import GradlabError
from gradlab.tensor.backends.base import Backend, Registration
from gradlab.tensor.backends.numpy_backend import NumPyBackend
from gradlab.tensor.backends.python_backend import PythonBackend


class Bare(Backend):
    """A backend that overrides nothing."""

    name, title = "bare", "Bare"


def test_a_registration_owns_its_roots_and_their_submodules_only() -> None:
    r = Registration("tensorflow", "x.tf_backend", roots=("tensorflow", "keras"))
    assert r.owns_module("tensorflow") and r.owns_module("keras.layers")
    assert not r.owns_module("tensorflow_probability") and not r.owns_module("numpy")
    assert r.listed and r.install == ""


def test_is_installed_asks_without_importing() -> None:
    assert Registration("numpy", "m", roots=("numpy",)).is_installed()
    assert not Registration("nope", "m", roots=("surely_not_installed_gradlab_x",)).is_installed()
    assert Registration("python", "m", types=(float,)).is_installed()    # no roots: built in


def test_the_defaults_are_one_cpu_device_and_refusals_that_name_the_framework() -> None:
    b = Bare()
    assert b.devices() == ["cpu"] and b.device_of(np.zeros(1)) == "cpu"
    assert b.device_label("cpu") == "cpu" and b.spell_device("cuda:1") == "gpu:1"
    assert b.call_device((np.zeros(1),)) is None and b.device_key("cuda:0") is None
    assert b.to_device("value", "cpu") == "value" and not b.is_traced(np.zeros(1))
    with pytest.raises(GradlabError, match="Bare namespaces do not depend on the device"):
        b.native_device("cuda:0")
    with pytest.raises(GradlabError, match="Bare cannot take NumPy arrays"):
        b.from_numpy(np.zeros(1))
    with pytest.raises(GradlabError, match="Bare has no autodiff of its own to check against"):
        b.value_and_grad(lambda a: a, (1.0,), (0,))


def test_from_value_copies_through_numpy_when_dlpack_is_not_offered() -> None:
    class Listed(Bare):
        def from_numpy(self, array):
            return array.tolist()
    got = Listed().from_value(np.array([1.0, 2.0]), NumPyBackend())
    assert got == [1.0, 2.0]


def test_a_backends_names_come_from_its_file_and_its_parents_files() -> None:
    b = PythonBackend()
    names = [m.__name__.rsplit(".", 1)[1] for m in b.modules()]
    assert names == ["numpy_backend", "python_backend"]
    own = b.primitives()
    assert own["zeros_like"].__module__.endswith("python_backend")   # the subclass's last
    assert "tanh" in own
