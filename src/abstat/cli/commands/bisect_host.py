"""``abstat bisect --host``'s options and ``abstat bisect --resume`` (docs/lab.md, "Bisecting a kernel")."""

from __future__ import annotations

import argparse
import math
import os
import sys
from collections.abc import Callable
from typing import Any

from abstat.cli.args import ArgumentParser, add_format, add_no_progress, add_store
from abstat.errors import UsageError

HOST_ONLY = ("build_on_host", "install", "boot", "check", "recover", "boot_timeout", "runs")


def box_bisect_from_args(args: argparse.Namespace, metric: str, spec: str | None, budget: int) -> Any:
    """The box bisection the options describe, or None without --host (then no box option may be given)."""
    from abstat.history.bisect.boxes import BoxBisect
    from abstat.history.bisect.onbox import BoxSetup
    from abstat.cli.args.lab_args import parse_hosts

    given = [name for name in HOST_ONLY if getattr(args, name) is not None]
    if args.host is None:
        if given:
            raise UsageError(f"--{given[0].replace('_', '-')} needs --host: it is about a test box")
        return None
    (host,) = parse_hosts([args.host])
    timeout, runs = _box_options(args)
    setup = BoxSetup(
        host.label,
        host.destination,
        args.run,
        metric,
        spec,
        runs,
        args.build,
        args.build_on_host,
        args.artifact,
        args.install,
        args.boot,
        args.check,
        args.recover,
        timeout,
        args.timeout,
    )
    return BoxBisect(os.path.abspath(args.repo), args.good, args.bad, setup, budget, args.confidence / 100.0)


def _box_options(args: argparse.Namespace) -> tuple[float, int]:
    """The boot timeout and runs per revision on the box, once the box options are checked together."""
    if args.build and args.build_on_host:
        raise UsageError("--build (here) and --build-on-host (on the box): give one")
    if args.build and not args.artifact:
        raise UsageError("--build with --host needs --artifact PATH: the built file copied to the box")
    if args.check and not args.boot:
        raise UsageError("--check needs --boot (it checks the boot)")
    timeout = 600.0 if args.boot_timeout is None else args.boot_timeout
    if not (timeout > 0 and math.isfinite(timeout)):
        raise UsageError("--boot-timeout must be a positive number of seconds")
    runs = 5 if args.runs is None else args.runs
    if not 1 <= runs <= 100_000:
        raise UsageError("--runs must be between 1 and 100000")
    return timeout, runs


def resume_parser() -> argparse.ArgumentParser:
    parser = ArgumentParser(
        prog="abstat bisect --resume",
        examples=("abstat bisect --resume bisect-1a2b3c-4d5e6f --store lab.db",),
        description="Continue a bisection on a test box from its store: the boots stored are "
        "read back, the search goes on from the first one missing.",
    )
    parser.add_argument("--resume", required=True, metavar="EXPERIMENT", help="the bisection's experiment")
    parser.add_argument("--boot-timeout", type=float, default=None, metavar="S", help="a new --boot-timeout")
    parser.add_argument(
        "--yes", action="store_true", help="run the stored commands (without it they are printed and nothing runs)"
    )
    add_store(parser)
    add_format(parser, ("text", "json"), default="text")
    add_no_progress(parser)
    return parser


def run_on_host(
    config: Any,
    store_path: str,
    experiment: str | None,
    argv: list[str],
    progress: Callable[[str], None],
    resume: bool = False,
) -> Any:
    from abstat.history.bisect.boxes import run_box_bisect
    from abstat.store import open_store

    with open_store(store_path) as store:
        return run_box_bisect(config, store, store_path, experiment, argv, progress, resume=resume)


def stored_bisect_commands(config: Any) -> list[str]:
    """What ``bisect --resume`` would run and where, one line each (the caller escapes them)."""
    setup = config.setup
    lines = [
        f"bisection of {config.repo} from {config.good} to {config.bad}:",
        f"  on this machine, in the repository's worktrees: --build {setup.build or '(none)'}",
        f"  on this machine after a failed boot: --recover {setup.recover or '(none)'}",
        f"  {'copied from the worktree to the box' if setup.build else 'on the box'}, as ABSTAT_ARTIFACT: "
        f"--artifact {setup.artifact or '(none)'}",
        f"  on {setup.label} ({setup.destination}):",
    ]
    lines += [
        f"    --{name.replace('_', '-')} {value}"
        for name in ("build_on_host", "install", "boot", "check", "run")
        if (value := getattr(setup, name)) is not None
    ]
    return lines


def resume(argv: list[str], progress_to: Callable[[bool], Callable[[str], None]]) -> tuple[Any, str]:
    """``abstat bisect --resume EXPERIMENT``: (the report, the format)."""
    import dataclasses

    from abstat.history.bisect.boxes import stored_bisection
    from abstat.store import open_store, resolve_store_path

    args = resume_parser().parse_args(argv)
    store_path = resolve_store_path(args.store)
    if not os.path.exists(store_path) and "://" not in store_path:
        raise UsageError(f"--resume {args.resume!r}: no store {store_path}")
    with open_store(store_path) as store:
        config = stored_bisection(store, args.resume)
    if not args.yes:  # a store may be imported or shared: nothing read from it runs unseen
        from abstat.render.escape import terminal

        sys.stderr.writelines(terminal(line) + "\n" for line in stored_bisect_commands(config))
        raise UsageError(f"--resume {args.resume!r} runs the stored commands above; check them, then add --yes")
    if args.boot_timeout is not None:
        if not (args.boot_timeout > 0 and math.isfinite(args.boot_timeout)):
            raise UsageError("--boot-timeout must be a positive number of seconds")
        config.setup = dataclasses.replace(config.setup, boot_timeout=args.boot_timeout)
    report = run_on_host(
        config, store_path, args.resume, ["abstat", "bisect", *argv], progress_to(args.no_progress), resume=True
    )
    return report, args.format
