"""A generated program gradlab got wrong, shrunk by hypothesis (tests/hardening/test_generated.py).

Failure:
    GradlabCrash: TypeError: abs(): argument 'input' (position 1) must be Tensor, not numpy.float64
      File "<gradlab:df_dx:7645>", line 10, in df_dx
        v2 = gl.abs(choice)
             ^^^^^^^^^^^^^^
      File "/tmp/fuzzrun/gradlab/tensor/backends/scalars.py", line 59, in op
        return array_fn(x)
               ^^^^^^^^^^^
    TypeError: abs(): argument 'input' (position 1) must be Tensor, not numpy.float64
"""
import numpy as np


def f(x, w, b):
    v1 = (x[2, 1] + w)
    v2 = np.abs((x[2, 1] * 1.0 if x[2, 1] < 0.0 and np.sum(x) > 0.0 else np.abs(0.5)))
    return np.sum(x[1]) + v2


SHAPES = ((3, 4), (3, 1), (3, 1))
WRT = (0,)
SEED = 0
XFAIL = None
