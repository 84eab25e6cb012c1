"""``abstat noise`` on runs of several samples on a grid sizes real changes of the values (issue 34).

A run's value is its spread median, which a real change smaller than a grid step moves by less (0.70-0.96x
on a 20-cycle grid with latent sd 10): noise promised 80% power for changes that compare reached less
often.  Checked against compare itself on fresh runs of the same population (seeded)."""

from __future__ import annotations

import numpy as np

from abstat import compare
from abstat.noise import analyse_metric
from abstat.noise.analysis import RunValue
from abstat.stats.nested import run_centres


def grid(latent: np.ndarray) -> np.ndarray:
    return 20.0 * np.rint(latent / 20.0)


def draw(rng: np.random.Generator, runs: int, factor: float = 1.0) -> list[np.ndarray]:
    return [grid((440.0 + rng.normal(0.0, 4.0) + rng.normal(0.0, 10.0, 49)) * factor) for _ in range(runs)]


def test_noise_on_grid_runs_sizes_real_changes_that_compare_detects_80_percent_of_the_time() -> None:
    rng = np.random.default_rng(34)
    pilot = {"a": draw(rng, 20), "b": draw(rng, 20)}
    every = pilot["a"] + pilot["b"]
    centres = run_centres(every, "median")
    runs = [RunValue("ab"[i // 20], 1, None, float(c), 49) for i, c in enumerate(centres)]
    order = [runs[i // 2 + 20 * (i % 2)] for i in range(40)]  # interleaved, as abstat noise runs them
    plain = analyse_metric("cycles", None, order, variants=("a", "b"))
    real = analyse_metric("cycles", None, order, variants=("a", "b"), samples=np.concatenate(every))
    assert not plain.real_changes and real.real_changes
    assert any("real changes of the values" in note for note in real.notes)
    assert real.detectable_pct is not None and plain.detectable_pct is not None
    # the spread medians move by less than a real change: a larger real change is needed
    assert real.detectable_pct > 1.05 * plain.detectable_pct
    needed = real.samples_needed["2%"]
    assert needed is not None and needed >= (plain.samples_needed["2%"] or 0)
    assert "real changes of the values" in real.verdict()
    # compare on fresh runs (200 seeded experiments a change; Monte Carlo sd 2.8 points at 80%): 80% +- 10
    # points at the real detectable change; well short of it at the change of the spread medians (before)
    for pct, low, high in ((real.detectable_pct, 0.7, 0.9), (plain.detectable_pct, 0.0, 0.7)):
        check = np.random.default_rng(341)
        hits = sum(bool(compare(draw(check, 20), draw(check, 20, 1.0 + pct / 100.0)).significant) for _ in range(200))
        assert low < hits / 200 < high, (pct, hits)
