"""``hyperfine --export-json`` files: ``results[].command`` (label ``command``), ``times`` (seconds),
``exit_codes``, ``parameters`` (labels, from ``-L``/``--parameter-scan``), ``user`` and ``system``
(kept for the export)."""

from __future__ import annotations

from typing import Any

from abstat.errors import InputError
from abstat.readers.sampleset import SampleSet
from abstat.readers.source import read_text
from abstat.readers.values import finite, load_json


def read_hyperfine(path: str, text: str | None = None) -> list[SampleSet]:
    """``hyperfine --export-json`` results, one set per command (seconds)."""
    doc = load_json(path, read_text(path) if text is None else text)
    results = doc.get("results") if isinstance(doc, dict) else None
    if not isinstance(results, list):
        raise InputError("not a hyperfine JSON export (no 'results' list)", path=path)
    sets = [_result_set(path, index, result) for index, result in enumerate(results)]
    if not sets:
        raise InputError("hyperfine export holds no results", path=path)
    _apart(path, sets)
    return sets


def _apart(path: str, sets: list[SampleSet]) -> None:
    """Results of one command (and parameters) given twice (``hyperfine --prepare P1 cmd --prepare P2 cmd``)
    are two benchmarks, never pooled: a repeat's command is named ``cmd #N`` (N: hyperfine's benchmark number)."""
    seen: dict[tuple[tuple[str, str], ...], int] = {}
    for number, sample_set in enumerate(sets, 1):
        first = seen.setdefault(tuple(sorted(sample_set.labels.items())), number)
        if first != number:
            command = sample_set.labels["command"]
            sample_set.labels["command"] = f"{command} #{number}"
            sample_set.notes.append(
                f"{path}: results[{number - 1}] is the command of results[{first - 1}] ({command}) again "
                f"(another prepare or setup command?): a benchmark of its own, named '{command} #{number}'"
            )


def _result_set(path: str, index: int, result: Any) -> SampleSet:
    """The set of ``results[index]``."""
    where = f"results[{index}]"
    if not isinstance(result, dict) or not isinstance(result.get("command"), str):
        raise InputError(f"{where}: no 'command'", path=path)
    values = _times(path, where, result)
    labels = {"command": result["command"], "metric": "wall"}
    extra = _kept_for_export(result)
    labels.update(extra.get("parameters", {}))
    notes = _exit_code_notes(path, result, len(values), extra)
    return SampleSet(labels=labels, runs=[values], source=path, unit="s", extra=extra, notes=notes)


def _times(path: str, where: str, result: dict[str, Any]) -> list[float]:
    """The command's times, each a finite number."""
    times = result.get("times")
    if not isinstance(times, list) or not times:
        raise InputError(f"{where} ({result['command']}): no 'times' (export made by an old hyperfine?)", path=path)
    return [finite(v, path, f"{where}.times") for v in times]


def _kept_for_export(result: dict[str, Any]) -> dict[str, Any]:
    """The parameters (also the set's labels) and the mean CPU times, exported again as hyperfine wrote them."""
    extra: dict[str, Any] = {}
    parameters = result.get("parameters") or {}
    if isinstance(parameters, dict) and parameters:
        extra["parameters"] = {str(k): str(v) for k, v in parameters.items()}
    for key in ("user", "system"):
        if isinstance(result.get(key), (int, float)) and not isinstance(result.get(key), bool):
            extra[key] = float(result[key])
    return extra


def _exit_code_notes(path: str, result: dict[str, Any], n: int, extra: dict[str, Any]) -> list[str]:
    """Keep the exit codes (one per time) in ``extra``; a note when some runs failed: a non-zero code, or
    ``null``, hyperfine's code of a run killed by a signal (a crash, an OOM kill)."""
    codes = result.get("exit_codes")
    if codes is None:
        return []
    if not (isinstance(codes, list) and len(codes) == n):
        count = f"{len(codes)} exit codes" if isinstance(codes, list) else "exit codes that are not a list"
        return [f"{path}: {result['command']}: {count} for {n} times; which runs failed is unknown"]
    extra["exit_codes"] = codes
    failed = sum(1 for c in codes if c != 0)
    if not failed:
        return []
    killed = sum(1 for c in codes if c is None)
    how = f"failed ({killed} killed by a signal)" if killed else "exited non-zero"
    return [
        f"{path}: {result['command']}: {failed} of {len(codes)} runs {how} (hyperfine -i); their times are included"
    ]
