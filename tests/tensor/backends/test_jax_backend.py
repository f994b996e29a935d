"""JAX's backend (gradlab.tensor.backends.jax_backend)."""
from __future__ import annotations

import numpy as np

from tests.tensor.backends.contract import check_contract


def test_the_backend_contract() -> None:
    check_contract("jax")


def test_a_value_inside_jit_is_traced() -> None:
    import jax
    import jax.numpy as jnp
    b = check_contract("jax")
    seen = []

    @jax.jit
    def f(x):
        seen.append(b.is_traced(x))
        return x * 2.0
    f(jnp.ones(2))
    assert seen == [True] and not b.is_traced(jnp.ones(2))


def test_the_device_is_jaxs_own_object_labelled_for_people() -> None:
    import jax.numpy as jnp
    b = check_contract("jax")
    device = b.device_of(jnp.ones(2))
    assert not isinstance(device, str) and b.device_label(device) == "cpu"
    moved = b.to_device(jnp.ones(2), device)
    np.testing.assert_array_equal(b.to_numpy(moved), [1.0, 1.0])
