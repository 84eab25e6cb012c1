"""The machine records of an HTML page: a column per machine, short enough to read.

Shown open: the fields that differ between the machines (highlighted) and a few that
say what the machine is (host, CPU, kernel, hypervisor, frequency control, mitigations).
The rest (the other recorded fields, ``abstat doctor``'s findings, one row per check) is
in a ``<details>`` block, closed, under a line that counts them and the doctor's warnings.
Values longer than ``LONG`` characters (a kernel command line) show their start and
open to the whole text.  A ``hypervisor_type`` the CPU flag alone could not name is
shown as the doctor named it (``KVM (kvm-clock)``), so the two rows do not contradict.
"""

from __future__ import annotations

from typing import Any
from collections.abc import Mapping

from abstat.render import escape

_e = escape.html
LONG = 160
KEY_FIELDS = (
    "hostname",
    "cpu_model",
    "cpus",
    "smt",
    "microcode",
    "kernel_release",
    "hypervisor_type",
    "governor",
    "boost",
    "vulnerabilities",
)


def machine_value(key: str, value: Any) -> str | None:
    """A record field as readable text (None: not recorded)."""
    if _empty(value):
        return None
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, dict):
        return (
            _vulnerabilities(value)
            if key == "vulnerabilities"
            else "; ".join(f"{k}={machine_value(k, v) or '-'}" for k, v in value.items())
        )
    if isinstance(value, (list, tuple)):
        return " ".join(str(v) for v in value)
    return str(value)


def _empty(value: Any) -> bool:
    return value is None or value == "" or value == [] or value == {}


def _vulnerabilities(value: dict[str, Any]) -> str:
    """The CPU vulnerabilities the kernel reports as affecting the machine."""
    affected = sorted(k for k, v in value.items() if not str(v).startswith("Not affected"))
    return ("affected: " + ", ".join(affected)) if affected else "none affected"


def _doctor_rows(doctor: Any) -> dict[str, str | None]:
    if not isinstance(doctor, Mapping):
        return {}
    rows: dict[str, str | None] = {}
    for check, finding in doctor.items():
        if isinstance(finding, Mapping):
            rows[f"doctor: {check}"] = f"{finding.get('status', '?')}: {finding.get('evidence', '')}".strip()
        else:
            rows[f"doctor: {check}"] = machine_value(check, finding)
    return rows


def _doctor_hypervisor(doctor: Any) -> str | None:
    finding = doctor.get("hypervisor") if isinstance(doctor, Mapping) else None
    evidence = str(finding.get("evidence", "")) if isinstance(finding, Mapping) else ""
    prefix = "running under a hypervisor: "
    if evidence.startswith(prefix):
        kind = evidence[len(prefix) :].split(";")[0].split(":")[0].strip()
        return kind if kind and not kind.startswith("unknown") else None
    return None


def flat_record(record: Mapping[str, Any], prefix: str = "") -> dict[str, str | None]:
    flat: dict[str, str | None] = {}
    for key, value in record.items():
        name = f"{prefix}{key}"
        if key == "doctor" and not prefix:
            flat.update(_doctor_rows(value))
        elif isinstance(value, dict) and key != "vulnerabilities" and value:
            flat.update(flat_record(value, name + "."))
        else:
            flat[name] = machine_value(key, value)
    kind = flat.get("hypervisor_type")
    named = _doctor_hypervisor(record.get("doctor")) if not prefix else None
    if named and (kind is None or kind.startswith("unknown")):
        flat["hypervisor_type"] = f"{named} (named by abstat doctor)"
    return flat


def _cell(value: str | None) -> str:
    if value is None:
        return '<td class="missing">not recorded</td>'
    if len(value) <= LONG:
        return f"<td>{_e(value)}</td>"
    return (
        f"<td><details><summary>{_e(value[: LONG - 40])}… ({len(value):,} characters)</summary>"
        f"{_e(value)}</details></td>"
    )


def _rows(
    keys: list[str], hosts: list[str], records: dict[str, dict[str, str | None]], differing: set[str]
) -> list[str]:
    out = []
    for key in keys:
        cls = ' class="differs"' if key in differing else ""
        out.append(f"<tr{cls}><th>{_e(key)}</th>{''.join(_cell(records[h].get(key)) for h in hosts)}</tr>")
    return out


def machines_html(machines: Mapping[str, Mapping[str, Any]]) -> str:
    """The Machines section ('' with no records)."""
    if not machines:
        return ""
    hosts = list(machines)
    records = {host: flat_record(machines[host]) for host in hosts}
    keys, differing = _recorded_fields(hosts, records)
    shown = [k for k in keys if k in differing or k in KEY_FIELDS]
    rest = [k for k in keys if k not in shown]
    head = (
        '<table class="machine"><thead><tr><th>field</th>'
        + "".join(f"<th>{_e(h)}</th>" for h in hosts)
        + "</tr></thead><tbody>"
    )
    out = ['<h2 id="machines">Machines</h2>']
    if len(hosts) > 1:
        out.append(
            f'<p class="caption">{len(differing)} of {len(keys)} recorded fields differ between '
            "the machines (highlighted); fields no machine recorded are left out.</p>"
        )
    out += [head, *_rows(shown, hosts, records, differing), "</tbody></table>"]
    if rest:
        out += [
            f'<details class="machine-rest"><summary>{_e(_rest_summary(rest, hosts, records))}</summary>',
            head,
            *_rows(rest, hosts, records, differing),
            "</tbody></table></details>",
        ]
    return "\n".join(out)


def _recorded_fields(hosts: list[str], records: dict[str, dict[str, str | None]]) -> tuple[list[str], set[str]]:
    """The fields some machine recorded, in order, and those whose values differ between the machines."""
    keys = list(dict.fromkeys(k for record in records.values() for k in record))
    keys = [k for k in keys if any(records[h].get(k) is not None for h in hosts)]
    differing = {k for k in keys if len({records[h].get(k) for h in hosts}) > 1}
    return keys, differing


def _rest_summary(rest: list[str], hosts: list[str], records: dict[str, dict[str, str | None]]) -> str:
    """What the folded part holds: how many more fields and doctor checks (with their warnings)."""
    doctor = sum(1 for k in rest if k.startswith("doctor: "))
    warnings = sum(
        1
        for h in hosts
        for k, v in records[h].items()
        if k.startswith("doctor: ") and v is not None and v.startswith("warn")
    )
    what = f"{len(rest) - doctor} more fields" + (
        f" and {doctor} doctor checks ({warnings} warnings)" if doctor else ""
    )
    return what + (" (the same on every machine)" if len(hosts) > 1 else "")
