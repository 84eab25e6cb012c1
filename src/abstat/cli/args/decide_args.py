"""``abstat run --until-decided``: a sequential experiment's options, as :class:`~abstat.engine.parts.Sequential`.

With it, ``-n`` (or ``--max-runs``) is the most runs per variant; the experiment
stops at the first of the design's looks where every candidate is settled
(:mod:`abstat.comparison.sequential`).
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from abstat.cli.args import add_threshold
from abstat.errors import UsageError

if TYPE_CHECKING:
    from abstat.engine.parts import Sequential

DEFAULT_THRESHOLD_PCT = 2.0


def add_sequential_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("stop when decided")
    group.add_argument(
        "--until-decided",
        action="store_true",
        help="stop as soon as every candidate is proven faster or slower beyond, or equivalent "
        "within, --threshold (group-sequential, the error rate spent over the looks); -n or "
        "--max-runs is the maximum",
    )
    group.add_argument(
        "--min-runs",
        type=int,
        default=None,
        metavar="N",
        help="--until-decided: runs per variant before the first look (default 5)",
    )
    group.add_argument(
        "--max-runs",
        type=int,
        default=None,
        metavar="N",
        help="--until-decided: at most this many runs per variant (default: -n)",
    )
    group.add_argument(
        "--decide-on",
        metavar="METRIC",
        default=None,
        help="--until-decided: the metric judged (default: the first --metric, else wall)",
    )
    add_threshold(parser, default="2 with --until-decided: its looks and the end's verdicts judge by it")


def sequential_from_args(args: argparse.Namespace) -> Sequential | None:
    """The ``Sequential`` of the options (None without ``--until-decided``); ``--max-runs`` becomes ``-n``."""
    from abstat.engine.parts import Sequential

    given = [
        name for name in ("min_runs", "max_runs", "decide_on", "threshold") if getattr(args, name, None) is not None
    ]
    if not getattr(args, "until_decided", False):
        if given:
            raise UsageError(f"--{given[0].replace('_', '-')} needs --until-decided")
        return None
    if args.max_runs is not None:
        if args.max_runs < 2:
            raise UsageError("--max-runs must be at least 2")
        args.runs = args.max_runs
    min_runs = 5 if args.min_runs is None else args.min_runs
    if not 2 <= min_runs <= args.runs:
        raise UsageError(f"--min-runs must be 2 to the maximum of runs per variant ({args.runs})")
    threshold = DEFAULT_THRESHOLD_PCT if args.threshold is None else args.threshold
    if not 0 < threshold < 100:
        raise UsageError("--threshold must be above 0 and below 100 (percent)")
    return Sequential(min_runs, threshold, args.decide_on)
