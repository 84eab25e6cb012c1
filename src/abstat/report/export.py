"""Export sample sets as a hyperfine-compatible JSON document.

The layout is hyperfine's ``--export-json``: ``results[]`` with
``command``, ``mean``, ``stddev``, ``median``, ``min``, ``max``, ``times``
(seconds), ``exit_codes`` (when known) and ``parameters`` (the labels), so
hyperfine's own scripts (plot_histogram.py, ...) and ``abstat report`` read
it back.  hyperfine holds times in seconds: sets in another time unit are
converted, sets whose values are not times are refused.
"""
from __future__ import annotations

import json
from typing import Any, Sequence

from abstat.errors import UsageError
from abstat.report.sampleset import SampleSet, label_keys
from abstat.stats.descriptive import describe

_TO_SECONDS = {"s": 1.0, "second": 1.0, "seconds": 1.0, "sec": 1.0, "ms": 1e-3,
               "us": 1e-6, "µs": 1e-6, "ns": 1e-9, "ns/op": 1e-9, "sec/op": 1.0}
_TIME_METRICS = ("wall", "time", "elapsed")


def seconds_factor(sample_set: SampleSet) -> float:
    """The factor that turns the set's values into seconds; UsageError if not times."""
    unit = sample_set.unit
    if unit is not None:
        if unit in _TO_SECONDS:
            return _TO_SECONDS[unit]
    elif sample_set.labels.get("metric") in _TIME_METRICS:
        return 1.0
    what = sample_set.source or ",".join(f"{k}={v}" for k, v in sample_set.labels.items())
    if unit is None and "metric" not in sample_set.labels:
        raise UsageError(f"--format hyperfine: {what}: unknown unit; if the values are seconds, "
                         "say so with --label metric=wall")
    raise UsageError(f"--format hyperfine: {what}: values in {unit or sample_set.labels.get('metric')!r} "
                     "are not times (hyperfine JSON holds seconds)")


def command_name(sample_set: SampleSet, keys: Sequence[str]) -> str:
    if "command" in sample_set.labels and "command" not in keys:
        return sample_set.labels["command"]
    parts = [sample_set.labels[k] for k in keys if k in sample_set.labels]
    return " ".join(parts) or sample_set.labels.get("command", "") or (sample_set.source or "?")


def to_hyperfine(sets: Sequence[SampleSet]) -> dict[str, Any]:
    """The hyperfine JSON document for ``sets`` (one result per set)."""
    if not sets:
        raise UsageError("--format hyperfine: nothing to export")
    varying = [k for k in label_keys(sets) if len({s.labels.get(k) for s in sets}) > 1]
    results = []
    for sample_set in sets:
        if sample_set.summary is not None:
            raise UsageError(f"--format hyperfine: {sample_set.source}: summary statistics hold no "
                             "samples to export (hyperfine JSON needs the times)")
        factor = seconds_factor(sample_set)
        times = [v * factor for v in sample_set.values]
        d = describe(times)
        result: dict[str, Any] = {
            "command": command_name(sample_set, varying),
            "mean": d.mean,
            "stddev": d.stddev if d.n > 1 else None,
            "median": d.median,
            "min": d.min,
            "max": d.max,
            "times": times,
        }
        codes = sample_set.extra.get("exit_codes")
        if isinstance(codes, list) and len(codes) == len(times):
            result["exit_codes"] = codes
        result["parameters"] = dict(sample_set.labels)
        results.append(result)
    return {"results": results}


def render_hyperfine(sets: Sequence[SampleSet]) -> str:
    return json.dumps(to_hyperfine(sets), indent=2) + "\n"
