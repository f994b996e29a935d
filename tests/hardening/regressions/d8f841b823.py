"""A generated program gradlab got wrong, shrunk by hypothesis (tests/hardening/test_generated.py).

Failure:
    GradlabCrash: ValueError: cannot reshape array of size 1 into shape (3,4)
      File "/work/main/.venv/lib/python3.11/site-packages/numpy/_core/fromnumeric.py", line 51, in _wrapfunc
        return _wrapit(obj, method, *args, **kwds)
               ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
      File "/work/main/.venv/lib/python3.11/site-packages/numpy/_core/fromnumeric.py", line 43, in _wrapit
        result = getattr(arr, method)(*args, **kwds)
                 ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
    ValueError: cannot reshape array of size 1 into shape (3,4)
"""
import numpy as np


def f(x):
    v1 = x[2, 1]
    out2 = np.zeros(4)
    for i1 in range(2):
        out2[i1] += v1
        v1, out2, v3 = v1, out2 * 1.0, (v1 + x)
    v4 = v1
    v5 = v1
    return np.sum(v3[1]) + v1


SHAPES = ((3, 4),)
WRT = (0,)
SEED = 0
XFAIL = None
