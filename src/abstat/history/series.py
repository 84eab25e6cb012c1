"""Series of per-revision values, from the store or from files, in revision order."""

from __future__ import annotations

import math
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from abstat.history.revision import REV_LABEL, TIME_LABEL, is_repository, resolve, topological_order
from abstat.stats.warnings import StatWarning

if TYPE_CHECKING:
    from abstat.history.columnar import ColumnPoints

# Labels that say where a point sits in the history (or its role in a bisection), not which series it is.
POSITION_LABELS = frozenset({REV_LABEL, TIME_LABEL, "role"})


@dataclass
class Point:
    rev: str
    values: list[float]
    commit_time: float | None = None
    first_seen: int = 0
    roles: frozenset[str] = frozenset()
    runs: list[list[float]] = field(default_factory=list)  # the samples again, one list per run, when several

    @property
    def measurements(self) -> list[float] | list[list[float]]:
        """What the detector takes: the samples, or the runs when there are several."""
        return self.runs if len(self.runs) > 1 else self.values

    @property
    def centre(self) -> float:
        ordered = sorted(self.values)
        n = len(ordered)
        if n % 2:
            return ordered[n // 2]
        low, high = ordered[n // 2 - 1], ordered[n // 2]
        middle = (low + high) / 2.0
        return middle if math.isfinite(middle) else low / 2.0 + high / 2.0  # near the largest doubles


@dataclass
class Series:
    labels: dict[str, str]
    metric: str
    unit: str | None
    points: list[Point] | ColumnPoints  # arrays for a CSV (history.columnar): Points made when asked for

    def revisions(self) -> list[str]:
        """The points' revisions, in order."""
        return self.points.revs if not isinstance(self.points, list) else [p.rev for p in self.points]

    def samples(self) -> int:
        """The points' number of samples."""
        return self.points.samples() if not isinstance(self.points, list) else sum(len(p.values) for p in self.points)

    @property
    def key(self) -> str:
        parts = [f"{k}={v}" for k, v in sorted(self.labels.items()) if k != "metric"]
        return ",".join([f"metric={self.metric}", *parts])

    @property
    def title(self) -> str:
        shown = [f"{k}={v}" for k, v in sorted(self.labels.items()) if k not in ("metric", "experiment")]
        name = f"{self.labels.get('experiment', '')} {self.metric}".strip()
        return name + (f" [{', '.join(shown)}]" if shown else "")


@dataclass
class History:
    series: list[Series]
    ordering: str  # how revisions were ordered
    subjects: dict[str, str] = field(default_factory=dict)  # rev -> commit subject (git)
    warnings: list[StatWarning] = field(default_factory=list)


def _float(text: str | None) -> float | None:
    try:
        return float(text) if text not in (None, "") else None
    except ValueError:
        return None


def build_series(
    sets: Iterable[Any], *, rev_label: str = REV_LABEL, first_seen: Mapping[int, int] | None = None
) -> tuple[list[Series], int]:
    """Group sample sets (``.labels``, ``.runs``, ``.unit``) into series by their labels
    other than the revision's.  Returns (series, number of sets without a revision)."""
    by_key: dict[tuple, Series] = {}
    points: dict[tuple, dict[str, Point]] = {}
    skipped = 0
    for order, sample_set in enumerate(sets):
        labels = sample_set.labels
        rev = labels.get(rev_label)
        runs = [[float(v) for v in run] for run in sample_set.runs if len(run)]
        if not rev or not runs:
            skipped += 1 if not rev else 0
            continue
        kept = [(k, v) for k, v in labels.items() if k not in POSITION_LABELS and k != rev_label]
        key = tuple(sorted(kept))
        if key not in by_key:
            by_key[key] = Series(dict(kept), labels.get("metric", "value"), sample_set.unit, [])
            points[key] = {}
        seen = _seen(sample_set, order, first_seen)
        point = points[key].get(rev)
        if point is None:  # one run: its list is the values (no copy), and no runs
            values = runs[0] if len(runs) == 1 else [v for run in runs for v in run]
            point = points[key][rev] = Point(rev, values, _float(labels.get(TIME_LABEL)), seen)
            point.runs = runs if len(runs) > 1 else point.runs
            by_key[key].points.append(point)  # type: ignore[union-attr]
        else:
            _merge(point, runs, labels, seen)
        if labels.get("role"):
            point.roles = point.roles | {labels["role"]}
    return list(by_key.values()), skipped


def _seen(sample_set: Any, order: int, first_seen: Mapping[int, int] | None) -> int:
    """When a set was first seen: its earliest invocation's place in ``first_seen``, else ``order``."""
    invocations = getattr(sample_set, "invocations", None)
    if first_seen is not None and invocations:
        return min(first_seen.get(i, order) for i in invocations)
    return order


def _merge(point: Point, runs: list[list[float]], labels: Mapping[str, str], seen: int) -> None:
    """Another set's runs of ``point``'s revision added to it (new lists: a run may be its values)."""
    point.runs = (point.runs or [point.values]) + runs
    point.values = point.values + [v for run in runs for v in run]
    point.first_seen = min(point.first_seen, seen)
    if point.commit_time is None:
        point.commit_time = _float(labels.get(TIME_LABEL))


def _git_rank(
    revs: list[str], repo: str | None, warnings: list[StatWarning]
) -> tuple[dict[str, tuple], dict[str, str]]:
    """Each revision's place in git's topological order and its full sha, when ``repo`` is a
    repository that knows every revision; else nothing (with a warning when some are unknown)."""
    if repo is None or not revs:  # revs: only when repo is a repository
        return {}, {}
    resolved = resolve(revs, repo)
    unknown = [rev for rev, sha in resolved.items() if sha is None]
    if unknown:
        warnings.append(
            StatWarning(
                "unknown-revisions",
                f"{len(unknown)} revision(s) unknown to the git repository {os.path.abspath(repo)} "
                f"(e.g. {unknown[0][:40]}): ordered by commit time instead",
            )
        )
        return {}, {}
    order = topological_order([resolved[r] or "" for r in revs], repo)
    position = {sha: i for i, sha in enumerate(order)}
    return ({rev: (position[resolved[rev] or ""],) for rev in revs}, {rev: resolved[rev] or rev for rev in revs})


def order_revisions(series: Sequence[Series], repo: str | None) -> tuple[str, list[StatWarning], dict[str, str]]:
    """Sort every series' points in place.  Returns (how, warnings, rev -> full sha).

    In a git repository knowing every revision: git's topological order.
    Otherwise: by recorded commit time, then by first-seen order."""
    known = repo is not None and is_repository(repo)  # else no revision list to make
    revs = list(dict.fromkeys(rev for s in series for rev in s.revisions())) if known else []
    warnings: list[StatWarning] = []
    rank, full = _git_rank(revs, repo, warnings)
    how = "git topological order" if rank else "commit time, then first seen"
    for s in series:
        if not isinstance(s.points, list):
            _reorder(s.points, rank)
        elif rank:
            s.points.sort(key=lambda p: rank[p.rev])
        else:
            s.points.sort(key=lambda p: (p.commit_time is None, p.commit_time or 0.0, p.first_seen))
    if not rank and any(_untimed(s) for s in series):
        warnings.append(
            StatWarning(
                "no-commit-time", "some revisions have no commit time: they follow the others in the order first seen"
            )
        )
    return how, warnings, full


def _reorder(points: ColumnPoints, rank: Mapping[str, tuple]) -> None:
    """``order_revisions``' sort of columnar points: the same keys (unique in a series), with numpy."""
    if rank:
        order = np.argsort(np.fromiter((rank[rev][0] for rev in points.revs), np.int64, len(points)), kind="stable")
    else:
        untimed = np.isnan(points.times)
        order = np.lexsort((points.first_seen, np.where(untimed, 0.0, points.times), untimed))
    points.reorder(order)


def _untimed(series: Series) -> bool:
    """Whether a point of the series has no commit time."""
    if not isinstance(series.points, list):
        return bool(np.isnan(series.points.times).any())
    return any(p.commit_time is None for p in series.points)
