"""attack23 #1: attack22 A11's configuration rule (a column of few integers repeated alike in every variant is a
label) needed each value exactly as often, in blocks or in strict turn: one failed repetition or a randomised
order (good practice) made ``threads`` a metric again, every thread count pooled (+5% at each read
"+5% [-87, +739]", the gate passed).  The rule now weighs how evenly the values come against the most even
measurement there is (values equally likely: the balance chance, checked against scipy's multinomial), and
the order when laid out; a doubtful column stays a measurement with a note naming ``--csv-labels``.  Both
directions: sweeps are found, cycles on a grid of 20 stay measurements."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy import stats

from abstat.readers import peers
from abstat.readers.csvconfig import DOUBT, SURE, balance_chance, column_chance, configuration_columns
from support.cli import run_abstat as abstat


def _sweep(path, order, threads=(1, 2, 4, 8), repetitions=5, failed=()):
    """``variant,threads,time``: +5% at every thread count; ``failed``: (variant, threads, repetition) left out."""
    rng = np.random.default_rng(2)
    rows = []
    for variant, k in (("old", 1.0), ("new", 1.05)):
        cells = [(t, r) for t in threads for r in range(repetitions)]
        if order == "turns":
            cells.sort(key=lambda tr: (tr[1], threads.index(tr[0])))
        rows += [(variant, t, k * rng.normal(10, 0.1) / t) for t, r in cells if (variant, t, r) not in failed]
    if order == "shuffled":
        rows = [rows[i] for i in rng.permutation(len(rows))]
    path.write_text("variant,threads,time\n" + "".join(f"{v},{t},{x:.4f}\n" for v, t, x in rows))
    return path


@pytest.mark.parametrize(
    ("order", "failed"),
    [
        ("blocks", (("new", 8, 4),)),  # attack23's s2.csv: one failed repetition
        ("shuffled", ()),  # attack23's s3.csv: a randomised order
        ("turns", (("new", 2, 2),)),  # in turn, a repetition failed mid-sweep
        ("shuffled", (("old", 4, 0),)),
    ],
)
def test_a_failed_repetition_or_a_random_order_is_still_a_sweep(tmp_path, order, failed):
    _sweep(tmp_path / "s.csv", order, failed=failed)
    sets = peers.read_csv(str(tmp_path / "s.csv"))
    assert sorted({s.labels["threads"] for s in sets}) == ["1", "2", "4", "8"]
    assert {s.labels["metric"] for s in sets} == {"time"}
    result = abstat("report", "s.csv", "--fail-on", "slower", cwd=tmp_path)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "gate: FAIL: 4 of 4 comparison(s) proven slower" in result.stdout + result.stderr
    assert "column 'threads' read as a label" in result.stdout


def test_a_doubtful_column_stays_a_measurement_with_a_note(tmp_path):
    path = _sweep(tmp_path / "d.csv", "shuffled", threads=(1, 2, 4))  # 3 values x 5, shuffled: suggestive only
    rows = [line.split(",") for line in path.read_text().splitlines()[1:]]
    chance = column_chance([[int(r[1]) for r in rows if r[0] == v] for v in ("old", "new")])
    assert chance is not None and SURE < chance <= DOUBT
    sets = peers.read_csv(str(path))
    assert {s.labels["metric"] for s in sets} == {"threads", "time"}
    (note,) = {n for s in sets for n in s.notes}
    assert "column 'threads' compared as a measurement" in note and "--csv-labels threads" in note
    chosen = peers.read_csv(str(path), label_columns=["threads"])
    assert len(chosen) == 6 and not any(s.notes for s in chosen)


def test_cycles_on_a_grid_of_20_stay_measurements():
    """Few distinct values a variant (sd 5..20 on a grid of 20: 1 to 5 values), A/A: the most balanced case."""
    rng = np.random.default_rng(7)
    header = ["variant", "cycles", "time"]
    taken = doubted = 0
    draws = 300
    for draw in range(draws):
        sd, n = (5, 10, 20)[draw % 3], (6, 10, 20, 40)[draw % 4]
        centre = 1000 + rng.uniform(0, 20)
        body = [
            (i, [v, str(int(np.round(rng.normal(centre, sd) / 20) * 20)), f"{rng.normal(1, 0.01):.5f}"])
            for i, v in enumerate(["a"] * n + ["b"] * n)
        ]
        found = configuration_columns(header, body, ["variant"], ["cycles", "time"])
        taken += "cycles" in found.found
        doubted += "cycles" in found.doubtful
    assert taken == 0
    assert doubted <= 0.02 * draws


@pytest.mark.parametrize(("n", "k"), [(4, 2), (7, 2), (12, 3), (9, 3), (16, 4), (20, 4)])
def test_balance_chance_is_the_multinomials(n, k):
    law = stats.multinomial(n, [1 / k] * k)
    for spread in range(4):
        reference = sum(
            law.pmf([*c, n - sum(c)])
            for c in itertools.product(range(n + 1), repeat=k - 1)
            if sum(c) <= n and max(*c, n - sum(c)) - min(*c, n - sum(c)) <= spread
        )
        ours = balance_chance(n, k, spread)
        assert ours == 1.0 or ours == pytest.approx(reference, rel=1e-9, abs=1e-15), (spread, reference)
        assert ours >= reference - 1e-12  # 1 (no evidence) only ever errs towards a measurement
