"""The columnar CSV path of ``history --input`` (history.columns, history.columnar) against the sets'
path (files.read_history_csv, series.build_series) on random small CSVs: the same series, points,
samples, runs, times, first-seen order, detector input and revision order; and every file the
columnar reader does not take is one the sets' path refuses or reads otherwise."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from abstat.errors import InputError, UsageError
from abstat.history.centres import from_points
from abstat.history.columnar import grouped
from abstat.history.columns import looks_csv, read_columns
from abstat.history.files import read_history_csv
from abstat.history.series import POSITION_LABELS, build_series, order_revisions
from abstat.readers.peers import detect_format

RESERVED = POSITION_LABELS | {"metric"}


def _random_csv(rng: np.random.Generator) -> str:
    """A CSV with repeated revisions (in and out of order), times present, missing and differing for one
    revision, label columns, one to three metrics with empty cells, rows without a revision, comments."""
    delimiter = [",", ";", "\t"][rng.integers(3)]
    labels = ["host", "mode"][: rng.integers(3)]
    metrics = ["ns", "cycles", "rss"][: rng.integers(1, 4)]
    header = ["rev", "commit_time", *labels, *metrics]
    rng.shuffle(header)
    lines = [delimiter.join(header)]
    revisions = int(rng.integers(1, 25))
    for _ in range(int(rng.integers(1, 80))):
        rev = int(rng.integers(revisions))
        cells = {
            "rev": "" if rng.random() < 0.05 else f"r{rev:03d}",
            "commit_time": ["", str(1000 + rev), str(1000 + rev + int(rng.integers(2))), f"{1000.0 + rev}"][
                rng.choice(4, p=[0.1, 0.6, 0.2, 0.1])
            ],
            "host": str(rng.choice(["a", "b"])),
            "mode": str(rng.choice(["x", "y", "z"])),
        }
        for metric in metrics:
            cells[metric] = "" if rng.random() < 0.1 else f"{rng.normal(100, 5):.{rng.integers(0, 4)}f}"
        lines.append(delimiter.join(cells[h] for h in header))
        if rng.random() < 0.03:
            lines.append(["", "# a comment", "   "][rng.integers(3)])
    return ["\n", "\r\n"][rng.integers(2)].join(lines) + "\n" * int(rng.integers(2))


def _sets_path(text: str, metrics=None, label_columns=None):
    sets, notes = read_history_csv("f.csv", text, metrics=metrics, label_columns=label_columns, rev_label="rev")
    series, skipped = build_series(sets, rev_label="rev")
    assert skipped == 0
    return series, notes


def _columnar_path(text: str, metrics=None, label_columns=None):
    table = read_columns(text, metrics=metrics, label_columns=label_columns, rev_label="rev", reserved=RESERVED)
    assert table is not None
    series, missing = grouped(table)
    return series, [f"f.csv: {missing} empty cell(s) left out"] if missing else []


def _same(expected, found) -> None:
    assert [(s.labels, s.metric, s.unit) for s in found] == [(s.labels, s.metric, s.unit) for s in expected]
    for old, new in zip(expected, found, strict=True):
        assert [dataclasses.asdict(p) for p in new.points] == [dataclasses.asdict(p) for p in old.points]
        assert new.revisions() == [p.rev for p in old.points]
        assert new.samples() == sum(len(p.values) for p in old.points)
        before, after = from_points(old.points), new.points.measured()
        assert before is not None
        for name in ("values", "units", "averaged", "ends"):
            assert np.array_equal(getattr(before, name), getattr(after, name)), name


@pytest.mark.parametrize("seed", range(60))
def test_columnar_path_groups_as_the_sets_path(seed: int) -> None:
    rng = np.random.default_rng(seed)
    text = _random_csv(rng)
    header = text.splitlines()[0]
    metrics = None if seed % 3 else [m for m in ("cycles", "ns") if m in header] or None
    expected, notes = _sets_path(text, metrics)
    found, found_notes = _columnar_path(text, metrics)
    assert found_notes == notes
    _same(expected, found)
    order_revisions(expected, None)
    order_revisions(found, None)
    _same(expected, found)


def test_a_revision_at_two_times_makes_runs_in_both_paths() -> None:
    """The sets' key holds the time: r1 at two times is two sets, so two runs; r2 one run of two."""
    text = "rev,commit_time,ns\nr1,5,1\nr2,6,2\nr1,7,3\nr2,6,4\nr1,5,5\n"
    found, _ = _columnar_path(text)
    points = list(found[0].points)
    assert (points[0].rev, points[0].runs, points[0].values, points[0].commit_time) == (
        "r1",
        [[1.0, 5.0], [3.0]],
        [1.0, 5.0, 3.0],
        5.0,
    )
    assert (points[1].rev, points[1].runs, points[1].values) == ("r2", [], [2.0, 4.0])
    _same(_sets_path(text)[0], found)


@pytest.mark.parametrize(
    "text",
    [
        "rev,commit_time,ns\nr1,1,1\nr2,2\n",  # a short row
        "rev,commit_time,ns,host\nr1,1,1,a\nr2,2,1,b,c\n",  # a long one
        "rev,commit_time,ns\nr1,1,1\nr2,yesterday,2\n",  # no time
        "rev,commit_time,ns\nr1,inf,1\nr2,2,2\n",
        "rev,commit_time,ns\nr1,1,nan\nr2,2,2\n",
        "rev,rev,ns\nr1,1,1\n",
        "rev,commit_time,ns\n",
        "",
        'rev,commit_time,ns\nr1,1,"1\nr2,2,2\n',
        "host,ns\na,1\n",
        "rev,commit_time,host\nr1,1,a\n",
    ],
)
def test_bad_files_are_left_to_the_sets_path_which_names_the_error(text: str) -> None:
    for metrics in (None, ["ns"]):
        assert read_columns(text, metrics=metrics, label_columns=None, rev_label="rev", reserved=RESERVED) is None
    with pytest.raises((InputError, UsageError)):
        read_history_csv("f.csv", text, metrics=None, label_columns=None, rev_label="rev")


@pytest.mark.parametrize(
    "text",
    [
        'rev,commit_time,ns\nr1,1,"1"\n',  # quotes: csv's to read
        "rev,commit_time,ns\nr1,-0,1\nr2,0,2\n",  # -0.0 and 0.0: two sets' keys
        "rev,commit_time,ns,metric\nr1,1,1,a\n",  # a label named as the metric or a position
        "rev,commit_time,ns,role\nr1,1,1,a\n",
        "rev,commit_time,ns\nr1,1,1\x0br2,2,2\n",  # a line break of splitlines' own
    ],
)
def test_files_the_columnar_reader_leaves_to_the_sets_path(text: str) -> None:
    assert read_columns(text, metrics=None, label_columns=None, rev_label="rev", reserved=RESERVED) is None
    assert _sets_path(text)[0]


def test_numbers_the_c_reader_refuses_are_read_by_float() -> None:
    text = "rev,commit_time,ns\nr1,1,1_000.5\nr2,2,\u0661\u0662\nr3,3, 7 \n"
    found, _ = _columnar_path(text)
    assert [p.values for p in found[0].points] == [[1000.5], [12.0], [7.0]]
    _same(_sets_path(text)[0], found)


@pytest.mark.parametrize(
    "text",
    [
        "rev,ns\n" + "".join(f"r{i},{i}\n" for i in range(70000)),
        "rev,ns\n" + "".join(f"r{i},{i}\n" for i in range(70000)) + "BenchmarkX 10 5 ns/op\n",
        "# c\n\n" + "rev;ns\n" + "".join(f"r{i};{i}\n" for i in range(70000)),
        "rev,ns\n" + "1,2\n" * 70000 + "rev,ns,more\n",
        '{"a": 1}' + " " * 70000 + "\n1,2\n",
        "a\n" + "b\n" * 70000,
    ],
)
def test_looks_csv_is_detect_format(text: str) -> None:
    assert looks_csv("f.csv", text) == detect_format("f.csv", text)


def test_standard_input_left_to_the_sets_path_is_read_once(tmp_path) -> None:
    """A CSV the columnar reader leaves (quoted cells) given as ``--input -``: the sets' path reads the text
    already read, not standard input a second time (which held nothing then: "not a CSV")."""
    import json

    from support.cli import run_abstat

    rows = "".join(f'"r{i:02d}",{10 + (i >= 12) * 5 + k}\n' for i in range(24) for k in range(3))
    text = "rev,ns\n" + rows
    assert read_columns(text, metrics=None, label_columns=None, rev_label="rev", reserved=set()) is None
    (tmp_path / "h.csv").write_text(text)
    piped = run_abstat("history", "--input", "-", "--format", "json", stdin=text, cwd=tmp_path)
    named = run_abstat("history", "--input", "h.csv", "--format", "json", cwd=tmp_path)
    assert piped.returncode == named.returncode == 0, piped.stderr
    series = json.loads(piped.stdout)["series"][0]
    assert [p["rev"] for p in series["points"]] == [f"r{i:02d}" for i in range(24)]
    assert series["points"] == json.loads(named.stdout)["series"][0]["points"]
