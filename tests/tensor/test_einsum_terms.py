"""Reading einsum's subscripts: the terms gradlab writes out compute what the frameworks'
reading does, and subscripts it cannot read are refused."""
from __future__ import annotations

import numpy as np
import pytest

from gradlab.errors import GradlabError
from gradlab.tensor.einsum_terms import parse, with_output


@pytest.mark.parametrize("subscripts, shapes", [
    ("ij,jk", [(2, 3), (3, 4)]), ("aB", [(2, 3)]), ("Ba,aC", [(2, 3), (3, 4)]),
    ("...ij,...jk", [(5, 2, 3), (3, 4)]), ("...i,...i->...", [(2, 3), (3,)]),
    ("ii", [(3, 3)]), ("i...->...", [(2, 3, 4)]), ("ji", [(2, 3)])])
def test_subscripts_written_out_give_numpys_result(subscripts, shapes) -> None:
    """The explicit terms gradlab writes out compute what NumPy's reading of the subscripts
    does: the same implicit output, in the same order, and the ellipsis aligned alike."""
    rng = np.random.default_rng(0)
    xs = [rng.normal(size=s) for s in shapes]
    terms = parse(subscripts, [x.ndim for x in xs])
    np.testing.assert_allclose(np.einsum(terms.text(), *xs), np.einsum(subscripts, *xs))


@pytest.mark.parametrize("subscripts, ndims, says", [
    ("ij,jk", [2], "name 2 operands and 1 are given"), ("i.j", [2], "letters"),
    ("ijk", [2], "more axes than"), ("i1", [2], "letters")])
def test_subscripts_gradlab_cannot_read_are_refused(subscripts, ndims, says) -> None:
    with pytest.raises(GradlabError, match=says):
        parse(subscripts, ndims)


@pytest.mark.parametrize("subscripts, written", [
    ("ij,jk", "ij,jk->ik"), ("...j,kj", "...j,kj->...k"), ("ij->", "ij->"), ("ba", "ba->ab"),
    (" i j ", "ij->ij")])
def test_the_output_written_out_keeps_the_ellipsis(subscripts, written) -> None:
    assert with_output(subscripts) == written
