"""A series' points held as arrays (a CSV of 10^6 revisions makes no 10^6 objects), grouped from a
:class:`abstat.history.columns.Table` exactly as :func:`abstat.history.series.build_series` groups the
sets :func:`abstat.history.files.read_history_csv` makes of the same file.

That reader makes one set per (labels, revision, time, metric), in the order the rows first show it
(a row's metrics in column order); a series is a (labels, metric), its points its revisions in the
order of their first set, a point's samples its sets' values one after another (several sets: each
one a run), its time its first set's that has one, its ``first_seen`` its first set's place.  Here the
same, with sorts: a sample's place is its row and metric, and each group is placed by its first
sample.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any, overload

import numpy as np

from abstat.history.centres import Measured
from abstat.history.columns import Table


class ColumnPoints(Sequence[Any]):
    """Points (:class:`abstat.history.series.Point`, made when asked for) as arrays: ``revs``, ``times``
    (NaN: none), ``first_seen``; ``values`` every sample in point order, ``run_ends`` where each set
    ends in them, ``point_runs`` where each point's sets end (in sets)."""

    def __init__(
        self,
        revs: list[str],
        times: np.ndarray,
        first_seen: np.ndarray,
        values: np.ndarray,
        run_ends: np.ndarray,
        point_runs: np.ndarray,
    ) -> None:
        self.revs, self.times, self.first_seen = revs, times, first_seen
        self.values, self.run_ends, self.point_runs = values, run_ends, point_runs

    def __len__(self) -> int:
        return len(self.revs)

    @overload
    def __getitem__(self, index: int) -> Any: ...

    @overload
    def __getitem__(self, index: slice) -> list[Any]: ...

    def __getitem__(self, index: int | slice) -> Any:
        if isinstance(index, slice):
            return [self._point(i) for i in range(*index.indices(len(self)))]
        if index < 0:
            index += len(self)
        if not 0 <= index < len(self):
            raise IndexError(index)
        return self._point(index)

    def __iter__(self) -> Iterator[Any]:
        return (self._point(i) for i in range(len(self)))

    def _point(self, index: int) -> Any:
        from abstat.history.series import Point

        first = int(self.point_runs[index - 1]) if index else 0
        last = int(self.point_runs[index])
        bounds = [int(self.run_ends[first - 1]) if first else 0, *self.run_ends[first:last].tolist()]
        when = float(self.times[index])
        point = Point(self.revs[index], self.values[bounds[0] : bounds[-1]].tolist(), None if when != when else when)
        point.first_seen = int(self.first_seen[index])
        if last - first > 1:
            point.runs = [self.values[a:b].tolist() for a, b in zip(bounds, bounds[1:], strict=False)]
        return point

    def samples(self) -> int:
        return int(self.values.size)

    def sizes(self) -> np.ndarray:
        """Each point's number of samples."""
        ends = self.run_ends[self.point_runs - 1]
        return np.diff(ends, prepend=0)

    def centres(self) -> list[float]:
        """Each point's ``Point.centre`` (the median of its samples), at once: the same middle values
        (sorted within each point, stably), halved and added as ``centre`` does; a point holding a NaN
        (which ``sorted`` places where the comparisons fall) or no sample is made and asked."""
        sizes = self.sizes()
        point = np.repeat(np.arange(sizes.size), sizes)
        ordered = self.values[np.lexsort((self.values, point))]
        if not ordered.size:
            return [self._point(index).centre for index in range(sizes.size)]
        starts = np.cumsum(sizes) - sizes
        low = ordered[np.clip(starts + (sizes - 1) // 2, 0, ordered.size - 1)]
        high = ordered[np.clip(starts + sizes // 2, 0, ordered.size - 1)]
        with np.errstate(over="ignore", invalid="ignore"):
            middle = (low + high) / 2.0
            middle = np.where(np.isfinite(middle), middle, low / 2.0 + high / 2.0)
        centres = np.where(sizes % 2 == 1, high, middle).tolist()
        odd = (sizes == 0) | (np.bincount(point[np.isnan(self.values)], minlength=sizes.size) > 0)
        for index in np.flatnonzero(odd).tolist():
            centres[index] = self._point(index).centre
        return centres

    def measured(self) -> Measured:
        """What the detector takes (``centres.from_points`` of the points)."""
        runs = np.diff(self.point_runs, prepend=0)
        several = np.repeat(runs > 1, runs)  # per set
        set_sizes = np.diff(self.run_ends, prepend=0)
        is_end = np.repeat(~several, set_sizes)  # a sample of a one-set point is a unit
        is_end[self.run_ends[several] - 1] = True  # a set of a several-set point is one
        units = np.flatnonzero(is_end) + 1
        averaged = np.repeat(several, np.where(several, 1, set_sizes))
        per_point = np.where(runs > 1, runs, self.sizes())
        return Measured(self.values, units, averaged, np.cumsum(per_point))

    def reorder(self, order: np.ndarray) -> None:
        """The points in ``order`` (indices of the current points)."""
        set_starts = np.concatenate(([0], self.point_runs[:-1]))
        runs = np.diff(self.point_runs, prepend=0)
        sets = _ranges(set_starts[order], runs[order])
        sample_starts = np.concatenate(([0], self.run_ends[:-1]))
        set_sizes = np.diff(self.run_ends, prepend=0)
        self.values = self.values[_ranges(sample_starts[sets], set_sizes[sets])]
        self.run_ends = np.cumsum(set_sizes[sets])
        self.point_runs = np.cumsum(runs[order])
        self.revs = [self.revs[i] for i in order.tolist()]
        self.times, self.first_seen = self.times[order], self.first_seen[order]


def _ranges(starts: np.ndarray, sizes: np.ndarray) -> np.ndarray:
    """The indices ``starts[i] .. starts[i] + sizes[i]`` one range after another."""
    total = int(sizes.sum())
    offsets = np.repeat(starts - np.cumsum(sizes) + sizes, sizes)
    return offsets + np.arange(total, dtype=np.int64)


def _codes(size: int, *keys: np.ndarray) -> tuple[np.ndarray, int]:
    """One small integer per distinct combination of ``keys`` (arrays of ``size``), and how many."""
    code, count = np.zeros(size, dtype=np.int64), 1
    for key in keys:
        distinct, inverse = np.unique(key, return_inverse=True)
        if distinct.size > 1:
            combined = code * distinct.size + inverse.reshape(-1)
            distinct, inverse = np.unique(combined, return_inverse=True) if count > 1 else (distinct, combined)
            code, count = inverse.reshape(-1).astype(np.int64), distinct.size
    return code, count


def _firsts(code: np.ndarray, count: int) -> np.ndarray:
    """Each element's group's first index."""
    if count == code.size:  # each its own group
        return np.arange(code.size)
    if count == 1:
        return np.zeros(code.size, dtype=np.int64)
    _, first, inverse = np.unique(code, return_index=True, return_inverse=True)
    return first[inverse.reshape(-1)]


def _starts(sorted_key: np.ndarray) -> np.ndarray:
    """Where each run of equal values begins in ``sorted_key``."""
    return np.flatnonzero(np.diff(sorted_key, prepend=-1) != 0)


def grouped(table: Table) -> tuple[list[Any], int]:
    """The table's series (as ``build_series`` makes them of the reader's sets) and its number of empty
    metric cells (a row without a revision: all of them)."""
    from abstat.history.series import Series

    names = list(table.metrics)
    matrix = np.column_stack([table.metrics[m] for m in names])
    has_rev = table.revs != ""
    filled = ~np.isnan(matrix)
    missing = int((~has_rev).sum()) * len(names) + int((~filled[has_rev]).sum())
    rows, metric = np.nonzero(filled & has_rev[:, None])  # row-major: the order sets are made in
    del filled
    series = _codes(rows.size, _codes(table.rows, *table.labels.values())[0][rows], metric)
    points = _codes(rows.size, series[0], table.revs[rows])
    sets = _codes(rows.size, points[0], table.times[rows])
    first_set, first_point, first_series = _firsts(*sets), _firsts(*points), _firsts(*series)
    if sets[1] < rows.size:
        set_place = np.unique(first_set, return_inverse=True)[1].reshape(-1)  # the sets' order
    else:
        set_place = np.arange(rows.size)
    keys = (first_set, first_point, first_series)
    if not all(np.all(np.diff(k) >= 0) for k in keys):  # else in order already
        order = np.lexsort(keys)  # a set's rows stay in order
        rows, metric, set_place = rows[order], metric[order], set_place[order]
        first_set, first_point, first_series = first_set[order], first_point[order], first_series[order]
    values = matrix[rows, metric]
    result = []
    series_starts = [*_starts(first_series).tolist(), rows.size]
    for a, b in zip(series_starts, series_starts[1:], strict=False):
        row = int(rows[a])
        labels = {n: str(table.labels[n][row]) for n in table.labels}
        labels["metric"] = names[int(metric[a])]
        result.append(
            Series(
                labels,
                labels["metric"],
                None,
                _points(table, rows[a:b], values[a:b], first_set[a:b], first_point[a:b], set_place[a:b]),
            )
        )
    return result, missing


def _points(
    table: Table,
    rows: np.ndarray,
    values: np.ndarray,
    first_set: np.ndarray,
    first_point: np.ndarray,
    place: np.ndarray,
) -> ColumnPoints:
    """One series' points from its samples (in point, set, row order)."""
    point_starts = _starts(first_point)
    set_starts = _starts(first_set)
    run_ends = np.append(set_starts[1:], rows.size)
    point_runs = np.searchsorted(set_starts, np.append(point_starts[1:], rows.size))
    times = table.times[rows]
    timed = np.where(np.isnan(times), rows.size, np.arange(rows.size))
    first_timed = np.minimum.reduceat(timed, point_starts)
    point_times = np.where(first_timed < rows.size, times[np.minimum(first_timed, rows.size - 1)], np.nan)
    revs = table.revs[rows[point_starts]].tolist()
    return ColumnPoints(revs, point_times, place[point_starts], values, run_ends, point_runs)
