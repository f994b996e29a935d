"""The registrations of the backends gradlab ships (gradlab/tensor/backends/__init__.py)."""
from __future__ import annotations

import importlib.util

from gradlab.tensor.backends import REGISTRATIONS


def test_names_aliases_and_roots_are_each_claimed_once() -> None:
    spoken = [r.name for r in REGISTRATIONS] + [a for r in REGISTRATIONS for a in r.aliases]
    assert len(spoken) == len(set(spoken))
    roots = [root for r in REGISTRATIONS for root in r.roots]
    assert len(roots) == len(set(roots))


def test_each_registration_names_a_file_that_exists() -> None:
    for r in REGISTRATIONS:
        assert importlib.util.find_spec(r.module) is not None, r.module


def test_users_are_offered_the_four_frameworks_in_order() -> None:
    assert [r.name for r in REGISTRATIONS if r.listed] == ["numpy", "torch", "tensorflow", "jax"]
    python = next(r for r in REGISTRATIONS if r.name == "python")
    assert not python.listed and float in python.types and not python.roots
    assert all(r.install for r in REGISTRATIONS if r.listed and r.name != "numpy")
