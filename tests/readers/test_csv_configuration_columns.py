"""attack22 A11: a CSV's column of few integers repeated alike in every variant (``threads``, ``iodepth``) is a
configuration, read as a label: its configurations are compared one by one, never pooled into one sample set."""

from __future__ import annotations

import numpy as np

from abstat.readers import peers
from support.cli import run_abstat as abstat


def _sweep(path, order="blocks"):
    rng = np.random.default_rng(3)
    rows = []
    for t in (1, 2, 4, 8):
        for variant, k in (("old", 1.0), ("new", 1.05)):
            rows += [(t, variant, 10 / t * k * rng.normal(1, 0.01)) for _ in range(10)]
    if order == "turns":  # each run of the sweep in turn: 1 2 4 8 1 2 4 8 ...
        rows = [r for _, r in sorted(enumerate(rows), key=lambda ir: (ir[1][1], ir[0] % 10, ir[1][0]))]
    path.write_text("threads,variant,time\n" + "".join(f"{t},{v},{x:.4f}\n" for t, v, x in rows))
    return path


def test_a_thread_sweep_is_compared_per_thread_count_and_the_gate_fails(tmp_path):
    _sweep(tmp_path / "thr.csv")
    result = abstat("report", "thr.csv", "--metric", "time", "--fail-on", "slower", cwd=tmp_path)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "gate: FAIL: 4 of 4 comparison(s) proven slower" in result.stdout + result.stderr
    assert "column 'threads' read as a label" in result.stdout


def test_blocks_and_turns_and_chosen_columns(tmp_path):
    for order in ("blocks", "turns"):
        sets = peers.read_csv(str(_sweep(tmp_path / f"{order}.csv", order)))
        assert {s.labels["metric"] for s in sets} == {"time"}
        assert sorted((s.labels["threads"], s.labels["variant"], len(s.values)) for s in sets)[:2] == [
            ("1", "new", 10),
            ("1", "old", 10),
        ]
    path = str(tmp_path / "blocks.csv")
    # --csv-labels adds to the text columns (variant was read as numbers before, and refused)
    assert len(peers.read_csv(path, label_columns=["threads"])) == 8
    assert len(peers.read_csv(path, value_columns=["time"])) == 8
    chosen = peers.read_csv(path, value_columns=["time", "threads"])  # named a value: a measurement, pooled
    assert {s.labels["metric"] for s in chosen} == {"time", "threads"} and len(chosen) == 4


def test_measured_integers_stay_measurements(tmp_path):
    rng = np.random.default_rng(1)
    ticks = tmp_path / "ticks.csv"  # a coarse timer: integers, repeated, but not balanced and laid out as a sweep
    ticks.write_text(
        "variant,ms\n" + "".join(f"{v},{int(rng.integers(10, 13))}\n" for v in ("a", "b") for _ in range(20))
    )
    assert {s.labels["metric"] for s in peers.read_csv(str(ticks))} == {"ms"}
    both = tmp_path / "both.csv"  # every numeric column balanced: something must stay measured
    both.write_text("variant,threads,ms\n" + "".join(f"{v},{t},{t}\n" for v in "ab" for t in (1, 1, 2, 2)))
    assert {s.labels["metric"] for s in peers.read_csv(str(both))} == {"threads", "ms"}
