"""Sub-command modules: each exposes ``main(argv) -> int`` (see abstat.cli) and ``build_parser()``,
its argparse parser (read by ``abstat completion`` and by the tests that hold every command to one
grammar).  The options several commands share are defined once here: one name, value, meaning and
help text everywhere (an experiment's own options: :mod:`abstat.commands.experiment_args`).
"""
import argparse
from typing import Any, Sequence

from abstat.errors import UsageError

# Every output format, in the one order every command lists its choices in.
FORMATS = ("table", "text", "markdown", "email", "json", "csv", "html", "hyperfine")

STORE_HELP = "result store: a file or a postgresql:// URL (default: $ABSTAT_STORE, else ./abstat.db)"


class ArgumentParser(argparse.ArgumentParser):
    """argparse whose errors are one line and exit status 2, through the CLI."""

    def error(self, message: str) -> None:
        raise UsageError(message)


def _percent_value(text: str) -> tuple[float, bool]:
    stripped = text.strip()
    try:
        value = float(stripped.rstrip("%").strip())
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a percentage: {text!r}") from None
    if value != value or value in (float("inf"), float("-inf")):
        raise argparse.ArgumentTypeError(f"not a finite percentage: {text!r}")
    return value, stripped.endswith("%")


def percent(text: str) -> float:
    """``2``, ``2%`` or ``2.5 %`` -> the number of percent (finite)."""
    return _percent_value(text)[0]


def confidence_percent(text: str) -> float:
    """``95``, ``95%`` or ``99.5`` -> the confidence level in percent, in [50, 100)."""
    value, _ = _percent_value(text)
    if not 50.0 <= value < 100.0:
        raise argparse.ArgumentTypeError(f"{text!r}: the confidence level must be at least 50 and below 100 (percent)")
    return value


def power_percent(text: str) -> float:
    """``80`` or ``80%`` -> the power in percent, in (1, 100)."""
    value, with_sign = _percent_value(text)
    if 0.0 < value < 1.0 and not with_sign:
        raise argparse.ArgumentTypeError(f"{text!r}: the power is a percentage, like the confidence: "
                                         f"{value * 100:g} for {value:g}")
    if not 0.0 < value < 100.0:
        raise argparse.ArgumentTypeError(f"{text!r}: the power must lie strictly between 0 and 100 (percent)")
    return value


def positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r}: must be 1 or more")
    return value


def formats(*names: str) -> tuple[str, ...]:
    """``names`` in the canonical FORMATS order (every command lists them alike)."""
    unknown = set(names) - set(FORMATS)
    if unknown:
        raise ValueError(f"unknown formats {sorted(unknown)}")
    return tuple(name for name in FORMATS if name in names)


# --------------------------------------------------------------------------
# the shared options: one definition each

def add_store(parser: argparse.ArgumentParser, help: str = STORE_HELP) -> None:
    parser.add_argument("--store", metavar="PATH", default=None, help=help)


def add_confidence(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("-c", "--confidence", type=confidence_percent, default=95.0, metavar="PCT",
                        help="confidence level in percent, e.g. 95 or 99.5 (default 95)")


def add_power(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--power", type=power_percent, default=80.0, metavar="PCT",
                        help="power in percent, like the confidence: the chance to detect the change "
                             "if it is there (default 80)")


def add_higher_is_better(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--higher-is-better", action="append", default=[], metavar="METRIC[,METRIC]",
                        help="metrics where larger values are better (throughputs); 'all' for every "
                             "metric; repeatable (default: lower is better, except units ending in /s)")


def add_format(parser: argparse.ArgumentParser, choices: Sequence[str], default: str | None = None,
               help: str = "output format", default_text: str | None = None) -> None:
    parser.add_argument("--format", choices=formats(*choices), default=default,
                        help=f"{help} (default {default_text or default})")


def threshold_percent(text: str) -> float:
    value = percent(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"{text!r}: the threshold must not be negative")
    return value


def add_threshold(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--threshold", type=threshold_percent, default=None, metavar="PCT",
                        help="practical threshold in percent: changes within +-PCT do not matter "
                             "('equivalent' when the whole interval lies inside)")


def add_metric_choice(parser: argparse.ArgumentParser, repeatable: bool = False,
                      default_text: str = "every metric") -> None:
    if repeatable:
        parser.add_argument("--metric", action="append", default=[], metavar="METRIC",
                            help=f"only this metric (repeatable, or comma-separated; default: {default_text})")
    else:
        parser.add_argument("--metric", default="wall", metavar="METRIC",
                            help="the metric of stored variants (default wall)")


def add_where(parser: argparse.ArgumentParser, help: str = "keep only the runs whose labels match; "
              "KEY=V1,V2 keeps either value (repeatable)") -> None:
    parser.add_argument("--where", action="append", default=[], metavar="KEY=VALUE[,VALUE]", help=help)


def add_label(parser: argparse.ArgumentParser, help: str = "add this label (repeatable)") -> None:
    parser.add_argument("--label", action="append", default=[], metavar="KEY=VALUE", help=help)


def add_baseline(parser: argparse.ArgumentParser, help: str = "variant the others are compared with "
                 "(default: the first)") -> None:
    parser.add_argument("--baseline", metavar="NAME", default=None, help=help)


def add_seed(parser: argparse.ArgumentParser, default: int | None = 0,
             help: str = "seed of resampling methods (default 0)") -> None:
    parser.add_argument("--seed", type=int, default=default, metavar="N", help=help)


def add_center(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--center", choices=("auto", "median", "mean"), default="auto",
                        help="what to compare (default auto: the Hodges-Lehmann ratio, the median of the "
                             "candidate/baseline ratios, or with fewer than 10 values per variant the ratio of "
                             "geometric means; median: the ratio of medians; mean: the ratio of means)")


def add_columns(parser: argparse.ArgumentParser) -> None:
    """``-C/--column`` and ``-d/--delimiters`` of sample files (as ministat's)."""
    parser.add_argument("-C", "--column", type=positive_int, default=1, metavar="N",
                        help="sample files: the column to read, 1-based (default 1)")
    parser.add_argument("-d", "--delimiters", default=None, metavar="CHARS",
                        help="sample files: column delimiters (default: white space or commas)")


def add_output(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("-o", "--output", metavar="FILE", default=None,
                        help="write to this file instead of standard output")


def add_no_progress(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--no-progress", action="store_true", help="no progress display")


def add_runs(parser: argparse.ArgumentParser, default: int) -> None:
    parser.add_argument("-n", "--runs", type=int, default=default, metavar="N",
                        help=f"measured runs per variant (default {default})")


def add_warmup(parser: argparse.ArgumentParser, default: int) -> None:
    parser.add_argument("--warmup", type=int, default=default, metavar="N",
                        help=f"warm-up runs per variant, not recorded (default {default})")


def option_strings(parser: argparse.ArgumentParser) -> dict[str, Any]:
    """``--option`` -> its action, for every optional argument of ``parser``."""
    return {s: action for action in parser._actions for s in action.option_strings}


def stored_metric(store_arg: str | None, metric: str, variants: Any) -> tuple[str | None, str | None]:
    """:func:`abstat.store.metric_unit.stored_metric` (imported when a command needs it)."""
    from abstat.store.metric_unit import stored_metric as lookup

    return lookup(store_arg, metric, variants)
