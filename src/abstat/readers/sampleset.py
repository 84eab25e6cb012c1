"""The unit the readers produce and a report is built from: one labelled set of samples."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable

from abstat.readers.summary import Summary


@dataclass
class SampleSet:
    """Samples of one metric for one combination of labels.

    ``runs`` holds one list of values per run (boot, process, file); a set
    read from one plain file has a single run.  ``source`` is the file it
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
        runs = [list(run) for run in self.runs if run]
        return runs[0] if len(runs) == 1 else runs


def label_keys(sets: Iterable[SampleSet]) -> list[str]:
    """Every label key of ``sets``, in the order first seen."""
    return list(dict.fromkeys(key for sample_set in sets for key in sample_set.labels))


def from_store_set(obj: Any) -> SampleSet:
    """Convert the store's ``SampleSet(labels, runs, machine)`` into ours."""
    labels = {str(k): str(v) for k, v in dict(obj.labels).items()}
    runs = [[float(v) for v in run] for run in obj.runs]
    machine = dict(getattr(obj, "machine", None) or {})
    unit = getattr(obj, "unit", None)
    return SampleSet(labels=labels, runs=runs, source=None, unit=unit, machine=machine)
