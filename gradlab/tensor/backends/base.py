"""What a backend is: one :class:`Registration` line and one :class:`Backend` subclass.

A backend is a framework gradlab runs generated code on. Everything gradlab needs to know about
it lives in two places, both named in ``gradlab/tensor/backends/__init__.py``:

* its **registration**, one line: the name users type, its aliases, the modules its values come
  from, where its file is and what to install when it is missing. This is what gradlab knows
  *before* the framework is imported (importing TensorFlow costs seconds; a value can only come
  from a framework that is already imported, so its type's module says which backend it is);
* its **file**: the flat namespace of primitives at module level (the names generated code calls
  as ``gl.tanh``), and a :class:`Backend` subclass instance named ``BACKEND`` that owns devices,
  conversion to and from NumPy, the default seed, the framework's own autodiff (the reference
  gradlab checks itself against) and the namespace's variant for a device.

The methods below are the defaults, right for a framework that computes on the CPU and takes
NumPy arrays; a backend overrides what its framework does differently.
"""
from __future__ import annotations

import sys
import types
from dataclasses import dataclass
from typing import Any, Callable, ClassVar, Hashable

from ...errors import GradlabError


@dataclass(frozen=True)
class Registration:
    """One backend as gradlab knows it before its framework is imported."""

    #: what users call it: ``backend("torch")``, ``%%grad --backend torch``
    name: str
    #: its file: the primitives and ``BACKEND``, an instance of a :class:`Backend` subclass
    module: str
    #: values whose type comes from one of these modules (or a submodule) belong to it
    roots: tuple[str, ...] = ()
    #: other names users may type (``"tf"``)
    aliases: tuple[str, ...] = ()
    #: what to ``pip install`` when it is missing
    install: str = ""
    #: exact types that belong to it, whatever their module (Python's numbers)
    types: tuple[type, ...] = ()
    #: shown to users in lists of frameworks (not the pseudo-backend of plain Python numbers)
    listed: bool = True

    def owns_module(self, module: str) -> bool:
        return any(module == root or module.startswith(root + ".") for root in self.roots)

    def is_installed(self) -> bool:
        """Whether the framework can be imported, without importing it."""
        if not self.roots:
            return True
        import importlib.util
        try:
            return importlib.util.find_spec(self.roots[0]) is not None
        except (ImportError, ValueError):
            return False


class Backend:
    """One framework: its devices, conversions, default seed, own autodiff and namespace."""

    #: the registration's name, and how people write the framework's name
    name: ClassVar[str] = ""
    title: ClassVar[str] = ""
    #: the framework's own autodiff as gradient checks name it (``"torch.autograd"``)
    reference: ClassVar[str] = ""
    #: True where the framework's functions refuse a Python number or make it float32: the
    #: default seed is then made in the inputs' dtype and on their device (see :meth:`one`)
    typed_seed: ClassVar[bool] = True
    #: True where the framework's functions refuse Python numbers: the namespace's unary
    #: functions, reductions and binary functions then answer a Python number with one
    #: (:mod:`.scalars`), while ``TENSOR_ONLY`` keeps the framework's own
    wraps_python_numbers: ClassVar[bool] = False
    #: True where the framework computes the unary float functions of ints and bools in a
    #: dtype other than NumPy's (its default float32), or refuses them (``abs`` of a bool):
    #: the namespace's unary functions then cast such a value first (:mod:`.promote`)
    casts_like_numpy: ClassVar[bool] = False
    #: True where creation functions (``zeros``, ``arange``...) take their device from the
    #: namespace (its global ``DEVICE``): there is one namespace per device
    binds_device: ClassVar[bool] = False
    #: False where NumPy's scalars are this backend's own values; elsewhere a NumPy scalar in
    #: generated code is a constant kept as written (``np.sum(0.5)``), whose gradient is 0.0
    numpy_scalars_are_constants: ClassVar[bool] = True
    #: True where arrays take ``x[i] += v`` (NumPy, torch): gradient code then updates its own
    #: buffers in place (``du[t] += du_t``); elsewhere (JAX, TensorFlow, a backend that does
    #: not say) it runs them as ``du = gl.index_add(du, t, du_t)``
    updates_in_place: ClassVar[bool] = False

    def __init__(self) -> None:
        self._namespaces: dict[Hashable, types.ModuleType] = {}

    def __repr__(self) -> str:
        return f"<gradlab backend {self.name}>"

    # --- detection ------------------------------------------------------------------------------
    def is_traced(self, value: Any) -> bool:
        """True for a symbolic value (inside ``jax.jit`` or ``tf.function``): nothing made from
        it may be kept for later calls."""
        return False

    def updates_functionally(self, args: tuple[Any, ...]) -> bool:
        """Whether generated code called with ``args`` must leave arrays unchanged (see
        :attr:`updates_in_place`; torch also while autograd records the call)."""
        return not self.updates_in_place

    # --- devices ----------------------------------------------------------------------------------
    def devices(self) -> list[str]:
        """The devices present here, CPU first (may import the framework)."""
        return ["cpu"]

    def device_of(self, x: Any) -> Any:
        """Where ``x`` lives: ``"cpu"``, ``"cuda:0"``, or the framework's own device object."""
        return "cpu"

    def device_label(self, device: Any) -> str:
        """A label for people: ``"cpu"`` or ``"cuda:0 · NVIDIA H200"``."""
        return str(device)

    def spell_device(self, device: str) -> str:
        """A device as this framework spells it: ``"gpu:1"`` here, ``"cuda:1"`` for PyTorch."""
        return device.replace("cuda", "gpu")

    def synchronize(self, x: Any) -> None:
        """Wait until the device has computed ``x`` (so timings are honest)."""

    def call_device(self, args: tuple[Any, ...]) -> Any:
        """The device whose namespace a call on ``args`` needs (only where :attr:`binds_device`)."""
        return None

    def device_key(self, device: Any) -> Hashable | None:
        """The cache key of ``device``'s namespace; None for the default one."""
        return None

    def native_device(self, key: Hashable) -> Any:
        """What ``DEVICE`` is in the namespace of the device with this key."""
        raise GradlabError(f"{self.title} namespaces do not depend on the device")

    # --- conversion -----------------------------------------------------------------------------
    def to_numpy(self, x: Any) -> Any:
        import numpy as np
        return np.asarray(x)

    def from_numpy(self, array: Any) -> Any:
        """A NumPy array as a value of this framework (on its default device)."""
        raise GradlabError(f"{self.title} cannot take NumPy arrays")

    def to_device(self, x: Any, device: Any) -> Any:
        """``x`` moved to ``device``."""
        return x

    def dlpack_view(self, x: Any) -> Any:
        """``x`` as something another framework's ``from_dlpack`` takes, or None."""
        return x if hasattr(x, "__dlpack__") else None

    def from_dlpack(self, view: Any) -> Any:
        """A value sharing ``view``'s memory, or None where the framework cannot."""
        return None

    def from_value(self, x: Any, source: Backend, device: Any = None) -> Any:
        """``x``, a value of backend ``source``, as a value of this one (on ``device`` if given).

        Zero-copy through DLPack where both sides support it, a copy through NumPy otherwise.
        """
        out = None
        view = source.dlpack_view(x)
        if view is not None:
            try:
                out = self.from_dlpack(view)
            except Exception:  # read-only or unaligned buffers, device mismatch: copy instead
                out = None
        if out is None:
            out = self.from_numpy(source.to_numpy(x))
        return out if device is None else self.to_device(out, device)

    # --- the default seed -----------------------------------------------------------------------
    def one(self, sample: Any) -> Any:
        """1 in the dtype of ``sample`` and on its device: the output's gradient when the caller
        gives none (only asked where :attr:`typed_seed`)."""
        ops = self.namespace()
        return ops.ones((), ops.dtype(sample))

    # --- the framework's own autodiff -----------------------------------------------------------
    def value_and_grad(self, f: Callable[..., Any], args: tuple[Any, ...],
                       indices: tuple[int, ...]) -> tuple[Any, tuple[Any, ...]]:
        """``(f(*args), gradients w.r.t. args[i] for i in indices)`` by the framework's own
        autodiff: the reference gradlab's gradients are checked against."""
        raise GradlabError(f"{self.title} has no autodiff of its own to check against")

    # --- the flat namespace ---------------------------------------------------------------------
    def primitives(self) -> dict[str, Any]:
        """The backend's own names: those of its file and of the files of the backends it
        derives from (the subclass's last), as the namespace starts from them."""
        own: dict[str, Any] = {}
        for module in self.modules():
            own.update(vars(module))
        return own

    def modules(self) -> list[types.ModuleType]:
        """The files of this backend's class and of the backends it derives from, base first."""
        found = [sys.modules[c.__module__] for c in reversed(type(self).__mro__)
                 if issubclass(c, Backend) and c is not Backend]
        return list(dict.fromkeys(found))

    def namespace(self, device: Any = None) -> types.ModuleType:
        """The flat namespace generated code calls as ``gl``, for ``device`` where the backend
        binds creation functions to one (made once per device, then cached)."""
        key = self.device_key(device) if self.binds_device and device is not None else None
        try:
            return self._namespaces[key]
        except KeyError:
            pass
        from .namespace import assemble
        made = assemble(self, None if key is None else self.native_device(key))
        self._namespaces[key] = made
        return made
