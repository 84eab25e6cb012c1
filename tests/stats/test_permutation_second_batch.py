"""A level at which the first batch of draws is already all of them (``draws_for(alpha)`` returns first ==
most, at alpha <= 0.005): the second batch is empty, not every arrangement.  CI found `report -c 99.5` on the
ministat corpus's case random_1_173 (50 against 30 values) ending in an internal error (itertools asked for all
C(80, 30) subsets).  The p-values are those of the implementation before the draws were cached (main at
74e224b), as float.hex."""

from __future__ import annotations

import numpy as np
import pytest

from abstat.stats.permutation import bm_permutation, draws_for

CASES = [  # n1, n2, alpha, shift, the p-value before
    (50, 30, 0.005, 3.0, "0x1.18236d46855cdp-7"),
    (40, 40, 0.004, 2.0, "0x1.8dcdb37c99ae9p-5"),
    (33, 31, 0.005, 1.5, "0x1.072b020c49ba6p-3"),
]


@pytest.mark.parametrize(("n1", "n2", "alpha", "shift", "before"), CASES)
def test_an_empty_second_batch_draws_nothing_and_the_p_value_is_unchanged(n1, n2, alpha, shift, before):
    rng = np.random.default_rng(2)
    for case in CASES:  # each case's draws follow the earlier cases', as they were generated
        x = np.round(rng.normal(100, 5, case[0]))
        y = np.round(rng.normal(100 + case[3], 5, case[1]))
        if case[:4] == (n1, n2, alpha, shift):
            break
    first, most = draws_for(alpha)
    assert first == most
    test = bm_permutation(x, y, alpha, 0)
    assert test.reference.size == first and not test.exact
    assert test.p_value == float.fromhex(before)
