"""The unit the readers produce and a report is built from: one labelled set of samples."""

from __future__ import annotations

from collections.abc import Iterable
from itertools import chain
from operator import attrgetter
from typing import Any

from abstat.fastdataclass import dataclass, field
from abstat.readers.summary import Summary


@dataclass(slots=True)
class SampleSet:
    """Samples of one metric for one combination of labels: abstat's one sample model.

    Readers, the store (:func:`abstat.store.iter_sample_sets`), reports,
    history, noise and the public API all hand out and take this class.

    ``runs`` holds one list of values per run (boot, process, file); a set
    read from one plain file has a single run.  ``invocations``: for a set
    from the store, the ``abstat run`` invocation of each run group, in the
    same order (empty otherwise).  ``source`` is the file it
    came from (None for the store), ``unit`` the unit of the values when the
    input says (``ns/op``, ``second``), ``machine`` the machine record when
    known, ``extra`` format-specific data kept for export (hyperfine's
    exit codes), ``notes`` warnings found while reading.

    A set given as summary statistics (``before=98:438.97959:6.6564899``)
    has ``summary`` and no ``runs``: its values are unknown, so whatever
    needs them (medians, ministat blocks, plots, exports) must say so.
    """

    labels: dict[str, str]
    runs: list[list[float]]
    source: str | None = None
    unit: str | None = None
    machine: dict[str, Any] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    summary: Summary | None = None
    invocations: list[int] = field(default_factory=list)

    @property
    def values(self) -> list[float]:
        """All samples, runs concatenated (none for summary statistics)."""
        return [v for run in self.runs for v in run]

    @property
    def n(self) -> int:
        if self.summary is not None:
            return self.summary.n
        return sum(len(run) for run in self.runs)

    def comparison_data(self) -> Summary | list[float] | list[list[float]]:
        """What ``abstat.compare`` takes: the summary, or the samples (flat
        for one run, nested for several)."""
        if self.summary is not None:
            return self.summary
        runs = [run if hasattr(run, "dtype") else list(run) for run in self.runs if len(run)]  # arrays stay
        return runs[0] if len(runs) == 1 else runs


def label_keys(sets: Iterable[SampleSet]) -> list[str]:
    """Every label key of ``sets``, in the order first seen."""
    return list(dict.fromkeys(chain.from_iterable(map(_LABELS, sets))))


def from_store_set(obj: Any, *, own: bool = False) -> SampleSet:
    """A copy of a stored set (or of any object with ``labels`` and ``runs``) that the
    caller may change: labels and values as strings and floats.  The machine record is
    the stored set's own object, not a copy: the store hands out one record per invocation
    (every metric's set of it shares it) and nothing changes a set's record; a copy per set
    made 10^5 revisions x 5 metrics records (most of a history report's memory).

    ``own``: ``obj`` is the caller's to give away (a set the store has just made): a
    :class:`SampleSet` is then itself returned, its labels and runs kept where they already
    are strings and floats (the store's always are) instead of copied."""
    if own and type(obj) is SampleSet:
        return _kept(obj)
    labels = {str(k): str(v) for k, v in dict(obj.labels).items()}
    runs = [[float(v) for v in run] for run in obj.runs]
    machine = getattr(obj, "machine", None) or {}
    return SampleSet(
        labels=labels,
        runs=runs,
        source=getattr(obj, "source", None),
        unit=getattr(obj, "unit", None),
        machine=machine,
        extra=dict(getattr(obj, "extra", None) or {}),
        notes=list(getattr(obj, "notes", None) or []),
        summary=getattr(obj, "summary", None),
        invocations=list(getattr(obj, "invocations", None) or []),
    )


def _kept(sample_set: SampleSet) -> SampleSet:
    """``sample_set`` itself, its labels made strings and its values floats where they are not (the
    types of a set's keys, values and samples asked at once: a store's 10^5 revisions x metrics sets)."""
    labels = sample_set.labels
    if not (_STR.issuperset(map(type, labels)) and _STR.issuperset(map(type, labels.values()))):
        sample_set.labels = {str(k): str(v) for k, v in labels.items()}
    runs = sample_set.runs
    if type(runs) is not list or not (_LIST.issuperset(map(type, runs)) and _FLOAT.issuperset(map(type, chain(*runs)))):
        sample_set.runs = [
            run if type(run) is list and all(type(v) is float for v in run) else [float(v) for v in run] for run in runs
        ]  # (the store's lists kept as they are: no new list per set)
    return sample_set


_LABELS = attrgetter("labels")
_STR, _LIST, _FLOAT = frozenset((str,)), frozenset((list,)), frozenset((float,))
