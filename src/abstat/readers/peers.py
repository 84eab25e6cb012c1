"""Read other benchmark tools' result files into labelled sample sets.

Formats (auto-detected by content, or chosen with ``--input-format``):

``hyperfine``
    ``hyperfine --export-json`` files: ``results[].command`` (label
    ``command``), ``times`` (seconds), ``exit_codes``, ``parameters``
    (labels, from ``-L``/``--parameter-scan``), ``user`` and ``system``
    (kept for the export).
``pyperf``
    pyperf JSON (``.json`` or ``.json.gz``): ``benchmarks[].runs[].values``,
    one run per pyperf worker process; warmups and calibration runs (runs
    without ``values``) are skipped.  Label ``benchmark`` is the benchmark's
    name; the common metadata becomes the machine record.
``go``
    Go benchmark text (``go test -bench``, the format benchstat reads), as
    golang.org/x/perf/benchfmt reads it: see :mod:`abstat.readers.gobench`.
``csv``
    CSV with a header: numeric columns are metrics (one sample per row),
    the others labels; ``value_columns``/``label_columns`` choose.

Every function returns ``list[SampleSet]`` and raises
:class:`abstat.errors.InputError` naming the file (and line) on bad input.
"""
from __future__ import annotations

import csv
import io
import json
import math
import os
import re
from typing import Any

from abstat.errors import InputError, UsageError
from abstat.readers.gobench import read_gobench
from abstat.readers.kernel import FORMATS as KERNEL_FORMATS
from abstat.readers.source import read_text
from abstat.readers.sampleset import SampleSet


FORMATS = ("hyperfine", "pyperf", "go", "csv", "gbench", "pytest-benchmark", "bmf", "criterion",
           "criterion-csv", "asv", *KERNEL_FORMATS)


def detect_json(doc: Any) -> str | None:
    """The format of a JSON document, the more specific formats first (Google Benchmark's
    and pytest-benchmark's ``benchmarks`` before pyperf's)."""
    from abstat.readers import asv, benchjson, criterion

    if not isinstance(doc, (dict, list)):
        return None
    if criterion.is_sample_json(doc) or criterion.is_estimates(doc):
        return "criterion"
    if not isinstance(doc, dict):
        return None
    if isinstance(doc.get("results"), list):
        return "hyperfine"
    if asv.is_asv_results(doc):
        return "asv"
    if benchjson.is_gbench(doc):
        return "gbench"
    if benchjson.is_pytest_benchmark(doc):
        return "pytest-benchmark"
    if "benchmarks" in doc or ("runs" in doc and "metadata" in doc):
        return "pyperf"
    if benchjson.is_bmf(doc):
        return "bmf"
    return None

_CSV_SNIFF = re.compile(r"[A-Za-z_]")


def detect_format(path: str, text: str) -> str | None:
    """Which peer format ``text`` is in, or None for plain sample files."""
    from abstat.readers import kernel

    found = kernel.detect(text)  # before CSV: a perf stat -x, file's first row is data, not a header
    if found:
        return found
    stripped = text.lstrip()
    if stripped.startswith("{"):
        try:
            doc = json.loads(text)
        except (ValueError, RecursionError):
            return None
        return detect_json(doc)
    if stripped.startswith("[") and text.rstrip().endswith("]"):  # criterion's old sample.json
        try:
            return detect_json(json.loads(text))
        except (ValueError, RecursionError):
            return None
    lines = text.splitlines()
    for line in lines:
        fields = line.split()
        if len(fields) >= 4 and line.startswith("Benchmark") and fields[1].isdigit():
            return "go"
    content = [line for line in lines if line.strip() and not line.lstrip().startswith("#")]
    if len(content) >= 2:
        # A header: comma separated, at least one non-numeric field, and the
        # next line has as many fields.
        try:
            fields = next(csv.reader([content[0]]))
            from abstat.readers.criterion import is_raw_csv

            if is_raw_csv(fields):
                return "criterion-csv"
            if (len(fields) >= 2 and any(_CSV_SNIFF.search(f) and not _is_number(f) for f in fields)
                    and len(next(csv.reader([content[1]]))) == len(fields)):
                return "csv"
        except csv.Error:  # CSV-like but broken: read_csv names the line
            return "csv" if "," in content[0] else None
    return None


def read_peer(path: str, fmt: str, *, text: str | None = None,
              value_columns: list[str] | None = None,
              label_columns: list[str] | None = None) -> list[SampleSet]:
    """Read ``path`` in peer format ``fmt`` (one of FORMATS)."""
    if text is None:
        text = read_text(path)
    if fmt == "hyperfine":
        return read_hyperfine(path, text)
    if fmt == "pyperf":
        return read_pyperf(path, text)
    if fmt == "go":
        return read_gobench(path, text)
    if fmt == "csv":
        return read_csv(path, text, value_columns=value_columns, label_columns=label_columns)
    if fmt in ("gbench", "pytest-benchmark", "bmf", "criterion", "criterion-csv", "asv"):
        return _read_more(path, fmt, text)
    if fmt in KERNEL_FORMATS:
        from abstat.readers import kernel

        return kernel.read(path, fmt, text)
    raise UsageError(f"unknown input format {fmt!r} (choose from {', '.join(FORMATS)})")


def _read_more(path: str, fmt: str, text: str) -> list[SampleSet]:
    from abstat.readers import benchjson, criterion

    if fmt == "criterion-csv":
        return criterion.read_raw_csv(path, text)
    if fmt == "asv":
        from abstat.readers.asv import read_asv

        sets, notes = read_asv(path)
        if not sets:
            raise InputError("asv results file holds no result", path=path)
        sets[0].notes.extend(notes)
        return sets
    doc = load_json(path, text)
    if fmt == "criterion":
        return criterion.read_criterion(path, doc)
    reader = {"gbench": benchjson.read_gbench, "pytest-benchmark": benchjson.read_pytest_benchmark,
              "bmf": benchjson.read_bmf}[fmt]
    return reader(path, doc)


def read_directory(path: str) -> list[SampleSet]:
    """A directory of results: criterion's (``target/criterion``) or asv's (``results``)."""
    from abstat.readers import criterion

    estimates = False
    for _, _, files in os.walk(path):
        if "sample.json" in files:
            return criterion.read_criterion(path)
        estimates = estimates or "estimates.json" in files
    if estimates:  # criterion's summaries without its samples: not an asv directory
        raise InputError("a criterion directory without sample.json: criterion's samples are not there "
                         "(estimates.json holds only its summary)", path=path)
    return _read_more(path, "asv", "")


# --------------------------------------------------------------------------
# helpers

def _is_number(field: str) -> bool:
    try:
        value = float(field)
    except ValueError:
        return False
    return math.isfinite(value)


def _looks_numeric(field: str) -> bool:
    """A number, finite or not: a column of them holds values, not labels
    (a ``nan`` in it is then reported on its line, not taken for a label)."""
    try:
        float(field)
    except ValueError:
        return False
    return True


def _shown(value: Any) -> str:
    """``repr(value)``, cut to 40 characters: an error message stays one readable line."""
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _finite(value: Any, path: str, what: str, line: int | None = None) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InputError(f"{what}: not a number: {_shown(value)}", path=path, line=line)
    value = float(value)
    if not math.isfinite(value):
        raise InputError(f"{what}: not a finite number: {value!r}", path=path, line=line)
    return value


def load_json(path: str, text: str) -> Any:
    """The JSON document in ``text``; InputError naming ``path`` and the line."""
    try:
        return json.loads(text)
    except ValueError as err:
        line = getattr(err, "lineno", None)
        raise InputError(f"bad JSON: {getattr(err, 'msg', err)}", path=path, line=line) from None
    except RecursionError:
        raise InputError("bad JSON: nested too deeply", path=path) from None


# --------------------------------------------------------------------------
# hyperfine

def read_hyperfine(path: str, text: str | None = None) -> list[SampleSet]:
    """``hyperfine --export-json`` results, one set per command (seconds)."""
    doc = load_json(path, read_text(path) if text is None else text)
    results = doc.get("results") if isinstance(doc, dict) else None
    if not isinstance(results, list):
        raise InputError("not a hyperfine JSON export (no 'results' list)", path=path)
    sets: list[SampleSet] = []
    for index, result in enumerate(results):
        where = f"results[{index}]"
        if not isinstance(result, dict) or not isinstance(result.get("command"), str):
            raise InputError(f"{where}: no 'command'", path=path)
        times = result.get("times")
        if not isinstance(times, list) or not times:
            raise InputError(f"{where} ({result['command']}): no 'times' (export made by "
                             "an old hyperfine?)", path=path)
        values = [_finite(v, path, f"{where}.times") for v in times]
        labels = {"command": result["command"], "metric": "wall"}
        extra: dict[str, Any] = {}
        parameters = result.get("parameters") or {}
        if isinstance(parameters, dict) and parameters:
            extra["parameters"] = {str(k): str(v) for k, v in parameters.items()}
            labels.update(extra["parameters"])
        for key in ("user", "system"):  # mean CPU times, exported again as hyperfine wrote them
            if isinstance(result.get(key), (int, float)) and not isinstance(result.get(key), bool):
                extra[key] = float(result[key])
        notes: list[str] = []
        codes = result.get("exit_codes")
        if isinstance(codes, list) and len(codes) == len(values):
            extra["exit_codes"] = codes
            failed = sum(1 for c in codes if c not in (0, None))
            if failed:
                notes.append(f"{path}: {result['command']}: {failed} of {len(codes)} "
                             "runs exited non-zero (hyperfine -i); their times are included")
        sets.append(SampleSet(labels=labels, runs=[values], source=path, unit="s",
                              extra=extra, notes=notes))
    if not sets:
        raise InputError("hyperfine export holds no results", path=path)
    return sets


# --------------------------------------------------------------------------
# pyperf

_PYPERF_MACHINE_KEYS = (
    "hostname", "platform", "cpu_model_name", "cpu_count", "cpu_freq", "cpu_config",
    "cpu_affinity", "boot_time", "aslr", "python_implementation", "python_version",
    "python_compiler", "perf_version", "timer",
)


def read_pyperf(path: str, text: str | None = None) -> list[SampleSet]:
    """pyperf JSON: one set per benchmark, one run per worker process."""
    doc = load_json(path, read_text(path) if text is None else text)
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
    sets: list[SampleSet] = []
    for index, bench in enumerate(benchmarks):
        if not isinstance(bench, dict):
            raise InputError(f"benchmarks[{index}] is not an object", path=path)
        metadata = dict(common)
        bench_metadata = bench.get("metadata") or {}
        if not isinstance(bench_metadata, dict):
            raise InputError(f"benchmarks[{index}].metadata is not an object", path=path)
        metadata.update(bench_metadata)
        name = str(metadata.get("name", f"benchmark{index + 1}"))
        runs: list[list[float]] = []
        bench_runs = bench.get("runs") or []
        if not isinstance(bench_runs, list):
            raise InputError(f"{name}: 'runs' is not a list", path=path)
        for run_index, run in enumerate(bench_runs):
            values = run.get("values") if isinstance(run, dict) else None
            if not values:  # calibration run: warmups only
                continue
            if not isinstance(values, list):
                raise InputError(f"{name}: runs[{run_index}].values is not a list", path=path)
            runs.append([_finite(v, path, f"{name}: runs[{run_index}].values") for v in values])
        if not runs:
            raise InputError(f"benchmark {name!r} has no measured values", path=path)
        labels = {"benchmark": name}
        tags = metadata.get("tags")
        if isinstance(tags, list) and tags:  # pyperf's table of tag T: --where tags=T,T+U,...
            labels["tags"] = "+".join(sorted(str(t) for t in tags))
        if "hostname" in metadata:
            labels["host"] = str(metadata["hostname"])
        machine = {k: metadata[k] for k in _PYPERF_MACHINE_KEYS if k in metadata}
        unit = str(metadata.get("unit", "second"))
        sets.append(SampleSet(labels=labels, runs=runs, source=path,
                              unit="s" if unit == "second" else unit, machine=machine,
                              extra={"pyperf_metadata": metadata}))
    if not sets:
        raise InputError("pyperf file holds no benchmarks", path=path)
    return sets


# --------------------------------------------------------------------------
# CSV

def read_csv(path: str, text: str | None = None, *,
             value_columns: list[str] | None = None,
             label_columns: list[str] | None = None) -> list[SampleSet]:
    """CSV with a header; numeric columns are metrics, the others labels."""
    if text is None:
        text = read_text(path)
    reader = csv.reader(io.StringIO(text))
    rows = []
    try:
        for row in reader:
            rows.append(row)
    except csv.Error as err:
        raise InputError(f"bad CSV: {err}", path=path, line=reader.line_num) from None
    numbered = [(i + 1, row) for i, row in enumerate(rows)
                if row and any(cell.strip() for cell in row)
                and not row[0].lstrip().startswith("#")]
    if not numbered:
        raise InputError("empty CSV file", path=path)
    header_line, header = numbered[0]
    header = [h.strip() for h in header]
    if len(set(header)) != len(header) or any(not h for h in header):
        raise InputError("CSV header has empty or repeated column names", path=path,
                         line=header_line)
    if all(_looks_numeric(h) for h in header):
        raise InputError("no CSV header: the first row holds numbers, not column names",
                         path=path, line=header_line)
    body = numbered[1:]
    if not body:
        raise InputError("CSV file has a header but no rows", path=path)
    for lineno, row in body:
        if len(row) != len(header):
            raise InputError(f"{len(row)} fields, header has {len(header)}", path=path,
                             line=lineno)
    for name in (value_columns or []) + (label_columns or []):
        if name not in header:
            raise UsageError(f"{path}: no CSV column {name!r} (columns: {', '.join(header)})")
    if label_columns is not None:
        labels_cols = list(label_columns)
    else:  # the columns not chosen as values that are not all numbers
        labels_cols = [h for i, h in enumerate(header) if h not in (value_columns or ())
                       and not all(_looks_numeric(r[i]) for _, r in body)]
    metrics = list(value_columns) if value_columns is not None else [
        h for h in header if h not in labels_cols]
    if not metrics:
        raise InputError("CSV file has no numeric column to use as values "
                         "(choose one with --csv-value)", path=path, line=header_line)
    found: dict[tuple[tuple[str, str], ...], SampleSet] = {}
    label_index = [(h, header.index(h)) for h in labels_cols]
    for lineno, row in body:
        labels = {h: row[i].strip() for h, i in label_index}
        for metric in metrics:
            cell = row[header.index(metric)].strip()
            if not _is_number(cell):
                raise InputError(f"column {metric!r}: not a finite number: {_shown(cell)}",
                                 path=path, line=lineno)
            set_labels = dict(labels)
            if len(metrics) > 1 or "metric" not in set_labels:
                set_labels["metric"] = metric
            key = tuple(sorted(set_labels.items()))
            if key not in found:
                found[key] = SampleSet(labels=set_labels, runs=[[]], source=path)
            found[key].runs[0].append(float(cell))
    return list(found.values())
