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

The readers are in their own modules (:mod:`abstat.readers.hyperfine`, :mod:`abstat.readers.pyperf`,
:mod:`abstat.readers.csvtable`, ...), re-exported here.  Every function returns ``list[SampleSet]`` and raises
:class:`abstat.errors.InputError` naming the file (and line) on bad input.
"""

from __future__ import annotations

import csv
import os
import re
from typing import Any

from abstat.errors import InputError, UsageError
from abstat.readers.csvtable import read_csv
from abstat.readers.gobench import read_gobench
from abstat.readers.hyperfine import read_hyperfine
from abstat.readers.kernel_formats import FORMATS as KERNEL_FORMATS
from abstat.readers.pyperf import read_pyperf
from abstat.readers.sampleset import SampleSet
from abstat.readers.source import read_text
from abstat.readers.values import decode_json, is_number, load_json

__all__ = [
    "FORMATS",
    "detect_format",
    "detect_json",
    "load_json",
    "read_csv",
    "read_directory",
    "read_gobench",
    "read_hyperfine",
    "read_peer",
    "read_pyperf",
    "read_text",
]


FORMATS = (
    "hyperfine",
    "pyperf",
    "go",
    "csv",
    "gbench",
    "pytest-benchmark",
    "bmf",
    "criterion",
    "criterion-csv",
    "asv",
    *KERNEL_FORMATS,
)


def detect_json(doc: Any) -> str | None:
    """The format of a JSON document, the more specific formats first (Google Benchmark's
    and pytest-benchmark's ``benchmarks`` before pyperf's)."""
    from abstat.readers import criterion

    if not isinstance(doc, (dict, list)):
        return None
    if criterion.is_sample_json(doc) or criterion.is_estimates(doc):
        return "criterion"
    if not isinstance(doc, dict):
        return None
    return _detect_object(doc)


def _detect_object(doc: dict[str, Any]) -> str | None:
    """The format of a JSON object that is not criterion's."""
    from abstat.readers import asv, benchjson

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
    # a JSON object, or criterion's old sample.json (a list)
    if stripped.startswith("{") or (stripped.startswith("[") and text.rstrip().endswith("]")):
        return _detect_json_text(text)
    return _detect_lines(text)


def _detect_json_text(text: str) -> str | None:
    try:
        doc = decode_json(text)
    except ValueError:
        return None
    return detect_json(doc)


def _detect_lines(text: str) -> str | None:
    """Go benchmark text (a result line), else a CSV table (a header and a row at least), else None."""
    lines = text.splitlines()
    if any(_is_go_result(line) for line in lines):
        return "go"
    content = [line for line in lines if line.strip() and not line.lstrip().startswith("#")]
    return _detect_csv(content) if len(content) >= 2 else None


def _is_go_result(line: str) -> bool:
    fields = line.split()
    return len(fields) >= 4 and line.startswith("Benchmark") and fields[1].isdigit()


def _detect_csv(content: list[str]) -> str | None:
    """``csv`` (or criterion's raw CSV) when the first content line is a header: comma separated, at
    least one non-numeric field, and the next line has as many fields."""
    from abstat.readers.criterion import is_raw_csv

    try:
        fields = next(csv.reader([content[0]]))
        if is_raw_csv(fields):
            return "criterion-csv"
        if _names_columns(fields) and len(next(csv.reader([content[1]]))) == len(fields):
            return "csv"
    except csv.Error:  # CSV-like but broken: read_csv names the line
        return "csv" if "," in content[0] else None
    return None


def _names_columns(fields: list[str]) -> bool:
    """Two fields at least, one of them a name (a letter in it, not a number), and no decimal comma split in
    two (``time: 12,5``, ``12,5 ms``: a field ending in a digit beside one starting with one, either of them
    not a number, is a number with text around it, which the plain reader refuses): a header, not data."""
    glued = any(
        left[-1:].isdigit() and right[:1].isdigit() and not (is_number(left) and is_number(right))
        for left, right in zip(fields, fields[1:], strict=False)
    )
    return len(fields) >= 2 and not glued and any(_CSV_SNIFF.search(f) and not is_number(f) for f in fields)


def read_peer(
    path: str,
    fmt: str,
    *,
    text: str | None = None,
    value_columns: list[str] | None = None,
    label_columns: list[str] | None = None,
) -> list[SampleSet]:
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
            raise InputError(
                "a directory, and no asv or criterion results in it (abstat reads a results directory "
                "of those, or files)"
                if os.path.isdir(path)
                else "asv results file holds no result",
                path=path,
            )
        sets[0].notes.extend(notes)
        return sets
    doc = load_json(path, text)
    if fmt == "criterion":
        return criterion.read_criterion(path, doc)
    reader = {
        "gbench": benchjson.read_gbench,
        "pytest-benchmark": benchjson.read_pytest_benchmark,
        "bmf": benchjson.read_bmf,
    }[fmt]
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
        raise InputError(
            "a criterion directory without sample.json: criterion's samples are not there "
            "(estimates.json holds only its summary)",
            path=path,
        )
    return _read_more(path, "asv", "")
