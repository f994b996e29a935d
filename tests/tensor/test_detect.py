"""Which framework a call's values come from (gradlab.tensor.detect)."""
from __future__ import annotations

import numpy as np
import pytest

from gradlab.errors import BackendError
from gradlab.tensor.detect import PYTHON, common_framework
from tests.conftest import to_framework


def test_containers_are_looked_into(framework):
    x = to_framework(np.ones(2), framework)
    assert common_framework([{"a": 1.0, "b": [0.5, (x,)]}]) == framework
    assert common_framework([{"a": 1.0}, (2.0, [3])]) == PYTHON


def test_two_frameworks_in_a_dict_are_refused():
    torch = pytest.importorskip("torch")
    with pytest.raises(BackendError, match="two frameworks"):
        common_framework([{"a": np.ones(2), "b": torch.ones(2)}])
