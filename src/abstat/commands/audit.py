"""``abstat audit FILE|-``: check the ministat reports and averages in a text.

Exit status 0 when every printed comparison is consistent with its printed
vitals, 1 when one is not (or a report is damaged), 2 on bad input.
"""
from __future__ import annotations

import sys

from abstat.commands import ArgumentParser
from abstat.errors import UsageError


def parse_percent(text: str, option: str) -> float:
    """``2``, ``2%`` or ``2.5 %`` -> 2.0 / 2.5 (percent)."""
    try:
        value = float(text.strip().rstrip("%").strip())
    except ValueError:
        raise UsageError(f"{option} {text!r}: expected a percentage such as 2 or 2%") from None
    if not value > 0 or value != value or value == float("inf"):
        raise UsageError(f"{option} {text!r}: must be a positive percentage")
    return value


def main(argv: list[str]) -> int:
    parser = ArgumentParser(
        prog="abstat audit",
        description="Check ministat reports pasted in e-mails or Markdown: recompute every printed "
        "comparison from the printed vitals, name the ministat dialect, re-judge the claim "
        "(Welch, power, sample sizes) and flag claims made from bare averages.",
    )
    parser.add_argument("file", metavar="FILE|-", help="text to audit (- for standard input)")
    parser.add_argument("--format", choices=("text", "json"), default="text")
    parser.add_argument("--threshold", metavar="PCT", help="practical threshold: changes within +/-PCT%% do not matter")
    args = parser.parse_args(argv)
    threshold = parse_percent(args.threshold, "--threshold") if args.threshold is not None else None
    from abstat.audit import audit_file
    from abstat.audit.render import render

    report = audit_file(args.file, threshold=threshold)
    text = render(report, args.format)
    if args.format == "text":   # quoted e-mail text may hold ANSI/OSC sequences: shown, not obeyed
        from abstat.render import escape, terminal

        text = "\n".join("\t".join(map(escape.terminal, line.split("\t"))) for line in text.split("\n"))
        terminal.write(sys.stdout, text)
    else:
        sys.stdout.write(text)
    return report.exit_status
