"""A generated program gradlab got wrong, shrunk by hypothesis (tests/hardening/test_generated.py).

Failure:
    GradlabCrash: AttributeError: 'tensorflow.python.framework.ops.EagerTensor' object has no attribute 'sum'
      File "<gradlab:df_dx:10885>", line 8, in df_dx
        cond = v4_1.sum() > 0.0
               ^^^^^^^^
      File "/work/main/.venv/lib/python3.11/site-packages/tensorflow/python/framework/tensor.py", line 260, in __getattr__
        self.__getattribute__(name)
    AttributeError: 'tensorflow.python.framework.ops.EagerTensor' object has no attribute 'sum'
"""
import numpy as np


def h1(a, depth):
    if depth == 0:
        return a * 1.0
    v1 = a
    v2 = a
    v3 = a
    return h1(np.sin(a) * 0.5 + a * 0.3, depth - 1)


def f(x):
    v4 = (x * np.ones((3, 4)))
    v5 = x
    v6 = x
    v4 = v4 + x
    v7 = v4 * 1.0
    if (v4).sum() > 0.0:
        return np.sum(x)
    else:
        return np.mean(x)


SHAPES = ((),)
WRT = (0,)
SEED = 0
XFAIL = None
