"""A generated program gradlab got wrong, shrunk by hypothesis (tests/hardening/test_generated.py).

Failure:
    GradlabCrash: AttributeError: 'tuple' object has no attribute 'as_list'
      File "/tmp/fuzzrun/gradlab/tensor/backends/common.py", line 105, in unbroadcast
        target = shape_of(like)
                 ^^^^^^^^^^^^^^
      File "/tmp/fuzzrun/gradlab/tensor/backends/tensorflow_backend.py", line 481, in shape
        return () if s is None else tuple(s.as_list())
                                          ^^^^^^^^^
    AttributeError: 'tuple' object has no attribute 'as_list'
"""
import numpy as np


def f(x, w):
    v1, v2 = np.abs(0.5), x[1, 0]
    return np.sum((v1 * np.ones(4))) + v1


SHAPES = ((3, 1), (3, 1))
WRT = (0,)
SEED = 0
XFAIL = None
