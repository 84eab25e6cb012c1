"""``abstat report --format email``: plain text for a cover letter.

The summary table within 72 columns, its footer and footnotes, then one
block per compared cell exactly as ``ministat -A`` prints it for the two
sample sets, each under a ``$ ministat -A ...`` line and indented by two
spaces, as in a typical patch cover letter.  A cell given as summary
statistics (``NAME=n:mean:stddev``) has no samples, so ministat's Min, Max
and Median are unknown: its block is a line saying so, not invented numbers.
"""
from __future__ import annotations

import os
import shlex
import textwrap

from abstat.errors import UsageError
from abstat.render import escape
from abstat.render.matrix import EMAIL_WIDTH, render_text
from abstat.report.matrix import Cell, Report
from abstat.stats.student import CONFIDENCE_LEVELS

INDENT = "  "


def ministat_command(names: list[str]) -> str:
    """``ministat -A milan-hcall-pv64-{before,after}`` (brace form when it fits)."""
    if len(names) == 2 and all(_plain(n) for n in names):
        first, second = names
        prefix = os.path.commonprefix([first, second])
        suffix = os.path.commonprefix([first[len(prefix):][::-1], second[len(prefix):][::-1]])[::-1]
        a = first[len(prefix): len(first) - len(suffix)]
        b = second[len(prefix): len(second) - len(suffix)]
        if prefix and a and b and "," not in a + b:
            return f"ministat -A {prefix}{{{a},{b}}}{suffix}"
    return "ministat -A " + " ".join(shlex.quote(n) for n in names)


def _plain(name: str) -> bool:
    return shlex.quote(name) == name and not any(c in name for c in "{}")


def ministat_block(base: Cell, cell: Cell, confidence: float) -> str:
    """The ``ministat -A`` output for baseline vs cell, with its command line."""
    from abstat.ministat import render_report

    names = [escape.terminal(base.name), escape.terminal(cell.name)]
    summaries = [c for c in (base, cell) if c.sample_set.summary is not None]
    if summaries:
        what = escape.terminal(" and ".join(c.name for c in summaries))
        verb = "are" if len(summaries) > 1 else "is"
        text = (f"(no ministat -A block for {names[1]} vs {names[0]}: {what} {verb} summary "
                "statistics n:mean:stddev only; ministat needs the samples for Min, Max and Median)")
        return "\n".join(textwrap.wrap(text, EMAIL_WIDTH, initial_indent=INDENT,
                                       subsequent_indent=INDENT + " ", break_on_hyphens=False,
                                       break_long_words=False))
    small = [c for c in (base, cell) if c.n < 3]
    if small:
        # ministat(1) refuses such a file; say so instead of inventing a block.
        return "\n".join([
            f"{INDENT}$ {ministat_command(names)}",
            *(f"{INDENT}(no block: {escape.terminal(c.name)} has {c.n} data point{'s' if c.n != 1 else ''}; "
              "ministat needs at least 3)" for c in small)])
    text = render_report([base.sample_set.values, cell.sample_set.values], names=names,
                         confidence=confidence, plot=False, stats=True, dialect="classic")
    lines = [f"$ {ministat_command(names)}", *text.rstrip("\n").split("\n")]
    return "\n".join((INDENT + line).rstrip() if line else "" for line in lines)


def reconciling_line(report: Report) -> str:
    """Why the table and the ministat blocks below it may disagree: one line."""
    where: dict[str, list[str]] = {}  # estimand -> the rows (or columns) that compare it
    for cell in report.comparisons:
        place = "/".join(v for v in cell.row if v) or cell.column
        if place not in where.setdefault(cell.comparison.estimand_label, []):
            where[cell.comparison.estimand_label].append(place)
    what = next(iter(where)) if len(where) == 1 else "; the ".join(
        f"{label} ({', '.join(places[:4])}{f' and {len(places) - 4} more' if len(places) > 4 else ''})"
        for label, places in sorted(where.items()))
    adjusted = {"holm": "Holm-adjusted", "bh": "Benjamini-Hochberg-adjusted"}.get(report.adjust, "unadjusted")
    return (f"The ministat -A blocks below compare means with Student's t (pooled variance, no "
            f"adjustment); the table compares the {what} with {adjusted} significance, so the two may "
            "disagree: outliers and quantized values move means more.")


def render_email(report: Report) -> str:
    level = round(report.confidence * 100, 6)
    if level not in CONFIDENCE_LEVELS:
        raise UsageError(f"--format email: ministat -A blocks need a confidence of "
                         f"{', '.join(f'{x:g}' for x in CONFIDENCE_LEVELS)} (got {level:g})")
    text = render_text(report, width=EMAIL_WIDTH).rstrip("\n")
    pairs = report.pairs()
    with_samples = [c for pair in pairs if all(c.sample_set.summary is None for c in pair) for c in pair]
    if any(cell.n % 2 == 0 for cell in with_samples):
        text += "\n" + "\n".join(textwrap.wrap(
            "ministat's Median column below is the upper of the two middle values "
            "when N is even; the table uses the usual median (their mean).", EMAIL_WIDTH))
    if with_samples:
        text += "\n" + "\n".join(textwrap.wrap(reconciling_line(report), EMAIL_WIDTH))
    parts = [text] + [ministat_block(base, cell, level) for base, cell in pairs]
    return "\n\n".join(parts) + "\n"
