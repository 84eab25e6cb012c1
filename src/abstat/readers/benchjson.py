"""JSON results of Google Benchmark, pytest-benchmark and bencher (BMF), read as their tools read them.

``gbench``
    ``--benchmark_out=FILE --benchmark_format=json``: ``context`` (the machine record)
    and ``benchmarks``.  Entries are grouped by ``run_name`` (``name`` in files older
    than it), as ``tools/compare.py`` pairs them; each repetition
    (``--benchmark_repetitions``) is one sample.  ``real_time`` and ``cpu_time`` are
    two metrics (``metric=real_time``, ``metric=cpu_time``), already per iteration, in
    the entry's ``time_unit`` (``ns`` when absent); user counters (numeric fields of
    no known meaning, such as ``items_per_second``) are further metrics.  Aggregates
    (``run_type: aggregate``: ``_mean``, ``_median``, ``_stddev``, ``_cv``) summarise
    the repetitions beside them and are not read again; when a file holds only
    aggregates (``--benchmark_report_aggregates_only``), ``mean`` and ``stddev`` with
    the entry's ``repetitions`` are read as summary statistics.  Entries with
    ``error_occurred`` or ``skipped`` are left out with a note.
``pytest-benchmark``
    ``--benchmark-json`` or a saved run (``.benchmarks/…/0001_*.json``): one set per
    benchmark (``fullname``; label ``benchmark``, and ``group``, ``param`` when set),
    seconds per iteration.  With ``--benchmark-save-data`` the rounds (``stats.data``)
    are the samples (when it holds every round); without it ``stats.rounds``, ``mean`` and ``stddev`` are summary
    statistics.  ``machine_info`` is the machine record, ``commit_info.id`` the label ``rev``.
``bmf``
    bencher metric format: ``{BENCHMARK: {MEASURE: {"value": x, "lower_value": ..,
    "upper_value": ..}}}``; one value per benchmark and measure (label ``metric``).
    One value cannot show a spread: comparisons of it cannot be judged, and a note says so.
"""

from __future__ import annotations

from typing import Any

from abstat.errors import InputError
from abstat.readers.sampleset import SampleSet
from abstat.readers.summary import Summary

_GBENCH_KNOWN = {
    "name",
    "run_name",
    "run_type",
    "repetitions",
    "repetition_index",
    "threads",
    "iterations",
    "real_time",
    "cpu_time",
    "time_unit",
    "family_index",
    "per_family_instance_index",
    "aggregate_name",
    "aggregate_unit",
    "label",
    "error_occurred",
    "error_message",
    "skipped",
    "skip_message",
    "big_o",
    "rms",
    "complexity_n",
}
_COUNTER_UNITS = {"bytes_per_second": "B/s", "items_per_second": "items/s"}
_TO_S = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}


def _num(value: Any) -> float | None:
    import math

    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value) if math.isfinite(value) else None


def is_gbench(doc: Any) -> bool:
    if not isinstance(doc, dict) or not isinstance(doc.get("benchmarks"), list):
        return False
    return _gbench_entries(doc["benchmarks"]) or _gbench_context(doc.get("context"))


def _gbench_entries(benchmarks: list[Any]) -> bool:
    """Entries with Google Benchmark's times or run types, and none of pyperf's runs or pytest-benchmark's stats."""
    entries = [b for b in benchmarks if isinstance(b, dict)]
    return (
        bool(entries)
        and all("runs" not in b and "stats" not in b for b in entries)
        and any(k in b for b in entries for k in ("real_time", "cpu_time", "time_unit", "run_type"))
    )


def _gbench_context(context: Any) -> bool:
    """A context that describes Google Benchmark's build and machine."""
    return isinstance(context, dict) and any(
        k in context for k in ("library_build_type", "num_cpus", "mhz_per_cpu", "json_schema_version")
    )


def is_pytest_benchmark(doc: Any) -> bool:
    if not isinstance(doc, dict) or not isinstance(doc.get("benchmarks"), list):
        return False
    entries = doc["benchmarks"]
    return "machine_info" in doc or (
        bool(entries) and all(isinstance(b, dict) and isinstance(b.get("stats"), dict) for b in entries)
    )


def is_bmf(doc: Any) -> bool:
    if not isinstance(doc, dict) or not doc:
        return False
    return all(_bmf_measures(measures) for measures in doc.values())


def _bmf_measures(measures: Any) -> bool:
    """A benchmark's measures in BMF: each an object with a finite ``value``, one at least."""
    return (
        isinstance(measures, dict)
        and bool(measures)
        and all(isinstance(m, dict) and "value" in m and _num(m["value"]) is not None for m in measures.values())
    )


def read_gbench(path: str, doc: Any) -> list[SampleSet]:
    if not isinstance(doc, dict) or not isinstance(doc.get("benchmarks"), list):
        raise InputError("not a Google Benchmark JSON file (no 'benchmarks' list)", path=path)
    machine = _machine(doc)
    found: dict[tuple[str, str], SampleSet] = {}
    aggregates: dict[str, dict[str, dict[str, Any]]] = {}
    failed: list[str] = []
    for index, entry in enumerate(doc["benchmarks"]):
        _read_entry(path, index, entry, machine, found, aggregates, failed)
    notes = _read_aggregates(path, aggregates, machine, found)
    if failed:
        notes.append(
            f"{path}: {len(failed)} benchmark(s) reported an error or were skipped: left out (e.g. {failed[0]})"
        )
    sets = list(found.values())
    if not sets:
        raise InputError("Google Benchmark file holds no readable result", path=path)
    sets[0].notes.extend(notes)
    return sets


def _machine(doc: dict[str, Any]) -> dict[str, Any]:
    """The context's plain values (the host, its CPUs and caches, the library's build): the machine record."""
    context = doc["context"] if isinstance(doc.get("context"), dict) else {}
    return {k: v for k, v in context.items() if isinstance(v, (str, int, float, bool))}


def _read_entry(
    path: str,
    index: int,
    entry: Any,
    machine: dict[str, Any],
    found: dict[tuple[str, str], SampleSet],
    aggregates: dict[str, dict[str, dict[str, Any]]],
    failed: list[str],
) -> None:
    """Read ``benchmarks[index]``: a failed or skipped run (to ``failed``), an aggregate (to
    ``aggregates``), else a repetition (to ``found``)."""
    if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
        raise InputError(f"benchmarks[{index}]: no 'name'", path=path)
    name = str(entry.get("run_name") or entry["name"])
    if entry.get("error_occurred") or entry.get("skipped"):
        failed.append(entry["name"])
    elif entry.get("run_type") == "aggregate" and entry.get("aggregate_name"):
        aggregates.setdefault(name, {})[str(entry["aggregate_name"])] = entry
    else:
        _read_repetition(path, entry, name, machine, found)


def _read_repetition(
    path: str, entry: dict[str, Any], name: str, machine: dict[str, Any], found: dict[tuple[str, str], SampleSet]
) -> None:
    """Add the times and counters of one run (a repetition) of benchmark ``name`` to ``found``."""
    unit = str(entry.get("time_unit", "ns"))
    if unit not in _TO_S:
        raise InputError(f"{entry['name']}: time_unit {unit!r}: not ns, us, ms or s", path=path)
    for key, value in entry.items():
        if key in _GBENCH_KNOWN and key not in ("real_time", "cpu_time"):
            continue
        measured = _gbench_value(path, entry["name"], key, value, unit)
        if measured is None:
            continue
        number, metric_unit = measured
        slot = found.get((name, key))
        if slot is None:
            slot = found[(name, key)] = SampleSet(
                labels={"benchmark": name, "metric": key},
                runs=[[]],
                source=path,
                unit=metric_unit,
                machine=dict(machine),
            )
        slot.runs[0].append(number)


def _gbench_value(path: str, entry_name: str, key: str, value: Any, unit: str) -> tuple[float, str | None] | None:
    """A time (in seconds, whatever each entry's unit: compare.py's geomean too) or a counter and its
    unit; None for a counter that is not a finite number."""
    number = _num(value)
    is_time = key in ("real_time", "cpu_time")
    if number is None:
        if is_time:
            raise InputError(f"{entry_name}: {key}: not a finite number: {value!r}"[:120], path=path)
        return None
    if not is_time:
        return number, _COUNTER_UNITS.get(key)
    if number < 0:
        raise InputError(f"{entry_name}: {key}: a negative time: {value!r}"[:120], path=path)
    return number * _TO_S[unit], "s"


def _read_aggregates(
    path: str,
    aggregates: dict[str, dict[str, dict[str, Any]]],
    machine: dict[str, Any],
    found: dict[tuple[str, str], SampleSet],
) -> list[str]:
    """Add the benchmarks known only by their aggregates (mean, stddev, repetitions) to ``found``, as
    summaries; the notes on those that cannot be read."""
    notes = []
    for name, named in aggregates.items():
        if any(key[0] == name for key in found):
            continue  # the repetitions are read; their aggregates are not read again
        n = _repetitions(named)
        if n is None:
            notes.append(
                f"{path}: {name}: aggregates without their repetitions (need mean, stddev and 'repetitions'): left out"
            )
            continue
        _add_summaries(path, name, named, n, machine, found)
    return notes


def _repetitions(named: dict[str, dict[str, Any]]) -> int | None:
    """The number of repetitions of a benchmark known by its aggregates: None without mean and stddev."""
    mean, stddev = named.get("mean"), named.get("stddev")
    n = mean.get("repetitions") if mean else None
    if not mean or not stddev or not isinstance(n, int) or isinstance(n, bool) or n < 1:
        return None
    return n


def _add_summaries(
    path: str,
    name: str,
    named: dict[str, dict[str, Any]],
    n: int,
    machine: dict[str, Any],
    found: dict[tuple[str, str], SampleSet],
) -> None:
    """Each time (real, CPU) whose mean and stddev are finite, in seconds: a summary of ``n`` repetitions."""
    mean, stddev = named["mean"], named["stddev"]
    for key in ("real_time", "cpu_time"):
        m, s = _num(mean.get(key)), _num(stddev.get(key))
        scale = _TO_S.get(str(mean.get("time_unit", "ns")))
        if m is None or s is None or scale is None:
            continue
        found[(name, key)] = SampleSet(
            labels={"benchmark": name, "metric": key},
            runs=[],
            source=path,
            unit="s",
            machine=dict(machine),
            summary=Summary(n, m * scale, s * scale),
        )


def read_pytest_benchmark(path: str, doc: Any) -> list[SampleSet]:
    if not isinstance(doc, dict) or not isinstance(doc.get("benchmarks"), list):
        raise InputError("not a pytest-benchmark JSON file (no 'benchmarks' list)", path=path)
    machine = doc["machine_info"] if isinstance(doc.get("machine_info"), dict) else {}
    commit = doc["commit_info"] if isinstance(doc.get("commit_info"), dict) else {}
    sets = [_pytest_set(path, index, bench, machine, commit) for index, bench in enumerate(doc["benchmarks"])]
    if not sets:
        raise InputError("pytest-benchmark file holds no benchmarks", path=path)
    return sets


def _pytest_labels(bench: dict[str, Any], name: str, commit: dict[str, Any]) -> dict[str, str]:
    labels = {"benchmark": name}
    for key in ("group", "param"):
        if bench.get(key) not in (None, ""):
            labels[key] = str(bench[key])
    if commit.get("id"):
        labels["rev"] = str(commit["id"])
    return labels


def _pytest_values(path: str, name: str, stats: dict[str, Any]) -> tuple[list[float], list[str]]:
    """The values in ``stats.data`` (none when it has none, or fewer than the rounds ran: then a note)."""
    data = stats.get("data")
    if not (isinstance(data, list) and data):
        return [], []
    if stats.get("rounds") not in (None, len(data)):
        return [], [
            f"{path}: {name}: stats.data holds {len(data)} values but {stats.get('rounds')!r} "
            "rounds ran: read as its stats (rounds, mean, stddev), as pytest-benchmark reports it"
        ]
    values = [_num(v) for v in data]
    finite = [v for v in values if v is not None]
    if len(finite) != len(values):
        raise InputError(f"{name}: stats.data: not all finite numbers", path=path)
    return finite, []


def _pytest_set(path: str, index: int, bench: Any, machine: dict[str, Any], commit: dict[str, Any]) -> SampleSet:
    """The set of ``benchmarks[index]``: its values (``stats.data``), else its stats as a summary."""
    stats = bench.get("stats") if isinstance(bench, dict) else None
    if not isinstance(stats, dict):
        raise InputError(f"benchmarks[{index}]: no 'stats'", path=path)
    name = str(bench.get("fullname") or bench.get("name") or f"benchmarks[{index}]")
    labels = _pytest_labels(bench, name, commit)
    values, notes = _pytest_values(path, name, stats)
    if values:
        return SampleSet(labels=labels, runs=[values], source=path, unit="s", machine=dict(machine))
    return SampleSet(
        labels=labels,
        runs=[],
        source=path,
        unit="s",
        machine=dict(machine),
        summary=_pytest_summary(path, name, stats),
        notes=notes,
    )


def _pytest_summary(path: str, name: str, stats: dict[str, Any]) -> Summary:
    """A benchmark known by its stats alone: rounds, mean and stddev."""
    rounds, mean, stddev = stats.get("rounds"), _num(stats.get("mean")), _num(stats.get("stddev"))
    if not isinstance(rounds, int) or isinstance(rounds, bool) or rounds < 1 or mean is None or stddev is None:
        raise InputError(f"{name}: stats need 'rounds', 'mean' and 'stddev' (or 'data')", path=path)
    return Summary(rounds, mean, stddev)


def read_bmf(path: str, doc: Any) -> list[SampleSet]:
    if not is_bmf(doc):
        raise InputError('not a bencher metric format (BMF) file: {BENCHMARK: {MEASURE: {"value": x}}}', path=path)
    sets = [
        SampleSet(labels={"benchmark": str(name), "metric": str(measure)}, runs=[[float(m["value"])]], source=path)
        for name, measures in doc.items()
        for measure, m in measures.items()
    ]
    sets[0].notes.append(
        f"{path}: BMF holds one value per benchmark and measure (no spread): its comparisons cannot be judged"
    )
    return sets
