"""Making a backend's flat namespace (``gl`` in generated code) out of its file and the templates.

A namespace is a new module object, made once per backend (and device); nothing is written into
the backend's file or into the template modules. It holds, by precedence:

1. the backend's own names (its file, see :meth:`Backend.primitives`): the framework's functions
   bound directly where their signature is the canonical one, adapters otherwise;
2. the generic formulas of :mod:`.common` the backend does not define (``softmax``, ``sum_to``);
3. the helpers gradient code needs (:mod:`.adjoint_helpers`); where the backend has a faster
   form of its own, the template is there too as ``generic_<name>`` for it to fall back on;
4. the list-aware ``zeros_like`` and ``index_add``, with the backend's own as ``native_<name>``;
5. where the framework refuses Python numbers (:attr:`Backend.wraps_python_numbers`), versions of
   the unary functions, reductions and binary functions that answer a Python number with one;
   the framework's own stay in ``TENSOR_ONLY``; where the framework computes the float
   functions of ints and bools in another dtype than NumPy (:attr:`Backend.casts_like_numpy`),
   unary functions that cast them first (:mod:`.promote`; in the same frame as the number check
   where there is one).

Functions are *bound* to the namespace: a copy of each function with new globals, so that a name
inside it means this namespace's primitive. The backend's functions get the namespace's own dict
as globals (so a torch adapter sees this namespace's ``DEVICE``); templates get their module's
globals plus ``gl``, the namespace before step 5 (inside the namespace, primitives call each
other's tensor versions: no extra frame for a number check on the way). A call through ``gl``
is then one attribute lookup to the function itself, as fast as a module of plain functions.
"""
from __future__ import annotations

import types
from typing import TYPE_CHECKING, Any, Callable

from . import adjoint_helpers, common, promote, scalars

if TYPE_CHECKING:
    from .base import Backend


def assemble(backend: Backend, device: Any = None) -> types.ModuleType:
    """``backend``'s namespace; ``device`` is what its ``DEVICE`` becomes (None: the default)."""
    file = backend.modules()[-1]
    tensor_ns = types.ModuleType(file.__name__ if device is None else f"{file.__name__}[{device}]",
                                 file.__doc__)
    names = tensor_ns.__dict__
    sources = [vars(m) for m in backend.modules()]
    names.update({k: v for k, v in backend.primitives().items()
                  if k not in ("__name__", "__doc__")})
    if device is not None:
        names["DEVICE"] = device
    for key, value in list(names.items()):
        if isinstance(value, types.FunctionType) and any(value.__globals__ is s for s in sources):
            names[key] = bind(value, names)

    constants = {"gl": tensor_ns,
                 "NUMPY_SCALARS_ARE_CONSTANTS": backend.numpy_scalars_are_constants}
    generic = bound_module(common, constants)
    for name, fn in common.GENERIC.items():
        if name not in names:
            names[name] = generic[fn.__name__]
    helpers = bound_module(adjoint_helpers, constants)
    for name, fn in adjoint_helpers.HELPERS.items():
        names["generic_" + name if name in names else name] = helpers[fn.__name__]
    for name, fn in adjoint_helpers.LIST_AWARE.items():
        names["native_" + name] = names[name]
        names[name] = helpers[fn.__name__]

    if backend.casts_like_numpy:
        names.update(promote.integer_division_versions(names, names["native_dtype"]))
    if not backend.wraps_python_numbers:
        if backend.casts_like_numpy:
            names.update(promote.numpy_typed_versions(names))
            names.update(scalars.numpy_axes_versions(names))
        return tensor_ns
    gl = types.ModuleType(tensor_ns.__name__, tensor_ns.__doc__)
    gl.__dict__.update(names)
    wrapped = scalars.python_number_versions(names, backend.casts_like_numpy)
    gl.__dict__.update(wrapped)
    gl.__dict__["TENSOR_ONLY"] = {name: names[name] for name in wrapped}
    return gl


def bound_module(module: types.ModuleType, constants: dict[str, Any]) -> dict[str, Any]:
    """A copy of a template module's globals with ``constants`` added, its functions bound to
    the copy (so that ``gl`` in each of them is this namespace)."""
    names = {**vars(module), **constants}
    for key, value in list(names.items()):
        if isinstance(value, types.FunctionType) and value.__globals__ is vars(module):
            names[key] = bind(value, names)
    return names


def bind(fn: Callable[..., Any], namespace: dict[str, Any]) -> types.FunctionType:
    """A copy of function ``fn`` whose global names are looked up in ``namespace``."""
    assert isinstance(fn, types.FunctionType)
    out = types.FunctionType(fn.__code__, namespace, fn.__name__, fn.__defaults__,
                             fn.__closure__)
    out.__kwdefaults__ = fn.__kwdefaults__
    out.__doc__ = fn.__doc__
    out.__qualname__ = fn.__qualname__
    out.__module__ = fn.__module__
    out.__annotations__ = fn.__annotations__
    out.__dict__.update(fn.__dict__)
    return out
