"""airspeed velocity (asv) results: one JSON file per machine, commit and environment.

``asv run`` writes ``results/MACHINE/HASH8-ENV.json`` (and ``machine.json`` beside them,
``benchmarks.json`` one level up).  A results file holds ``commit_hash``, ``date`` (the
commit's, in milliseconds), ``params`` (the machine and environment, ``machine`` among
them), ``env_name`` and ``results``:

- format 2 (asv >= 0.5): ``results[name]`` is a row of the columns ``result_columns``
  names (``result``, ``params``, ..., ``samples``): ``result`` holds one value per
  combination of the benchmark's parameters (``itertools.product`` of ``params``), and
  ``samples`` one list of samples per combination when asv kept them;
- format 1: ``results[name]`` is a number, or ``{"result": [...], "params": [...],
  "samples": [...]}``.

Each benchmark (and parameter combination) gives a :class:`SampleSet` labelled
``metric`` (the benchmark's name), ``params`` (when it has any), ``machine``, ``env`` and the revision
(``rev``: the commit hash; ``commit_time``: its date in Unix seconds): the samples when
asv kept them, else its one result.  Failed benchmarks (``null``) are left out, counted
in a note; in a results directory, files that are not results (malformed JSON) are
skipped with a note, as asv skips them.  Units come from ``benchmarks.json`` when it is there (asv's ``seconds`` is
``s``).
"""

from __future__ import annotations

import math
import os
from typing import Any

from abstat.errors import InputError
from abstat.readers.sampleset import SampleSet
from abstat.readers.source import loads_json, read_named

_UNITS = {"seconds": "s", "bytes": "B"}


def is_asv_results(document: Any) -> bool:
    return isinstance(document, dict) and "commit_hash" in document and isinstance(document.get("results"), dict)


def result_files(path: str) -> list[str]:
    """The results files under ``path``: a results directory, one machine's, or one file."""
    if not os.path.isdir(path):
        return [path]
    found = []
    for directory, subdirectories, files in os.walk(path):
        subdirectories.sort()
        found += [
            os.path.join(directory, f)
            for f in sorted(files)
            if f.endswith(".json") and f not in ("machine.json", "benchmarks.json")
        ]
    return found


def _units(path: str) -> dict[str, str]:
    """Benchmark name -> unit, from the ``benchmarks.json`` of the results directory above."""
    directory = os.path.dirname(os.path.abspath(path))
    for candidate in (
        os.path.join(directory, "benchmarks.json"),
        os.path.join(os.path.dirname(directory), "benchmarks.json"),
    ):
        if not os.path.exists(candidate):
            continue
        try:
            document = loads_json(read_named(candidate), candidate)
        except (InputError, ValueError):
            continue
        if isinstance(document, dict):
            return _declared_units(document)
    return {}


def _declared_units(document: dict[str, Any]) -> dict[str, str]:
    """The unit ``benchmarks.json`` declares for each benchmark that declares one."""
    return {
        name: str(info.get("unit")) for name, info in document.items() if isinstance(info, dict) and info.get("unit")
    }


def _result_numbers(result: Any, samples: list[Any], index: int) -> list[float]:
    """The finite numbers of a result: its samples when asv kept them, else the result itself."""
    values = samples[index] if index < len(samples) and isinstance(samples[index], list) else [result]
    return [v for v in (_number(x) for x in values) if v is not None]


def _result_labels(base: dict[str, str], name: str, params: list[list[Any]], index: int) -> dict[str, str]:
    """The file's labels, the benchmark's name as the metric, and the result's parameter combination."""
    labels = {**base, "metric": name}
    combination = _combination(params, index)
    if combination is not None:
        labels["params"] = ", ".join(str(p) for p in combination)
    return labels


def _env_from_name(path: str) -> str:
    """``HASH8-ENV.json`` -> ``ENV`` (format 1 files name their environment only there)."""
    name = os.path.basename(path)[: -len(".json")] if path.endswith(".json") else os.path.basename(path)
    return name.partition("-")[2] or name


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    value = float(value)
    return value if math.isfinite(value) else None


def _entries(document: dict[str, Any], path: str) -> list[tuple[str, list[Any], list[list[Any]], list[Any]]]:
    """(name, results per combination, parameter values, samples per combination) per benchmark."""
    columns = document.get("result_columns")
    entries = []
    for name, row in document["results"].items():
        results, params, samples = _row_fields(columns, row, name, path)
        if not isinstance(results, list):
            results = [results]
        if not isinstance(params, list) or not all(isinstance(p, list) for p in params):
            raise InputError(f"results[{name!r}]: 'params' is not a list of lists", path=path)
        if not isinstance(samples, list):
            samples = [None] * len(results)
        entries.append((str(name), results, params, samples))
    return entries


def _row_fields(columns: Any, row: Any, name: Any, path: str) -> tuple[Any, Any, Any]:
    """A benchmark's row as (results, parameter values, samples), in either format of asv's results."""
    if isinstance(columns, list):  # format 2
        if not isinstance(row, list):
            raise InputError(f"results[{name!r}] is not a list of {len(columns)} columns", path=path)
        fields = dict(zip(columns, row))
        return fields.get("result"), fields.get("params") or [], fields.get("samples")
    if isinstance(row, dict):  # format 1, parameterized or with samples
        return row.get("result"), row.get("params") or [], row.get("samples")
    return row, [], None  # format 1, a plain number


def _combination(params: list[list[Any]], index: int) -> tuple[Any, ...] | None:
    """The ``index``-th parameter combination, in ``itertools.product`` order, without making the
    product (a few lists of a few hundred values each would be billions of tuples); None past it."""
    if not params or any(not p for p in params):
        return None
    chosen = []
    for values in reversed(params):
        index, at = divmod(index, len(values))
        chosen.append(values[at])
    return tuple(reversed(chosen)) if index == 0 else None


def read_asv(path: str) -> tuple[list[SampleSet], list[str]]:
    """Every results file under ``path`` as sample sets; with notes."""
    sets: list[SampleSet] = []
    skipped: list[str] = []
    failed = 0
    for file_path in result_files(path):
        document = _document(path, file_path, skipped)
        if document is not None:
            failed += _read_document(file_path, document, sets)
    notes = [f"{path}: {failed} failed or missing asv result(s) left out"] if failed else []
    if skipped:
        notes.append(
            f"{path}: {len(skipped)} file(s) that are not asv results skipped, as asv does (e.g. {skipped[0]})"
        )
    return sets, notes


def _document(path: str, file_path: str, skipped: list[str]) -> dict[str, Any] | None:
    """The results document in ``file_path``; None (and the file in ``skipped``) for a file of a results
    directory that is not one, as asv skips it; InputError when ``path`` is that file."""
    try:
        document = loads_json(read_named(file_path), file_path)
    except ValueError as err:
        if file_path != path:  # in a results directory asv skips it too
            skipped.append(os.path.relpath(file_path, path))
            return None
        raise InputError(
            f"bad JSON: {getattr(err, 'msg', err)}", path=file_path, line=getattr(err, "lineno", None)
        ) from None
    if not is_asv_results(document):
        if file_path != path:
            skipped.append(os.path.relpath(file_path, path))
            return None
        raise InputError("not an asv results file (no 'commit_hash' and 'results')", path=file_path)
    return document


def _file_labels(file_path: str, document: dict[str, Any], machine: dict[str, Any]) -> dict[str, str]:
    """The labels every result of the file has: revision, machine, environment (and commit time)."""
    base = {
        "rev": str(document["commit_hash"]),
        "machine": str(machine.get("machine", "")),
        "env": str(document.get("env_name") or _env_from_name(file_path)),
    }
    date = _number(document.get("date"))
    if date is not None:
        base["commit_time"] = repr(date / 1000.0)
    return base


def _read_document(file_path: str, document: dict[str, Any], sets: list[SampleSet]) -> int:
    """Add a set per benchmark and parameter combination to ``sets``; the number of failed results."""
    machine = document["params"] if isinstance(document.get("params"), dict) else {}
    base = _file_labels(file_path, document, machine)
    units = _units(file_path)
    failed = 0
    for name, results, params, samples in _entries(document, file_path):
        for i, result in enumerate(results):
            numbers = _result_numbers(result, samples, i)
            if not numbers:
                failed += 1
                continue
            labels = _result_labels(base, name, params, i)
            unit = units.get(name)
            sets.append(
                SampleSet(
                    labels=labels,
                    runs=[numbers],
                    source=file_path,
                    unit=_UNITS.get(unit, unit) if unit else None,
                    machine=dict(machine),
                )
            )
    return failed
