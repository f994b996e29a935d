"""A generated program gradlab got wrong, shrunk by hypothesis (tests/hardening/test_generated.py).

Failure:
    WrongGradient: 
    Not equal to tolerance rtol=1e-05, atol=0.00013
    gradient wrt parameter 0 vs finite differences on numpy
    Mismatched elements: 8 / 12 (66.7%)
    First 5 mismatches are at indices:
     [0, 0]: 1.0 (ACTUAL), -0.9999999999987056 (DESIRED)
     [0, 1]: 1.0 (ACTUAL), -0.9999999999987056 (DESIRED)
     [0, 3]: 1.0 (ACTUAL), -0.9999999999987056 (DESIRED)
     [1, 2]: 1.0 (ACTUAL), -0.9999999999987056 (DESIRED)
     [2, 0]: 1.0 (ACTUAL), -0.9999999999998899 (DESIRED)
    Max absolute difference among violations: 14.
    Max relative difference among violations: 2.
     ACTUAL: array([[ 1.,  1., -1.,  1.],
           [-1., -1.,  1., -1.],
           [ 1.,  1.,  1.,  1.]])
     DESIRED: array([[ -1.,  -1.,  -1.,  -1.],
           [ -1.,  -1.,  -1.,  -1.],
           [ -1., -13.,  -1.,  -1.]])
"""
import numpy as np


def f(x, w):
    v1 = x
    v2 = x[2, 1]
    v3 = (x * 1.0 if v2 > 0.0 and np.sum(x[1]) > 0.0 else np.abs(x))
    v1 = v1 + v2
    if v2 > 0.0 and np.sum(x[1]) > 0.0:
        v4 = v2
    else:
        v3, v1 = np.abs(np.abs(v1)), x
    v5 = v2
    return np.sum(v3)


SHAPES = ((3, 4), (3, 4))
WRT = (0,)
SEED = 1
XFAIL = None
