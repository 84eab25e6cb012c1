"""The JSON form of an :class:`~abstat.engine.spec.ExperimentSpec`: stable, versioned, validated.

    {"abstat_spec": 1, "experiment": "hcall",
     "variants": [{"name": "before", "command": "./hcall", "labels": {}}, ...],
     "runs": 10, "warmup": 0, "order": "interleaved", "seed": 1234,
     "shell": false, "timeout": null, "on_failure": "stop",
     "hooks": {"setup": null, "cleanup": null, "prepare": "make clean", "conclude": null},
     "background": [], "metrics": [{"source": "json-lines"}, {"source": "regex", ...}],
     "labels": {"mode": "pv64"}, "rev": null,
     "lab": {"hosts": [{"label": "milan", "destination": "milan"}], "boot": {...}, "check": {...},
             "boots": 3, "boot_timeout": 600.0},
     "analysis": {"baseline": null, "confidence": 95.0, "higher_is_better": []},
     "store": null}

:func:`decode` takes the document as untrusted input (the store, a file a
user wrote): every key is known, every value has its type, range, size and
name checked, and anything wrong is one :class:`~abstat.engine.spec.SpecError`
naming it.  Keys left out take their defaults (only ``variants`` is
required), so a hand-written file can be short.  ``abstat_spec`` is the
version: a document of a newer version is refused; a version's meaning
never changes (a new field is a new version, and this decoder keeps reading
the old ones).
"""
from __future__ import annotations

import json
from typing import Any

from abstat.engine.spec import (SPEC_VERSION, Analysis, ExperimentSpec, Hooks, Host, Lab, SpecError, Variant)
from abstat.runner.sources import decode_source

MAX_DOCUMENT_BYTES = 4 << 20
_TOP = ("abstat_spec", "experiment", "variants", "runs", "warmup", "order", "seed", "shell", "timeout", "on_failure",
        "hooks", "background", "metrics", "labels", "rev", "lab", "analysis", "store")


def encode(spec: ExperimentSpec) -> dict[str, Any]:
    """The document of ``spec`` (every key present)."""
    lab = spec.lab
    return {
        "abstat_spec": SPEC_VERSION,
        "experiment": spec.experiment,
        "variants": [{"name": v.name, "command": v.command, "labels": dict(v.labels)} for v in spec.variants],
        "runs": spec.runs, "warmup": spec.warmup, "order": spec.order, "seed": spec.seed,
        "shell": spec.shell, "timeout": spec.timeout, "on_failure": spec.on_failure,
        "hooks": {kind: getattr(spec.hooks, kind) for kind in ("setup", "cleanup", "prepare", "conclude")},
        "background": list(spec.background),
        "metrics": [source.to_json() for source in spec.metrics],
        "labels": dict(spec.labels), "rev": spec.rev,
        "lab": None if lab is None else {
            "hosts": [{"label": h.label, "destination": h.destination} for h in lab.hosts],
            "boot": dict(lab.boot), "check": dict(lab.check), "boots": lab.boots, "boot_timeout": lab.boot_timeout,
        },
        "analysis": {"baseline": spec.analysis.baseline, "confidence": spec.analysis.confidence,
                     "higher_is_better": list(spec.analysis.higher_is_better)},
        "store": spec.store,
    }


def dumps(spec: ExperimentSpec) -> str:
    return json.dumps(encode(spec), indent=2, sort_keys=False) + "\n"


def loads(text: str | bytes, source: str | None = None) -> ExperimentSpec:
    """Decode a JSON text (a file's contents): :class:`SpecError` for bad JSON too."""
    if len(text) > MAX_DOCUMENT_BYTES:
        raise SpecError("", f"a specification is at most {MAX_DOCUMENT_BYTES >> 20} MiB", source)
    try:
        document = json.loads(text)
    except (ValueError, RecursionError) as err:
        raise SpecError("", f"not a JSON specification: {err}", source) from None
    return decode(document, source)


def _object(where: str, value: Any, keys: tuple[str, ...], source: str | None) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise SpecError(where, f"must be an object, not {_kind(value)}", source)
    unknown = sorted(set(value) - set(keys), key=str)
    if unknown:
        raise SpecError(where, f"unknown field {unknown[0]!r}", source)
    return value


def _list(where: str, value: Any, source: str | None) -> list[Any]:
    if not isinstance(value, list):
        raise SpecError(where, f"must be a list, not {_kind(value)}", source)
    return value


def _kind(value: Any) -> str:
    return {dict: "an object", list: "a list", str: "a string", bool: "true/false", type(None): "null"}.get(
        type(value), type(value).__name__)


def decode(document: Any, source: str | None = None) -> ExperimentSpec:
    """The validated specification of a JSON document (parsed already)."""
    doc = _object("specification", document, _TOP, source)
    version = doc.get("abstat_spec")
    if isinstance(version, bool) or not isinstance(version, int):
        raise SpecError("abstat_spec", "missing or not a version number: not an abstat specification", source)
    if version > SPEC_VERSION:
        raise SpecError("abstat_spec", f"version {version} was written by a newer abstat "
                        f"(this one reads up to {SPEC_VERSION})", source)
    if version < 1:
        raise SpecError("abstat_spec", f"no version {version}", source)
    try:
        return _build(doc, source)
    except SpecError as err:
        if err.path is None and source is not None:
            raise SpecError(err.field, err.problem, source) from None
        raise
    except (TypeError, ValueError) as err:  # a source's own check, or a value of the wrong type deep down
        raise SpecError("specification", str(err), source) from None


def _build(doc: dict[str, Any], source: str | None) -> ExperimentSpec:
    args: dict[str, Any] = {}
    variants = []
    for index, item in enumerate(_list("variants", doc.get("variants"), source)):
        item = _object(f"variants[{index}]", item, ("name", "command", "labels"), source)
        variants.append(Variant(item.get("name"), item.get("command"), item.get("labels", {})))
    args["variants"] = tuple(variants)
    for key in ("runs", "warmup", "order", "seed", "shell", "timeout", "on_failure", "experiment", "labels", "rev",
                "store"):
        if key in doc:
            args[key] = doc[key]
    if doc.get("hooks") is not None:
        args["hooks"] = Hooks(**_object("hooks", doc["hooks"], ("setup", "cleanup", "prepare", "conclude"), source))
    if "background" in doc:
        args["background"] = tuple(_list("background", doc["background"], source))
    if "metrics" in doc:
        metrics = []
        for index, item in enumerate(_list("metrics", doc["metrics"], source)):
            try:
                metrics.append(decode_source(item))
            except ValueError as err:
                raise SpecError(f"metrics[{index}]", str(err), source) from None
        args["metrics"] = tuple(metrics)
    if doc.get("lab") is not None:
        lab = _object("lab", doc["lab"], ("hosts", "boot", "check", "boots", "boot_timeout"), source)
        hosts = []
        for index, item in enumerate(_list("lab.hosts", lab.get("hosts"), source)):
            item = _object(f"lab.hosts[{index}]", item, ("label", "destination"), source)
            hosts.append(Host(item.get("label"), item.get("destination")))
        args["lab"] = Lab(tuple(hosts), **{k: lab[k] for k in ("boot", "check", "boots", "boot_timeout") if k in lab})
    if doc.get("analysis") is not None:
        analysis = _object("analysis", doc["analysis"], ("baseline", "confidence", "higher_is_better"), source)
        if "higher_is_better" in analysis:
            analysis = dict(analysis, higher_is_better=tuple(_list("analysis.higher_is_better",
                                                                   analysis["higher_is_better"], source)))
        args["analysis"] = Analysis(**analysis)
    return ExperimentSpec(**args)
