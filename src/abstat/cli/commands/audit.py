"""``abstat audit FILE|-``: check the ministat reports and averages in a text.

Exit status 0 when every printed comparison is consistent with its printed
vitals, 1 when one is not (or a report is damaged), 2 on bad input.
"""

from __future__ import annotations

import argparse
import sys

from abstat.cli.args import ArgumentParser, add_format, add_threshold


def build_parser() -> argparse.ArgumentParser:
    parser = ArgumentParser(
        prog="abstat audit",
        examples=("abstat audit thread.eml", "xclip -o | abstat audit -"),
        description="Check ministat reports pasted in e-mails or Markdown: recompute every printed "
        "comparison from the printed vitals, name the ministat dialect, re-judge the claim "
        "(Welch, power, sample sizes) and flag claims made from bare averages.",
    )
    parser.add_argument("file", metavar="FILE|-", help="text to audit (- for standard input)")
    add_format(parser, ("text", "json"), default="text")
    add_threshold(parser)
    return parser


def main(argv: list[str]) -> int:
    args = build_parser().parse_args(argv)
    threshold = args.threshold
    from abstat.audit import audit_file
    from abstat.audit.render import render

    report = audit_file(args.file, threshold=threshold)
    text = render(report, args.format)
    if args.format == "text":  # quoted e-mail text may hold ANSI/OSC sequences: shown, not obeyed
        from abstat.render import escape, terminal

        text = "\n".join("\t".join(map(escape.terminal, line.split("\t"))) for line in text.split("\n"))
        terminal.write(sys.stdout, text)
    else:
        sys.stdout.write(text)
    return report.exit_status
