"""``--cpus`` and ``--isolate``: the CPUs the measured commands run on, and whether they are theirs alone."""

from __future__ import annotations

import argparse
from typing import Any

from abstat.cli.args.values import cpus_of
from abstat.errors import UsageError


def add_cpu_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--cpus",
        metavar="LIST",
        help="confine every measured command and its children to these CPUs (e.g. 2-3 or 1,3: "
        "the affinity they start with); recorded with the runs",
    )
    parser.add_argument(
        "--isolate",
        action="store_true",
        help="(root, cgroup v1 cpuset) and keep everything else off the --cpus: other tasks, "
        "abstat and the background load moved to the other CPUs, IRQs pointed away, the "
        "CPUs' SMT siblings left idle; restored when the run ends (after a kill: "
        "abstat doctor --reset)",
    )


def cpu_fields(args: argparse.Namespace) -> dict[str, Any]:
    """The spec's ``cpus`` and ``isolate`` from the options."""
    cpus = cpus_of(getattr(args, "cpus", None))
    isolate = bool(getattr(args, "isolate", False))
    if isolate and not cpus:
        raise UsageError("--isolate needs --cpus LIST: the CPUs to give the measured commands alone")
    return {"cpus": cpus, "isolate": isolate}
