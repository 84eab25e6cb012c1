"""``abstat doctor``: check this machine for known sources of benchmark noise.

    abstat doctor [--format text|json] [--cpus LIST] [--tune | --reset]
    abstat doctor --host NAME|LABEL=DEST [--host ...] [--format text|json]

Each check reports ok, warn or not-available, with the evidence read from
/proc and /sys and the fix.  ``--tune`` applies the reversible fixes (as
root; otherwise it prints the commands) and records them; ``--reset``
restores what was recorded.  ``--host`` (repeatable) runs the checks on
each test box over ssh instead, as ``abstat run --host`` reaches it: the
checks travel with the lab's runner bundle, nothing is installed there.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from abstat.cli.args import ArgumentParser, add_format
from abstat.errors import UsageError


def build_parser() -> ArgumentParser:
    parser = ArgumentParser(
        prog="abstat doctor",
        examples=("abstat doctor --cpus 2-3 --only cpu-governor --only turbo",),
        description="Check this machine for known sources of benchmark noise, and fix them.",
    )
    add_format(parser, ("text", "json"), default="text")
    parser.add_argument(
        "--cpus", metavar="LIST", help="the benchmark's CPUs, e.g. 2-3 (default: this process's affinity)"
    )
    parser.add_argument(
        "--interval",
        type=float,
        default=0.5,
        metavar="SECONDS",
        help="how long to watch CPU use and swapping (default 0.5)",
    )
    parser.add_argument("--only", action="append", metavar="NAME", help="only this check (repeatable)")
    parser.add_argument("--no-perf", action="store_true", help="do not run perf stat to test the counters")
    action = parser.add_mutually_exclusive_group()
    action.add_argument("--tune", action="store_true", help="apply the reversible fixes and record them")
    action.add_argument("--reset", action="store_true", help="undo what --tune recorded")
    parser.add_argument("--dry-run", action="store_true", help="with --tune: only print the commands")
    parser.add_argument(
        "--yes", action="store_true", help="with --reset of a --state record not the default one: write what it lists"
    )
    parser.add_argument(
        "--state",
        metavar="FILE",
        help="the tuning record (default $ABSTAT_DOCTOR_STATE or ~/.local/state/abstat/doctor-tune.json)",
    )
    parser.add_argument("--root", metavar="DIR", default="", help="read proc/ and sys/ under DIR (saved files)")
    parser.add_argument(
        "--host",
        action="append",
        default=[],
        metavar="NAME|LABEL=DEST",
        help="check this ssh destination instead of this machine (repeatable, as abstat run --host)",
    )
    parser.add_argument(
        "--connect-timeout",
        type=float,
        default=30.0,
        metavar="SECONDS",
        help="with --host: give up on a host that does not answer within this (default 30)",
    )
    parser.add_argument(
        "--exit-code", action="store_true", help="exit 1 when a check warns (a setting to fix), 0 when none does"
    )
    parser.epilog = (
        "Exit status: 0; with --exit-code 1 when a check warns; 2 on bad input or a host that cannot be checked."
    )
    return parser


def _status(args: argparse.Namespace, findings: list) -> int:
    from abstat.box.doctor.base import WARN

    return 1 if args.exit_code and any(f.status == WARN for f in findings) else 0


def main(argv: list[str]) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    from abstat.box.doctor import CHECKS, Context, run_checks
    from abstat.box.doctor.base import parse_cpu_list
    from abstat.box.doctor.tune import default_state_path, reset, tune
    from abstat.render.doctor import render_findings, render_tuning

    known = {check.name for check in CHECKS}
    for name in args.only or []:
        if name not in known:
            raise UsageError(f"--only {name!r}: unknown check (known: {', '.join(sorted(known))})")
    cpus = None
    if args.cpus is not None:
        cpus = parse_cpu_list(args.cpus)
        if not cpus:
            raise UsageError(f"--cpus {args.cpus!r}: expected a CPU list such as 0-3,8")
    if not args.interval >= 0:
        raise UsageError("--interval must be 0 or more seconds")
    if args.host:
        return _on_hosts(args, cpus)
    state_path = args.state or default_state_path()
    if args.yes and not args.reset:
        raise UsageError("--yes goes with --reset: it approves the writes a --state record names")
    if args.reset:
        _approve_reset(args, state_path)
        result = reset(state_path=state_path, root=args.root, announce=_announce)
        sys.stdout.write(render_tuning(result, "reset", args.format))
        return 0
    from abstat.box.runner.perf import counters_probe

    probe = None if args.no_perf or args.root else counters_probe
    context = Context(args.root, cpus=cpus, interval=args.interval, probe_counters=probe)
    findings = run_checks(context, args.only)
    if args.tune:
        result = tune(findings, state_path=state_path, run_commands=not args.root, dry_run=args.dry_run, root=args.root)
        sys.stdout.write(render_tuning(result, "tune", args.format))
        return 0
    sys.stdout.write(render_findings(findings, args.format))
    return _status(args, findings)


def _approve_reset(args: argparse.Namespace, state_path: str) -> None:
    """The writes of a record not --tune's default one are listed, and made only with --yes (attack23 #8)."""
    from abstat.box.doctor.tune import default_state_path, unapproved_writes

    planned = [] if args.yes else unapproved_writes(state_path, root=args.root)
    if planned:
        _announce(planned)
        raise UsageError(
            f"--state {state_path}: --reset writes the settings above, named by a record that is not the default "
            f"one --tune writes ({default_state_path()}); check them, then add --yes"
        )


def _announce(planned: list[str]) -> None:
    """What --reset is about to write and run, on standard error before it does."""
    from abstat.render.doctor import terminal_safe

    for line in planned:
        sys.stderr.write(terminal_safe(f"reset will {line}") + "\n")
    sys.stderr.flush()


def _on_hosts(args: argparse.Namespace, cpus: list[int] | None) -> int:
    """The checks on every ``--host`` at once: one section (or JSON object) per host;
    a host that cannot be checked gets one line on standard error, and exit status 2."""
    import json

    from abstat.api import check_hosts
    from abstat.cli.args.lab_args import parse_hosts
    from abstat.render.doctor import render_findings, terminal_safe

    for flag, given in (
        ("--tune", args.tune),
        ("--reset", args.reset),
        ("--state", args.state),
        ("--dry-run", args.dry_run),
        ("--yes", args.yes),
    ):
        if given:
            raise UsageError(f"{flag} changes this machine only; run abstat doctor {flag} on the host itself")
    if not args.connect_timeout > 0:
        raise UsageError("--connect-timeout must be a positive number of seconds")
    answers = check_hosts(
        parse_hosts(args.host),
        only=args.only,
        cpus=cpus,
        interval=args.interval,
        perf=not args.no_perf,
        timeout=args.connect_timeout,
        root=args.root,
    )
    documents: list[dict[str, Any]] = []
    failed, separator, warned = 0, "", 0
    for answer in answers:
        findings = answer.findings
        if findings is None:
            failed += 1
            sys.stderr.write(f"abstat doctor: host {terminal_safe(answer.host)}: {terminal_safe(answer.error or '')}\n")
            documents.append({"host": answer.host, "error": answer.error, "checks": []})
            continue
        warned = max(warned, _status(args, findings))
        if args.format == "json":
            documents.append({"host": answer.host, "checks": [f.to_dict() for f in findings]})
        else:
            sys.stdout.write(
                f"{separator}== host {terminal_safe(answer.host)} ({terminal_safe(answer.destination)}) ==\n"
            )
            separator = "\n"
            sys.stdout.write(render_findings(findings, "text"))
        sys.stdout.flush()
    if args.format == "json":
        sys.stdout.write(json.dumps(documents, indent=2) + "\n")
    return 2 if failed else warned
