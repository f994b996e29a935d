"""Where a value lives, said two ways: a short device (``"cpu"``, ``"cuda:0"``, a JAX device)
and a label for people (``"cuda:0 · NVIDIA H200"``) shown next to every timing."""
from __future__ import annotations

import functools
from typing import Any

from .detect import framework_of


def device_of(x: Any) -> Any:
    """``"cpu"``, ``"cuda:0"``, ``"gpu:0"`` (TensorFlow) or a JAX device object."""
    fw = framework_of(x)
    if fw == "torch":
        return str(x.device)
    if fw == "tensorflow":
        return _tf_device(getattr(x, "device", "") or "")
    if fw == "jax":
        try:
            devices = x.devices()
        except Exception:  # a tracer inside jax.jit has no device yet
            return "traced"
        return next(iter(devices))
    return "cpu"


def _tf_device(spec: str) -> str:
    # '/job:localhost/replica:0/task:0/device:GPU:0' -> 'gpu:0'
    tail = spec.rpartition("device:")[2]
    if not tail:
        return "cpu"
    kind, _, index = tail.partition(":")
    return "cpu" if kind == "CPU" else f"{kind.lower()}:{index or 0}"


def device_label(x_or_device: Any, framework: str | None = None) -> str:
    """A human label: ``"cpu"`` or ``"cuda:0 · NVIDIA H200"``."""
    fw = framework or framework_of(x_or_device)
    device = x_or_device if fw is None or isinstance(x_or_device, str) else device_of(x_or_device)
    if fw == "jax" and not isinstance(device, str):
        platform = getattr(device, "platform", "cpu")
        if platform == "cpu":
            return "cpu"
        return f"{platform}:{getattr(device, 'id', 0)} · {getattr(device, 'device_kind', '')}"
    text = str(device)
    if text.startswith("cuda"):
        return f"{text} · {_torch_gpu_name(text)}"
    if text.startswith("gpu"):
        return f"{text} · {_tf_gpu_name(text)}"
    return text


@functools.lru_cache(maxsize=None)
def _torch_gpu_name(device: str) -> str:
    import torch
    index = int(device.partition(":")[2] or 0)
    return torch.cuda.get_device_name(index)


@functools.lru_cache(maxsize=None)
def _tf_gpu_name(device: str) -> str:
    import tensorflow as tf
    index = int(device.partition(":")[2] or 0)
    gpus = tf.config.list_physical_devices("GPU")
    if index < len(gpus):
        details = tf.config.experimental.get_device_details(gpus[index])
        return str(details.get("device_name", "GPU"))
    return "GPU"


def available_devices(framework: str) -> list[str]:
    """Devices a framework can run on here, CPU first (imports the framework)."""
    if framework == "torch":
        import torch
        return ["cpu"] + [f"cuda:{i}" for i in range(torch.cuda.device_count())]
    if framework == "jax":
        import jax
        gpus = [d for d in jax.devices() if d.platform != "cpu"] if _jax_has_gpu() else []
        return ["cpu"] + [f"gpu:{d.id}" for d in gpus]
    if framework == "tensorflow":
        import tensorflow as tf
        return ["cpu"] + [f"gpu:{i}" for i, _ in enumerate(tf.config.list_physical_devices("GPU"))]
    return ["cpu"]


def _jax_has_gpu() -> bool:
    import jax
    try:
        return bool(jax.devices("gpu"))
    except RuntimeError:
        return False


def synchronize(x: Any) -> None:
    """Wait until the device has finished computing ``x`` (so timings are honest on GPUs)."""
    stack = [x]
    while stack:
        v = stack.pop()
        if isinstance(v, (list, tuple)):
            stack.extend(v)
            continue
        fw = framework_of(v)
        if fw == "torch" and v.is_cuda:
            import torch
            torch.cuda.synchronize(v.device)
        elif fw == "jax":
            v.block_until_ready()
        elif fw == "tensorflow":
            _ = v.numpy() if hasattr(v, "numpy") else None
