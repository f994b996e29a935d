"""Moving values between frameworks, only when asked: gradlab never converts on its own."""
from __future__ import annotations

from typing import Any

from .detect import PYTHON, require_framework
from .registry import canonical_name


def convert(x: Any, backend: str, device: Any = None) -> Any:
    """``x`` as a value of framework ``backend`` (on ``device`` if given).

    Zero-copy through DLPack where both sides support it, a copy through NumPy otherwise.
    Python numbers and lists become arrays of the target framework.
    """
    target = canonical_name(backend)
    source = PYTHON if isinstance(x, (list, tuple)) else require_framework(x)
    if source == target and device is None:
        return x
    if target == "numpy":
        return _to_numpy(x, source)
    if target == "torch":
        import torch
        out = _from_dlpack(torch.from_dlpack, x, source)
        if out is None:
            out = torch.as_tensor(_to_numpy(x, source))
        return out.to(_torch_device(device)) if device is not None else out
    if target == "jax":
        import jax
        import jax.numpy as jnp
        out = _from_dlpack(jnp.from_dlpack, x, source)
        if out is None:
            out = jnp.asarray(_to_numpy(x, source))
        return jax.device_put(out, _jax_device(device)) if device is not None else out
    if target == "tensorflow":
        import tensorflow as tf
        with tf.device(_tf_device(device)):
            return tf.convert_to_tensor(_to_numpy(x, source))
    return _to_numpy(x, source)  # python: a NumPy array is the closest


def _to_numpy(x: Any, source: str) -> Any:
    import numpy as np
    if source == "torch":
        return x.detach().cpu().numpy()
    if source == "tensorflow":
        return x.numpy()
    return np.asarray(x)


def _from_dlpack(fn: Any, x: Any, source: str) -> Any:
    if source in (PYTHON, "tensorflow") or not hasattr(x, "__dlpack__"):
        return None
    try:
        if source == "torch":
            x = x.detach()
        return fn(x)
    except Exception:  # read-only or unaligned buffers, device mismatch: fall back to a copy
        return None


def _torch_device(device: Any) -> Any:
    text = str(device)
    return "cuda:0" if text in ("cuda", "gpu") else text.replace("gpu", "cuda")


def _jax_device(device: Any) -> Any:
    import jax
    if not isinstance(device, str):
        return device
    kind, _, index = device.partition(":")
    platform = "gpu" if kind in ("cuda", "gpu") else kind
    return jax.devices(platform)[int(index or 0)]


def _tf_device(device: Any) -> str:
    if device is None:
        return ""
    kind, _, index = str(device).partition(":")
    return f"/{'GPU' if kind in ('cuda', 'gpu') else 'CPU'}:{index or 0}"
