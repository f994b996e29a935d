"""A generated program gradlab got wrong, shrunk by hypothesis (tests/hardening/test_generated.py).

Failure:
    GradlabCrash: TypeError: 'float' object is not subscriptable
      File "/tmp/fuzzrun/gradlab/api.py", line 159, in __call__
        value, grads = impl(*args, **kwargs)
                       ^^^^^^^^^^^^^^^^^^^^^
      File "<gradlab:df_dx:13821>", line 89, in df_dx
        dneg_v2_plus_v2 = dneg_v2_plus_v2 + gl.unbroadcast(dout10[1], neg_v2_plus_v2)
                                                           ~~~~~~^^^
    TypeError: 'float' object is not subscriptable
"""
import numpy as np


def f(x):
    v1, v2, v3 = x[1], x[2, 1], x[1]
    v1 = v1 + v2
    for i1 in range(4):
        v2 = v2 + np.sin(v2)
        n2 = 0
        while n2 < 2:
            n2 += 1
            v4 = x
            v5 = v2
            if n2 == 1:
                v6 = v2
                break
            v1, v2 = v1, (v2 / (1.0 + (v2) ** 2))
        v1, v3 = v3, v1
    n3 = 0
    while n3 < 1:
        n3 += 1
        v1, v3 = v3, v1
        v7 = x[2, 1]
        v8 = v2
    out9 = np.zeros(4)
    for i4 in range(2):
        out9[i4] += np.sin(v2)
        out10 = np.zeros(4)
        out10[1] += v2
        out10[1] -= (v2 + v2)
    return np.sum(out10[1:])


SHAPES = ((3, 4),)
WRT = (0,)
SEED = 0
XFAIL = None
