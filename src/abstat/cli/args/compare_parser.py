"""``abstat compare``'s grammar: its parser (the command, :mod:`abstat.cli.commands.compare`, parses with it)."""

from __future__ import annotations

import argparse

from abstat.cli.args import (
    STORED_THRESHOLD,
    ArgumentParser,
    add_baseline,
    add_center,
    add_columns,
    add_confidence,
    add_fail_on,
    add_format,
    add_higher_is_better,
    add_metric_choice,
    add_seed,
    add_store,
    add_threshold,
    add_verbose,
    add_where,
)


DESCRIPTION = """\
Compare each candidate with the baseline (the first input): the relative
change of the centre (median by default) with a confidence interval, a
p-value and a verdict. Inputs: FILE, NAME=FILE, 'NAME=runs/*.txt' (each file
one independent run), NAME=n:mean:stddev (summary statistics),
EXPERIMENT:VARIANT (stored by abstat run), - (standard input).

Exit status: 0, or 1 when --fail-on finds a change proven beyond --threshold
(significant after Holm over the candidates, whole interval beyond it);
2 on bad input."""


def build_parser() -> argparse.ArgumentParser:
    p = ArgumentParser(
        prog="abstat compare",
        description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        examples=(
            "abstat compare old.txt new.txt",
            "abstat compare --verbose --threshold 1% base='runs-old/*.txt' new='runs-new/*.txt'",
        ),
    )
    p.add_argument("inputs", nargs="+", metavar="INPUT", help="baseline first, then the candidates")
    add_confidence(p, stored=True)
    add_center(p)
    add_threshold(p, default=STORED_THRESHOLD)
    add_higher_is_better(p)
    add_fail_on(p)
    add_seed(p)
    add_format(
        p,
        ("text", "markdown", "json", "csv", "github", "gitlab"),
        default="text",
        help="output format (github: annotations, and the Markdown summary appended to "
        "$GITHUB_STEP_SUMMARY when set; gitlab: a code-quality report)",
    )
    p.add_argument(
        "--color",
        choices=("auto", "always", "never"),
        default="auto",
        help="colour the text output (auto: on a terminal or with FORCE_COLOR, never with NO_COLOR)",
    )
    add_verbose(p, "text: the per-variant and per-comparison tables before the summary lines", old_short=True)
    add_columns(p)
    add_store(p)
    add_metric_choice(p)
    add_where(p)
    add_baseline(p)
    p.add_argument(
        "--unit",
        action="append",
        default=[],
        metavar="[NAME=]UNIT",
        help="the unit of the plain files' values (ns, us, ms, s, B, KiB...), or of input NAME; "
        "stored and peer units are known; values are converted to the baseline's unit",
    )
    return p
