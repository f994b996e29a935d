"""A generated program gradlab got wrong, shrunk by hypothesis (tests/hardening/test_generated.py).

Failure:
    GradlabCrash: TypeError: full_like(): argument 'input' (position 1) must be Tensor, not numpy.float64
      File "/tmp/fuzzrun/gradlab/tensor/backends/adjoint_helpers.py", line 42, in broadcast_like
        return ns["full_like"](x, g)
               ^^^^^^^^^^^^^^^^^^^^^
      File "/tmp/fuzzrun/gradlab/tensor/backends/torch_backend.py", line 435, in full_like
        return torch.full_like(x, fill_value, dtype=native_dtype(dtype))
               ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
    TypeError: full_like(): argument 'input' (position 1) must be Tensor, not numpy.float64
"""
import numpy as np


def f(x, w, b):
    v1, v2 = x[2, 1], np.abs(0.5)
    return np.sum(x[1]) + (v2 * 1.0 if v1 > 0.0 else v1 * 1.0)


SHAPES = ((3, 4), (3, 4), (3, 4))
WRT = (0,)
SEED = 0
XFAIL = None
