"""The command line's grammar: the options several commands share, defined once here (one name, value,
meaning and help text everywhere), the parsers' values, and an experiment's own options
(:mod:`abstat.cli.args.experiment_args`).  The commands (:mod:`abstat.cli.commands`) parse with them.
"""

import os
import sys


def import_argparse() -> None:
    """Import argparse with :func:`_gettext` and :func:`_ngettext` as its translations when no catalogue can be
    found: gettext (and the locale module it imports to expand the language names) is then not imported.
    Without a catalogue gettext returns the message as given; it finds catalogues only in the standard
    library's locale folder unless told of others, which needs gettext imported (then these defer to it)."""
    if "argparse" in sys.modules or "gettext" in sys.modules:
        return
    if os.path.isdir(os.path.join(sys.base_prefix, "share", "locale")):  # gettext's default folder
        return
    stub = type(sys)("gettext")
    stub.gettext, stub.ngettext = _gettext, _ngettext  # type: ignore[attr-defined]
    sys.modules["gettext"] = stub
    try:
        import argparse  # noqa: F401 -- its `from gettext import gettext as _, ngettext` takes the stub's
    finally:
        if sys.modules.get("gettext") is stub:
            del sys.modules["gettext"]


def _gettext(message: str) -> str:
    real = sys.modules.get("gettext")
    return message if real is None else real.gettext(message)


def _ngettext(singular: str, plural: str, n: int) -> str:
    real = sys.modules.get("gettext")
    if real is None:
        return singular if n == 1 else plural
    return real.ngettext(singular, plural, n)


import_argparse()  # before argparse is imported below (by this package, first: abstat.cli imports it)

import argparse  # noqa: E402
from typing import Any, NoReturn, Sequence  # noqa: E402

from abstat.cli.args.values import (  # noqa: E402, F401
    confidence_percent,
    percent,
    positive_int,
    power_percent,
    threshold_percent,
)
from abstat.errors import UsageError  # noqa: E402

# Every output format, in the one order every command lists its choices in.
FORMATS = ("table", "text", "markdown", "email", "json", "csv", "html", "github", "gitlab", "hyperfine")

STORE_HELP = "result store: a file or a postgresql:// URL (default: $ABSTAT_STORE, else ./abstat.db)"


class ArgumentParser(argparse.ArgumentParser):
    """argparse whose errors are one line and exit status 2, through the CLI, and whose ``--help``
    ends with ``examples`` (command lines, printed as given, after the epilog)."""

    def __init__(self, *args: Any, examples: Sequence[str] = (), **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.examples = tuple(examples)

    def error(self, message: str) -> NoReturn:
        raise UsageError(message)

    def _get_formatter(self) -> argparse.HelpFormatter:
        # argparse makes a formatter for every add_argument, and without a width it imports shutil (and
        # with it bz2, lzma, fnmatch...) to ask for one: on every command's start-up (issue 42).
        return self.formatter_class(prog=self.prog, width=terminal_columns() - 2)  # type: ignore[call-arg]

    def format_help(self) -> str:
        text = super().format_help()
        if not self.examples:
            return text
        title = "example:" if len(self.examples) == 1 else "examples:"
        return text.rstrip("\n") + f"\n\n{title}\n" + "".join(f"  {line}\n" for line in self.examples)


def terminal_columns() -> int:
    """``shutil.get_terminal_size().columns`` (COLUMNS when a positive integer, else standard output's
    terminal, else 80), without importing shutil."""
    try:
        columns = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        columns = 0
    if columns > 0:
        return columns
    try:
        return os.get_terminal_size(sys.__stdout__.fileno()).columns or 80  # type: ignore[union-attr]
    except (AttributeError, ValueError, OSError):  # no standard output (AttributeError on None), not a terminal
        return 80


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


def add_confidence(parser: argparse.ArgumentParser, *, stored: bool = False) -> None:
    """``-c``; ``stored``: a command that reads experiments from a store, whose default is the confidence
    ``abstat run`` stored with them (None here: :func:`abstat.report.analysis.stored_judging` decides)."""
    parser.add_argument(
        "-c",
        "--confidence",
        type=confidence_percent,
        default=None if stored else 95.0,
        metavar="PCT",
        help="confidence level in percent, e.g. 95 or 99.5 (default 95; a stored experiment's: as it was run)",
    )


def add_power(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--power",
        type=power_percent,
        default=80.0,
        metavar="PCT",
        help="power in percent, like the confidence: the chance to detect the change if it is there (default 80)",
    )


def add_higher_is_better(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--higher-is-better",
        action="append",
        default=[],
        metavar="METRIC[,METRIC]",
        help="metrics where larger values are better (throughputs); 'all' for every "
        "metric (a metric --lower-is-better names by name excepted: a name beats 'all'); repeatable (default: "
        "lower is better, except units ending in /s; a stored experiment's metrics: also those it was run with "
        "--higher-is-better)",
    )
    parser.add_argument(
        "--lower-is-better",
        action="append",
        default=[],
        metavar="METRIC[,METRIC]",
        help="metrics where smaller values are better whatever their unit (an error rate in a unit ending in "
        "/s), or a stored --higher-is-better taken back; 'all' for every metric (a metric --higher-is-better "
        "names by name excepted); repeatable",
    )


def add_format(
    parser: argparse.ArgumentParser,
    choices: Sequence[str],
    default: str | None = None,
    help: str = "output format",
    default_text: str | None = None,
) -> None:
    parser.add_argument(
        "--format", choices=formats(*choices), default=default, help=f"{help} (default {default_text or default})"
    )


STORED_THRESHOLD = "none; a stored experiment's: as it was run"


def add_threshold(parser: argparse.ArgumentParser, *, default: str | None = None) -> None:
    """``--threshold``, one help text for every command (tests/cli/test_cli_grammar.py): its default is none,
    2 for ``run --until-decided``, and for a command that reads experiments from a store the threshold
    ``abstat run --until-decided`` stored with them (:func:`abstat.report.analysis.stored_judging`); ``default``
    is kept for the callers' record of which applies."""
    parser.add_argument(
        "--threshold",
        type=threshold_percent,
        default=None,
        metavar="PCT",
        help="practical threshold in percent: changes within +-PCT do not matter "
        "('equivalent' when the whole interval lies inside) (default none; run --until-decided: 2, its looks "
        "and the end's verdicts judge by it; a stored experiment: as it was run)",
    )


def add_fail_on(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--fail-on",
        choices=("slower", "faster", "change"),
        default=None,
        help="CI gate: exit 1 when a change this way is proven beyond --threshold (significant "
        "after Holm, the whole interval beyond it); else 0; 2 on bad input or when no comparison could be judged",
    )
    parser.add_argument(
        "--outliers",
        choices=("none", "tukey", "mad"),
        default="none",
        help="drop outliers by this rule (default none; they are always counted)",
    )


def add_metric_choice(
    parser: argparse.ArgumentParser, repeatable: bool = False, default_text: str = "every metric"
) -> None:
    if repeatable:
        parser.add_argument(
            "--metric",
            action="append",
            default=[],
            metavar="METRIC",
            help=f"only this metric (repeatable, or comma-separated; default: {default_text})",
        )
    else:
        parser.add_argument(
            "--metric", default="wall", metavar="METRIC", help="the metric of stored variants (default wall)"
        )


def add_where(
    parser: argparse.ArgumentParser,
    help: str = "keep only the runs whose labels match; KEY=V1,V2 keeps either value (repeatable)",
) -> None:
    parser.add_argument("--where", action="append", default=[], metavar="KEY=VALUE[,VALUE]", help=help)


def add_label(parser: argparse.ArgumentParser, help: str = "add this label (repeatable)") -> None:
    parser.add_argument("--label", action="append", default=[], metavar="KEY=VALUE", help=help)


def add_baseline(
    parser: argparse.ArgumentParser, help: str = "variant the others are compared with (default: the first)"
) -> None:
    parser.add_argument("--baseline", metavar="NAME", default=None, help=help)


def add_seed(
    parser: argparse.ArgumentParser, default: int | None = 0, help: str = "seed of resampling methods (default 0)"
) -> None:
    parser.add_argument("--seed", type=int, default=default, metavar="N", help=help)


def add_center(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--center",
        choices=("auto", "median", "mean"),
        default="auto",
        help="what to compare (default auto: the Hodges-Lehmann ratio, the median of the "
        "candidate/baseline ratios, at any size; median: the ratio of medians; mean: the "
        "ratio of means)",
    )


def add_columns(parser: argparse.ArgumentParser) -> None:
    """``-C/--column`` and ``-d/--delimiters`` of sample files (as ministat's)."""
    parser.add_argument(
        "-C",
        "--column",
        type=positive_int,
        default=1,
        metavar="N",
        help="sample files: the column to read, 1-based (default 1)",
    )
    parser.add_argument(
        "-d",
        "--delimiters",
        default=None,
        metavar="CHARS",
        help="sample files: column delimiters (default: white space or commas)",
    )


def add_output(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "-o", "--output", metavar="FILE", default=None, help="write to this file instead of standard output"
    )


class _OldVerbose(argparse.Action):
    """``-v`` where it once meant --verbose: a one-line error naming the spellings (exit 2), never a silent
    change of meaning."""

    def __init__(self, option_strings: Sequence[str], dest: str, **kwargs: Any) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, help=argparse.SUPPRESS)

    def __call__(self, parser: Any, namespace: Any, values: Any, option_string: str | None = None) -> None:
        raise UsageError(
            f"-v no longer means more detail: -v is --variant in every abstat command (abstat run -v "
            f"NAME=COMMAND); write {parser.prog} --verbose ..."
        )


def add_verbose(parser: argparse.ArgumentParser, help: str, old_short: bool = False) -> None:
    """``--verbose``, spelled out in every command (``-v`` is ``--variant``); ``old_short``: refuse the ``-v``
    that once meant it here, naming the new spelling."""
    parser.add_argument("--verbose", action="store_true", help=help)
    if old_short:
        parser.add_argument("-v", action=_OldVerbose)


def add_no_progress(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--no-progress", action="store_true", help="no progress display")


def add_runs(parser: argparse.ArgumentParser, default: int) -> None:
    parser.add_argument(
        "-n", "--runs", type=int, default=default, metavar="N", help=f"measured runs per variant (default {default})"
    )


def add_warmup(parser: argparse.ArgumentParser, default: int) -> None:
    parser.add_argument(
        "--warmup",
        type=int,
        default=default,
        metavar="N",
        help=f"warm-up runs per variant, not recorded (default {default})",
    )


def option_strings(parser: argparse.ArgumentParser) -> dict[str, Any]:
    """``--option`` -> its action, for every optional argument of ``parser``."""
    return {s: action for action in parser._actions for s in action.option_strings}


def stored_metric(store_arg: str | None, metric: str, variants: Any) -> tuple[str | None, str | None]:
    """:func:`abstat.store.metric_unit.stored_metric` (imported when a command needs it: not for
    files, as importing it imports the store and sqlite3)."""
    if not any(source.startswith("store:") for v in variants for source in v.sources):
        return None, None
    from abstat.store.metric_unit import stored_metric as lookup

    return lookup(store_arg, metric, variants)
