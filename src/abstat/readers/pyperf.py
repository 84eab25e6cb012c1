"""pyperf JSON (``.json`` or ``.json.gz``): ``benchmarks[].runs[].values``, one run per pyperf worker
process; warmups and calibration runs (runs without ``values``) are skipped.  Label ``benchmark`` is
the benchmark's name; the common metadata becomes the machine record."""

from __future__ import annotations

from typing import Any

from abstat.errors import InputError
from abstat.readers.sampleset import SampleSet
from abstat.readers.source import read_text
from abstat.readers.values import finite, load_json

_PYPERF_MACHINE_KEYS = (
    "hostname",
    "platform",
    "cpu_model_name",
    "cpu_count",
    "cpu_freq",
    "cpu_config",
    "cpu_affinity",
    "boot_time",
    "aslr",
    "python_implementation",
    "python_version",
    "python_compiler",
    "perf_version",
    "timer",
)


def read_pyperf(path: str, text: str | None = None) -> list[SampleSet]:
    """pyperf JSON: one set per benchmark, one run per worker process."""
    doc = load_json(path, read_text(path) if text is None else text)
    common, benchmarks = _benchmarks(path, doc)
    sets = [_benchmark_set(path, index, bench, common) for index, bench in enumerate(benchmarks)]
    if not sets:
        raise InputError("pyperf file holds no benchmarks", path=path)
    return sets


def _benchmarks(path: str, doc: Any) -> tuple[dict[str, Any], list[Any]]:
    """The metadata common to the benchmarks, and the benchmarks."""
    if not isinstance(doc, dict):
        raise InputError("not a pyperf JSON file", path=path)
    common = doc.get("metadata") or {}
    if not isinstance(common, dict):
        raise InputError("not a pyperf JSON file ('metadata' is not an object)", path=path)
    if "benchmarks" in doc:
        benchmarks = doc["benchmarks"]
    elif "runs" in doc:  # a single benchmark file (old layout)
        benchmarks = [doc]
        common = {}
    else:
        raise InputError("not a pyperf JSON file (no 'benchmarks')", path=path)
    if not isinstance(benchmarks, list) or not isinstance(common, dict):
        raise InputError("not a pyperf JSON file", path=path)
    return common, benchmarks


def _benchmark_set(path: str, index: int, bench: Any, common: dict[str, Any]) -> SampleSet:
    """The set of ``benchmarks[index]``."""
    if not isinstance(bench, dict):
        raise InputError(f"benchmarks[{index}] is not an object", path=path)
    metadata = dict(common)
    bench_metadata = bench.get("metadata") or {}
    if not isinstance(bench_metadata, dict):
        raise InputError(f"benchmarks[{index}].metadata is not an object", path=path)
    metadata.update(bench_metadata)
    name = str(metadata.get("name", f"benchmark{index + 1}"))
    runs = _runs(path, name, bench)
    labels = _labels(name, metadata)
    machine = {k: metadata[k] for k in _PYPERF_MACHINE_KEYS if k in metadata}
    unit = str(metadata.get("unit", "second"))
    return SampleSet(
        labels=labels,
        runs=runs,
        source=path,
        unit="s" if unit == "second" else unit,
        machine=machine,
        extra={"pyperf_metadata": metadata},
    )


def _labels(name: str, metadata: dict[str, Any]) -> dict[str, str]:
    """The benchmark's name, its tags and its host."""
    labels = {"benchmark": name}
    tags = metadata.get("tags")
    if isinstance(tags, list) and tags:  # pyperf's table of tag T: --where tags=T,T+U,...
        labels["tags"] = "+".join(sorted(str(t) for t in tags))
    if "hostname" in metadata:
        labels["host"] = str(metadata["hostname"])
    return labels


def _runs(path: str, name: str, bench: dict[str, Any]) -> list[list[float]]:
    """The measured values of each worker's run (calibration runs, without values, skipped)."""
    runs: list[list[float]] = []
    bench_runs = bench.get("runs") or []
    if not isinstance(bench_runs, list):
        raise InputError(f"{name}: 'runs' is not a list", path=path)
    for run_index, run in enumerate(bench_runs):
        values = _run_values(path, name, run_index, run)
        if values:
            runs.append(values)
    if not runs:
        raise InputError(f"benchmark {name!r} has no measured values", path=path)
    return runs


def _run_values(path: str, name: str, run_index: int, run: Any) -> list[float] | None:
    """A worker's measured values; None for a calibration run (warmups only, no values)."""
    values = run.get("values") if isinstance(run, dict) else None
    if not values:
        return None
    if not isinstance(values, list):
        raise InputError(f"{name}: runs[{run_index}].values is not a list", path=path)
    return [finite(v, path, f"{name}: runs[{run_index}].values") for v in values]
