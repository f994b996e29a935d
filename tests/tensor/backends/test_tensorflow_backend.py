"""TensorFlow's backend (gradlab.tensor.backends.tensorflow_backend)."""
from __future__ import annotations

import numpy as np

from tests.tensor.backends.contract import check_contract


def test_the_backend_contract() -> None:
    check_contract("tensorflow")


def test_a_value_inside_tf_function_is_traced() -> None:
    import tensorflow as tf
    b = check_contract("tensorflow")
    seen = []

    @tf.function
    def f(x):
        seen.append(b.is_traced(x))
        return x * 2.0
    f(tf.constant([1.0]))
    assert seen == [True] and not b.is_traced(tf.constant([1.0]))


def test_a_variable_converts_and_is_differentiated() -> None:
    import tensorflow as tf
    b = check_contract("tensorflow")
    v = tf.Variable([1.0, 2.0], dtype=tf.float64)
    np.testing.assert_array_equal(b.to_numpy(v), [1.0, 2.0])
    value, (g,) = b.value_and_grad(lambda a: tf.reduce_sum(a ** 3), (v,), (0,))
    assert float(value) == 9.0
    np.testing.assert_allclose(b.to_numpy(g), [3.0, 12.0])


def test_python_numbers_are_answered_with_python_numbers() -> None:
    b = check_contract("tensorflow")
    assert type(b.namespace().exp(0.0)) is float      # not a float32 tensor
