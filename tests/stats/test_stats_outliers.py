"""Outlier classification and exclusion rules."""

from __future__ import annotations

import numpy as np
import pytest

from abstat.stats.outliers import classify, keep_mask


def test_tukey_mild_and_severe_against_numpy_quartiles():
    rng = np.random.default_rng(0)
    x = np.concatenate([rng.normal(100, 1, 200), [104.5, 95.0, 120.0, 130.0]])
    q1, q3 = np.percentile(x, [25, 75])
    iqr = q3 - q1
    severe = np.sum((x < q1 - 3 * iqr) | (x > q3 + 3 * iqr))
    mild = np.sum((x < q1 - 1.5 * iqr) | (x > q3 + 1.5 * iqr)) - severe
    c = classify(x)
    assert (c.mild, c.severe) == (mild, severe)
    assert c.severe >= 3 and c.high >= 3 and c.low >= 1
    kept = x[keep_mask(x, "tukey")]
    assert kept.size == x.size - mild - severe


def test_seed_like_outlier_is_severe():
    # the Coffee Lake pv32 maximum 3816 against a median of 2198
    x = np.array([2176.0, 2198, 2198, 2220, 2198, 2176, 2242, 2198, 3816, 2220, 2198, 2176])
    assert classify(x).severe == 1
    assert 3816 not in x[keep_mask(x, "tukey")]
    assert 3816 not in x[keep_mask(x, "mad")]


def test_mad_rule_modified_z_score():
    x = np.array([10.0, 10.5, 11.0, 9.5, 10.2, 9.8, 10.1, 14.0])
    med = np.median(x)
    mad = np.median(np.abs(x - med))
    expected = np.abs(0.6745 * (x - med) / mad) <= 3.5
    assert list(keep_mask(x, "mad")) == list(expected)


def test_quantized_data_are_not_all_outliers():
    x = np.array([440.0] * 85 + [420.0] * 7 + [460.0] * 6 + [620.0, 700.0])
    c = classify(x)
    assert c.total == 2  # only 620 and 700, not every 420/460
    assert keep_mask(x, "tukey").sum() == 98


def test_none_keeps_everything_and_unknown_rule_fails():
    x = np.arange(10.0)
    assert keep_mask(x, "none").all()
    with pytest.raises(ValueError):
        keep_mask(x, "bogus")
