"""Forward mode (``gradlab.jvp``) and Hessian-vector products (``gradlab.hvp``: forward mode over
the generated gradient code), held to reverse mode's standard on every backend: each function
here crashed inside, came back with the wrong shape or type, or was refused, although ``grad``
takes it. References are central finite differences of the function (jvp) or of its NumPy
gradient along ``v`` (hvp)."""
from __future__ import annotations

import numpy as np
import pytest

import gradlab
from gradlab import GradlabError, GradlabSyntaxError
from tests.conftest import to_framework, to_numpy

RNG = np.random.default_rng(15)
X3 = np.array([0.4, -0.7, 1.1])
V3 = np.array([0.3, 1.0, -0.6])
A34 = RNG.normal(size=(3, 4))
V34 = RNG.normal(size=(3, 4))


def hvp_reference(f, args, v, wrt=0, eps=1e-5, **kwargs):
    """H v by central differences of gradlab's NumPy gradient (itself checked against finite
    differences by the reverse-mode corpus); ``kwargs`` go to the gradient (``seed=`` too)."""
    g = gradlab.grad(f, wrt)
    plus, minus = list(args), list(args)
    plus[wrt] = _shift(args[wrt], v, eps)
    minus[wrt] = _shift(args[wrt], v, -eps)
    gp, gm = g(*plus, **kwargs), g(*minus, **kwargs)
    if isinstance(gp, (tuple, list)):
        return [(np.asarray(p) - np.asarray(m)) / (2 * eps) for p, m in zip(gp, gm)]
    return (np.asarray(gp) - np.asarray(gm)) / (2 * eps)


def jvp_reference(f, args, v, wrt=0, eps=1e-6):
    plus, minus = list(args), list(args)
    plus[wrt] = _shift(args[wrt], v, eps)
    minus[wrt] = _shift(args[wrt], v, -eps)
    return (np.asarray(f(*plus)) - np.asarray(f(*minus))) / (2 * eps)


def _shift(x, v, eps):
    if isinstance(x, (tuple, list)):
        return type(x)(_shift(a, b, eps) for a, b in zip(x, v))
    return x + eps * v


def on(framework, value):
    """A float stays a Python number (as a user would pass it); arrays become ``framework``'s."""
    if isinstance(value, float):
        return value
    if isinstance(value, (tuple, list)):
        return type(value)(on(framework, v) for v in value)
    return to_framework(value, framework)


def assert_native(got, like, framework):
    """The derivative has the input's structure, shape, framework and dtype."""
    if isinstance(like, (tuple, list)):
        assert isinstance(got, type(like)) and len(got) == len(like), (type(got), got)
        for g, x in zip(got, like):
            assert_native(g, x, framework)
        return
    if isinstance(like, float):
        assert isinstance(got, float), type(got)
        return
    assert type(got).__module__.split(".")[0] == type(like).__module__.split(".")[0], type(got)
    assert tuple(to_numpy(got).shape) == tuple(np.shape(to_numpy(like)))
    assert to_numpy(got).dtype == to_numpy(like).dtype


# --- 1: loops in the gradient code (the seed's tangent) ----------------------------------------
def iterpower(a, n):
    for i in range(n):
        a = a * a
    return a


def power_in_loop(x):
    y = x
    for i in range(3):
        y = y * x
    return np.sum(y)


def power_in_while(x, limit=3):
    y = x * 1.0
    k = 0
    while k < limit:
        if k % 2 == 0:
            y = y * x
        else:
            y = np.sin(y) + x
        k += 1
    return np.sum(y)


def nested_loops(x):
    s = x * 0.0
    for i in range(2):
        y = x
        for j in range(3):
            y = y * x * 0.5
        s = s + y * (i + 1.0)
    return np.sum(s)


def test_hvp_through_a_loop_on_a_number():
    """iterpower(a, 2) = a ** 4, whose second derivative is 12 a ** 2 (the seed ``da`` is
    overwritten in the backward loop: its tangent must start at zero)."""
    assert gradlab.hvp(iterpower)(-2.0, 2, 1.0) == pytest.approx(48.0, rel=1e-12)
    assert gradlab.hvp(iterpower)(1.5, 3, 0.5) == pytest.approx(0.5 * 56 * 1.5 ** 6, rel=1e-12)


@pytest.mark.parametrize("fn", [power_in_loop, power_in_while, nested_loops],
                         ids=lambda f: f.__name__)
def test_hvp_through_loops(framework, fn):
    got = gradlab.hvp(fn)(to_framework(X3, framework), to_framework(V3, framework))
    np.testing.assert_allclose(to_numpy(got), hvp_reference(fn, [X3], V3), rtol=1e-6,
                               atol=1e-8)
    assert_native(got, to_framework(X3, framework), framework)


# --- 2: loop order --------------------------------------------------------------------------------
def weighted_rows(A):
    total = 0.0
    k = 1.0
    for row in A:
        total = total + k * np.sum(np.sin(row) ** 2)
        k = k + 1.0
    return total


def recurrence_backwards(x):
    y = 0.0
    for i in reversed(range(3)):
        y = np.sin(y) * 2.0 + x[i]
    return y * y


def test_hvp_visits_rows_in_order(framework):
    """The backward loop of ``for row in A`` runs over reversed(range(...)): read back by hvp,
    it ran forwards, so each row met another row's saved values."""
    got = gradlab.hvp(weighted_rows)(to_framework(A34, framework), to_framework(V34, framework))
    np.testing.assert_allclose(to_numpy(got), hvp_reference(weighted_rows, [A34], V34),
                               rtol=1e-6, atol=1e-8)


def test_loop_over_reversed_range(framework):
    """``for i in reversed(range(n))`` in the user's code runs backwards in every mode (grad ran
    it forwards: a silently wrong gradient)."""
    x = to_framework(X3, framework)
    eps = 1e-6
    fd = np.array([(recurrence_backwards(X3 + eps * e) - recurrence_backwards(X3 - eps * e))
                   / (2 * eps) for e in np.eye(3)])
    np.testing.assert_allclose(to_numpy(gradlab.grad(recurrence_backwards)(x)), fd, rtol=1e-7)
    value, derivative = gradlab.jvp(recurrence_backwards)(x, to_framework(V3, framework))
    assert float(to_numpy(value)) == pytest.approx(recurrence_backwards(X3), rel=1e-12)
    assert float(to_numpy(derivative)) == pytest.approx(float(fd @ V3), rel=1e-7)
    got = gradlab.hvp(recurrence_backwards)(x, to_framework(V3, framework))
    np.testing.assert_allclose(to_numpy(got), hvp_reference(recurrence_backwards, [X3], V3),
                               rtol=1e-6, atol=1e-8)


# --- 3: lists and tuples ---------------------------------------------------------------------------
def list_and_subscript(a):
    xs = [1.0, a, 3.0]
    return xs[0] * xs[1] * xs[1] + xs[2]


def unpacked(abc):
    a, b, c = abc
    return a * b * b + c


def first_of_tuple(abc):
    a, b, c = abc
    return a


def test_hvp_of_a_list_holding_constants(framework):
    a = on(framework, np.array(-2.0))
    got = gradlab.hvp(list_and_subscript)(a, on(framework, np.array(0.5)))
    assert float(to_numpy(got)) == pytest.approx(2.0 * 0.5, rel=1e-12)
    assert gradlab.hvp(list_and_subscript)(-2.0, 0.5) == pytest.approx(1.0, rel=1e-12)


@pytest.mark.parametrize("fn, expected", [(unpacked, lambda v: (v[1] * 2 * 0.5,
                                                                 2 * 0.5 * v[0] + 2 * -2.0 * v[1],
                                                                 0.0)),
                                          (first_of_tuple, lambda v: (0.0, 0.0, 0.0))],
                         ids=["unpacked", "first_of_tuple"])
def test_hvp_with_respect_to_a_tuple(framework, fn, expected):
    abc = (-2.0, 0.5, 1.5) if framework == "numpy" else tuple(
        to_framework(np.array(t), framework) for t in (-2.0, 0.5, 1.5))
    v = (1.0, -1.0, 2.0) if framework == "numpy" else tuple(
        to_framework(np.array(t), framework) for t in (1.0, -1.0, 2.0))
    got = gradlab.hvp(fn)(abc, v)
    assert isinstance(got, tuple) and len(got) == 3
    np.testing.assert_allclose([float(to_numpy(g)) for g in got], expected((1.0, -1.0, 2.0)),
                               rtol=1e-12, atol=1e-12)
    assert_native(got, abc, framework)


# --- 4: a zero Hessian has x's shape and type --------------------------------------------------
def linear(x):
    return np.sum(3.0 * x) + 1.0


def linear_in_s(s, t):
    return np.sum(s * 2.0 + t * t)


def test_zero_hessian_is_shaped_like_x(framework):
    x = to_framework(X3, framework)
    got = gradlab.hvp(linear)(x, to_framework(V3, framework))
    np.testing.assert_array_equal(to_numpy(got), np.zeros(3))
    assert_native(got, x, framework)
    s = to_framework(np.array(0.5), framework)
    got = gradlab.hvp(linear_in_s)(s, x, to_framework(np.array(1.0), framework))
    assert float(to_numpy(got)) == 0.0
    assert_native(got, s, framework)


def negative(t):
    return -t


def add_broadcast(s, t):
    return s + t


def test_zero_hessian_of_a_weighted_output_is_shaped_like_x(framework):
    """With a seed for the non-scalar output, a zero Hessian came back as the float 0.0."""
    x, w = to_framework(X3, framework), to_framework(np.ones(3), framework)
    got = gradlab.hvp(negative)(x, to_framework(V3, framework), seed=w)
    np.testing.assert_array_equal(to_numpy(got), np.zeros(3))
    assert_native(got, x, framework)
    s = to_framework(np.array(2.0), framework)
    got = gradlab.hvp(add_broadcast)(s, x, to_framework(np.array(1.0), framework), seed=w)
    assert float(to_numpy(got)) == 0.0
    assert_native(got, s, framework)


def test_zero_hessian_of_a_python_number():
    assert gradlab.hvp(linear)(0.5, 1.0) == 0.0
    assert isinstance(gradlab.hvp(linear)(0.5, 1.0), float)


# --- 5: default arguments ---------------------------------------------------------------------------
def with_defaults(x, n=3, scale=0.5):
    y = x
    for i in range(n):
        y = np.sin(y) * scale
    return np.sum(y ** 2)


def test_jvp_and_hvp_keep_default_arguments(framework):
    x, v = to_framework(X3, framework), to_framework(V3, framework)
    fj, fh = gradlab.jvp(with_defaults), gradlab.hvp(with_defaults)
    assert "def with_defaults_jvp_x(x, n=3, scale=0.5, *, x_dot):" in fj.source
    for kwargs in ({}, {"n": 2}, {"scale": 1.5, "n": 1}):
        f = lambda z: with_defaults(z, **kwargs)  # noqa: E731
        value, derivative = fj(x, v, **kwargs)
        assert float(to_numpy(value)) == pytest.approx(f(X3), rel=1e-12)
        assert float(to_numpy(derivative)) == pytest.approx(float(jvp_reference(f, [X3], V3)),
                                                            rel=1e-6)
        ref = hvp_reference(with_defaults, [X3], V3, **kwargs)
        np.testing.assert_allclose(to_numpy(fh(x, v, **kwargs)), ref, rtol=1e-6, atol=1e-9)
    value, _ = fj(x, 2, v)   # a default given by position
    assert float(to_numpy(value)) == pytest.approx(with_defaults(X3, 2), rel=1e-12)


def test_argument_errors_name_the_function():
    fj = gradlab.jvp(with_defaults)
    with pytest.raises(GradlabError, match="takes the 3 arguments of with_defaults"):
        fj(X3, 1, 2.0, 4, V3)
    with pytest.raises(GradlabError, match="'m' is not a parameter of with_defaults"):
        fj(X3, V3, m=2)
    with pytest.raises(GradlabError, match="missing the argument 'x'"):
        gradlab.hvp(with_defaults)(V3)


# --- 6: non-scalar outputs ----------------------------------------------------------------------------
def flat(x):
    return np.reshape(x * x, (-1,))


def expanded(x):
    return np.expand_dims(np.sin(x), 0)


def two_outputs(a):
    return 2 * a * a, a


def one_element(x):
    return np.reshape(np.sum(x ** 3), (1,))


@pytest.mark.parametrize("fn", [flat, expanded], ids=lambda f: f.__name__)
def test_non_scalar_output_asks_for_a_seed(framework, fn):
    x, v = to_framework(X3, framework), to_framework(V3, framework)
    with pytest.raises(GradlabError, match=r"hvp needs a scalar function.*seed="):
        gradlab.hvp(fn)(x, v)
    with pytest.raises(GradlabError, match=r"not a scalar: pass its gradient as seed="):
        gradlab.grad(fn)(x)
    w = RNG.normal(size=np.shape(fn(X3)))
    got = gradlab.hvp(fn)(x, v, seed=to_framework(w, framework))
    np.testing.assert_allclose(to_numpy(got), hvp_reference(fn, [X3], V3, seed=w), rtol=1e-6,
                               atol=1e-9)
    assert_native(got, x, framework)


@pytest.mark.parametrize("fn", [flat, expanded], ids=lambda f: f.__name__)
def test_jvp_of_a_non_scalar_output(framework, fn):
    x, v = to_framework(X3, framework), to_framework(V3, framework)
    value, derivative = gradlab.jvp(fn)(x, v)
    np.testing.assert_allclose(to_numpy(value), fn(X3), rtol=1e-12)
    np.testing.assert_allclose(to_numpy(derivative), jvp_reference(fn, [X3], V3), rtol=1e-7)
    assert_native(derivative, value, framework)


def test_tuple_output_asks_for_a_seed():
    with pytest.raises(GradlabError, match=r"returns a tuple of 2 outputs.*seed=\(1.0, 1.0\)"):
        gradlab.hvp(two_outputs)(0.5, 1.0)
    with pytest.raises(GradlabError, match=r"returns a tuple of 2 outputs"):
        gradlab.grad(two_outputs)(0.5)
    assert gradlab.hvp(two_outputs)(0.5, 1.0, seed=(1.0, 1.0)) == pytest.approx(4.0)


def test_an_output_of_one_element_is_a_scalar(framework):
    x, v = to_framework(X3, framework), to_framework(V3, framework)
    np.testing.assert_allclose(to_numpy(gradlab.hvp(one_element)(x, v)), 6 * X3 * V3,
                               rtol=1e-12)


# --- 7: the aliasing check is for the user's code, not gradlab's --------------------------------
def write_rows(x):
    y = np.zeros_like(x)
    for i in range(len(x)):
        y[i] = x[i] * x[i]
    return np.sum(np.sin(y))


def rnn_into_matrix(inputs, W):
    h = np.zeros((4, 3))
    for t in range(3):
        h[t + 1] = np.tanh(inputs[t] @ W + h[t])
    return np.sum(h[1:] ** 2)


def overwrite_argument(x):
    a = x[0]
    b = x[1]
    x[0] = a * b
    return np.sum(x * x)


def aliased(x):
    y = x * 1.0
    z = y
    y[0] = 5.0
    return np.sum(z * x)


def test_hvp_takes_what_grad_takes(framework):
    """grad writes ``h_stack.append(h)`` then ``h = gl.index_update(h, ...)``, a new array: read
    back by hvp as if the user had written it, it was refused ("write h = h.copy() first")."""
    for fn, args, wrt in [(write_rows, [X3], 0), (overwrite_argument, [X3], 0),
                          (rnn_into_matrix, [RNG.normal(size=(3, 2)), RNG.normal(size=(2, 3))],
                           0), (rnn_into_matrix, None, 1)]:
        if args is None:
            args = [RNG.normal(size=(3, 2)), RNG.normal(size=(2, 3))]
        v = RNG.normal(size=np.shape(args[wrt]))
        fw_args = [to_framework(a, framework) for a in args]
        got = gradlab.hvp(fn, wrt)(*fw_args, to_framework(v, framework))
        np.testing.assert_allclose(to_numpy(got),
                                   hvp_reference(fn, [a.copy() for a in args], v, wrt),
                                   rtol=1e-6, atol=1e-8, err_msg=fn.__name__)


def test_hvp_still_refuses_the_users_aliasing():
    with pytest.raises(GradlabSyntaxError) as by_grad:
        gradlab.grad(aliased)
    with pytest.raises(GradlabSyntaxError) as by_hvp:
        gradlab.hvp(aliased)
    assert str(by_hvp.value) == str(by_grad.value)
    assert "y[0] = 5.0" in str(by_hvp.value)


# --- 8: containers of another framework's tensors --------------------------------------------------
def from_dict(p):
    return p["a"] * p["b"] + np.sin(p["c"])


def test_jvp_of_a_dict_runs_on_its_tensors_framework(framework):
    p = {k: to_framework(np.array(v), framework) for k, v in (("a", -2.0), ("b", 0.5),
                                                               ("c", 1.0))}
    t = {k: to_framework(np.array(v), framework) for k, v in (("a", 1.0), ("b", 2.0),
                                                               ("c", -1.0))}
    value, derivative = gradlab.jvp(from_dict)(p, t)
    assert float(to_numpy(value)) == pytest.approx(-1.0 + np.sin(1.0), rel=1e-12)
    assert float(to_numpy(derivative)) == pytest.approx(0.5 - 4.0 - np.cos(1.0), rel=1e-12)
    assert type(derivative).__module__.split(".")[0] == type(p["a"]).__module__.split(".")[0]


# --- lists changed by pop -----------------------------------------------------------------------------
def drops_the_last(x):
    xs = [x, x * 2.0]
    xs.pop()
    return np.sum(xs[-1] * x)


def test_jvp_follows_a_pop_on_its_own_line(framework):
    """``xs.pop()`` dropped the value but not its tangent: the jvp read x * 2.0's tangent."""
    x, v = to_framework(X3, framework), to_framework(V3, framework)
    value, derivative = gradlab.jvp(drops_the_last)(x, v)
    assert float(to_numpy(value)) == pytest.approx(float(np.sum(X3 * X3)), rel=1e-12)
    assert float(to_numpy(derivative)) == pytest.approx(float(np.sum(2 * X3 * V3)), rel=1e-12)
    source = gradlab.jvp(drops_the_last).source
    assert "    xs.pop()\n    xs_dot.pop()\n" in source


# --- wrt as a tuple of one ------------------------------------------------------------------------------
def quadratic_form(x, w):
    return np.sum(np.dot(x[0, :], x[1]) * w)


def test_hvp_with_a_tuple_of_one_wrt(framework):
    """wrt=(0,) returns a tuple of one H v: the rows of H v were read as its items (every row
    came back as the first; a vector crashed: iteration over a 0-d array)."""
    x, v = RNG.normal(size=(3, 4)), RNG.normal(size=(3, 4))
    got = gradlab.hvp(quadratic_form, (0,))(to_framework(x, framework), 2.0,
                                            (to_framework(v, framework),))
    assert isinstance(got, tuple) and len(got) == 1
    np.testing.assert_allclose(to_numpy(got[0]), hvp_reference(quadratic_form, [x, 2.0], v),
                               rtol=1e-7, atol=1e-9)


# --- one framework's reading of the user's code, in grad and hvp alike -----------------------------
def spread_times_sum(x):
    return x.std() ** 2 * np.sum(x)


def test_hvp_differentiates_the_gradient_grad_runs(framework):
    """hvp on a framework's inputs is the derivative of the very gradient grad computes for
    them (a method such as ``x.std()`` may mean something else on torch tensors)."""
    x, v = RNG.normal(size=4), RNG.normal(size=4)
    g = gradlab.grad(spread_times_sum)
    eps = 1e-5
    reference = (to_numpy(g(to_framework(x + eps * v, framework)))
                 - to_numpy(g(to_framework(x - eps * v, framework)))) / (2 * eps)
    got = gradlab.hvp(spread_times_sum)(to_framework(x, framework), to_framework(v, framework))
    np.testing.assert_allclose(to_numpy(got), reference, rtol=1e-6, atol=1e-9)
