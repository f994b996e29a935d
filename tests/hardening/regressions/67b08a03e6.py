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


def f(x, w):
    out1 = np.zeros((3, 4))
    out1[1] += np.sin(x)
    v2 = x[1]
    v3 = v2
    v4 = w
    v5 = w
    for i1 in range(4):
        v6 = w
        if i1 == 1:
            v2 = np.sin(0.5)
            break
    return np.sum(x) + v2


SHAPES = ((4,), (3, 4))
WRT = (0,)
SEED = 0
XFAIL = None
