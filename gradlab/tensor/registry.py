"""Which backends exist, which one a value belongs to, and their objects and namespaces.

The table starts as :data:`gradlab.tensor.backends.REGISTRATIONS`; :func:`register` adds one
more (a plugin, or a test's backend). Nothing here imports a framework: a backend's file (and
with it its framework) is imported the first time its object or namespace is asked for, and a
value is recognized by its type's module, which is imported already when the value exists.
"""
from __future__ import annotations

import importlib
import types
from typing import Any

from ..errors import BackendError
from .backends import REGISTRATIONS, Backend, Registration

#: Plain Python numbers run on this pseudo-backend: ``math`` for scalars, NumPy for the rest.
PYTHON = "python"

_table: dict[str, Registration] = {r.name: r for r in REGISTRATIONS}
_objects: dict[str, Backend] = {}

#: type -> the backend its values belong to (None: not a value gradlab takes); detection is
#: one dictionary lookup on the hot path of every generated gradient call
TYPE_CACHE: dict[type, str | None] = {}


def _reset_type_cache() -> None:
    TYPE_CACHE.clear()
    for r in _table.values():
        TYPE_CACHE.update(dict.fromkeys(r.types, r.name))


_reset_type_cache()

#: The frameworks gradlab ships, in the order they are shown to users (see :func:`frameworks`
#: for the live list, which includes backends registered later).
FRAMEWORKS = tuple(r.name for r in REGISTRATIONS if r.listed)


# --- the table ----------------------------------------------------------------------------------
def register(registration: Registration) -> None:
    """Add a backend (or replace the one of that name)."""
    unregister(registration.name)
    _table[registration.name] = registration
    _reset_type_cache()


def unregister(name: str) -> None:
    """Remove a backend added by :func:`register` (its object and namespaces are forgotten)."""
    if _table.pop(name, None) is not None:
        _objects.pop(name, None)
        _reset_type_cache()


def frameworks() -> list[str]:
    """Every backend users can choose, installed or not, in the order they are shown."""
    return [r.name for r in _table.values() if r.listed]


def installed_frameworks() -> list[str]:
    return [name for name in frameworks() if _table[name].is_installed()]


def is_installed(name: str) -> bool:
    """Whether the framework can be imported, without importing it."""
    return _table[canonical_name(name)].is_installed()


def canonical_name(name: str) -> str:
    """'np' -> 'numpy', 'tf' -> 'tensorflow'...; unknown names raise a clear error."""
    if name in _table:
        return name
    for r in _table.values():
        if name in r.aliases:
            return r.name
    raise BackendError(f"unknown backend {name!r}; choose one of {', '.join(frameworks())}")


# --- objects and namespaces ---------------------------------------------------------------------
def get(name: str) -> Backend:
    """The backend object of ``name`` (imports its file, and so its framework, the first time)."""
    try:
        return _objects[name]
    except KeyError:
        pass
    name = canonical_name(name)
    registration = _table[name]
    try:
        module = importlib.import_module(registration.module)
    except ImportError as e:
        raise BackendError(f"backend {name!r} is not installed ({e}); install it with "
                           f"`pip install {registration.install or name}`") from None
    obj: Backend = module.BACKEND
    _objects[name] = obj
    return obj


def backend(name: str = "numpy", device: Any = None) -> types.ModuleType:
    """The flat namespace of primitives for one framework (``gl`` in generated code).

    ``device`` matters where the backend binds creation functions (``zeros``, ``arange``...) to
    one (PyTorch). Namespaces are cached, so calling this is cheap.
    """
    return get(name).namespace(device)


# --- which backend a value belongs to -----------------------------------------------------------
def framework_of(value: Any) -> str | None:
    """The backend name of ``value`` ('numpy', 'torch', 'tensorflow', 'jax', 'python'...), or
    None for values that are not numeric tensors (strings, lists, None...)."""
    t = type(value)
    try:
        return TYPE_CACHE[t]
    except KeyError:
        pass
    module = t.__module__ or ""
    name = next((r.name for r in _table.values() if r.owns_module(module)), None)
    if name is not None and not hasattr(value, "dtype"):
        name = None  # numpy.random.Generator, torch.Size and friends are not values
    TYPE_CACHE[t] = name
    return name
