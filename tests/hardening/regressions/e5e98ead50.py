"""A generated program gradlab got wrong, shrunk by hypothesis (tests/hardening/test_generated.py).

Failure:
    GradlabCrash: InvalidArgumentError: cannot compute AddV2 as input #1(zero-based) was expected to be a double tensor but is a float tensor [Op:AddV2] name: 
      File "/work/main/.venv/lib/python3.11/site-packages/tensorflow/python/util/traceback_utils.py", line 167, in error_handler
        raise e.with_traceback(filtered_tb) from None
      File "/work/main/.venv/lib/python3.11/site-packages/tensorflow/python/framework/ops.py", line 6027, in raise_from_not_ok_status
        raise core._status_to_exception(e) from None  # pylint: disable=protected-access
        ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
    tensorflow.python.framework.errors_impl.InvalidArgumentError: cannot compute AddV2 as input #1(zero-based) was expected to be a double tensor but is a float tensor [Op:AddV2] name:
"""
import numpy as np


def h1(a, depth):
    if depth == 0:
        return a * 1.0
    return h1(np.sin(a) * 0.5 + a * 0.3, depth - 1)


def f(x):
    v1 = 0.5
    for i1 in range(1):
        v1 += (x[2, 1] + np.maximum(v1, v1))
    if v1 > 0.0 and np.sum(x[1]) > 0.0:
        return np.sum(v1)
    else:
        return np.mean(v1)


SHAPES = ((3, 4),)
WRT = (0,)
SEED = 0
XFAIL = None
