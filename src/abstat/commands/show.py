"""``abstat show EXPERIMENT``: invocations, machines, failures and the comparison."""
from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from abstat.errors import InputError, UsageError


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:
        raise UsageError(message)


_MACHINE_FIELDS = (
    ("hostname", "host"), ("cpu_model", "CPU"), ("microcode", "microcode"), ("cpus", "CPUs"),
    ("smt", "SMT"), ("kernel_release", "kernel"), ("hypervisor_type", "hypervisor"),
    ("governor", "governor"), ("boost", "boost"), ("boot_id", "boot"), ("loadavg", "load average"),
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
    lines.append(f"    {'mitigations:':<14}" + (", ".join(affected) + " (affected)" if affected else "(none affected)"
                                                  if vulns else "(missing)"))
    return lines


def main(argv: list[str]) -> int:
    parser = _Parser(prog="abstat show", description="Show a stored experiment: runs, machines, comparison.")
    parser.add_argument("experiment", metavar="EXPERIMENT")
    parser.add_argument("--store", metavar="PATH", default=None, help="result store (default ./abstat.db)")
    parser.add_argument("--baseline", metavar="NAME", help="variant the others are compared with")
    parser.add_argument("--metric", action="append", default=None, help="only this metric (repeatable)")
    parser.add_argument("--higher-is-better", action="append", default=[], metavar="METRIC")
    parser.add_argument("--format", choices=("text", "markdown", "json", "csv"), default="text")
    args = parser.parse_args(argv)
    from abstat.commands.run import comparison_report
    from abstat.store import open_store

    path = args.store or os.environ.get("ABSTAT_STORE") or "abstat.db"
    with open_store(path, create=False) as store:
        if not store.has_experiment(args.experiment):
            names = store.experiment_names()
            raise InputError(
                f"no experiment {args.experiment!r}" + (f" (experiments: {', '.join(names)})" if names else ""),
                path=path,
            )
        if args.metric:
            known = store.metrics(args.experiment)
            for metric in args.metric:
                if metric not in known:
                    raise UsageError(f"--metric {metric!r}: experiment has {', '.join(known) or 'no metrics'}")
        report = comparison_report(
            store, args.experiment, baseline=args.baseline, fmt=args.format, metrics=args.metric,
            higher_is_better=args.higher_is_better, color=args.format == "text" and sys.stdout.isatty(),
        )
        if args.format != "text":
            sys.stdout.write(report)
            return 0
        out = [f"experiment {args.experiment}  (store {path})", ""]
        for inv in store.invocations(args.experiment):
            labels = " ".join(f"{k}={v}" for k, v in inv["labels"].items())
            out.append(f"invocation {inv['id']}: {inv['started_at']} .. {inv['ended_at'] or '?'}  {inv['status']}"
                       + (f"  [{labels}]" if labels else ""))
            settings = inv["settings"]
            if settings:
                out.append(f"    runs {settings.get('runs')} + {settings.get('warmup')} warm-up, order "
                           f"{settings.get('order')}, seed {settings.get('seed')}")
            for entry in inv["runs"]:
                out.append(f"    {entry['variant']}: {entry['count']} {entry['status']}  ({entry['command']})")
            out.extend(_machine_lines(inv["machine"]))
            for note in inv["notes"]:
                out.append(f"    note: {note}")
            out.append("")
        failures = store.failed_runs(args.experiment)
        if failures:
            out.append("failed runs (not used):")
            for f in failures:
                out.append(f"    invocation {f['invocation']} {f['variant']} run {f['run']}: {f['status']}"
                           f" {'; '.join(f['notes'])}")
            out.append("")
    sys.stdout.write("\n".join(out) + "\n" + report)
    return 0
