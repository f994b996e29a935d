"""Programs gradlab must refuse: each raises GradlabSyntaxError (or NoRuleError) naming the
construct and the user's line, and never produces a function."""
from __future__ import annotations

import inspect

import numpy as np
import pytest

import gradlab
from gradlab.errors import GradlabError, GradlabSyntaxError, NoRuleError

COUNTER = 0


def uses_try(x):
    try:
        y = np.sin(x)
    except ValueError:
        y = x
    return np.sum(y)


def uses_yield(x):
    yield np.sum(x)


def uses_global(x):
    global COUNTER
    COUNTER += 1
    return np.sum(x)


def uses_lambda(x):      # (a lambda assigned to a name and called is read: test_known_bugs)
    return np.sum(sorted([x, 2 * x], key=lambda v: v[0])[0])


def uses_nested_def(x):
    if x[0] > 0:      # a def at the top of the body is a subroutine (test_nested.py)
        def inner(v):
            return v * 2
        return np.sum(inner(x))
    return np.sum(x)


def uses_class(x):
    class Box:
        pass
    return np.sum(x)


def uses_list_comprehension_in_while_test(x):
    s = 0.0
    while len([v for v in x if v > s]) > 1:
        s = s + 1.0
    return s * np.sum(x)


def uses_generator_in_np_sum(x):
    return np.sum(v * 2 for v in x)


def uses_with(x):
    with open("/dev/null"):
        return np.sum(x)


def uses_walrus(x):
    if (n := np.sum(x)) > 0:
        return n
    return np.sum(x)


def uses_import(x):
    import math
    return math.fsum([1.0]) * np.sum(x)


def uses_del_of_an_item(x):
    ys = [x, x * 2]
    del ys[0]
    return np.sum(ys[0])


def uses_for_else(x):
    s = 0.0
    for i in range(3):
        s = s + x[i]
    else:
        s = s * 2
    return s


def uses_star_args(*xs):
    return np.sum(xs[0])


def uses_inplace_sort(x):
    y = x * 2
    y.sort()
    return np.sum(y)


def uses_aliased_update(x):
    y = x * 2
    z = y
    y[0] = 0.0
    return np.sum(z)


def uses_attribute_assignment(x):
    x.flags = None
    return np.sum(x)


def returns_nothing(x):
    y = x * 2


def uses_unknown_function(x):
    return np.sum(np.sinc(x))


def uses_and_on_arrays(x):
    y = np.sum(x) and np.sum(x * 2)
    return y


def uses_async_loop(x):
    return np.sum(x)


CASES = [
    (uses_try, "try/except", "try:", GradlabSyntaxError),
    (uses_yield, "yield", "yield np.sum(x)", GradlabSyntaxError),
    (uses_global, "global", "global COUNTER", GradlabSyntaxError),
    (uses_lambda, "lambda", "key=lambda v: v[0]", GradlabSyntaxError),
    (uses_nested_def, "a function defined inside", "def inner(v):", GradlabSyntaxError),
    (uses_class, "a class defined inside", "class Box:", GradlabSyntaxError),
    (uses_list_comprehension_in_while_test, "a list comprehension in a while condition",
     "while len([v for v in x if v > s]) > 1:", GradlabSyntaxError),
    (uses_generator_in_np_sum, "write a list comprehension [...] here instead",
     "np.sum(v * 2 for v in x)", GradlabSyntaxError),
    (uses_with, "with-blocks", 'with open("/dev/null"):', GradlabSyntaxError),
    (uses_walrus, "walrus", "if (n := np.sum(x)) > 0:", GradlabSyntaxError),
    (uses_import, "import inside the function", "import math", GradlabSyntaxError),
    (uses_del_of_an_item, "del of an item", "del ys[0]", GradlabSyntaxError),
    (uses_for_else, "for...else", "for i in range(3):", GradlabSyntaxError),
    (uses_star_args, "*args", "def uses_star_args(*xs):", GradlabSyntaxError),
    (uses_inplace_sort, "in-place update", "y.sort()", GradlabSyntaxError),
    (uses_aliased_update, "refers to the same array", "y[0] = 0.0", GradlabSyntaxError),
    (uses_attribute_assignment, "attributes", "x.flags = None", GradlabSyntaxError),
    (returns_nothing, "returns nothing", "def returns_nothing(x):", GradlabSyntaxError),
    (uses_unknown_function, "no derivative rule for np.sinc", "np.sinc(x)", NoRuleError),
    (uses_and_on_arrays, "`and`/`or`", "np.sum(x) and", GradlabSyntaxError),
]


@pytest.mark.parametrize("fn, construct, line, kind", CASES, ids=[c[0].__name__ for c in CASES])
def test_refused_with_construct_and_line(fn, construct, line, kind):
    with pytest.raises(kind) as info:
        gradlab.grad(fn)
    message = str(info.value)
    assert construct in message
    assert line in message
    if isinstance(info.value, GradlabSyntaxError):
        lines, first = inspect.getsourcelines(fn)
        expected = first + next(i for i, text in enumerate(lines) if line in text)
        assert info.value.lineno == expected
        assert info.value.filename.endswith("test_errors.py")


def test_no_source():
    fn = eval("lambda x: x")
    with pytest.raises(GradlabError, match="lambda"):
        gradlab.grad(fn)
    namespace: dict = {}
    exec("def made(x):\n    return x * 2\n", namespace)
    with pytest.raises(GradlabError, match="cannot read the source"):
        gradlab.grad(namespace["made"])


def test_not_a_python_function():
    with pytest.raises(GradlabError, match="Python functions written in Python"):
        gradlab.grad(np.sin)


def test_bad_wrt():
    def f(x, y):
        return np.sum(x * y)
    with pytest.raises(GradlabError, match="not a parameter"):
        gradlab.grad(f, wrt="z")
    with pytest.raises(GradlabError, match="has 2 parameters"):
        gradlab.grad(f, wrt=5)


def test_non_scalar_output_needs_a_seed():
    def f(x):
        return x * 2.0
    df = gradlab.grad(f)
    with pytest.raises(GradlabError, match="seed="):
        df(np.ones(3))
    np.testing.assert_allclose(df(np.ones(3), seed=np.arange(3.0)), 2.0 * np.arange(3.0))


def unbinds_a_name(x):
    y = x * 2
    c = 3
    del c, y
    return np.sum(x ** 2)


def test_del_of_a_name_is_not_refused():
    """``del name`` changes no value (tracing tools never see it); only ``del xs[i]`` is refused."""
    np.testing.assert_allclose(gradlab.grad(unbinds_a_name)(np.array([1.0, 2.0])), [2.0, 4.0])
