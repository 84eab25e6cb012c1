"""fio (``--output-format=json``) and iperf3 (``-J``) JSON results.

``fio``     per job (label ``job``) and direction with I/O done: ``read.iops`` (IO/s), ``read.bw``
            (KiB/s, fio's ``bw``), ``read.clat_mean`` and ``read.lat_mean`` (ns), ``read.clat_p50``,
            ``p90``, ``p95``, ``p99``, ``p99.9`` (ns, fio's completion latency percentiles).
``iperf3``  the test's totals: TCP ``sender.bits_per_second``, ``receiver.bits_per_second``,
            ``sender.retransmits``; UDP ``bits_per_second``, ``jitter_ms``, ``lost_percent``.

One file is one run (one value per metric); give several files (a glob) for
several runs.  The per-interval figures (fio's ``bw_mean``, iperf3's
``intervals``) are a time series within the run and are not read as runs.
"""

from __future__ import annotations

import json
import math
from typing import Any

from abstat.errors import InputError
from abstat.readers.sampleset import SampleSet
from abstat.readers.values import DECODER, json_error_line

FIO_PERCENTILES = (
    ("50.000000", "p50"),
    ("90.000000", "p90"),
    ("95.000000", "p95"),
    ("99.000000", "p99"),
    ("99.900000", "p99.9"),
)
DIRECTIONS = ("read", "write", "trim")


MAX_DOCUMENTS = 10_000


def load_documents(path: str, text: str, limit: int = MAX_DOCUMENTS, *, first: bool = False) -> list[Any]:
    """The JSON documents in ``text`` one after another (one per run), after any lines a tool printed
    before the first (fio's warnings); more than ``limit`` of them refused (``first``: the first only)."""
    start = _first_document(path, text)
    decoder = DECODER
    docs: list[Any] = []
    position = start
    while position < len(text) and len(docs) < limit:
        while position < len(text) and text[position].isspace():
            position += 1
        if position >= len(text):
            break
        doc, position = _decoded(decoder, path, text, position)
        docs.append(doc)
    if not first and len(docs) >= limit and text[position:].strip():  # attack19 L5: the rest was dropped without a word
        raise InputError(f"more than {limit:,} JSON documents in one file: split it", path=path)
    return docs


def _first_document(path: str, text: str) -> int:
    """Where the first JSON document starts: at the top, or on the first line that starts with ``{``."""
    start = 0 if text.lstrip().startswith("{") else text.find("\n{") + 1
    if start == 0 and not text.lstrip().startswith("{"):
        raise InputError("no JSON document", path=path)
    return start


def _decoded(decoder: json.JSONDecoder, path: str, text: str, position: int) -> tuple[Any, int]:
    """The JSON document at ``position`` and where it ends; InputError naming the line of bad JSON."""
    try:
        return decoder.raw_decode(text, position)
    except ValueError as err:
        raise InputError(
            f"bad JSON: {getattr(err, 'msg', err)}", path=path, line=json_error_line(err, text, position)
        ) from None
    except RecursionError:
        raise InputError("bad JSON: nested too deeply", path=path) from None


def load_document(path: str, text: str) -> Any:
    """The first JSON document in ``text``."""
    return load_documents(path, text, limit=1, first=True)[0]


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    number = float(value)
    return number if math.isfinite(number) else None


def is_fio(doc: Any) -> bool:
    return isinstance(doc, dict) and "fio version" in doc and isinstance(doc.get("jobs"), list)


def is_iperf3(doc: Any) -> bool:
    return (
        isinstance(doc, dict)
        and isinstance(doc.get("start"), dict)
        and isinstance(doc.get("end"), dict)
        and "intervals" in doc
    )


def _fio_direction(data: dict[str, Any]) -> dict[str, tuple[float, str]]:
    found: dict[str, tuple[float, str]] = {}
    for key, metric, unit in (("iops", "iops", "IO/s"), ("bw", "bw", "KiB/s")):
        value = _number(data.get(key))
        if value is not None:
            found[metric] = (value, unit)
    for key, scale in (("clat_ns", 1.0), ("clat", 1000.0)):  # fio 2.x printed usec under "clat"
        clat = data.get(key)
        if isinstance(clat, dict):
            found.update(_completion_latencies(clat, scale))
            break
    lat = data.get("lat_ns")
    if isinstance(lat, dict) and _number(lat.get("mean")) is not None:
        found["lat_mean"] = (float(lat["mean"]), "ns")
    return found


def _completion_latencies(clat: dict[str, Any], scale: float) -> dict[str, tuple[float, str]]:
    """The mean completion latency and its percentiles, in nanoseconds."""
    found: dict[str, tuple[float, str]] = {}
    mean = _number(clat.get("mean"))
    if mean is not None:
        found["clat_mean"] = (mean * scale, "ns")
    percentiles = clat.get("percentile")
    if isinstance(percentiles, dict):
        for raw, name in FIO_PERCENTILES:
            value = _number(percentiles.get(raw))
            if value is not None:
                found[f"clat_{name}"] = (value * scale, "ns")
    return found


def read_fio(path: str, text: str) -> list[SampleSet]:
    return _merge(path, [_read_fio_doc(path, doc) for doc in load_documents(path, text)])


def read_iperf3(path: str, text: str) -> list[SampleSet]:
    return _merge(path, [_read_iperf3_doc(path, doc) for doc in load_documents(path, text)])


def _merge(path: str, per_doc: list[list[SampleSet]]) -> list[SampleSet]:
    """One set per labels, one value per document (run) that has it."""
    merged: dict[tuple[tuple[str, str], ...], SampleSet] = {}
    for sets in per_doc:
        for sample_set in sets:
            key = tuple(sorted(sample_set.labels.items()))
            if key in merged:
                merged[key].runs[0].extend(sample_set.runs[0])
            else:
                merged[key] = sample_set
    if len(per_doc) > 1:
        for sample_set in merged.values():
            sample_set.notes.append(f"{path}: {len(per_doc)} JSON documents, one value per document (run)")
            break
    return list(merged.values())


def _read_fio_doc(path: str, doc: Any) -> list[SampleSet]:
    if not is_fio(doc):
        raise InputError("not fio JSON output (no 'fio version' and 'jobs')", path=path)
    by_name: dict[str, list[list[SampleSet]]] = {}
    for index, job in enumerate(doc["jobs"]):
        if not isinstance(job, dict):
            raise InputError(f"jobs[{index}] is not an object", path=path)
        name = str(job.get("jobname", f"job{index}"))
        by_name.setdefault(name, []).append(_job_sets(path, name, job))
        if isinstance(job.get("error"), int) and job["error"]:
            raise InputError(f"fio job {name!r} ended with error {job['error']}", path=path)
    sets = [s for name, jobs in by_name.items() for s in (jobs[0] if len(jobs) == 1 else _one_run(path, name, jobs))]
    if not sets:
        raise InputError("fio JSON holds no job with I/O done", path=path)
    return sets


def _one_run(path: str, name: str, jobs: list[list[SampleSet]]) -> list[SampleSet]:
    """The jobs of one name in one document (``numjobs=N`` without ``group_reporting``) ran at once: one run,
    never N samples.  Their IO/s and bandwidths summed, their mean latencies weighted by each job's I/Os; their
    percentiles, which do not combine, kept per job (``job`` NAME#1, NAME#2, ...); a note says so."""
    by_metric: dict[str, list[SampleSet]] = {}
    for job in jobs:
        for sample_set in job:
            by_metric.setdefault(sample_set.labels["metric"], []).append(sample_set)
    sets: list[SampleSet] = []
    for metric, found in by_metric.items():
        kind = metric.rsplit(".", 1)[-1]
        if kind in ("iops", "bw"):
            found[0].runs = [[math.fsum(s.runs[0][0] for s in found)]]
        elif kind in ("clat_mean", "lat_mean"):
            weights = [s.extra.get("ios") or 1.0 for s in found]
            total = math.fsum(w * s.runs[0][0] for w, s in zip(weights, found, strict=True))
            found[0].runs = [[total / math.fsum(weights)]]
        else:
            for number, sample_set in enumerate(found, 1):
                sample_set.labels["job"] = f"{name}#{number}"
            sets.extend(found)
            continue
        sets.append(found[0])
    sets[0].notes.append(
        f"{path}: {len(jobs)} fio jobs named {name!r} in one document (numjobs without group_reporting): one run, "
        f"their IO/s and bandwidths summed, mean latencies weighted by I/Os, percentiles per job ({name}#1, ...)"
    )
    return sets


def _job_sets(path: str, name: str, job: dict[str, Any]) -> list[SampleSet]:
    """A set per metric of each direction (read, write, trim) in which the job did I/O."""
    sets = []
    for direction in DIRECTIONS:
        data = job.get(direction)
        if not isinstance(data, dict) or not (_number(data.get("total_ios")) or _number(data.get("iops"))):
            continue  # no I/O in this direction
        ios = _number(data.get("total_ios"))
        for metric, (value, unit) in _fio_direction(data).items():
            sets.append(
                SampleSet(
                    labels={"job": name, "metric": f"{direction}.{metric}"},
                    runs=[[value]],
                    source=path,
                    unit=unit,
                    extra={"format": "fio", "ios": ios} if ios else {"format": "fio"},
                )
            )
    return sets


def _read_iperf3_doc(path: str, doc: Any) -> list[SampleSet]:
    _check_iperf3(path, doc)
    end = doc["end"]
    sets: list[SampleSet] = []
    for key, side, fields in _IPERF3_TOTALS:
        part = end.get(key)
        if not isinstance(part, dict) or (key == "sum" and sets):
            continue
        sets.extend(_total_sets(path, part, side, fields))
    if not sets:
        raise InputError("iperf3 JSON holds no end totals (end.sum_sent, end.sum_received or end.sum)", path=path)
    return sets


def _check_iperf3(path: str, doc: Any) -> None:
    """iperf3's JSON output, and no error reported in it."""
    if isinstance(doc, dict) and isinstance(doc.get("error"), str):
        raise InputError(f"iperf3 reported an error: {doc['error'][:200]}", path=path)
    if not is_iperf3(doc):
        raise InputError("not iperf3 JSON output (no 'start', 'intervals' and 'end')", path=path)


_IPERF3_TOTALS = (
    ("sum_sent", "sender", ("bits_per_second", "retransmits")),
    ("sum_received", "receiver", ("bits_per_second",)),
    ("sum", None, ("bits_per_second", "jitter_ms", "lost_percent")),
)
_IPERF3_UNITS = {"bits_per_second": "bit/s", "jitter_ms": "ms", "lost_percent": "%", "retransmits": None}


def _total_sets(path: str, part: dict[str, Any], side: str | None, fields: tuple[str, ...]) -> list[SampleSet]:
    """A set per field of one of iperf3's end totals that is a finite number (metric ``side.field``)."""
    sets = []
    for field in fields:
        value = _number(part.get(field))
        if value is not None:
            metric = f"{side}.{field}" if side else field
            sets.append(
                SampleSet(
                    labels={"metric": metric},
                    runs=[[value]],
                    source=path,
                    unit=_IPERF3_UNITS[field],
                    extra={"format": "iperf3"},
                )
            )
    return sets


def detect_doc(doc: Any) -> str | None:
    if is_fio(doc):
        return "fio"
    if is_iperf3(doc) or (
        isinstance(doc, dict) and isinstance(doc.get("start"), dict) and isinstance(doc.get("error"), str)
    ):
        return "iperf3"
    return None


READERS = {"fio": read_fio, "iperf3": read_iperf3}
