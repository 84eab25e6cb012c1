"""Candidate change points: binary segmentation plus seeded intervals, so short bumps are proposed.

Binary segmentation alone never splits a short bump in a long history: a +3.2 SD regression
over revisions 500-519 of 1000 changes the best single split of [0, 1000) by a z^2 of about 4,
far below the penalty, and the search stops there.  Seeded binary segmentation (Kovacs, Li,
Buhlmann and Munk 2023) looks at the best split of every interval of a deterministic cover:
lengths n, n/2, n/4, ... down to ``2 * min_segment``, each level's intervals overlapping by
half.  An interval about as long as the bump sees it as a clear step (z^2 of about 100 there).
Every interval's best split whose gain exceeds the penalty is a candidate; the strongest of
those closer than ``min_segment`` to each other is kept (the confirmation that follows prunes
the rest).  Each level is one vectorized pass (O(n) memory and time), O(n log n) in all.
"""

from __future__ import annotations

import numpy as np

from abstat.history.segment import Sums, binary_segmentation

DECAY = 0.5  # each level's intervals are this much shorter than the last's
MAX_CELLS = 1 << 22  # gains computed at once per chunk of a level (bounded memory)
AROUND = 64  # then the best split of the intervals of lengths 2 m, 4 m, ... up to this that end or start
#              at a candidate (a short bump's other edge; 0: none) ...
AROUND_GAIN = 2.0  # ... whose gain exceeds this times the penalty (at 0: 0.34 false alarms per 1000 stationary
#                    points, not 0.14: noise bumps next to weak candidates; at 1.5 the normal shape's precision
#                    0.897 -> 0.876; docs/history.md), in a series without serial correlation (else a wander's pieces)


def _level_best(sums: Sums, starts: np.ndarray, length: int, m: int) -> tuple[np.ndarray, np.ndarray]:
    """For intervals [s, s + length): the split with the largest weighted gain and that gain."""
    offsets = np.arange(m, length - m + 1)
    best_k, best_gain = [], []
    rows = max(1, MAX_CELLS // max(offsets.size, 1))
    for lo in range(0, starts.size, rows):
        s = starts[lo : lo + rows]
        total = sums.cum[s + length] - sums.cum[s]
        left = sums.cum[s[:, None] + offsets[None, :]] - sums.cum[s][:, None, :]
        wl, sl = left[..., 0], left[..., 1]
        wr, sr = total[:, None, 0] - wl, total[:, None, 1] - sl
        with np.errstate(divide="ignore", invalid="ignore"):
            diff = sr / wr - sl / wl
            gain = np.nan_to_num(diff * diff / (1.0 / wl + 1.0 / wr), nan=0.0, posinf=0.0)
        j = np.argmax(gain, axis=1)
        best_k.append(s + offsets[j])
        best_gain.append(gain[np.arange(s.size), j])
    return np.concatenate(best_k), np.concatenate(best_gain)


def seeded_intervals(n: int, shortest: int) -> list[tuple[int, np.ndarray]]:
    """(length, starts) per level: lengths n, n/2, ... (at least ``shortest``), overlapping by half."""
    levels = []
    length = float(n)
    while int(length) >= shortest:
        size = int(length)
        step = max(1, size // 2)
        starts = np.arange(0, n - size + 1, step)
        if starts[-1] != n - size:
            starts = np.append(starts, n - size)
        levels.append((size, starts))
        length *= DECAY
    return levels


def propose(sums: Sums, n: int, m: int, penalty: float) -> list[int]:
    """Candidate change points of [0, n): binary segmentation's, and every seeded interval's best
    split gaining more than ``penalty``; of candidates closer than ``m``, the larger gain."""
    found = {k: np.inf for k in binary_segmentation(sums, n, m, penalty)}
    for length, starts in seeded_intervals(n, 2 * m):
        ks, gains = _level_best(sums, starts, length, m)
        over = gains > penalty
        for k, g in zip(ks[over].tolist(), gains[over].tolist(), strict=True):
            found[k] = max(found.get(k, 0.0), g)
    strong = [k for k, g in found.items() if np.isfinite(g) and g > AROUND_GAIN * penalty and not sums.rho_floor]
    for k, g in _around(sums, n, m, penalty, sorted(strong)).items():
        found[k] = max(found.get(k, 0.0), g)
    kept: list[int] = []
    for k in sorted(found, key=lambda key: -found[key]):
        if all(abs(k - other) >= m for other in kept):
            kept.append(k)
    return sorted(kept)


def _around(sums: Sums, n: int, m: int, penalty: float, near: list[int]) -> dict[int, float]:
    """The best split gaining more than ``penalty`` of each interval of lengths ``2 m``, ``4 m``, ... (at
    most ``AROUND``) that ends or starts at a point of ``near``: with one edge of a short bump proposed
    and the other not (no seeded interval held it alone), the interval from the proposed edge sees
    the other as a clean step; without it the proposed edge's gain between its neighbours is small."""
    found: dict[int, float] = {}
    at = np.asarray(near, dtype=np.int64)
    length = 2 * m
    while at.size and length <= min(AROUND, n):
        starts = np.unique(np.concatenate([at[at + length <= n], at[at >= length] - length]))
        if starts.size:
            ks, gains = _level_best(sums, starts, length, m)
            over = gains > penalty
            for k, g in zip(ks[over].tolist(), gains[over].tolist(), strict=True):
                found[k] = max(found.get(k, 0.0), g)
        length *= 2
    return found
