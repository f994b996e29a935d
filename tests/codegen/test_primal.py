"""The primal code (gradlab.codegen.primal): each normalized statement as the code it runs as,
through ``gl`` on arrays, as the user spelled it on Python numbers, ifs and loops as written."""
from __future__ import annotations

import numpy as np

from gradlab.codegen.program import Program, normalize_function
from gradlab.tensor import backend


def scaled_tanh(a, k):
    xs = [a]
    xs.append(np.tanh(a) * np.sqrt(k))
    for i in range(2):
        if i > 0:
            break
        print("i", i)
    return xs[1]


def calls_it(x):
    return np.sum(scaled_tanh(x, 2.0))


ON_ARRAYS = '''\
def scaled_tanh(a, k):
    # xs = [a]
    xs = [a]
    # xs.append(np.tanh(a) * np.sqrt(k))
    tanh_a = gl.tanh(a)
    sqrt_k = gl.sqrt(k)
    tanh_a_times_sqrt_k = tanh_a * sqrt_k
    xs.append(tanh_a_times_sqrt_k)
    for i in range(2):
        if i > 0:
            break
        # print("i", i)
        print('i', i)
    # return xs[1]
    scaled_tanh = xs[1]
    return scaled_tanh
'''


def test_a_portable_copy_calls_the_tensor_layer_and_keeps_loops_lists_and_prints() -> None:
    program = Program(normalize_function(calls_it))
    assert program.portable(scaled_tanh) == "scaled_tanh"
    assert program.source().text.strip() == ON_ARRAYS.strip()


def test_on_a_python_number_the_users_spelling_is_kept() -> None:
    program = Program(normalize_function(calls_it))
    program.portable(scaled_tanh)
    assert program.portable(scaled_tanh, (True, False)) == "scaled_tanh_of_number_k"
    text = program.source().text
    assert "sqrt_k = np.sqrt(k)" in text and "tanh_a = gl.tanh(a)" in text


def test_the_copy_computes_what_the_user_wrote_on_every_backend(framework, capsys) -> None:
    from tests.conftest import to_framework, to_numpy
    program = Program(normalize_function(calls_it))
    program.portable(scaled_tanh)
    namespace = {"gl": backend(framework), "np": np}
    exec(program.source().text, namespace)
    a = np.array([0.1, -0.7])
    got = namespace["scaled_tanh"](to_framework(a, framework), 2.0)
    np.testing.assert_allclose(to_numpy(got), scaled_tanh(a, 2.0), rtol=1e-6)
    assert capsys.readouterr().out == "i 0\ni 0\n"
