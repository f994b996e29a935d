"""A generated program gradlab got wrong, shrunk by hypothesis (tests/hardening/test_generated.py).

Failure:
    WrongGradient: 
    Not equal to tolerance rtol=1e-05, atol=2e-05
    gradient wrt parameter 0 vs finite differences on numpy
    nan location mismatch:
     ACTUAL: array([nan, nan, nan, nan])
     DESIRED: array([1., 2., 1., 1.])
"""
import numpy as np


def f(x):
    v1 = (((x * np.ones((3, 1)))) ** 2).max(axis=0)
    for i1 in range(1):
        v1, v2 = x * 1.0, x[1]
    v3 = x[1]
    return np.sum(v1) + v3


SHAPES = ((4,),)
WRT = (0,)
SEED = 0
XFAIL = None
