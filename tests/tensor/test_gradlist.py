"""GradList: the gradient of a Python list, whose + adds item by item."""
from __future__ import annotations

import numpy as np
import pytest

from gradlab.errors import GradlabError
from gradlab.tensor.gradlist import GradList, added


def test_plus_adds_item_by_item_where_a_list_joins() -> None:
    a = GradList([np.ones(2), np.full(3, 2.0)])
    b = [np.ones(2), np.ones(3)]
    total = a + b
    assert type(total) is GradList and len(total) == 2
    np.testing.assert_allclose(total[0], [2.0, 2.0])
    np.testing.assert_allclose(total[1], [3.0, 3.0, 3.0])
    reverse = b + a                       # a plain list on the left: the GradList decides
    assert type(reverse) is GradList and len(reverse) == 2


def test_plus_equals_adds_in_place_into_the_same_gradient() -> None:
    pair = GradList([np.zeros(2), np.zeros(3)])
    same = pair
    pair += GradList([np.ones(2), np.ones(3)])
    assert pair is same and len(pair) == 2
    np.testing.assert_allclose(pair[1], np.ones(3))


def test_nested_pairs_add_at_every_level() -> None:
    grads = GradList([GradList([np.ones(2), 1.0]), GradList([np.ones(2), 2.0])])
    grads[0] += (np.ones(2), 0.5)          # a (W, b) pair's gradient into its entry
    assert len(grads) == 2 and len(grads[0]) == 2
    np.testing.assert_allclose(grads[0][0], [2.0, 2.0])
    assert grads[0][1] == 1.5
    twice = added(grads, grads)
    assert type(twice[1]) is GradList and twice[1][1] == 4.0


def test_a_zero_not_reached_yet_leaves_it_as_it_is() -> None:
    g = GradList([np.ones(2)])
    for total in (0.0 + g, g + 0, g - 0.0):
        assert type(total) is GradList and total is not g
        np.testing.assert_allclose(total[0], np.ones(2))
    np.testing.assert_allclose((-g)[0], -np.ones(2))
    pairs = GradList([GradList([np.ones(2), 1.0])]) - [[np.ones(2), 3.0]]   # nested, by item
    assert type(pairs[0]) is GradList and pairs[0][1] == -2.0
    np.testing.assert_allclose(pairs[0][0], np.zeros(2))


def test_different_lengths_and_repetition_are_errors_not_joins() -> None:
    with pytest.raises(GradlabError, match="2 and 3 items"):
        GradList([1.0, 2.0]) + [1.0, 2.0, 3.0]
    with pytest.raises(GradlabError, match="repeated"):
        GradList([1.0]) * 2
    with pytest.raises(GradlabError, match="repeated"):
        2 * GradList([1.0])
