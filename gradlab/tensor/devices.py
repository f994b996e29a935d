"""Where a value lives, said two ways: a short device (``"cpu"``, ``"cuda:0"``, a JAX device)
and a label for people (``"cuda:0 · NVIDIA H200"``) shown next to every timing.

Each backend object knows its framework's devices; these functions find the object."""
from __future__ import annotations

from typing import Any

from .registry import canonical_name, framework_of, get


def device_of(x: Any) -> Any:
    """``"cpu"``, ``"cuda:0"``, ``"gpu:0"`` (TensorFlow) or a JAX device object."""
    fw = framework_of(x)
    return "cpu" if fw is None else get(fw).device_of(x)


def device_label(x_or_device: Any, framework: str | None = None) -> str:
    """A human label: ``"cpu"`` or ``"cuda:0 · NVIDIA H200"``, for a value or a device of
    ``framework``; a device given without its framework is labelled as it is written."""
    value_of = framework_of(x_or_device)
    fw = framework or value_of
    if fw is None:
        return str(x_or_device)
    backend = get(fw)
    device = backend.device_of(x_or_device) if value_of is not None else x_or_device
    return backend.device_label(device)


def available_devices(framework: str) -> list[str]:
    """Devices a framework can run on here, CPU first (imports the framework)."""
    return get(canonical_name(framework)).devices()


def synchronize(x: Any) -> None:
    """Wait until the device has finished computing ``x`` (so timings are honest on GPUs)."""
    stack = [x]
    while stack:
        v = stack.pop()
        if isinstance(v, (list, tuple)):
            stack.extend(v)
            continue
        fw = framework_of(v)
        if fw is not None:
            get(fw).synchronize(v)
