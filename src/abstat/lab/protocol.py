"""The controller's side of the runner protocol: reading what a test box sends.

:mod:`abstat.box.runner.remote` (on the box) writes one JSON object per line:
``{"hello": {...}}`` first, then ``{"result": RUN}`` per run and
``{"done": OUTCOME}`` or ``{"error": TEXT}``, or the answer to a question
(``{"doctor": FINDINGS}``).  Everything a box sends is read here, and only
here.  The box is not trusted (anyone with root on it, or a broken
``.bashrc``, controls what it sends), so:

- :class:`abstat.lab.boxsession.BoxSession` reads a session's standard output in a
  thread of its own, in lines of bounded size, and drains standard error into its
  last lines, so that no pipe fills up and nothing grows without bound; every wait
  on it has a timeout.
- ``decode_*`` check every field of every message (types, ranges, sizes,
  the variant and run the plan holds) and raise :class:`ProtocolError`
  (``FIELD: problem``) on the first violation.  What they return is safe
  to store; what is printed of it still goes through ``render/escape``.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from typing import Any

MAX_VALUES = 200_000  # values in one result, over all its metrics (~60 MiB to store)
MAX_METRICS = 1000
MAX_TEXT = 65536  # characters of one text (a note, the stderr tail, a warning)
MAX_NAME = 200  # characters of a metric or unit name
MAX_NOTES = 1000
MAX_MACHINE_BYTES = 1 << 20  # the machine record, as JSON
STATUSES = ("ok", "failed", "timeout")
UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


class ProtocolError(Exception):
    """What a box sent breaks the protocol; the text is ``FIELD: problem``, in one line."""


class NoAnswer(ProtocolError):
    """The box said nothing within the time it had."""


@dataclass
class Hello:
    machine: dict[str, Any]
    boot_id: str | None
    doctor_warnings: list[str] = field(default_factory=list)
    python: str = ""


# -- decoding ----------------------------------------------------------------


def _text(value: Any, name: str, limit: int = MAX_TEXT, *, optional: bool = False) -> str | None:
    if value is None and optional:
        return None
    if not isinstance(value, str):
        raise ProtocolError(f"{name}: not a text ({_kind(value)})")
    if len(value) > limit:
        raise ProtocolError(f"{name}: longer than {limit} characters")
    return value


def _texts(value: Any, name: str, limit: int = MAX_NOTES) -> list[str]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise ProtocolError(f"{name}: not a list of texts ({_kind(value)})")
    if len(value) > limit:
        raise ProtocolError(f"{name}: more than {limit} items")
    return [str(_text(item, f"{name}[{index}]")) for index, item in enumerate(value)]


def _integer(
    value: Any, name: str, low: int = -(2**63), high: int = 2**63 - 1, *, optional: bool = False
) -> int | None:
    if value is None and optional:
        return None
    if not isinstance(value, int) or isinstance(value, bool):
        raise ProtocolError(f"{name}: not an integer ({_kind(value)})")
    if not low <= value <= high:
        raise ProtocolError(f"{name}: {value} is out of range")
    return value


def _number(value: Any, name: str, *, low: float = -math.inf) -> float:
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        raise ProtocolError(f"{name}: not a number ({_kind(value)})")
    try:
        number = float(value)
    except OverflowError:
        number = math.inf
    if not math.isfinite(number) or number < low:
        raise ProtocolError(f"{name}: {number!r} is not a finite number" + (f" >= {low:g}" if low > -math.inf else ""))
    return number


def _name(value: Any, name: str) -> str:
    text = str(_text(value, name, MAX_NAME))
    if not text or _CONTROL.search(text):
        raise ProtocolError(f"{name}: {text!r} is not a name (empty, or with control characters)")
    return text


def _kind(value: Any) -> str:
    return {dict: "an object", list: "a list", str: "a text", bool: "true/false", type(None): "null"}.get(
        type(value), "a number"
    )


def decode_hello(body: Any) -> Hello:
    """The runner's hello: its machine record, boot id, doctor's warnings, Python version."""
    if not isinstance(body, dict):
        raise ProtocolError(f"hello: not an object ({_kind(body)})")
    machine = body.get("machine")
    if machine is None:
        machine = {}
    if not isinstance(machine, dict) or not all(isinstance(key, str) for key in machine):
        raise ProtocolError(f"machine: not an object ({_kind(machine)})")
    if len(json.dumps(machine)) > MAX_MACHINE_BYTES:
        raise ProtocolError(f"machine: larger than {MAX_MACHINE_BYTES} bytes")
    for key in ("hostname", "boot_id"):  # the store keeps these two in columns of their own
        _text(machine.get(key), f"machine.{key}", MAX_NAME, optional=True)
    boot_id = body.get("boot_id")
    if boot_id is not None and not (isinstance(boot_id, str) and UUID.fullmatch(boot_id)):
        raise ProtocolError(f"boot_id: not a boot id ({_kind(boot_id)})")
    return Hello(
        machine,
        boot_id.lower() if boot_id else None,
        _texts(body.get("doctor_warnings"), "doctor_warnings"),
        str(_text(body.get("python", ""), "python", MAX_NAME)),
    )


def decode_result(body: Any, pending: dict[int, list[Any]]) -> dict[str, Any]:
    """One run's result, which must be one of the ``pending`` slots (position -> ``[variant,
    iteration, warmup, position]``) of the plan: a box cannot add runs nor rename them."""
    if not isinstance(body, dict):
        raise ProtocolError(f"result: not an object ({_kind(body)})")
    position = _integer(body.get("position"), "position", 0)
    slot = pending.get(position)  # type: ignore[arg-type]
    if slot is None or slot[2]:
        raise ProtocolError(f"position: {position} is not a run the plan asks for (or it was received already)")
    if body.get("variant") != slot[0]:
        raise ProtocolError(
            f"variant: {str(body.get('variant'))[:MAX_NAME]!r} is not the variant of run {position} ({slot[0]!r})"
        )
    if body.get("iteration") != slot[1] or isinstance(body.get("iteration"), bool):
        raise ProtocolError(
            f"iteration: {str(body.get('iteration'))[:MAX_NAME]!r} is not the iteration of run {position} ({slot[1]})"
        )
    status = body.get("status")
    if status not in STATUSES:
        raise ProtocolError(f"status: {str(status)[:MAX_NAME]!r} is not one of {', '.join(STATUSES)}")
    decoded = _result_values(body.get("values"))
    units = _result_units(body.get("units"))
    return {
        "variant": slot[0],
        "iteration": slot[1],
        "position": position,
        "status": status,
        "exit_code": _integer(body.get("exit_code"), "exit_code", optional=True),
        "started_at": _number(body.get("started_at"), "started_at", low=0),
        "wall": _number(body.get("wall"), "wall", low=0),
        "values": decoded,
        "units": dict(units),
        "notes": _texts(body.get("notes"), "notes"),
        "stderr_tail": _text(body.get("stderr_tail"), "stderr_tail", optional=True) or "",
    }


def _result_values(values: Any) -> dict[str, list[float]]:
    """A result's ``values``: metric -> list of numbers, bounded in metrics and values."""
    if not isinstance(values, dict):
        raise ProtocolError(f"values: not an object of metrics ({_kind(values)})")
    if len(values) > MAX_METRICS:
        raise ProtocolError(f"values: more than {MAX_METRICS} metrics")
    decoded: dict[str, list[float]] = {}
    count = 0
    for metric, numbers in values.items():
        _name(metric, "values")
        if not isinstance(numbers, list):
            raise ProtocolError(f"values[{metric!r}]: not a list of numbers ({_kind(numbers)})")
        count += len(numbers)
        if count > MAX_VALUES:
            raise ProtocolError(f"values: more than {MAX_VALUES} values in one run")
        decoded[metric] = [_number(v, f"values[{metric!r}][{i}]") for i, v in enumerate(numbers)]
    return decoded


def _result_units(units: Any) -> dict[str, Any]:
    """A result's ``units`` (absent: none): metric -> a short text."""
    if units is None:
        return {}
    if not isinstance(units, dict):
        raise ProtocolError(f"units: not an object ({_kind(units)})")
    if len(units) > MAX_METRICS:
        raise ProtocolError(f"units: more than {MAX_METRICS} metrics")
    for metric, unit in units.items():
        _name(metric, "units")
        _text(unit, f"units[{metric!r}]", MAX_NAME)
    return units


def decode_done(body: Any) -> dict[str, Any]:
    """The end of a plan: ``error`` (None or one text), ``interrupted``, ``notes``."""
    if not isinstance(body, dict):
        raise ProtocolError(f"done: not an object ({_kind(body)})")
    interrupted = body.get("interrupted", False)
    if not isinstance(interrupted, bool):
        raise ProtocolError(f"done.interrupted: not true/false ({_kind(interrupted)})")
    return {
        "error": _text(body.get("error"), "done.error", optional=True) or None,
        "interrupted": interrupted,
        "notes": _texts(body.get("notes"), "done.notes"),
    }


def decode_error(body: Any) -> str:
    """Why the runner could not start the plan."""
    return str(_text(body, "error"))


FIELD = re.compile(r"[a-z][a-z_]{0,39}\Z")


def decode_fields(body: Any) -> list[str]:
    """The fields an error of the runner names as ``{FIELD}`` (absent: none); the controller names their flags."""
    if body is None:
        return []
    if not isinstance(body, list) or len(body) > 8 or not all(isinstance(f, str) and FIELD.match(f) for f in body):
        raise ProtocolError(f"fields: not a list of up to 8 field names ({_kind(body)})")
    return body


def decode_findings(body: Any, statuses: tuple[str, ...]) -> list[dict[str, str]]:
    """``abstat doctor``'s findings from a box: a list of ``{name, status, evidence, fix}``."""
    if not isinstance(body, list) or len(body) > MAX_NOTES:
        raise ProtocolError(f"doctor: not a list of findings ({_kind(body)})")
    found = []
    for index, item in enumerate(body):
        if not isinstance(item, dict):
            raise ProtocolError(f"doctor[{index}]: not a finding ({_kind(item)})")
        if item.get("status") not in statuses:
            raise ProtocolError(
                f"doctor[{index}].status: {str(item.get('status'))[:MAX_NAME]!r} is not one of {', '.join(statuses)}"
            )
        found.append(
            {
                "name": _name(item.get("name"), f"doctor[{index}].name"),
                "status": item["status"],
                "evidence": str(_text(item.get("evidence") or "", f"doctor[{index}].evidence")),
                "fix": str(_text(item.get("fix") or "", f"doctor[{index}].fix")),
            }
        )
    return found


def boot_id_from(output: str) -> str | None:
    """The boot id in what ``cat /proc/sys/kernel/random/boot_id`` printed: its last UUID-shaped line
    (a login script may print a greeting before it)."""
    for line in reversed(output.splitlines()):
        if UUID.fullmatch(line.strip()):
            return line.strip().lower()
    return None
