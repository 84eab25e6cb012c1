"""An experiment's history series made from the sets its report read (``publish``), not read again.

``publish`` reads an experiment's sets once for its report (``api.load``: the store's
``light_sets`` of the experiment, every metric); its history page analyses every metric of the
same experiment, which ``load_history(store_path=..., experiment=..., metrics=every metric)`` reads
from the store a second time: the same sets, in the same order (the same ``light_sets`` query;
``tests/render/site/test_publish_series_sets.py`` checks the History equal to load_history's).
:func:`history_from_sets` builds that History from the report's sets instead (at 10^4 revisions
the second read was a fifth of the publish), with load_history's notes: the load advice of the
latest invocations of ``wall`` and the sets without a revision.

The series' points are arrays (:class:`abstat.history.columnar.ColumnPoints`, as a CSV's): the
points ``build_series`` groups the sets into (a point per series and revision, its runs its sets'
non-empty runs in order, its time its first set's that has one, its ``first_seen`` its sets'
earliest), without a :class:`abstat.history.series.Point` per revision.  Sets the arrays do not
hold as they are (a ``role`` label, a sample that is not finite, a time that is not a number) go
through ``build_series``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from abstat.history.columnar import ColumnPoints, _ranges
from abstat.history.revision import REV_LABEL, TIME_LABEL
from abstat.history.series import POSITION_LABELS, History, Series, _float, _seen, build_series
from abstat.readers.bulk import gc_paused


def history_from_sets(sets: Sequence[Any], store_path: str, experiment: str, repo: str | None) -> History | None:
    """The History ``load_history`` makes of ``experiment`` (every metric, ``repo``) from ``sets``, the
    experiment's every set as the store hands them out; None when it would find no series."""
    from abstat.history.load import INVOCATION_ORDER, add_load_advice, finish_history
    from abstat.store import open_store

    with gc_paused():  # a point per revision, none in a cycle (as load_history)
        made = column_series(sets, INVOCATION_ORDER)
        series, skipped = made or build_series(sets, rev_label=REV_LABEL, first_seen=INVOCATION_ORDER)
    if not series:
        return None
    notes: list[Any] = []
    walls = sorted({i for s in sets if s.labels.get("metric") == "wall" for i in s.invocations})
    if walls:
        with open_store(store_path, create=False) as store:
            cpu = [m for m in ("user", "sys") if store.lists_metric(experiment, m)]  # what the advice asks of them
            add_load_advice(store, experiment, walls, cpu, notes)
    return finish_history(series, skipped, notes, REV_LABEL, repo)


class _Points:
    """What the sets hold, point by point and run by run (:func:`column_series`)."""

    def __init__(self) -> None:
        self.ids: dict[tuple[int, str], int] = {}
        self.series: list[int] = []  # per point
        self.revs: list[str] = []
        self.times: list[float] = []  # NaN: none yet
        self.seen: list[int] = []
        self.run_point: list[int] = []  # per run
        self.run_size: list[int] = []
        self.values: list[float] = []

    def add(self, key: int, rev: str, when: float | None, seen: int, runs: list[Any]) -> None:
        point = self.ids.setdefault((key, rev), len(self.revs))
        if point == len(self.revs):
            self.series.append(key)
            self.revs.append(rev)
            self.times.append(np.nan if when is None else when)
            self.seen.append(seen)
        else:  # build_series' merge: the runs added, the first time kept, the earliest place
            if when is not None and self.times[point] != self.times[point]:
                self.times[point] = when
            self.seen[point] = min(self.seen[point], seen)
        for run in runs:
            self.run_point.append(point)
            self.run_size.append(len(run))
            self.values.extend(run)


def column_series(sets: Sequence[Any], first_seen: Mapping[int, int] | None) -> tuple[list[Series], int] | None:
    """``build_series(sets, first_seen=first_seen)``'s series (the same labels, metrics, units, and the
    same points in the same order) with :class:`ColumnPoints`; None when the arrays do not hold the
    sets as they are (module docstring)."""
    from abstat.history.load import INVOCATION_ORDER

    found: dict[tuple, int] = {}
    series: list[Series] = []
    points = _Points()
    skipped = 0
    ids = first_seen is INVOCATION_ORDER  # a set's place: its earliest invocation's id (_seen's, at once)
    for order, sample_set in enumerate(sets):
        labels = sample_set.labels
        rev = labels.get(REV_LABEL)
        runs = [run for run in sample_set.runs if len(run)]
        if not rev or not runs:
            skipped += 1 if not rev else 0
            continue
        when = _float(labels.get(TIME_LABEL))
        if labels.get("role") or when != when:  # roles, a time of NaN: build_series' points
            return None
        kept = [(k, v) for k, v in labels.items() if k not in POSITION_LABELS]
        key = tuple(sorted(kept))
        at = found.setdefault(key, len(series))
        if at == len(series):
            series.append(Series(dict(kept), labels.get("metric", "value"), sample_set.unit, []))
        invocations = getattr(sample_set, "invocations", None) if ids else None
        points.add(at, rev, when, min(invocations) if invocations else _seen(sample_set, order, first_seen), runs)
    if not series:
        return series, skipped
    values = np.array(points.values, dtype=float)
    if not np.isfinite(values).all():
        return None
    _fill(series, points, values)
    return series, skipped


def _fill(series: list[Series], points: _Points, values: np.ndarray) -> None:
    """Each series' points: its own, in the order first seen, each one's runs in the order read."""
    key = np.array(points.series, dtype=np.int64)
    run_point = np.array(points.run_point, dtype=np.int64)
    run_size = np.array(points.run_size, dtype=np.int64)
    run_order = np.lexsort((run_point, key[run_point]))  # stable: a point's runs stay in order
    values = values[_ranges(np.cumsum(run_size)[run_order] - run_size[run_order], run_size[run_order])]
    run_size = run_size[run_order]
    point_order = np.argsort(key, kind="stable")
    runs = np.bincount(run_point, minlength=key.size)
    times, seen = np.array(points.times, dtype=float), np.array(points.seen, dtype=np.int64)
    point_bounds = np.searchsorted(key[point_order], np.arange(len(series) + 1))
    run_bounds = np.searchsorted(key[run_point[run_order]], np.arange(len(series) + 1))
    sample_bounds = np.concatenate(([0], np.cumsum(run_size)))[run_bounds]
    for index, one in enumerate(series):
        chosen = point_order[point_bounds[index] : point_bounds[index + 1]]
        run_low, run_high = run_bounds[index], run_bounds[index + 1]
        one.points = ColumnPoints(
            [points.revs[i] for i in chosen.tolist()],
            times[chosen],
            seen[chosen],
            values[sample_bounds[index] : sample_bounds[index + 1]],
            np.cumsum(run_size[run_low:run_high]),
            np.cumsum(runs[chosen]),
        )
