"""Which framework a value belongs to, decided from its type's module — without importing any.

Importing TensorFlow costs seconds; a value can only come from a framework that is already
imported, so the type's ``__module__`` tells us everything (each backend's registration names
its modules, see :mod:`.registry`). Results are cached per type, which makes detection a
dictionary lookup on the hot path of every generated gradient call.
"""
from __future__ import annotations

import types
from typing import Any, Iterable

from ..errors import BackendError, GradlabError
from .registry import FRAMEWORKS, PYTHON, TYPE_CACHE, framework_of, frameworks

__all__ = ["FRAMEWORKS", "PYTHON", "call_recorded", "callable_framework", "common_framework",
           "framework_of", "require_callable_of", "require_framework"]

#: The packages whose callables a framework's autodiff differentiates, and the framework.
_CALLABLE_ROOTS = {"torch": "torch", "jax": "jax", "jaxlib": "jax", "flax": "jax",
                   "equinox": "jax", "tensorflow": "tensorflow", "keras": "tensorflow",
                   "tf_keras": "tensorflow"}


def callable_framework(fn: Any) -> str | None:
    """The framework a callable belongs to (a module or layer instance, a compiled function, a
    framework function), read from its type's or its own module; None for the user's own
    callables and NumPy's."""
    if isinstance(fn, (types.FunctionType, types.BuiltinFunctionType, types.MethodType)):
        return _CALLABLE_ROOTS.get((getattr(fn, "__module__", None) or "").split(".")[0])
    for cls in type(fn).__mro__:
        name = _CALLABLE_ROOTS.get((cls.__module__ or "").split(".")[0])
        if name is not None:
            return name
    return None


def require_framework(value: Any) -> str:
    """Like :func:`framework_of` but raises a clear ``TypeError`` for unsupported values."""
    name = framework_of(value)
    if name is None:
        t = type(value)
        raise BackendError(
            f"gradlab cannot use a value of type {t.__module__}.{t.__qualname__}: "
            f"supported are Python numbers and arrays or tensors of {', '.join(frameworks())}")
    return name


def common_framework(values: Iterable[Any]) -> str:
    """The one framework shared by ``values`` (lists, tuples and dicts' values are looked into).

    Python numbers go along with any framework; two different frameworks are an error, because
    gradlab never converts between frameworks behind the user's back.
    """
    found = PYTHON
    first: Any = None
    stack = list(values)
    while stack:
        v = stack.pop()
        t = type(v)
        if t is list or t is tuple:
            stack.extend(v)
            continue
        if t is dict:
            stack.extend(v.values())
            continue
        name = TYPE_CACHE.get(t) or framework_of(v)
        if name is None or name == PYTHON:
            continue
        if found == PYTHON:
            found, first = name, v
        elif name != found:
            raise BackendError(
                f"values from two frameworks in one call: {_describe(first)} ({found}) and "
                f"{_describe(v)} ({name}); convert one explicitly with gradlab.tensor.convert")
    return found


def _describe(value: Any) -> str:
    t = type(value)
    return f"{t.__module__}.{t.__qualname__}"


def require_callable_of(fn: Any, framework: str, title: str) -> None:
    """A callable of another framework than ``framework`` (whose arrays these are, ``title``
    its name in words) cannot be differentiated by this one's autodiff: refused."""
    other = callable_framework(fn)
    if other is not None and other != framework:
        raise BackendError(
            f"{getattr(fn, '__name__', type(fn).__name__)} belongs to {other}, and these are "
            f"{title} arrays: gradlab differentiates a call it cannot read with the autodiff of "
            f"the call's own framework; pass {other} arrays")


def call_recorded(fn: Any, title: str, *args: Any, **kwargs: Any) -> Any:
    """``fn(*args, **kwargs)`` while ``title``'s autodiff records it: a call gradlab cannot
    read (a callable passed as an argument, a callable object). Code that is not the
    framework's (NumPy's ``np.tanh`` of a tensor that requires grad, of a JAX tracer) fails
    there though it ran on the arrays alone: refused with what it raised, not a crash from
    inside the framework."""
    try:
        return fn(*args, **kwargs)
    except GradlabError:
        raise
    except Exception as e:
        name = getattr(fn, "__name__", type(fn).__name__)
        first = str(e).strip().splitlines()[0] if str(e).strip() else ""
        raise BackendError(
            f"{name} is a call gradlab cannot read (no Python source it transforms), so "
            f"{title}'s autodiff differentiates it; run under it, the call raised "
            f"{type(e).__name__}: {first}. Where its code is not {title}'s (NumPy's, say), "
            f"call a function gradlab can read instead (a def of your own, called by its "
            f"name), or write it with {title}'s functions") from e
