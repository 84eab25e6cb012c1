"""Export sample sets as a hyperfine JSON document (``--format hyperfine``).

The layout is hyperfine's ``--export-json``, key for key and type for type:
``results[]`` with ``command``, ``mean``, ``stddev``, ``median``, ``user``,
``system``, ``min``, ``max``, ``times`` (seconds), ``exit_codes`` and
``parameters``, so that hyperfine's analysis scripts (advanced_statistics.py,
welch_ttest.py, plot_*.py) and ``abstat report`` read it.

- One result per set of the wall-time metric: with several metrics, ``wall``
  (or ``time``, ``elapsed``, a ``sec/op``/``ns/op`` unit) is exported and the
  ``user`` and ``sys`` sets of the same variant give ``user`` and ``system``
  (their means, as hyperfine writes them).  Values in another time unit are
  converted to seconds; values that are not times are refused.
- ``command`` is the command's text unchanged (a hyperfine export's, or the
  command ``abstat run`` stored), else the name of the set (its labels that
  vary); two results that would share a command get the labels that tell
  them apart in brackets, as hyperfine's ``-n`` names do.
- ``exit_codes``: one per time, as hyperfine's (``128 + N`` for a process
  killed by signal N): those of the export read, or of the runs ``abstat
  run`` stored (see :mod:`abstat.report.stored_runs`: the wall times of the
  runs that failed with an exit status are among ``times`` and in the
  statistics, as with ``hyperfine -i``).
- ``parameters`` holds hyperfine parameters only (``-L``/``--parameter-scan``
  of the export read), and only where hyperfine wrote them.  abstat's labels
  are not parameters.
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Any
from collections.abc import Sequence

from abstat.errors import UsageError
from abstat.readers.sampleset import SampleSet, label_keys
from abstat.stats.descriptive import describe

_TO_SECONDS = {
    "s": 1.0,
    "second": 1.0,
    "seconds": 1.0,
    "sec": 1.0,
    "ms": 1e-3,
    "us": 1e-6,
    "µs": 1e-6,
    "ns": 1e-9,
    "ns/op": 1e-9,
    "sec/op": 1.0,
}
_TIME_METRICS = ("wall", "time", "elapsed")
_USER_METRICS = ("user",)
_SYSTEM_METRICS = ("sys", "system")
_SIBLING_METRICS = (*_USER_METRICS, *_SYSTEM_METRICS)


def seconds_factor(sample_set: SampleSet) -> float:
    """The factor that turns the set's values into seconds; UsageError if not times."""
    factor = _factor(sample_set)
    if factor is not None:
        return factor
    unit = sample_set.unit
    what = sample_set.source or ",".join(f"{k}={v}" for k, v in sample_set.labels.items())
    if unit is None and "metric" not in sample_set.labels:
        raise UsageError(
            f"{{format}} hyperfine: {what}: unknown unit; if the values are seconds, say so with {{label}} metric=wall",
            fields=["format", "label"],
        )
    raise UsageError(
        f"{{format}} hyperfine: {what}: values in {unit or sample_set.labels.get('metric')!r} "
        "are not times (hyperfine JSON holds seconds)",
        fields=["format"],
    )


def _factor(sample_set: SampleSet) -> float | None:
    if sample_set.unit is not None:
        return _TO_SECONDS.get(sample_set.unit)
    return 1.0 if sample_set.labels.get("metric") in _TIME_METRICS else None


def wall_metric(sets: Sequence[SampleSet]) -> str | None:
    """The metric to export when the sets hold several: the wall time."""
    metrics = list(dict.fromkeys(s.labels.get("metric") for s in sets))
    if len(metrics) <= 1:
        return metrics[0] if metrics else None
    for name in _TIME_METRICS:
        if name in metrics:
            return name
    timed = [
        m
        for m in metrics
        if m is not None and any(s.labels.get("metric") == m and s.unit in ("ns/op", "sec/op") for s in sets)
    ]
    if len(timed) == 1:
        return timed[0]
    raise UsageError(
        "{format} hyperfine: the sets hold several metrics and none is the wall time "
        f"({', '.join(str(m) for m in metrics)}); choose one with {{metrics}}",
        fields=["format", "metrics"],
    )


def _sibling_mean(sample_set: SampleSet, siblings: _Siblings, names: Sequence[str]) -> float | None:
    """The mean, in seconds, of the set of metric ``names`` with the same other labels."""
    for candidate in siblings.of(sample_set):
        if candidate.labels.get("metric") in names and candidate.summary is None and candidate.values:
            factor = _factor(candidate)
            if factor is not None:
                values = candidate.values
                return sum(values) / len(values) * factor
    return None


class _Siblings:
    """The sets of the user and system metrics, by their other labels: looked up once per result (a
    scan of every set per result made a history experiment's export quadratic)."""

    def __init__(self, sets: Sequence[SampleSet]) -> None:
        self.by_labels: dict[Any, list[SampleSet]] = {}
        for candidate in sets:
            if candidate.labels.get("metric") in _SIBLING_METRICS:
                self.by_labels.setdefault(_other_labels(candidate), []).append(candidate)

    def of(self, sample_set: SampleSet) -> list[SampleSet]:
        return self.by_labels.get(_other_labels(sample_set), [])


def _other_labels(sample_set: SampleSet) -> Any:
    """A key equal for two sets exactly when their labels other than the metric are equal."""
    return frozenset((k, v) for k, v in sample_set.labels.items() if k != "metric")


def _commands(chosen: Sequence[SampleSet]) -> list[str]:
    """Each set's command; sets that would share one get the varying labels that tell them apart."""
    varying = [k for k in label_keys(chosen) if k != "metric" and len({s.labels.get(k) for s in chosen}) > 1]
    commands = [_command(sample_set, varying) for sample_set in chosen]
    repeated = {text for text, count in Counter(commands).items() if count > 1}
    for index, text in enumerate(commands):
        if text in repeated:
            tell = _telling_labels(chosen[index], varying)
            if tell:
                commands[index] = f"{text} [{' '.join(tell)}]"
    return commands


def _command(sample_set: SampleSet, varying: list[str]) -> str:
    """The command's text as read or stored, else the set's varying labels, its variant or its source."""
    text = sample_set.extra.get("command") or sample_set.labels.get("command")
    if isinstance(text, str) and text:
        return text
    return (
        " ".join(sample_set.labels[k] for k in varying if k in sample_set.labels)
        or sample_set.labels.get("variant")
        or sample_set.source
        or "?"
    )


def _telling_labels(sample_set: SampleSet, varying: list[str]) -> list[str]:
    """``key=value`` of the set's varying labels other than the command and its hyperfine parameters."""
    parameters = sample_set.extra.get("parameters") or {}
    return [
        f"{k}={sample_set.labels[k]}"
        for k in varying
        if k in sample_set.labels and k != "command" and k not in parameters
    ]


def to_hyperfine(sets: Sequence[SampleSet]) -> dict[str, Any]:
    """The hyperfine JSON document for ``sets``: one result per set of the
    wall-time metric."""
    if not sets:
        raise UsageError("{format} hyperfine: nothing to export", fields=["format"])
    metric = wall_metric(sets)
    chosen = [s for s in sets if s.labels.get("metric") == metric]
    pairs = zip(chosen, _commands(chosen), strict=True)
    siblings = _Siblings(sets)
    return {"results": [_result(sample_set, command, siblings) for sample_set, command in pairs]}


def _result(sample_set: SampleSet, command: str, siblings: _Siblings) -> dict[str, Any]:
    """One result of the document, hyperfine's keys in hyperfine's order."""
    if sample_set.summary is not None:
        raise UsageError(
            f"{{format}} hyperfine: {sample_set.source}: summary statistics hold no "
            "samples to export (hyperfine JSON needs the times)",
            fields=["format"],
        )
    factor = seconds_factor(sample_set)
    codes = sample_set.extra.get("exit_codes")
    values = sample_set.extra.get("all_values", sample_set.values)  # a store's failed runs too
    times = [v * factor for v in values]
    d = describe(times)
    result: dict[str, Any] = {
        "command": command,
        "mean": d.mean,
        "stddev": d.stddev if d.n > 1 else None,
        "median": d.median,
    }
    user = sample_set.extra.get("user")
    system = sample_set.extra.get("system")
    if user is None:
        user = _sibling_mean(sample_set, siblings, _USER_METRICS)
    if system is None:
        system = _sibling_mean(sample_set, siblings, _SYSTEM_METRICS)
    if user is not None and system is not None:  # hyperfine writes both
        result["user"] = float(user)
        result["system"] = float(system)
    result.update({"min": d.min, "max": d.max, "times": times})
    if isinstance(codes, list) and len(codes) == len(times):
        result["exit_codes"] = codes
    parameters = sample_set.extra.get("parameters")
    if isinstance(parameters, dict) and parameters:
        result["parameters"] = {str(k): str(v) for k, v in parameters.items()}
    return result


def render_hyperfine(sets: Sequence[SampleSet]) -> str:
    return json.dumps(to_hyperfine(sets), indent=2) + "\n"
