"""A specification's JSON form, part by part (:mod:`abstat.engine.spec` has the whole: :func:`encode`, and
``decode`` whose parts are here: each object and list checked for its shape and its known keys, and decoded into
the specification's parts, every problem a :class:`~abstat.engine.parts.SpecError` naming the field).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

from abstat.box.runner.sources import decode_source
from abstat.engine.parts import SPEC_VERSION, Analysis, Hooks, Host, Lab, Sequential, SpecError, Variant

if TYPE_CHECKING:
    from abstat.engine.spec import ExperimentSpec


def encode(spec: ExperimentSpec) -> dict[str, Any]:
    """The document of ``spec`` (every key present, but ``cpus``, ``isolate``, ``sequential`` and ``parameters`` only
    when set: a document without them is version 1, which older abstats read; ``analysis.threshold`` only when set:
    version 3)."""
    lab = spec.lab
    return {
        "abstat_spec": _oldest_version(spec),
        "experiment": spec.experiment,
        "variants": [{"name": v.name, "command": v.command, "labels": dict(v.labels)} for v in spec.variants],
        "runs": spec.runs,
        "warmup": spec.warmup,
        "order": spec.order,
        "seed": spec.seed,
        "shell": spec.shell,
        "timeout": spec.timeout,
        "on_failure": spec.on_failure,
        "hooks": {kind: getattr(spec.hooks, kind) for kind in ("setup", "cleanup", "prepare", "conclude")},
        "background": list(spec.background),
        "metrics": [source.to_json() for source in spec.metrics],
        "labels": dict(spec.labels),
        "rev": spec.rev,
        "lab": None if lab is None else _lab_json(lab),
        "analysis": {
            "baseline": spec.analysis.baseline,
            "confidence": spec.analysis.confidence,
            "higher_is_better": list(spec.analysis.higher_is_better),
            **({"lower_is_better": list(spec.analysis.lower_is_better)} if spec.analysis.lower_is_better else {}),
            **({"threshold": spec.analysis.threshold} if spec.analysis.threshold is not None else {}),
        },
        "store": spec.store,
        **_version_2_json(spec),
    }


def _oldest_version(spec: ExperimentSpec) -> int:
    """The oldest version holding every field ``spec`` uses."""
    if spec.analysis.threshold is not None or spec.analysis.lower_is_better:
        return 3
    return 2 if spec.cpus or spec.sequential or spec.parameters else 1


def _lab_json(lab: Lab) -> dict[str, Any]:
    return {
        "hosts": [{"label": h.label, "destination": h.destination} for h in lab.hosts],
        "boot": dict(lab.boot),
        "check": dict(lab.check),
        "boots": lab.boots,
        "boot_timeout": lab.boot_timeout,
    }


def _version_2_json(spec: ExperimentSpec) -> dict[str, Any]:
    """The fields of version 2 that ``spec`` sets (none: a document of version 1)."""
    return {
        **({"cpus": list(spec.cpus)} if spec.cpus else {}),
        **({"isolate": True} if spec.isolate else {}),
        **(
            {
                "sequential": {
                    "min_runs": spec.sequential.min_runs,
                    "threshold": spec.sequential.threshold,
                    "metric": spec.sequential.metric,
                }
            }
            if spec.sequential
            else {}
        ),
        **({"parameters": {name: list(values) for name, values in spec.parameters.items()}} if spec.parameters else {}),
    }


def json_object(where: str, value: Any, keys: tuple[str, ...], source: str | None) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise SpecError(where, f"must be an object, not {_kind(value)}", source)
    unknown = sorted(set(value) - set(keys), key=str)
    if unknown:
        raise SpecError(where, f"unknown field {unknown[0]!r}", source)
    return value


def json_list(where: str, value: Any, source: str | None) -> list[Any]:
    if not isinstance(value, list):
        raise SpecError(where, f"must be a list, not {_kind(value)}", source)
    return value


def _kind(value: Any) -> str:
    return {dict: "an object", list: "a list", str: "a string", bool: "true/false", type(None): "null"}.get(
        type(value), type(value).__name__
    )


def _decode_metrics(items: Any, source: str | None) -> tuple[Any, ...]:
    metrics = []
    for index, item in enumerate(json_list("metrics", items, source)):
        try:
            metrics.append(decode_source(item))
        except ValueError as err:
            raise SpecError(f"metrics[{index}]", str(err), source) from None
    return tuple(metrics)


def _decode_lab(doc: Any, source: str | None) -> Lab:
    lab = json_object("lab", doc, ("hosts", "boot", "check", "boots", "boot_timeout"), source)
    hosts = []
    for index, item in enumerate(json_list("lab.hosts", lab.get("hosts"), source)):
        host = json_object(f"lab.hosts[{index}]", item, ("label", "destination"), source)
        hosts.append(Host(cast(str, host.get("label")), cast(str, host.get("destination"))))
    return Lab(tuple(hosts), **{k: lab[k] for k in ("boot", "check", "boots", "boot_timeout") if k in lab})


def _check_version(doc: dict[str, Any], version: int, source: str | None) -> None:
    for key in ("cpus", "isolate", "sequential", "parameters"):
        if key in doc and version < 2:
            raise SpecError(key, "is a field of version 2", source)
    analysis = doc.get("analysis")
    for key in ("threshold", "lower_is_better"):
        if isinstance(analysis, dict) and key in analysis and version < 3:
            raise SpecError(f"analysis.{key}", "is a field of version 3", source)


def spec_arguments(doc: dict[str, Any], source: str | None, version: int = SPEC_VERSION) -> dict[str, Any]:
    """The keyword arguments of :class:`~abstat.engine.spec.ExperimentSpec` a document gives (each part decoded and
    its shape checked here; the specification checks the values)."""
    args: dict[str, Any] = {"variants": _decode_variants(doc.get("variants"), source)}
    for key in (
        "runs",
        "warmup",
        "order",
        "seed",
        "shell",
        "timeout",
        "on_failure",
        "experiment",
        "labels",
        "rev",
        "store",
        "isolate",
    ):
        if key in doc:
            args[key] = doc[key]
    if doc.get("hooks") is not None:
        args["hooks"] = Hooks(**json_object("hooks", doc["hooks"], ("setup", "cleanup", "prepare", "conclude"), source))
    if "background" in doc:
        args["background"] = tuple(json_list("background", doc["background"], source))
    args.update(_decode_version_2(doc, version, source))
    if "metrics" in doc:
        args["metrics"] = _decode_metrics(doc["metrics"], source)
    if doc.get("lab") is not None:
        args["lab"] = _decode_lab(doc["lab"], source)
    if doc.get("analysis") is not None:
        args["analysis"] = _decode_analysis(doc["analysis"], source)
    return args


def _decode_variants(items: Any, source: str | None) -> tuple[Variant, ...]:
    variants = []
    for index, item in enumerate(json_list("variants", items, source)):
        entry = json_object(f"variants[{index}]", item, ("name", "command", "labels"), source)
        variants.append(Variant(cast(str, entry.get("name")), cast(str, entry.get("command")), entry.get("labels", {})))
    return tuple(variants)


def _decode_version_2(doc: dict[str, Any], version: int, source: str | None) -> dict[str, Any]:
    """The fields of version 2 (``cpus``, ``isolate``, ``sequential``, ``parameters``) the document has: an error
    in a document of version 1."""
    _check_version(doc, version, source)
    args: dict[str, Any] = {}
    if "cpus" in doc:
        args["cpus"] = tuple(json_list("cpus", doc["cpus"], source))
    if doc.get("sequential") is not None:
        args["sequential"] = Sequential(
            **json_object("sequential", doc["sequential"], ("min_runs", "threshold", "metric"), source)
        )
    args.update(_decode_parameters(doc, source))
    return args


def _decode_analysis(value: Any, source: str | None) -> Analysis:
    fields = ("higher_is_better", "lower_is_better")
    analysis = json_object("analysis", value, ("baseline", "confidence", *fields, "threshold"), source)
    for field in fields:
        if field in analysis:
            analysis = dict(analysis, **{field: tuple(json_list(f"analysis.{field}", analysis[field], source))})
    return Analysis(**analysis)


def _decode_parameters(doc: dict[str, Any], source: str | None) -> dict[str, Any]:
    """``{"parameters": ...}`` from the document's object of names and lists ({} without one; the
    specification checks the names and values)."""
    if "parameters" not in doc:
        return {}
    value = doc["parameters"]
    parameters = json_object("parameters", value, tuple(value) if isinstance(value, dict) else (), source)
    return {
        "parameters": {
            name: tuple(json_list(f"parameters[{name!r}]", values, source)) for name, values in parameters.items()
        }
    }
