"""A generated program gradlab got wrong, shrunk by hypothesis (tests/hardening/test_generated.py).

Failure:
    WrongGradient: 
    Not equal to tolerance rtol=1e-09, atol=1e-09
    forward value on torch
    Mismatched elements: 1 / 1 (100%)
    Max absolute difference among violations: 0.31072513
    Max relative difference among violations: 0.5
     ACTUAL: array(-0.310725)
     DESIRED: array(-0.62145)
"""
import numpy as np
import scipy.special


def h1(a, c, depth):
    if depth == 0:
        return (a[1] + a)
    v1 = c
    v2 = a[1]
    return h1(np.sin(a) * 0.5 + a * 0.3, c, depth - 1)


def h2(a):
    v3 = (a[2, 1] + a)
    v3 += (a[2, 1] + a[2, 1])
    v3 = v3 + a[2, 1]
    if a[2, 1] > 0.0 and np.sum(a[1]) > 0.0:
        return np.sum(a[2, 1])
    else:
        return np.mean(a[2, 1])


def f(x):
    v4 = x[1]
    if v4 > 0.0 and np.sum(x) > 0.0:
        return np.sum(v4)
    else:
        return np.mean(((x * np.ones((3, 1)))).max(axis=0))


SHAPES = ((4,),)
WRT = (0,)
SEED = 0
XFAIL = None
