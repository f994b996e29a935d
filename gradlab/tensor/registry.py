"""Loading backends by name, lazily, and binding creation functions to a device."""
from __future__ import annotations

import importlib
import types
from typing import Any

from ..errors import BackendError
from .detect import FRAMEWORKS, PYTHON

_MODULES = {
    "numpy": "gradlab.tensor.backends.numpy_backend",
    "python": "gradlab.tensor.backends.python_backend",
    "torch": "gradlab.tensor.backends.torch_backend",
    "tensorflow": "gradlab.tensor.backends.tensorflow_backend",
    "jax": "gradlab.tensor.backends.jax_backend",
}
_ALIASES = {"np": "numpy", "pytorch": "torch", "tf": "tensorflow", "jnp": "jax"}
_PIP = {"torch": "torch", "tensorflow": "tensorflow-cpu (or tensorflow)", "jax": "'jax[cpu]'"}
_loaded: dict[tuple[str, str | None], types.ModuleType] = {}


def canonical_name(name: str) -> str:
    """'np' -> 'numpy', 'tf' -> 'tensorflow'...; unknown names raise a clear error."""
    name = _ALIASES.get(name, name)
    if name not in _MODULES:
        raise BackendError(f"unknown backend {name!r}; choose one of {', '.join(FRAMEWORKS)}")
    return name


def backend(name: str = "numpy", device: Any = None) -> types.ModuleType:
    """The flat namespace of primitives for one framework (``gl`` in generated code).

    ``device`` matters for functions that create tensors (``zeros``, ``arange``...): PyTorch
    puts them on that device. Namespaces are cached, so calling this is cheap.
    """
    name = canonical_name(name)
    key = (name, _device_key(name, device))
    try:
        return _loaded[key]
    except KeyError:
        pass
    try:
        module = importlib.import_module(_MODULES[name])
    except ImportError as e:
        raise BackendError(f"backend {name!r} is not installed ({e}); install it with "
                           f"`pip install {_PIP.get(name, name)}`") from None
    if "broadcast_like" not in vars(module):
        from .backends import adjoint_helpers
        adjoint_helpers.install(vars(module))
    if key[1] is not None:
        module = _rebind_device(module, key[1])
    _loaded[key] = module
    return module


def is_installed(name: str) -> bool:
    """Whether the framework can be imported, without importing it."""
    name = canonical_name(name)
    if name in ("numpy", PYTHON):
        return True
    return importlib.util.find_spec(name) is not None


def installed_frameworks() -> list[str]:
    return [name for name in FRAMEWORKS if is_installed(name)]


def _device_key(name: str, device: Any) -> str | None:
    if device is None or name != "torch":
        return None
    text = str(device)
    if text == "cpu":
        return None
    return "cuda:0" if text == "cuda" else text


def _rebind_device(module: types.ModuleType, device: str) -> types.ModuleType:
    """A copy of ``module`` whose functions see ``DEVICE = device``."""
    copy = types.ModuleType(f"{module.__name__}[{device}]", module.__doc__)
    namespace = copy.__dict__
    namespace.update({k: v for k, v in vars(module).items() if k not in ("__name__", "__doc__")})
    import torch
    namespace["DEVICE"] = torch.device(device)
    for key, value in list(namespace.items()):
        if isinstance(value, types.FunctionType) and value.__globals__ is vars(module):
            fn = types.FunctionType(value.__code__, namespace, value.__name__,
                                    value.__defaults__, value.__closure__)
            fn.__kwdefaults__ = value.__kwdefaults__
            fn.__doc__ = value.__doc__
            namespace[key] = fn
    return copy
