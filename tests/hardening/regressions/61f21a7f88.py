"""A generated program gradlab got wrong, shrunk by hypothesis (tests/hardening/test_generated.py).

Failure:
    GradlabCrash: TypeError: sum() got an unexpected keyword argument 'axis'
      File "/work/main/.venv/lib/python3.11/site-packages/numpy/_core/fromnumeric.py", line 2425, in sum
        return _wrapreduction(
               ^^^^^^^^^^^^^^^
      File "/work/main/.venv/lib/python3.11/site-packages/numpy/_core/fromnumeric.py", line 81, in _wrapreduction
        return reduction(axis=axis, out=out, **passkwargs)
               ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
    TypeError: sum() got an unexpected keyword argument 'axis'
"""
import numpy as np


def h1(a, depth):
    if depth == 0:
        return a * 1.0
    return h1(np.sin(a) * 0.5 + a * 0.3, depth - 1)


def h2(a):
    return (a * np.ones((3, 1)))


def f(x):
    if np.sum(h2(0.5)) > 0.0:
        v1 = x
    else:
        v2 = x
    v3 = x
    return np.sum((x * np.ones(4)))


SHAPES = ((),)
WRT = (0,)
SEED = 0
XFAIL = None
