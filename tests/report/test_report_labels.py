"""Labels from file names (--pattern), --label/--where parsing, p-value adjustment."""

from __future__ import annotations

from unittest import mock

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from abstat.errors import InputError, UsageError
from abstat.readers.pattern import compile_pattern
from abstat.report.adjust import adjust_p_values
from abstat.report.inputs import parse_label_args, parse_where_args


def test_pattern_on_seed_file_names():
    pattern = compile_pattern("{host}-hcall-{mode}-{variant}")
    assert pattern.labels("data/milan-hcall-pv64-before") == {"host": "milan", "mode": "pv64", "variant": "before"}
    assert pattern.labels("skx-hcall-pv32-after.txt") == {"host": "skx", "mode": "pv32", "variant": "after"}
    # a value may hold the separator when the literal text pins it down
    assert pattern.labels("cfl-r-hcall-pv64-after-v2")["host"] == "cfl-r"


def test_pattern_mismatch_names_the_file():
    pattern = compile_pattern("{host}-hcall-{mode}-{variant}")
    with pytest.raises(InputError) as err:
        pattern.labels("runs/milan-pv64-before")
    assert str(err.value).startswith("runs/milan-pv64-before: ")
    assert "{host}-hcall-{mode}-{variant}" in str(err.value)


def test_pattern_with_directories():
    pattern = compile_pattern("{host}/{variant}.txt")
    assert pattern.labels("/x/results/milan/before.txt") == {"host": "milan", "variant": "before"}


@pytest.mark.parametrize("text", ["", "plain", "{a}-{a}", "{a", "{a b}", "x}{y}"])
def test_bad_patterns(text):
    with pytest.raises(UsageError):
        compile_pattern(text)


def test_label_and_where_arguments():
    assert parse_label_args(["kernel=6.1", "note=a=b"], "--label") == {"kernel": "6.1", "note": "a=b"}
    assert parse_where_args(["host=milan", "host=naples,skx", "mode=pv64"]) == {
        "host": {"milan", "naples", "skx"},
        "mode": {"pv64"},
    }
    with pytest.raises(UsageError):
        parse_label_args(["kernel"], "--label")
    with pytest.raises(UsageError):
        parse_where_args(["=x"])


p_lists = st.lists(st.floats(min_value=0.0, max_value=1.0), min_size=1, max_size=30)


@settings(max_examples=200, deadline=None)
@given(p_lists)
def test_holm_and_bh_match_statsmodels(p_values):
    from statsmodels.stats.multitest import multipletests

    for method, theirs in (("holm", "holm"), ("bh", "fdr_bh")):
        with mock.patch("gc.collect"):  # multipletests' Holm branch runs a full gc.collect() per call
            expected = multipletests(np.array(p_values), alpha=0.05, method=theirs)[1]
        assert adjust_p_values(p_values, method) == pytest.approx(list(expected), abs=1e-12)
    assert adjust_p_values(p_values, "none") == p_values


def test_a_cannot_judge_nan_counts_as_p_one_and_does_not_poison_the_step_down():
    from statsmodels.stats.multitest import multipletests

    p_values = [float("nan"), 7.8e-31, float("nan"), 0.2, 1e-5]
    as_one = [1.0, 7.8e-31, 1.0, 0.2, 1e-5]
    for method, theirs in (("holm", "holm"), ("bh", "fdr_bh")):
        expected = multipletests(np.array(as_one), alpha=0.05, method=theirs)[1]
        assert adjust_p_values(p_values, method) == pytest.approx(list(expected), abs=1e-12)
