"""plan's caption says what compare will compute: on a pilot with ties spread over their cells, the tie-spread
Hodges-Lehmann caption (label34's left-over: plan kept the plain one), on an untied pilot the plain one."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from abstat.comparison.model import TIES_SPREAD_LABEL, estimand_label
from support.cli import run_abstat


def _plan(tmp_path: Path, values: np.ndarray, fmt: str) -> str:
    path = tmp_path / "pilot.txt"
    np.savetxt(path, values, fmt=fmt)
    result = run_abstat("plan", str(path), "--detect", "1%")
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_a_grid_pilot_is_captioned_as_compare_spreads_it(tmp_path: Path) -> None:
    grid = np.round(np.random.default_rng(1).normal(440.0, 7.0, 30) / 20.0) * 20.0  # TSC cycles, grid 20
    out = _plan(tmp_path, grid, "%d")
    assert TIES_SPREAD_LABEL.format(of="") in out


def test_an_untied_pilot_keeps_the_plain_caption(tmp_path: Path) -> None:
    untied = np.random.default_rng(2).normal(440.0, 7.0, 30)
    out = _plan(tmp_path, untied, "%.4f")
    plain = estimand_label("hl_ratio", "auto")
    assert plain in out and TIES_SPREAD_LABEL.format(of="") not in out
