"""What a report asks of each of its 10^5 revisions x metrics sets, asked at once, against the
per-item answers it replaced: ``readers.sampleset._kept``'s type checks (``set(map(type, ...))``)
against ``from_store_set``'s copy (``str``/``float`` of every label and value); ``cell_centre`` of
one list run (read as it is) against the same run as a tuple and as an array (the general path,
numpy's ``shown_median``); the layout's label values and row order of sets whose labels are other
mappings than ``dict``; the store's block of groups (``store.columns._ranges``) against ranges
concatenated."""

from __future__ import annotations

import random
from types import MappingProxyType

import numpy as np

from abstat.readers.sampleset import SampleSet, _kept, from_store_set
from abstat.report import api
from abstat.comparison.centres import shown_median
from abstat.report.centres import cell_centre
from abstat.render.matrix import plain_table
from abstat.store.columns import _ranges


def _odd_set(rng: random.Random) -> SampleSet:
    key = rng.choice(["rev", 7, "metric"])
    value = rng.choice(["a", 3, 2.5, None])
    runs = [
        rng.choice([[1.0, 2.0], [1, 2.5], (3.0,), np.asarray([4.0, 5.0]), [np.float64(6.0)], [], [True, 1.5]])
        for _ in range(rng.randint(0, 3))
    ]
    return SampleSet(labels={"variant": "a", key: value}, runs=rng.choice([runs, tuple(runs)]))


def test_kept_is_the_copy_and_keeps_what_is_already_str_and_float() -> None:
    rng = random.Random(11)
    for _ in range(2000):
        odd = _odd_set(rng)
        copy = from_store_set(odd)
        lists = [run for run in odd.runs if type(run) is list and all(type(v) is float for v in run)]
        kept = _kept(odd)
        assert kept is odd
        assert kept.labels == copy.labels and all(type(k) is str and type(v) is str for k, v in kept.labels.items())
        assert kept.runs == copy.runs and type(kept.runs) is list
        assert all(type(v) is float for run in kept.runs for v in run)
        assert all(any(run is kept_run for kept_run in kept.runs) for run in lists)  # no copy of a float list


def _outcome(runs: list, center: str, outliers: str) -> str:
    try:
        return repr(cell_centre(runs, center, outliers))
    except Exception as error:  # the same error either way (an empty run)
        return f"{type(error).__name__}: {error}"


def test_cell_centre_of_one_list_run_is_the_general_path() -> None:
    rng = random.Random(12)
    for _ in range(3000):
        n = rng.randint(0, 40)
        kind = rng.randrange(4)
        values = [
            float(rng.randint(-3, 3)) if kind == 0 else rng.choice([0.0, -0.0, 1.5, 1e308, 2.0])
            if kind == 1 else rng.lognormvariate(0, 1) if kind == 2 else rng.gauss(0, 1)
            for _ in range(n)
        ]  # fmt: skip
        for center in ("auto", "median", "mean"):
            for outliers in ("none", "tukey"):
                quick = _outcome([values], center, outliers)
                assert quick == _outcome([tuple(values)], center, outliers)
                assert quick == _outcome([np.asarray(values, dtype=float)], center, outliers)
        if n and center == "auto":
            assert repr(cell_centre([values], "auto", "none")[0]) == repr(shown_median(values))


def test_layout_of_sets_with_other_mappings_than_dict() -> None:
    rng = random.Random(13)
    sets, proxied = [], []
    for index in range(60):
        labels = {"variant": rng.choice(["a", "b"]), "rev": f"r{rng.randint(0, 9)}", "metric": rng.choice("xy")}
        if index % 3 == 0:
            labels["extra"] = "e"
        runs = [[rng.uniform(1, 2) for _ in range(5)]]
        sets.append(SampleSet(labels=dict(labels), runs=runs))
        proxied.append(SampleSet(labels=MappingProxyType(dict(labels)), runs=runs))  # type: ignore[arg-type]
    assert plain_table(api.build(proxied)) == plain_table(api.build(sets))


def test_ranges_are_the_ranges_concatenated() -> None:
    rng = np.random.default_rng(14)
    for _ in range(200):
        first = rng.integers(0, 50, rng.integers(0, 8))
        lengths = rng.integers(0, 5, first.size)
        expected = [
            i for start, size in zip(first.tolist(), lengths.tolist(), strict=True) for i in range(start, start + size)
        ]
        assert _ranges(first, lengths).tolist() == expected
