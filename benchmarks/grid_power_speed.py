"""CPU of plan/noise's grid power model (issue 42), against a one-vector-at-a-time enumeration in the same run.

``abstat noise`` on few-level data sizes 1%, 2% and 5% with the permutation test's power on grid data
(:mod:`abstat.comparison.grid_permutation`), which needs the exact permutation law of every simulated
data set's pooled counts.  Until issue 42 each pooled vector's law was enumerated on its own (every
configuration as a row, then ``T``, the weights and a sort): 35 s of CPU for noise on 24 runs on 6 levels.

For each pilot this script times, in one process:

1. the anchor: one power call's p-values computed the old way (each pooled vector's configurations as
   rows, ``T`` from them, weights, one vector at a time), and the same call in abstat (fresh model, no
   cache): the ratio, and the largest difference of the p-values (must be ~1e-14: the same law);
2. noise's whole sizing (``abstat.noise.analysis.detectable_change``: the detectable change at the
   pilot's n and the runs needed for 1, 2 and 5%): its CPU seconds and answers.

Target: abstat's power call <= 0.5x the anchor's CPU; noise's sizing a few seconds.  Exit 1 when the
ratio is missed or the p-values differ.

    python benchmarks/grid_power_speed.py
"""

from __future__ import annotations

import math
import sys
import time

import numpy as np

from abstat.comparison.grid_permutation import MAX_CONFIGS, GridPermutationPower, count_configurations, factor_for
from abstat.comparison.grid_permutation import statistic as bm_statistic
from abstat.comparison.sizing import sizing
from abstat.noise.analysis import detectable_change

TARGET = 0.5


def configurations(counts: np.ndarray, m: int) -> np.ndarray:
    """Every ``a`` with ``0 <= a_k <= counts_k``, ``sum(a) = m`` (rows): the pre-issue-42 enumeration."""
    rows = np.zeros((1, 0), dtype=np.int64)
    left = np.array([m], dtype=np.int64)
    capacity_after = np.concatenate((np.cumsum(counts[::-1])[::-1][1:], [0]))
    for k, cap in enumerate(counts):
        lo = np.maximum(0, left - capacity_after[k])
        width = np.maximum(np.minimum(cap, left) - lo + 1, 0)
        parent = np.repeat(np.arange(rows.shape[0]), width)
        value = lo[parent] + np.arange(parent.size) - np.repeat(np.cumsum(width) - width, width)
        rows = np.column_stack((rows[parent], value))
        left = left[parent] - value
    return rows


def anchor_p(ax: np.ndarray, ay: np.ndarray) -> float:
    """One data set's exact mid-p-value, its pooled vector's law enumerated as rows (nan: t reference)."""
    small, other = (ax, ay) if ax.sum() <= ay.sum() else (ay, ax)
    keep = (small + other) > 0
    counts, a = (small + other)[keep], small[keep]
    m = int(a.sum())
    if count_configurations(counts, m) > MAX_CONFIGS:
        return math.nan
    rows = configurations(counts, m)
    t = bm_statistic(rows, counts)
    lf = np.array([math.lgamma(k + 1.0) for k in range(int(counts.max()) + 1)])
    w = np.exp((lf[counts][None, :] - lf[rows] - lf[counts[None, :] - rows]).sum(axis=1))
    w /= w.sum()
    observed = float(bm_statistic(a[None, :], counts)[0])
    beyond = float(w[t > observed * (1 + 1e-9)].sum())
    return beyond + 0.5 * (float(w[t >= observed * (1 - 1e-9)].sum()) - beyond)


def data_sets(power: GridPermutationPower, factor: float, n: int) -> np.ndarray:
    model = power.model
    ux, uy = power._draws(n, n)
    size = model.levels.size
    ix = np.minimum(np.searchsorted(np.cumsum(model.shares), ux), size - 1)
    iy = np.minimum(np.searchsorted(np.cumsum(model.shares_at(factor)), uy), size - 1)
    cx = np.array([np.bincount(r, minlength=size) for r in ix])
    cy = np.array([np.bincount(r, minlength=size) for r in iy])
    return np.unique(np.concatenate((cx, cy), axis=1), axis=0)


def pilots() -> dict[str, tuple[np.ndarray, np.ndarray, int]]:
    rng = np.random.default_rng(20261205)

    def grid(latent: np.ndarray) -> np.ndarray:
        return 20.0 * np.rint(latent / 20.0)

    # tests/history/bisect/test_loop_inputs.py's noise store: 24 runs on 6 levels, a step half-way
    a = [100.0, 100, 101, 101, 100, 101, 200, 200, 201, 201, 202, 202]
    b = [101.0, 102, 102, 100, 102, 102, 201, 202, 202, 200, 200, 201]
    return {
        "6 levels (noise test store), 12 runs": (np.array(a), np.array(b), 12),
        "grid 20, N(440, 7) (3 levels), 30 runs": (grid(rng.normal(440, 7, 30)), grid(rng.normal(440, 7, 30)), 20),
        "grid 20, N(440, 25) (6-7 levels), 20 runs": (grid(rng.normal(440, 25, 20)), grid(rng.normal(440, 25, 20)), 16),
    }


def main() -> int:
    failed = False
    for name, (x, y, n) in pilots().items():
        model = sizing(x, y).grid
        power = GridPermutationPower(model)
        rows = data_sets(power, factor_for(model, 2.0), n)
        size = model.levels.size
        start = time.process_time()
        old = np.array([anchor_p(r[:size], r[size:]) for r in rows])
        anchor = time.process_time() - start
        start = time.process_time()
        new = GridPermutationPower(model).p_values(rows, size)
        ours = time.process_time() - start
        exact = ~np.isnan(old)
        diff = float(np.max(np.abs(old[exact] - new[exact]), initial=0.0))
        start = time.process_time()
        detectable, needed, _ = detectable_change(list(x), list(y), confidence=0.95)
        whole = time.process_time() - start
        ratio = ours / anchor if anchor > 0 else math.nan
        failed |= not (ratio <= TARGET) or diff > 1e-9
        print(f"{name}: {rows.shape[0]} data sets at n {n}, {int(exact.sum())} exact")
        print(f"  one power call: abstat {ours:.2f} s, anchor {anchor:.2f} s, ratio {ratio:.3f} (target <= {TARGET})")
        print(f"  largest p-value difference {diff:.1e}")
        shown = "n/a" if detectable is None else f"{detectable:.3g}%"
        print(f"  noise's sizing: {whole:.2f} s CPU; detectable at {len(x)}/{len(y)}: {shown}; needed {needed}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
