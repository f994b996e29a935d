"""A generated program gradlab got wrong, shrunk by hypothesis (tests/hardening/test_generated.py).

Failure:
    GradlabCrash: TypeError: sum(): argument 'input' (position 1) must be Tensor, not float
      File "<gradlab:df_dx:5359>", line 16, in df_dx
        f = gl.sum(choice)
            ^^^^^^^^^^^^^^
      File "/tmp/fuzzrun/gradlab/tensor/backends/torch_backend.py", line 115, in sum
        return torch.sum(x, None, keepdim=True) if keepdims else torch.sum(x)
                                                                 ^^^^^^^^^^^^
    TypeError: sum(): argument 'input' (position 1) must be Tensor, not float
"""
import numpy as np


def f(x, w):
    v1 = (w * np.ones(4))
    v2, v1, v3 = (x + (x + v1)), v1 * 1.0, x
    return np.sum((x * 1.0 if np.sum(v1[1]) > 0.0 else 0.5))


SHAPES = ((), (3, 1))
WRT = (0,)
SEED = 0
XFAIL = None
