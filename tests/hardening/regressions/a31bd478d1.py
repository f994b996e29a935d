"""A generated program gradlab got wrong, shrunk by hypothesis (tests/hardening/test_generated.py).

Failure:
    GradlabCrash: TypeError: zeros_like(): argument 'input' (position 1) must be Tensor, not numpy.float64
      File "/tmp/fuzzrun/gradlab/tensor/backends/adjoint_helpers.py", line 125, in zeros_like_any
        return native_zeros_like(x) if dtype is None else native_zeros_like(x, dtype)
               ^^^^^^^^^^^^^^^^^^^^
      File "/tmp/fuzzrun/gradlab/tensor/backends/torch_backend.py", line 427, in zeros_like
        return torch.zeros_like(x, dtype=native_dtype(dtype))
               ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
    TypeError: zeros_like(): argument 'input' (position 1) must be Tensor, not numpy.float64
"""
import numpy as np


def h1(a, scale=1.5):
    v1 = scale
    v2 = scale
    return np.sin(scale), (scale * 1.0 if scale > 0.0 else scale * 1.0)


def h2(a):
    v3 = a
    v4 = a
    return (a * np.ones(4))


def f(x, w, b):
    v5 = w
    v6 = x
    v7, v8 = h1(x)
    v9 = w
    return np.sum(x) + w


SHAPES = ((4,), (), ())
WRT = (0,)
SEED = 0
XFAIL = None
