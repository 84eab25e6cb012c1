"""Step 1 of the detector for every revision at once: the numbers of :func:`abstat.history.segment.prepare`
(each revision's samples scaled by a power of two, winsorized, their trimmed mean, its Yuen sum of
squares and degrees of freedom), with numpy over all revisions of one sample count together instead
of a few numpy calls per revision.

The results are the per-revision code's to the bit: the revisions of one count are the rows of one
C-contiguous matrix, and numpy reduces each row of such a matrix as it reduces that row alone (the
same pairwise sums, tested in ``tests/history/test_history_centres.py`` against the per-revision code).
Points this does not take (a sample that is not finite, a revision without samples, a value that is
no number) return None: :func:`abstat.history.segment.prepare` then works revision by revision.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import chain, compress
from operator import attrgetter
from typing import Any

import numpy as np

MAD_SD = 1.482602218505602  # segment._mad_sd's factor
WINSOR = 5.0  # segment._winsorized: samples beyond this many MAD-SDs pulled back


@dataclass
class Measured:
    """Revisions' measurements as arrays: ``values`` in revision order; ``units`` where each unit
    (a sample, or a run whose trimmed mean is one sample) ends in ``values``; ``averaged`` whether a
    unit is a run (a revision of several runs); ``ends`` where each revision's units end."""

    values: np.ndarray
    units: np.ndarray
    averaged: np.ndarray
    ends: np.ndarray

    def __len__(self) -> int:
        return int(self.ends.size)

    @classmethod
    def flat(cls, values: np.ndarray, counts: np.ndarray) -> Measured:
        """Revision ``i``'s samples the next ``counts[i]`` of ``values`` (none a run)."""
        ends = np.cumsum(counts, dtype=np.int64)
        return cls(values, np.arange(1, values.size + 1, dtype=np.int64), np.zeros(values.size, bool), ends)


def _point_units(point: object, values: list, sizes: list[int], averaged: list[bool]) -> int:
    """One revision (as ``segment.revision_samples`` reads it) appended; its number of units."""
    if isinstance(point, (int, float, np.floating, np.integer)):
        values.append(point)
        sizes.append(1)
        averaged.append(False)
        return 1
    items = list(point)  # type: ignore[call-overload]
    if items and all(isinstance(item, (list, tuple, np.ndarray)) for item in items):
        runs = [item for item in items if len(item)]
        if len(runs) > 1:
            for run in runs:
                values.extend(run)
            sizes.extend(len(run) for run in runs)
            averaged.extend(True for _ in runs)
            return len(runs)
        items = list(runs[0]) if runs else []
    values.extend(items)
    sizes.extend(1 for _ in items)
    averaged.extend(False for _ in items)
    return len(items)


def from_points(points: Sequence[Any]) -> Measured | None:
    """The ``measurements`` of :class:`abstat.history.series.Point` objects as :class:`Measured`, with
    a few passes over them at C speed (their samples, or their runs when they have several); None
    when some point has no samples or an empty run."""
    runs = np.fromiter(map(len, map(attrgetter("runs"), points)), dtype=np.int64, count=len(points))
    several = runs > 1
    try:
        values = np.fromiter(
            chain.from_iterable(chain.from_iterable(p.runs) if len(p.runs) > 1 else p.values for p in points), float
        )
    except (TypeError, ValueError):
        return None
    run_sizes = np.fromiter(
        map(len, chain.from_iterable(p.runs for p in compress(points, several.tolist()))), dtype=np.int64
    )
    counts = np.fromiter(map(len, map(attrgetter("values"), points)), dtype=np.int64, count=len(points))
    per_point = np.where(several, runs, counts)
    averaged = np.repeat(several, per_point)
    sizes = np.ones(averaged.size, dtype=np.int64)
    sizes[averaged] = run_sizes
    if not run_sizes.all() or sizes.sum() != values.size:
        return None
    return measured(Measured(values, np.cumsum(sizes), averaged, np.cumsum(per_point)))


def measured(points: Sequence[object] | Measured) -> Measured | None:
    """``points`` (numbers, lists of samples, lists of runs) as :class:`Measured`; None when they are
    not all finite numbers, or a revision has none."""
    if isinstance(points, Measured):
        found = points
    elif isinstance(points, np.ndarray) and points.ndim == 1 and points.dtype.kind in "fiub":
        found = Measured.flat(points.astype(float), np.ones(points.size, dtype=np.int64))
    else:
        values: list = []
        sizes: list[int] = []
        averaged: list[bool] = []
        try:
            counts = [_point_units(point, values, sizes, averaged) for point in points]
            array = np.asarray(values, dtype=float)
        except (TypeError, ValueError):
            return None
        if array.ndim != 1:
            return None
        found = Measured(
            array,
            np.cumsum(sizes, dtype=np.int64),
            np.asarray(averaged, dtype=bool),
            np.cumsum(counts, dtype=np.int64),
        )
    starts = np.concatenate(([0], found.ends[:-1]))
    if not found.ends.size or np.any(found.ends == starts) or not np.all(np.isfinite(found.values)):
        return None
    return found


def _trim_count(size: int) -> int:
    """segment._trim_count."""
    return max(1, int(0.2 * size)) if size >= 3 else 0


def _rows(sizes: np.ndarray) -> list[tuple[int, np.ndarray]]:
    """(size, the groups of that size) for each size of ``sizes``."""
    order = np.argsort(sizes, kind="stable")
    distinct, first = np.unique(sizes[order], return_index=True)
    bounds = [*first.tolist(), order.size]
    return [(int(size), order[bounds[i] : bounds[i + 1]]) for i, size in enumerate(distinct.tolist())]


def _matrix(values: np.ndarray, starts: np.ndarray, size: int) -> np.ndarray:
    """The groups starting at ``starts``, ``size`` values each, as the rows of a C-contiguous matrix."""
    return values[starts[:, None] + np.arange(size)]


def _trimmed(matrix: np.ndarray) -> tuple[np.ndarray, np.ndarray, int]:
    """segment.trimmed_centre of each row: (trimmed means, Yuen sums of squares, df)."""
    n = matrix.shape[1]
    g = _trim_count(n)
    if g == 0:
        mean = matrix.mean(axis=1)
        return mean, ((matrix - mean[:, None]) ** 2).sum(axis=1), n - 1
    ordered = np.sort(matrix, axis=1)
    kept = n - 2 * g
    centre = np.ascontiguousarray(ordered[:, g : n - g]).mean(axis=1)
    winsorized = np.clip(ordered, ordered[:, g : g + 1], ordered[:, n - g - 1 : n - g])
    squares = ((winsorized - winsorized.mean(axis=1)[:, None]) ** 2).sum(axis=1)
    return centre, squares * n / kept, kept - 1


def _winsorized(matrix: np.ndarray) -> np.ndarray:
    """segment._winsorized of each row."""
    if matrix.shape[1] < 4:
        return matrix
    centre = np.median(matrix, axis=1)
    spread = np.median(np.abs(matrix - centre[:, None]), axis=1) * MAD_SD
    pulled = np.clip(matrix, (centre - WINSOR * spread)[:, None], (centre + WINSOR * spread)[:, None])
    return np.where((spread > 0)[:, None], pulled, matrix)


def _unit_samples(found: Measured) -> np.ndarray:
    """Each unit's sample: a run's trimmed mean, else the value itself."""
    sizes = np.diff(found.units, prepend=0)
    samples = found.values[found.units - 1].copy()  # a unit of one value that is no run
    starts = found.units - sizes
    for size, groups in _rows(np.where(found.averaged, sizes, 0)):
        if size:
            samples[groups] = _trimmed(_matrix(found.values, starts[groups], size))[0]
    return samples


def unit_samples(points: Sequence[object] | Measured) -> np.ndarray | None:
    """Every revision's samples (``segment.revision_samples``) in one array; None as :func:`measured`."""
    found = measured(points)
    return None if found is None else _unit_samples(found)


def revision_centres(
    points: Sequence[object] | Measured,
) -> tuple[np.ndarray, ...] | None:
    """(centres, Yuen sums of squares, dfs, sample counts, the exponent as a 0-d array) of every revision,
    as ``segment.prepare`` computes them one by one; None when :func:`measured` takes no ``points``."""
    found = measured(points)
    if found is None:
        return None
    samples = _unit_samples(found)
    peak = float(np.max(np.abs(samples)))
    exponent = math.frexp(peak)[1] if peak > 0 else 0
    samples = np.ldexp(samples, -exponent)
    counts = np.diff(found.ends, prepend=0)
    starts = found.ends - counts
    centre, squares = np.empty(counts.size), np.empty(counts.size)
    dfs = np.empty(counts.size, dtype=np.int64)
    for size, groups in _rows(counts):
        centre[groups], squares[groups], dfs[groups] = _trimmed(_winsorized(_matrix(samples, starts[groups], size)))
    return centre, squares, dfs, counts.astype(float), np.asarray(exponent)
