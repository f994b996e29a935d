"""A generated program gradlab got wrong, shrunk by hypothesis (tests/hardening/test_generated.py).

Failure:
    GradlabCrash: TypeError: full_like(): argument 'input' (position 1) must be Tensor, not float
      File "/tmp/fuzzrun/gradlab/tensor/backends/adjoint_helpers.py", line 40, in broadcast_like
        return ns["full_like"](x, g)
               ^^^^^^^^^^^^^^^^^^^^^
      File "/tmp/fuzzrun/gradlab/tensor/backends/torch_backend.py", line 435, in full_like
        return torch.full_like(x, fill_value, dtype=native_dtype(dtype))
               ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
    TypeError: full_like(): argument 'input' (position 1) must be Tensor, not float
"""
import numpy as np


def f(x, w):
    v1 = x
    v2 = x
    v3 = (x[2, 1] / np.sqrt(1.0 + (x[2, 1] * 1.0 if x[2, 1] < 0.0 else 0.5) * (x[2, 1] * 1.0 if x[2, 1] < 0.0 else 0.5)))
    if v3 > 0.0 and np.sum(x[1]) > 0.0:
        return np.sum(v3)
    else:
        return np.mean(v3)


SHAPES = ((3, 4), (3, 4))
WRT = (0,)
SEED = 0
XFAIL = None
