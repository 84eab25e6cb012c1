"""criterion.rs results, read as criterion reads them.

criterion writes ``target/criterion/<benchmark>/<base>/`` per benchmark, ``<base>``
being ``new`` (the latest run), ``base`` (the one before) or a name given to
``--save-baseline``:

- ``sample.json``: ``{"sampling_mode": .., "iters": [...], "times": [...]}`` (older
  versions: ``[[iters...], [times...]]``): sample *i* ran ``iters[i]`` iterations in
  ``times[i]`` nanoseconds.  Each sample's time per iteration, ``times[i] / iters[i]``,
  is one value, as criterion's own estimates (``Mean``, ``Median``) are computed from
  them;
- ``estimates.json``: criterion's estimates (``Mean``, ``Median``, ``StdDev``,
  ``Slope``, …, each a ``point_estimate`` with its interval).  They hold no samples:
  an ``estimates.json`` is read through the ``sample.json`` beside it, and its
  ``Mean`` is checked against the mean of those values (a note if they disagree);
- ``benchmark.json``: the ids (``full_id``: ``group/function/value``);
- ``raw.csv`` (``group,function,value,throughput_num,throughput_type,
  sample_measured_value,unit,iteration_count``; before 0.3.4
  ``…,sample_time_nanos,iteration_count``): the same samples, one a row; the value is
  ``sample_measured_value / iteration_count`` in ``unit``.

Labels: ``benchmark`` (the full id) and ``variant`` (the ``<base>`` directory's name),
so ``abstat report target/criterion`` compares ``base`` with ``new`` and any saved
baseline.  A directory is searched for every ``sample.json`` (``report`` directories,
criterion's HTML, are skipped).
"""

from __future__ import annotations

import csv
import io
import math
import os
from typing import Any

from abstat.errors import InputError
from abstat.readers.sampleset import SampleSet
from abstat.readers.source import loads_json, read_named

RAW_COLUMNS = ("group", "function", "value", "iteration_count")


def is_sample_json(doc: Any) -> bool:
    if isinstance(doc, dict):
        return isinstance(doc.get("iters"), list) and isinstance(doc.get("times"), list)
    return (
        isinstance(doc, list)
        and len(doc) == 2
        and all(isinstance(x, list) for x in doc)
        and len(doc[0]) == len(doc[1]) > 0
    )


def is_estimates(doc: Any) -> bool:
    return isinstance(doc, dict) and all(
        isinstance(doc.get(k), dict) and "point_estimate" in doc[k] for k in ("Mean", "Median")
    )


def is_raw_csv(header: list[str]) -> bool:
    fields = [h.strip() for h in header]
    return all(c in fields for c in RAW_COLUMNS) and (
        "sample_measured_value" in fields or "sample_time_nanos" in fields
    )


def _load(path: str) -> Any:
    try:
        return loads_json(read_named(path), path)
    except ValueError as err:
        raise InputError(
            f"bad JSON: {getattr(err, 'msg', err)}", path=path, line=getattr(err, "lineno", None)
        ) from None


def _per_iteration(path: str, doc: Any) -> list[float]:
    iters, times = (doc["iters"], doc["times"]) if isinstance(doc, dict) else (doc[0], doc[1])
    if len(iters) != len(times) or not iters:
        raise InputError(f"'iters' ({len(iters)}) and 'times' ({len(times)}) differ in length", path=path)
    values = []
    for i, (n, t) in enumerate(zip(iters, times)):
        if not _count_and_time(n, t):
            raise InputError(f"sample {i}: iters {n!r}, times {t!r}: not a positive count and a time", path=path)
        values.append(float(t) / float(n))
    return values


def _count_and_time(n: Any, t: Any) -> bool:
    """A positive count of iterations and a finite time (neither a bool)."""
    return not (
        isinstance(n, bool)
        or isinstance(t, bool)
        or not isinstance(n, (int, float))
        or not isinstance(t, (int, float))
        or not math.isfinite(n)
        or not math.isfinite(t)
        or n <= 0
    )


def _benchmark_id(directory: str, root: str) -> str:
    info = os.path.join(directory, "benchmark.json")
    if os.path.exists(info):
        doc = _load(info)
        if isinstance(doc, dict) and isinstance(doc.get("full_id"), str):
            return doc["full_id"]
    bench_dir = os.path.dirname(directory)
    rel = os.path.relpath(bench_dir, root) if root else os.path.basename(bench_dir)
    return rel if rel not in (".", "") else os.path.basename(os.path.abspath(bench_dir))


def _set(sample_path: str, root: str, doc: Any | None = None) -> SampleSet:
    doc = _load(sample_path) if doc is None else doc
    if not is_sample_json(doc):
        raise InputError("not a criterion sample.json ('iters' and 'times')", path=sample_path)
    values = _per_iteration(sample_path, doc)
    directory = os.path.dirname(os.path.abspath(sample_path))
    labels = {"benchmark": _benchmark_id(directory, root), "variant": os.path.basename(directory)}
    notes = _estimates_notes(directory, values)
    return SampleSet(labels=labels, runs=[values], source=sample_path, unit="ns", notes=notes)


def _estimates_notes(directory: str, values: list[float]) -> list[str]:
    """A note when the estimates.json beside the samples gives a Mean that is not theirs."""
    estimates = os.path.join(directory, "estimates.json")
    if not os.path.exists(estimates):
        return []
    est = _load(estimates)
    point = est.get("Mean", {}).get("point_estimate") if is_estimates(est) else None
    mean = sum(values) / len(values)
    if isinstance(point, (int, float)) and not math.isclose(point, mean, rel_tol=1e-9):
        return [
            f"{estimates}: criterion's Mean {point!r} is not the mean of sample.json's times per iteration ({mean!r})"
        ]
    return []


def read_criterion(path: str, doc: Any | None = None) -> list[SampleSet]:
    """A criterion directory, ``sample.json`` or ``estimates.json`` as sample sets."""
    if os.path.isdir(path):
        return _read_tree(path)
    if doc is not None and is_estimates(doc):
        beside = os.path.join(os.path.dirname(os.path.abspath(path)), "sample.json")
        if not os.path.exists(beside):
            raise InputError(
                "criterion's estimates.json holds estimates, not samples, and no sample.json is beside it", path=path
            )
        return [_set(beside, "")]
    return [_set(path, "", doc)]


def _read_tree(path: str) -> list[SampleSet]:
    """Every sample.json under a criterion directory (its HTML reports left out), in sorted order."""
    found = []
    for directory, subdirectories, files in os.walk(path):
        subdirectories[:] = sorted(d for d in subdirectories if d != "report")
        if "sample.json" in files:
            found.append(_set(os.path.join(directory, "sample.json"), path))
    if not found:
        raise InputError("no criterion sample.json under this directory", path=path)
    return found


def read_raw_csv(path: str, text: str) -> list[SampleSet]:
    """criterion's ``raw.csv``: one time per iteration a row."""
    reader = csv.DictReader(io.StringIO(text))
    found: dict[tuple[str, str], SampleSet] = {}
    try:
        if not is_raw_csv(list(reader.fieldnames or [])):
            raise InputError(
                "not a criterion raw.csv (header group,function,value,...,iteration_count)", path=path, line=1
            )
    except csv.Error as err:
        raise InputError(f"bad CSV: {err}", path=path, line=reader.line_num) from None
    column = "sample_measured_value" if "sample_measured_value" in (reader.fieldnames or []) else "sample_time_nanos"
    try:
        for row in reader:
            name, unit, time = _raw_row(path, row, column, reader.line_num)
            labels = _raw_labels(path, name)
            slot = found.setdefault((name, unit), SampleSet(labels=labels, runs=[[]], source=path, unit=unit))
            slot.runs[0].append(time)
    except csv.Error as err:
        raise InputError(f"bad CSV: {err}", path=path, line=reader.line_num) from None
    if not found:
        raise InputError("criterion raw.csv holds no rows", path=path)
    return list(found.values())


def _raw_labels(path: str, name: str) -> dict[str, str]:
    """The benchmark; and, for a file named as criterion names it, the baseline its directory is."""
    labels = {"benchmark": name}
    if os.path.basename(path) == "raw.csv":
        labels["variant"] = os.path.basename(os.path.dirname(os.path.abspath(path)))
    return labels


def _raw_row(path: str, row: dict[str, str], column: str, line: int) -> tuple[str, str, float]:
    """A row's benchmark name, unit and time per iteration."""
    measured, count = _measured_and_count(path, row, column, line)
    unit = (row.get("unit") or "ns").strip() if column == "sample_measured_value" else "ns"
    name = "/".join(p for p in (row["group"], row["function"], row["value"]) if p)
    return name, unit, measured / count


def _measured_and_count(path: str, row: dict[str, str], column: str, line: int) -> tuple[float, float]:
    """The row's finite time and its positive count of iterations."""
    try:
        measured, count = float(row[column]), float(row["iteration_count"])
    except (TypeError, ValueError):
        raise InputError(
            f"{column} {row.get(column)!r}, iteration_count {row.get('iteration_count')!r}: not numbers",
            path=path,
            line=line,
        ) from None
    if not (math.isfinite(measured) and math.isfinite(count) and count > 0):
        raise InputError("not a finite time and a positive iteration count", path=path, line=line)
    return measured, count
