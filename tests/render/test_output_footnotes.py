"""Footnotes grouped by kind of warning (issue 10): a 4-machine x 2-mode report of
TSC-like data needs at most about 8 notes, each listing the cells it concerns."""

from __future__ import annotations

import os
import shutil

import numpy as np

from abstat.report import api
from abstat.report.notes import KINDS, Footnotes, compact
from support import paths

HERE = str(paths.TESTS)
HCALL = os.path.join(HERE, "data", "report", "hcall")


def _four_machines(tmp_path) -> list[str]:
    """The seed's 3 hosts x 2 modes, plus a fourth host with drift, bimodality and outliers."""
    names = []
    for name in os.listdir(HCALL):
        shutil.copy(os.path.join(HCALL, name), tmp_path / name)
        names.append(name)
    rng = np.random.default_rng(3)
    for mode in ("pv64", "pv32"):
        for variant, centre in (("before", 900), ("after", 860)):
            values = np.concatenate([rng.normal(centre, 8, 20), rng.normal(centre + 120, 8, 20)])  # two modes
            values[::13] *= 1.8  # outliers
            values += np.linspace(0, 30, values.size)  # drift
            name = f"rome-hcall-{mode}-{variant}"
            (tmp_path / name).write_text("\n".join(f"{v:.0f}" for v in np.round(values / 20) * 20))
            names.append(name)
    return sorted(names)


def test_four_machines_two_modes_need_few_footnotes(tmp_path, monkeypatch):
    names = _four_machines(tmp_path)
    monkeypatch.chdir(tmp_path)
    report = api.build(api.load(names, pattern="{host}-hcall-{mode}-{variant}"))
    assert len(report.rows) == 8
    codes = {m["code"] for row in report.rows for c in row.cells.values() for m in c.messages}
    assert len(codes) >= 2, codes  # several kinds of warning occurred ...
    assert len(report.footnotes) <= 8  # ... but one footnote each
    messages = [m for row in report.rows for c in row.cells.values() for m in c.messages]
    assert len({m["message"] for m in messages}) >= 2 * len(report.footnotes)  # the old way: one per message
    ties = [t for t in report.footnotes if t.startswith("heavily tied/quantized data")]
    on_grid = [t for t in ties if t.startswith("heavily tied/quantized data (grid 20): ")]
    assert len(ties) == 2 and len(on_grid) == 1  # the coarse parameter (grid) splits the kind
    assert "rome/pv64 (before, after)" in on_grid[0] and "rome/pv32 (before, after)" in on_grid[0]
    assert "milan/pv64 (before, after)" in (set(ties) - set(on_grid)).pop()
    # each kind says what to do
    for text in report.footnotes:
        head = text.split(":")[0].split(" (")[0]
        kind = next((k for k, (h, _) in KINDS.items() if h.startswith(head)), None)
        if kind is not None and KINDS[kind][1]:
            assert KINDS[kind][1] in text
    text = api.render(report, "text")
    assert text.count("\n[") == len(report.footnotes)


def test_shared_file_sides_are_named_distinctly(tmp_path):
    # one Go benchmark file holding both sides: names were "units.txt[NonExact] vs units.txt[NonExact]"
    path = tmp_path / "units.txt"
    rng = np.random.default_rng(1)
    lines = []
    for variant, centre in (("old", 100.0), ("new", 90.0)):
        # (a sub-benchmark key named like abstat's own labels, e.g. variant=, is read as "/variant")
        lines += [f"BenchmarkNonExact/kernel={variant}-8 1000 {v:.1f} ns/op" for v in rng.normal(centre, 1, 10)]
    path.write_text("\n".join(lines) + "\n")
    sets = api.load([str(path)])
    report = api.build(sets, by="kernel")
    names = {c.name for row in report.rows for c in row.cells.values()}
    assert len(names) == 2, names
    cell = report.comparisons[0]
    assert cell.comparison.baseline != cell.comparison.candidate


def test_footnotes_group_and_compact():
    notes = Footnotes()
    first = notes.add("quantized data (grid 20)", ("milan/pv64", "before"), "do this")
    assert notes.add("quantized data (grid 20)", ("milan/pv64", "after"), "do this") == first
    assert notes.add("quantized data (grid 20)", ("milan/pv32", "after"), "do this") == first
    assert notes.add("other", ("x", "")) == 2
    assert notes.texts[0] == "quantized data (grid 20): milan/pv64 (before, after), milan/pv32 after; do this"
    many = [(f"h{i}", "after") for i in range(12)]
    assert len(compact(many)) == 12
    big = Footnotes()
    for subject in many:
        big.add("k", subject)
    assert big.texts[0].endswith("h7 after and 4 more")
