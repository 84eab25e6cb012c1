"""Hardware counters through ``perf stat -x,`` where the machine has them."""

from __future__ import annotations

import shutil
import tempfile
from dataclasses import dataclass, field

DEFAULT_EVENTS: tuple[str, ...] = ("cycles", "instructions")


@dataclass
class PerfSupport:
    """Which of the requested events ``perf stat`` can count here."""

    perf_path: str | None
    supported: list[str] = field(default_factory=list)
    unsupported: list[str] = field(default_factory=list)
    note: str = ""

    @property
    def usable(self) -> bool:
        return self.perf_path is not None and bool(self.supported)


def parse_perf_csv(text: str) -> tuple[dict[str, float], dict[str, str], list[str]]:
    """Parse ``perf stat -x,`` output: (values by event, units, unsupported events).

    Each data line is ``value,unit,event,run-time,percent,...``; the value is
    ``<not supported>`` or ``<not counted>`` when the event was not counted.
    """
    values, units, missing, _ = parse_perf_csv_running(text)
    return values, units, missing


def parse_perf_csv_running(text: str) -> tuple[dict[str, float], dict[str, str], list[str], dict[str, float]]:
    """:func:`parse_perf_csv`, and the share of the run (percent) each counted event was counting: perf's
    fifth field, below 100 when the PMU multiplexed more events than it has counters; perf then scales the
    value (``value x enabled / running``) to an estimate."""
    running: dict[str, float] = {}
    values: dict[str, float] = {}
    units: dict[str, str] = {}
    missing: list[str] = []
    for line in text.splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        parts = line.split(",")
        if len(parts) < 3:
            continue
        raw, unit, event = parts[0].strip(), parts[1].strip(), parts[2].strip()
        if not event:
            continue
        if raw.startswith("<"):
            missing.append(event)
            continue
        try:
            values[event] = float(raw)
        except ValueError:
            missing.append(event)
            continue
        units[event] = unit or "count"
        try:
            share = float(parts[4]) if len(parts) > 4 and parts[4].strip() else 100.0
        except ValueError:
            share = 100.0
        running[event] = share
    return values, units, missing, running


def split_events(text: str) -> list[str]:
    """``--perf-events`` split at the commas outside ``{...}`` groups (a group's events are counted
    together, so their ratios are exact even when multiplexed) and outside a PMU's ``pmu/a=1,b=2/``."""
    events: list[str] = []
    current: list[str] = []
    depth, in_pmu = 0, False
    for char in text:
        depth += {"{": 1, "}": -1}.get(char, 0)
        in_pmu = not in_pmu if char == "/" else in_pmu
        if char == "," and depth == 0 and not in_pmu:
            events.append("".join(current).strip())
            current = []
        else:
            current.append(char)
    events.append("".join(current).strip())
    return [event for event in events if event]


def group_members(event: str) -> list[str]:
    """The events of a group ``{a,b}:u`` (modifiers dropped), or the event itself."""
    if event.startswith("{") and "}" in event:
        return [e.strip() for e in event[1 : event.index("}")].split(",") if e.strip()]
    return [event]


def multiplexing_note(running: dict[str, float]) -> str | None:
    """A run's note naming the counters perf measured for only part of the run, or None."""
    partial = sorted((share, event) for event, share in running.items() if share < 100.0)
    if not partial:
        return None
    shown = ", ".join(f"{event} {share:.3g}%" for share, event in partial)
    return (
        f"perf: multiplexed: {shown} of the run counted; perf scaled those values up to estimates "
        "(count fewer events, or group them as {a,b} for exact ratios)"
    )


def probe(events: tuple[str, ...] | list[str] = DEFAULT_EVENTS) -> PerfSupport:
    """Run ``perf stat -x, -e EVENTS true`` once and see what it counts."""
    perf = shutil.which("perf")
    if perf is None:
        return PerfSupport(None, [], list(events), "perf is not installed: no hardware counters")
    with tempfile.NamedTemporaryFile("w+", prefix="abstat-perf-", suffix=".csv") as out:
        import subprocess  # here: abstat run without --perf never needs it

        try:
            proc = subprocess.run(
                [perf, "stat", "-x,", "-o", out.name, "-e", ",".join(events), "--", "true"],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                timeout=30,
                check=False,
            )
        except (OSError, subprocess.TimeoutExpired) as err:
            return PerfSupport(None, [], list(events), f"perf stat could not run: {err}")
        out.seek(0)
        text = out.read()
    if proc.returncode != 0:
        reason = proc.stderr.decode(errors="replace").strip().splitlines()
        detail = reason[-1] if reason else f"exit status {proc.returncode}"
        return PerfSupport(None, [], list(events), f"perf stat failed on this machine: {detail}")
    values, _, missing = parse_perf_csv(text)
    supported = [e for e in events if all(member in values for member in group_members(e))]
    unsupported = [e for e in events if e not in supported]
    note = ""
    if unsupported:
        note = (
            "perf stat reports <not supported> on this machine for "
            + ", ".join(unsupported)
            + (" (no hardware counters, e.g. in a VM without a virtual PMU)" if not supported else "")
        )
    return PerfSupport(perf, supported, unsupported, note)


def wrap(argv: list[str], support: PerfSupport, output_path: str) -> list[str]:
    """``perf stat`` around ``argv``, writing its CSV to ``output_path``."""
    assert support.perf_path is not None
    return [
        support.perf_path,
        "stat",
        "-x,",
        "-o",
        output_path,
        "-e",
        ",".join(support.supported),
        "--",
        *argv,
    ]


def read_output(path: str) -> tuple[dict[str, float], dict[str, str], list[str], dict[str, float]]:
    """(values, units, events not counted, share of the run each was counting) of ``perf stat``'s CSV."""
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            return parse_perf_csv_running(handle.read())
    except OSError:
        return {}, {}, [], {}


def counters_probe() -> tuple[bool, str]:
    """Whether ``perf stat`` counts cycles and instructions here: the doctor's counters check."""
    support = probe()
    if support.perf_path is None:
        return False, "perf is not installed"
    if support.usable:
        return True, f"counts {', '.join(support.supported)}"
    return False, support.note or f"cannot count {', '.join(support.unsupported)}"
