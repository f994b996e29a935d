"""A generated program gradlab got wrong, shrunk by hypothesis (tests/hardening/test_generated.py).

Failure:
    GradlabCrash: TypeError: unsupported operand type(s) for +: 'Tensor' and 'tuple'
      File "/work/main/gradlab/api.py", line 201, in __call__
        value, grads = impl(*args, **with_seed)
                       ^^^^^^^^^^^^^^^^^^^^^^^^
      File "<gradlab:df_dx:3303>", line 15, in df_dx
        total = v4 + max_x_times_ones_2
                ~~~^~~~~~~~~~~~~~~~~~~~
    TypeError: unsupported operand type(s) for +: 'Tensor' and 'tuple'
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
        return np.mean((v4 + ((x * np.ones((3, 1)))).max(axis=0)))


SHAPES = ((4,),)
WRT = (0,)
SEED = 0
XFAIL = None
