"""Reading a function's source: the function differentiated must be the one Python runs."""
from __future__ import annotations

import functools
import importlib
import os
import sys

import numpy as np
import pytest

import gradlab


def doubled(fn):
    @functools.wraps(fn)
    def wrapper(x):
        return 2 * fn(x)
    return wrapper


@doubled
def wrapped_square(x):
    return np.sum(x ** 2)


def test_a_functools_wraps_decorator_is_refused_not_dropped():
    with pytest.raises(gradlab.GradlabError, match="wrapper made by a decorator"):
        gradlab.grad(wrapped_square)
    np.testing.assert_allclose(gradlab.grad(wrapped_square.__wrapped__)(np.ones(2)), [2.0, 2.0])


def register(fn):      # a decorator that returns the function itself is no wrapper
    return fn


@register
def registered(x):
    return np.sum(x * 3.0)


def test_a_decorator_returning_the_function_itself_is_fine():
    np.testing.assert_allclose(gradlab.grad(registered)(np.ones(2)), [3.0, 3.0])


MODULE = "import numpy as np\n\n\ndef f(x):\n    return np.sum(x * {k})\n\n\ndef g(x):\n" \
         "    return np.sum(x * 5.0)\n"


@pytest.fixture()
def edited_module(tmp_path, monkeypatch):
    """A module imported, then its file edited and saved (the mtime moves on)."""
    path = tmp_path / "edited_after_import.py"
    path.write_text(MODULE.format(k="2.0"))
    monkeypatch.syspath_prepend(str(tmp_path))
    sys.modules.pop("edited_after_import", None)
    module = importlib.import_module("edited_after_import")

    def edit(text: str) -> None:
        path.write_text(text)
        later = os.stat(path).st_mtime + 10
        os.utime(path, (later, later))
    yield module, edit
    sys.modules.pop("edited_after_import", None)


def test_a_file_edited_after_import_is_refused_with_reload(edited_module):
    module, edit = edited_module
    edit(MODULE.format(k="3.0"))
    with pytest.raises(gradlab.GradlabError, match="reload the module|Reload the module"):
        gradlab.grad(module.f)
    np.testing.assert_allclose(gradlab.grad(module.g)(np.ones(2)), [5.0, 5.0])  # unchanged
    importlib.reload(module)
    np.testing.assert_allclose(gradlab.grad(module.f)(np.ones(2)), [3.0, 3.0])


def test_lines_that_moved_are_refused(edited_module):
    module, edit = edited_module
    edit("import numpy as np\n# a comment\n\ndef g(x):\n    return np.sum(x * 5.0)\n\n\n"
         "def f(x):\n    return np.sum(x * 2.0)\n")
    with pytest.raises(gradlab.GradlabError, match="Reload the module"):
        gradlab.grad(module.f, optimized=False)


def make_closure(scale):
    def scaled(x):
        y = np.tanh(x) * scale
        return np.sum(y)
    return scaled


class Model:
    def loss(self, x):
        return np.sum(x * 2.0)


def uses_a_class(x):
    class Box:
        pass
    return np.sum(x)


@pytest.mark.parametrize("fn, args, wrt", [
    (make_closure(2.0), (np.ones(2),), 0),        # free variables
    (Model.loss, (Model(), np.ones(2)), 1),       # a method
])
def test_functions_read_from_unchanged_files_are_accepted(fn, args, wrt):
    gradlab.grad(fn, wrt)(*args)
