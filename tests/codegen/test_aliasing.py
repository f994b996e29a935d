"""Names that share memory in NumPy (analyze._check_aliasing): an in-place change through one
of them changes the others in NumPy but not in gradlab's code, which makes new arrays, so gradlab
refuses, naming the user's line. Each refused function here gave a silently wrong gradient
before the check knew that way of sharing memory."""
from __future__ import annotations

import inspect

import numpy as np
import pytest

import gradlab
from gradlab import GradlabSyntaxError


def ident(x):
    return x


def pair(x):
    return x[0:2], x


def layer(x):
    return np.tanh(x) * 2.0


def through_tuple_unpacking(a):
    t = a * np.ones((3, 1))
    v, w = t[:, 1:2], np.sum(t)
    v *= w
    return np.sum(v) + np.sum(t)


def through_append(a):
    h = a * 1.0
    hs = []
    hs.append(h)
    h += 1.0
    return np.sum(np.stack(hs) * a)


def through_a_helper_returning_its_argument(a):
    t = a * np.ones((3, 1))
    y = ident(t)
    y += 1.0
    return np.sum(t * a)


def through_a_helper_returning_a_tuple(a):
    t = a * np.ones((3, 1))
    p, q = pair(t)
    p += 1.0
    return np.sum(t * a)


def through_a_row(a):
    t = a * np.ones((3, 1))
    r = t[0]
    r += 1.0
    return np.sum(t * a)


def through_rows_of_a_loop(a):
    t = a * np.ones((3, 1))
    for row in t:
        row += a
    return np.sum(t * a)


def through_a_list_literal(a):
    t = a * np.ones((3, 1))
    xs = [t, t * 2.0]
    v = xs[0]
    v += 1.0
    return np.sum(t * a)


def through_two_views_of_one_slice(a):
    """gradlab takes ``t[0:2]`` once for the line; in NumPy p and q are two views of t."""
    t = a * np.ones((3, 1))
    p, q = t[0:2], t[0:2]
    p += 1.0
    return np.sum(q * a)


def through_asarray(a):
    t = a * np.ones((3, 1))
    v = np.asarray(t)
    v += 1.0
    return np.sum(t * a)


def through_asarray_with_its_dtype(a):
    """np.asarray(t, dtype=...) is t itself where t has that dtype (people fuzz, seed 11: on
    torch, as_tensor(x, dtype=torch.float64) then x *= 2 gave a wrong jvp)."""
    t = a * np.ones((3, 1))
    v = np.asarray(t, dtype=np.float64)
    t *= 2.0
    return np.sum(v * a)


REFUSED = [
    (through_asarray, "v is changed in place while t refers to the same array", "v += 1.0"),
    (through_asarray_with_its_dtype, "t is changed in place while v may refer to the same "
                                     "array (one was converted from the other", "t *= 2.0"),
    (through_two_views_of_one_slice, "p is changed in place while", "p += 1.0"),
    (through_tuple_unpacking, "v is changed in place while t refers to the same array", "v *= w"),
    (through_append, "h is changed in place while hs holds the same array", "h += 1.0"),
    (through_a_helper_returning_its_argument, "while t may refer to the same array", "y += 1.0"),
    (through_a_helper_returning_a_tuple, "while t", "p += 1.0"),
    (through_a_row, "r may be a view of t (a row of it", "r += 1.0"),
    (through_rows_of_a_loop, "row may be a view of t", "row += a"),
    (through_a_list_literal, "v is changed in place while t refers to the same array",
     "v += 1.0"),
]


@pytest.mark.parametrize("fn, says, line", REFUSED, ids=[r[0].__name__ for r in REFUSED])
@pytest.mark.parametrize("transform", [gradlab.grad, gradlab.jvp], ids=["grad", "jvp"])
def test_sharing_memory_then_changing_in_place_is_refused(fn, says, line, transform) -> None:
    with pytest.raises(GradlabSyntaxError) as info:
        transform(fn)
    message = str(info.value)
    assert says in message and "gradlab's code makes a new array instead" in message
    lines, first = inspect.getsourcelines(fn)
    assert info.value.lineno == first + next(i for i, text in enumerate(lines) if line in text)


def a_temporary_sliced(a):
    v = (a * 2.0)[0:2]
    v -= 1.0
    return np.sum(v) + np.sum(a * 2.0)


def a_repeated_expression(a):
    """gradlab computes ``a * np.ones((3, 1))`` once for the line; NumPy makes two arrays."""
    v, w = (a * np.ones((3, 1)))[:, 1:2], np.sum(a * np.ones((3, 1)))
    v *= w
    return np.sum(v) + np.sum(a * np.ones((3, 1)))


def two_evaluations_of_one_expression(a):
    """Found by the fuzzer: computed once by gradlab, two arrays in NumPy."""
    v2, v4 = a * np.ones((3, 1)), a * np.ones((3, 1))
    v4 -= v2 / 2.0
    return np.sum(v2 * v4)


def a_helper_making_a_new_array(a):
    h = layer(a)
    h += 1.0
    return np.sum(h * a)


def a_list_read_while_it_grows(a):
    """Reading an item and appending to the list again changes no item."""
    hs = [a * 1.0]
    for _ in range(3):
        h = np.tanh(hs[-1] * 0.5 + a)
        hs.append(h)
    return np.sum(np.stack(hs) * a)


def rows_read_not_changed(a):
    t = a * np.ones((3, 1))
    total = 0.0
    for row in t:
        total += row
    return np.sum(total * t)


def a_swap(a):
    t = a * np.ones((3, 1))
    s = t * 2.0
    t, s = s, t
    s += 1.0
    return np.sum(s * a) + np.sum(t)


ACCEPTED = [a_temporary_sliced, a_repeated_expression, two_evaluations_of_one_expression,
            a_helper_making_a_new_array, a_list_read_while_it_grows,
            rows_read_not_changed, a_swap]


@pytest.mark.parametrize("fn", ACCEPTED, ids=[f.__name__ for f in ACCEPTED])
def test_memory_nobody_reads_again_is_no_reason_to_refuse(fn) -> None:
    a = np.random.default_rng(3).normal(size=4)
    numeric = np.zeros(4)
    for i in range(4):
        e = np.zeros(4)
        e[i] = 1e-6
        numeric[i] = (fn(a + e) - fn(a - e)) / 2e-6
    np.testing.assert_allclose(gradlab.grad(fn)(a), numeric, rtol=1e-6, atol=1e-8)


def bump(a):
    v = a[0:2]
    v += 1.0
    return np.sum(v)


def through_a_helper_changing_its_argument(a):
    t = a * np.ones((3, 1))
    s = bump(t)
    return s * np.sum(t * a)


@pytest.mark.parametrize("transform", [gradlab.grad, gradlab.jvp], ids=["grad", "jvp"])
def test_a_helper_changing_its_argument_in_place_is_refused(transform) -> None:
    """The helper's own code never reads ``a`` again, but its caller reads ``t``."""
    with pytest.raises(GradlabSyntaxError) as info:
        transform(through_a_helper_changing_its_argument)
    assert "so in NumPy a, the caller's array, changes too" in str(info.value)
    lines, first = inspect.getsourcelines(bump)
    assert info.value.lineno == first + 2


def test_the_main_function_may_change_its_own_input_when_it_does_not_read_it_again() -> None:
    a = np.random.default_rng(4).normal(size=4)
    np.testing.assert_allclose(gradlab.grad(bump)(a), [1.0, 1.0, 0.0, 0.0])


def halve(a, depth):
    if depth == 0:
        return a[0:2]
    return halve(a * 0.5, depth - 1)


def recurse(a, c, depth):
    if depth == 0:
        return np.sum(c * c) * a
    return recurse(a * 0.5, c, depth - 1)


def through_a_recursive_helper(a):
    t = a * np.ones((3, 1))
    v = halve(t, 0)
    v += 1.0
    return np.sum(t * a)


def a_recursive_helper_making_a_new_array(a):
    t = a * np.ones((3, 1))
    v = recurse(a, t, 2)
    v += 1.0
    return np.sum(v * t)


def test_a_recursive_helper_is_followed_to_what_it_returns() -> None:
    with pytest.raises(GradlabSyntaxError, match="v is changed in place while t may refer"):
        gradlab.grad(through_a_recursive_helper)
    a = np.random.default_rng(5).normal(size=4)
    f = a_recursive_helper_making_a_new_array
    numeric = np.array([(f(a + e) - f(a - e)) / 2e-6 for e in np.eye(4) * 1e-6])
    np.testing.assert_allclose(gradlab.grad(f)(a), numeric, rtol=1e-6, atol=1e-8)


def through_a_second_name_of_a_list(a):
    xs = [a * 1.0]
    ys = xs
    ys.append(a * 3.0)
    return np.sum(np.stack(xs))


def test_appending_to_a_list_under_a_second_name_is_refused() -> None:
    with pytest.raises(GradlabSyntaxError) as info:
        gradlab.grad(through_a_second_name_of_a_list)
    assert "ys is appended to while xs is the same list" in str(info.value)
    assert "ys.append(a * 3.0)" in str(info.value)
