"""``abstat bisect``'s grammar: its parser (the command, :mod:`abstat.cli.commands.bisect`, parses with it)."""

from __future__ import annotations

import argparse

from abstat.cli.args import ArgumentParser, add_confidence, add_format, add_no_progress, add_store
from abstat.errors import UsageError


def build_parser() -> argparse.ArgumentParser:
    parser = ArgumentParser(
        prog="abstat bisect",
        examples=("abstat bisect --good v6.7 --bad v6.8 --build make --run ./bench --metric wall",),
        description="Probabilistic bisection on continuous measurements: builds and runs commits in its "
        "own git worktrees, re-measures the good and bad ends interleaved, stops when one "
        "commit holds the posterior probability asked for (-c/--confidence, in percent).",
        epilog="Exit status: 0 culprit found, 1 no change found (good and bad do not differ), 3 inconclusive "
        "(budget spent, or untestable commits), 4 more than one change (each step isolated named), 2 bad input or a lost box (resume it), 130 interrupted.  "
        "Inside git bisect run: abstat bisect step --run CMD --metric NAME=REGEX [--build CMD]",
    )
    parser.add_argument("--good", required=True, metavar="REV", help="a revision without the change")
    parser.add_argument("--bad", required=True, metavar="REV", help="a later revision with it")
    _common(parser)
    parser.add_argument(
        "--budget",
        type=int,
        default=None,
        metavar="N",
        help="most benchmark runs (default 400, and up to 600 to finish confirming a culprit; a number given is a "
        "hard limit); with --host, most boots (default 150)",
    )
    add_confidence(parser)  # here: the posterior probability (in percent) that ends the search
    parser.add_argument(
        "--artifact",
        metavar="PATH",
        help="built file (relative to the tree) compared between the culprit and its parent; "
        "with --host, the file copied to the box (ABSTAT_ARTIFACT)",
    )
    add_format(parser, ("text", "json"), default="text")
    add_no_progress(parser)
    add_host_options(parser)
    return parser


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--build", metavar="CMD", help="build command (shell), run in the tree; failure = skip")
    parser.add_argument("--run", required=True, metavar="CMD", help="benchmark command (shell), run in the tree")
    parser.add_argument(
        "--metric",
        required=True,
        metavar="NAME=REGEX",
        help="the number to compare (a regex with one group), or a built-in metric (wall, user...)",
    )
    parser.add_argument("--repo", default=".", metavar="DIR", help="git repository (default: current directory)")
    parser.add_argument("--timeout", type=float, default=None, metavar="SECONDS", help="per build and run")
    parser.add_argument(
        "--experiment",
        metavar="NAME",
        help="store experiment (default bisect-GOOD-BAD, abbreviated hashes; "
        "step: bisect-step-BAD of the first bad revision)",
    )
    add_store(parser)


def metric_choice(spec: str) -> tuple[str, str | None]:
    """(metric name, pattern spec or None for a built-in metric)."""
    from abstat.box.runner import BUILTIN_METRICS, parse_metric_pattern

    if spec in BUILTIN_METRICS:
        return spec, None
    try:
        return parse_metric_pattern(spec).name, spec
    except ValueError as err:
        raise UsageError(str(err)) from None


def step_parser() -> argparse.ArgumentParser:
    parser = ArgumentParser(
        prog="abstat bisect step",
        examples=("git bisect run abstat bisect step --build make --run ./bench --metric wall",),
        description="One commit's verdict for `git bisect run`: 0 good, 1 bad, 125 skip.",
    )
    _common(parser)
    parser.add_argument("--max-runs", type=int, default=30, metavar="N", help="most runs of this commit (default 30)")
    return parser


def add_host_options(parser: argparse.ArgumentParser) -> None:
    box = parser.add_argument_group(
        "on a test box: every measurement is one boot of the candidate there (docs/lab.md)",
        "Commands on the box (--build-on-host, --install, --boot, --check, --run) and --recover (here) get "
        "ABSTAT_REV (the full commit hash) and ABSTAT_ARTIFACT (the artifact's path on the box) in their "
        "environment.",
    )
    box.add_argument("--host", metavar="NAME|LABEL=DEST", help="the ssh destination of the test box")
    box.add_argument("--build-on-host", metavar="CMD", help="build command run on the box (instead of --build here)")
    box.add_argument(
        "--install",
        metavar="CMD",
        help="run on the box before every boot whose commit is not "
        "the one installed last (after the artifact is copied)",
    )
    box.add_argument("--boot", metavar="CMD", help="boots the box into the commit (grub-reboot ... && reboot, kexec)")
    box.add_argument("--check", metavar="CMD", help="must exit 0 on the box once booted, or the boot is refused")
    box.add_argument(
        "--recover",
        metavar="CMD",
        help="run here after a boot that failed (power cycle, known-good "
        "kernel); ABSTAT_HOST and ABSTAT_DESTINATION name the box",
    )
    box.add_argument(
        "--boot-timeout",
        type=float,
        default=None,
        metavar="S",
        help="wait at most S seconds for the box to come back (default 600); later = skip",
    )
    box.add_argument("-n", "--runs", type=int, default=None, metavar="N", help="runs of --run per boot (default 5)")
    box.add_argument(
        "--resume",
        metavar="EXPERIMENT",
        help="continue a --host bisection (boots stored are read back, not made again)",
    )
