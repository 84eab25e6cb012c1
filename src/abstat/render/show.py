"""What ``abstat show`` prints around the comparison: invocations, machine records, failed runs,
and one comparison block per label configuration."""

from __future__ import annotations

from typing import Any

from abstat.render.escape import json_text
from abstat.render import escape, tables

_MACHINE_FIELDS = (
    ("hostname", "host"),
    ("cpu_model", "CPU"),
    ("microcode", "microcode"),
    ("cpus", "CPUs"),
    ("smt", "SMT"),
    ("kernel_release", "kernel"),
    ("hypervisor_type", "hypervisor"),
    ("governor", "governor"),
    ("boost", "boost"),
    ("boot_id", "boot"),
    ("loadavg", "load average"),
)


def _machine_lines(record: dict[str, Any]) -> list[str]:
    lines = []
    for key, label in _MACHINE_FIELDS:
        value = record.get(key)
        if isinstance(value, list):
            value = " ".join(str(v) for v in value)
        lines.append(f"    {label + ':':<14}{value if value is not None else '(missing)'}")
    vulns = record.get("vulnerabilities") or {}
    affected = sorted(k for k, v in vulns.items() if not str(v).startswith("Not affected"))
    lines.append(
        f"    {'mitigations:':<14}"
        + (", ".join(affected) + " (affected)" if affected else "(none affected)" if vulns else "(missing)")
    )
    return lines


def _label_text(labels: dict[str, str]) -> str:
    return " ".join(f"{k}={v}" for k, v in sorted(labels.items()))


def combine(experiment: str, done: list[tuple[dict[str, str], str | None, str | None]], fmt: str) -> str:
    """One comparison block per configuration, headed by its labels."""
    if fmt == "json":
        return _combined_json(experiment, done)
    if fmt == "csv":
        return _combined_csv(done)
    heading = "# " if fmt == "markdown" else ""
    parts = []
    for labels, report, error in done:
        clean = escape.markdown if fmt == "markdown" else escape.terminal
        parts.append(heading + clean(f"configuration {_label_text(labels)}"))
        parts.append("")
        parts.append((report if report is not None else clean(f"not compared: {error}") + "\n").rstrip("\n"))
        parts.append("")
    return "\n".join(parts).rstrip("\n") + "\n"


def _combined_json(experiment: str, done: list[tuple[dict[str, str], str | None, str | None]]) -> str:
    """One document: each configuration's labels with its comparison's JSON (or its error)."""
    import json

    blocks = []
    for labels, report, error in done:
        block: dict[str, Any] = {"labels": labels}
        if report is not None:
            document = json.loads(report)
            document.pop("experiment", None)
            block.update(document)
        else:
            block["error"] = error
        blocks.append(block)
    return json_text({"experiment": experiment, "configurations": blocks})


def _combined_csv(done: list[tuple[dict[str, str], str | None, str | None]]) -> str:
    """One table: each configuration's rows after its labels' columns."""
    import csv
    import io

    keys = sorted({k for labels, _, _ in done for k in labels})
    header: list[str] = []
    rows: list[list[str]] = []
    for labels, report, _ in done:
        parsed = list(csv.reader(io.StringIO(report or "")))
        if not parsed:
            continue
        header = header or keys + parsed[0]
        rows += [[labels.get(k, "") for k in keys] + row for row in parsed[1:]]
    return tables.csv_text(header, rows) if header else "\n"


def invocation_lines(
    experiment: str, store: str, invocations: list[dict[str, Any]], failures: list[dict[str, Any]]
) -> list[str]:
    """The invocations (times, status, labels, settings, runs, machine record, notes) and failed runs,
    as lines (not escaped yet: every one comes from the store)."""
    out = [f"experiment {experiment}  (store {store})", ""]
    for inv in invocations:
        labels = " ".join(f"{k}={v}" for k, v in inv["labels"].items())
        out.append(
            f"invocation {inv['id']}: {inv['started_at']} .. {inv['ended_at'] or '?'}  {inv['status']}"
            + (f"  [{labels}]" if labels else "")
        )
        out.extend(f"    {line}" for line in _settings_lines(inv["settings"] or {}))
        for entry in inv["runs"]:
            out.append(f"    {entry['variant']}: {entry['count']} {entry['status']}  ({entry['command']})")
        out.extend(_machine_lines(inv["machine"]))
        for note in inv["notes"]:
            out.append(f"    note: {note}")
        out.append("")
    if failures:
        out.append("failed runs (not used):")
        for f in failures:
            out.append(
                f"    invocation {f['invocation']} {f['variant']} run {f['run']}: {f['status']} {'; '.join(f['notes'])}"
            )
        out.append("")
    return out


SHOWN = ("good", "bad", "run")  # a bisection's settings the invocation's labels and variant line show


def _settings_lines(settings: dict[str, Any]) -> list[str]:
    """What the invocation's settings say (runs, warm-up, order, seed; a bisection's build, metric, budget and
    level), each only when stored: a bisection's invocations have no runs or seed of their own."""
    forms = (("runs", "runs {}"), ("warmup", " + {} warm-up"), ("order", ", order {}"), ("seed", ", seed {}"))
    run = "".join(form.format(settings[key]) for key, form in forms if settings.get(key) is not None)
    known = ", ".join(f"{k} {v}" for k, v in dict(settings.get("bisect") or {}).items() if k not in SHOWN and v)
    return [line for line in (run.lstrip(", +"), known and f"bisect: {known}") if line]
