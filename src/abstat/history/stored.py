"""A stored experiment's history series made from the store's columns, without a set or a point per
revision (``abstat history --store``).

:meth:`abstat.store.Store.light_sets` makes the experiment's sets of the columns one by one (a dict of
labels and a list per run each) and :func:`abstat.history.series.build_series` groups them into
series of points; at 10^5 revisions that is two Python objects and a few dicts per revision.  Here
the same series come from the same columns (:meth:`abstat.store.Store.column_read`) with numpy: the
sets in the order ``light_sets`` hands them out (:func:`abstat.store.columns.set_order`), a set's
labels its first invocation's (read once per invocation), each group of values one run, and the
points :class:`abstat.history.columnar.ColumnPoints` holding what ``build_series`` would put in its
points (a point per series and revision in the order first seen, its runs its sets' in order, its
time its first set's that has one, its ``first_seen`` its sets' earliest invocation).  Sets the
arrays do not hold as they are (a ``role`` label, a time that is not a number, a sample that is not
finite) go through ``build_series`` (``None`` here).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from abstat.history.columnar import ColumnPoints, _ranges
from abstat.history.revision import TIME_LABEL
from abstat.history.series import POSITION_LABELS, Series, _float

_SET_LABELS = ("experiment", "variant", "metric")  # a set's own, after its invocation's
_APART = POSITION_LABELS | {*_SET_LABELS, "host"}  # not in a series' key as an invocation's labels


def _first_seen_ranks(codes: np.ndarray) -> np.ndarray:
    """Each element's code renumbered in the order the codes are first seen."""
    _, first, inverse = np.unique(codes, return_index=True, return_inverse=True)
    rank = np.empty(first.size, dtype=np.int64)
    rank[np.argsort(first, kind="stable")] = np.arange(first.size)
    return rank[inverse.reshape(-1)]


class _Invocations:
    """Per invocation (by index in ``ids``): its revision, time and series labels (interned)."""

    def __init__(self, ids: list[int], labels: Mapping[int, Mapping[str, str]], rev_label: str) -> None:
        self.revs: list[str | None] = []
        self.times = np.empty(len(ids))
        self.plain = True  # no role and no time that is not a number
        interned: dict[tuple, int] = {}
        self.key = np.empty(len(ids), dtype=np.int64)
        for index, invocation in enumerate(ids):
            own = labels.get(invocation, {})
            self.revs.append(own.get(rev_label))
            when = _float(own.get(TIME_LABEL))
            self.times[index] = np.nan if when is None else when
            if own.get("role") or when != when:
                self.plain = False
            items = tuple(sorted((k, v) for k, v in own.items() if k not in _APART and k != rev_label))
            self.key[index] = interned.setdefault(items, len(interned))


def stored_series(read: tuple[Any, Any, Any, Any], rev_label: str) -> tuple[list[Series], int] | None:
    """``build_series`` of the sets ``light_sets`` would make of ``read`` (``column_read``'s), with
    :class:`ColumnPoints`: (series, sets without a revision); None when the arrays do not hold them
    as they are (module docstring)."""
    from abstat.store.columns import set_order

    columns, names, hosts, labels = read
    if rev_label in _SET_LABELS or rev_label == "host" or not columns.ends.size:
        return None
    order, first, by_set, bounds = set_order(columns, names, hosts, labels)
    heads = columns.invocation[first][order]  # each set's first invocation, sets in order
    ids, where = np.unique(heads, return_inverse=True)
    invocations = _Invocations(ids.tolist(), labels, rev_label)
    if not invocations.plain or not np.isfinite(columns.values).all():
        return None
    where = where.reshape(-1)
    has_rev = np.fromiter((bool(rev) for rev in invocations.revs), bool, len(invocations.revs))[where]
    skipped = int((~has_rev).sum())
    kept_sets, where = order[has_rev], where[has_rev]
    if not kept_sets.size:
        return [], skipped
    codes: dict[Any, int] = {}
    host_code = np.asarray(
        [codes.setdefault(labels.get(i, {}).get("host", hosts[i]), len(codes)) for i in ids.tolist()], dtype=np.int64
    )
    group = first[kept_sets]
    series = _first_seen_ranks(
        _combined(invocations.key[where], host_code[where], columns.variant[group], columns.pair[group])
    )
    rev_code = _first_seen_ranks(np.unique(np.asarray(invocations.revs, dtype=object)[where], return_inverse=True)[1])
    point = _first_seen_ranks(_combined(series, rev_code))
    made = _series_labels(
        series, where, group, columns, names, [(labels.get(i, {}), hosts[i]) for i in ids.tolist()], rev_label
    )
    _fill(made, columns, by_set, bounds, kept_sets, series, point, invocations, where, ids)
    return made, skipped


def _combined(*codes: np.ndarray) -> np.ndarray:
    """One code per distinct combination of ``codes`` (small non-negative integers)."""
    combined = np.zeros(codes[0].size, dtype=np.int64)
    for given in codes:
        code = np.unique(given, return_inverse=True)[1].reshape(-1)
        combined = combined * (int(code.max()) + 1 if code.size else 1) + code
        combined = np.unique(combined, return_inverse=True)[1].reshape(-1)
    return combined


def _series_labels(
    series: np.ndarray,
    where: np.ndarray,
    group: np.ndarray,
    columns: Any,
    names: Mapping[int, tuple[int, str, str]],
    own: list[tuple[Mapping[str, str], Any]],
    rev_label: str,
) -> list[Series]:
    """Each series (by its first set) as ``build_series`` makes it of that set's labels."""
    _, firsts = np.unique(series, return_index=True)
    made = []
    for at in firsts.tolist():
        index, variant_id, pair = int(where[at]), int(columns.variant[group[at]]), int(columns.pair[group[at]])
        metric, unit = columns.pairs[pair]
        _, experiment_name, variant_name = names[variant_id]
        base, host = own[index]
        full = {**base, "experiment": experiment_name, "variant": variant_name, "metric": metric}
        if host is not None and "host" not in full:
            full["host"] = host
        kept = {k: v for k, v in full.items() if k not in POSITION_LABELS and k != rev_label}
        made.append(Series(kept, metric, unit, []))
    return made


def _fill(
    made: list[Series],
    columns: Any,
    by_set: np.ndarray,
    bounds: np.ndarray,
    kept_sets: np.ndarray,
    series: np.ndarray,
    point: np.ndarray,
    invocations: _Invocations,
    where: np.ndarray,
    ids: np.ndarray,
) -> None:
    """Each series' points: its own in the order first seen, a point's runs (its sets' groups) in order."""
    sizes = bounds[kept_sets + 1] - bounds[kept_sets]
    groups = by_set[_ranges(bounds[kept_sets], sizes)]  # every run, set after set
    run_point = np.repeat(point, sizes)
    count = int(point.max()) + 1
    point_series = np.empty(count, dtype=np.int64)
    point_series[point] = series
    run_order = np.lexsort((run_point, point_series[run_point]))  # stable: a point's runs stay in order
    groups, run_point = groups[run_order], run_point[run_order]
    starts = np.concatenate(([0], columns.ends[:-1]))
    run_size = columns.ends[groups] - starts[groups]
    values = columns.values[_ranges(starts[groups], run_size)]
    position = np.arange(point.size)
    timed = np.where(np.isnan(invocations.times[where]), point.size, position)
    first_timed = np.full(count, point.size)
    np.minimum.at(first_timed, point, timed)
    set_time = np.append(invocations.times[where], np.nan)
    times = set_time[first_timed]
    seen = np.full(count, np.iinfo(np.int64).max)
    np.minimum.at(seen, point, ids[where])
    first_set = np.full(count, point.size)
    np.minimum.at(first_set, point, position)
    revs = [invocations.revs[i] for i in where[first_set].tolist()]
    runs = np.bincount(run_point, minlength=count)
    point_order = np.argsort(point_series, kind="stable")
    point_bounds = np.searchsorted(point_series[point_order], np.arange(len(made) + 1))
    run_bounds = np.searchsorted(point_series[run_point], np.arange(len(made) + 1))
    sample_bounds = np.concatenate(([0], np.cumsum(run_size)))[run_bounds]
    for index, one in enumerate(made):
        chosen = point_order[point_bounds[index] : point_bounds[index + 1]]
        one.points = ColumnPoints(
            [revs[i] for i in chosen.tolist()],
            times[chosen],
            seen[chosen],
            values[sample_bounds[index] : sample_bounds[index + 1]],
            np.cumsum(run_size[run_bounds[index] : run_bounds[index + 1]]),
            np.cumsum(runs[chosen]),
        )


def latest_walls(read: tuple[Any, Any, Any, Any], latest: int) -> list[int]:
    """The ``latest`` invocations (the largest ids) of the groups of ``wall``, in order."""
    columns = read[0]
    wall = [index for index, (metric, _) in enumerate(columns.pairs) if metric == "wall"]
    found = np.unique(columns.invocation[np.isin(columns.pair, wall)])
    return found[-latest:].tolist() if latest else []
