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


def f(x, w, b):
    v1 = (x) ** 2
    v1 += w
    v1 += w
    v1 = v1 + w
    return np.sum(0.5) + (w * 1.0 if w < 0.0 else 0.5)


SHAPES = ((4,), (), ())
WRT = (0,)
SEED = 0
XFAIL = None
