"""``abstat compare [options] INPUTS...``: compare variants honestly.

The first input is the baseline; every other one is compared with it.
Inputs are described in :mod:`abstat.readers.specs`; statistics in
``docs/statistics.md``.
"""

from __future__ import annotations

import sys
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any

from abstat.cli.commands.judging import compare_higher_is_better, compare_judging
from abstat.errors import UsageError

if TYPE_CHECKING:
    import argparse

# What the parser (abstat.cli.args.compare_parser) gives every option not on the command line;
# tests/cli/test_start_up_imports.py holds the two side by side.
DEFAULTS: dict[str, Any] = {
    "confidence": None,  # the stored experiment's, else 95 (abstat.report.analysis.Judging)
    "center": "auto",
    "threshold": None,
    "higher_is_better": [],
    "lower_is_better": [],
    "fail_on": None,
    "outliers": "none",
    "seed": 0,
    "format": "text",
    "color": "auto",
    "verbose": False,
    "column": 1,
    "delimiters": None,
    "store": None,
    "metric": "wall",
    "where": [],
    "baseline": None,
    "unit": [],
}


def parse_args(argv: list[str]) -> Any:
    """The parser's namespace; a command line of inputs only (no argument starting with a dash, which is
    all argparse would then look at) without building the parser or importing argparse (~3.5 ms of
    ``abstat compare A B``'s start-up, issue 42)."""
    if argv and not any(arg.startswith("-") for arg in argv):
        return SimpleNamespace(
            inputs=list(argv), **{k: list(v) if isinstance(v, list) else v for k, v in DEFAULTS.items()}
        )
    return build_parser().parse_args(argv)


def build_parser() -> argparse.ArgumentParser:
    """The command's parser (:mod:`abstat.cli.args.compare_parser`; :mod:`abstat.cli.args` imports argparse)."""
    from abstat.cli.args.compare_parser import build_parser as build

    return build()


def main(argv: list[str]) -> int:
    args = parse_args(argv)
    if args.where:
        from abstat.cli.commands.where import resolve_revisions

        args.where = resolve_revisions(args.where, args.store)  # --where rev=PREFIX: the stored full revision
    if len(args.inputs) < 2:
        hint = ""
        if args.higher_is_better or args.lower_is_better:
            hint = "; --higher-is-better and --lower-is-better take a metric name (or all) before the inputs"
        raise UsageError(f"need at least two inputs: a baseline and a candidate{hint}")
    if args.threshold is not None and args.threshold < 0:
        raise UsageError("--threshold must not be negative")
    if args.column < 1:
        raise UsageError("--column must be 1 or more")
    if "," in args.metric:  # (metric names have no comma: abstat.box.runner.model)
        raise UsageError(
            f"--metric {args.metric!r}: compare takes one metric; abstat report and abstat show take a comma list"
        )

    from abstat.readers.specs import parse_variant_specs, peer_files

    peers = peer_files(args.inputs)
    if peers:  # peers' files: a table of their benchmarks, as abstat report makes
        args.confidence = 95.0 if args.confidence is None else args.confidence
        from abstat.cli.commands.compare_extra import compare_peer_files

        return compare_peer_files(args, peers)
    from abstat.render import terminal
    from abstat.render.compare_text import render_table, table_comparisons

    variants = parse_variant_specs(
        args.inputs,
        column=args.column,
        delimiters=args.delimiters,
        store=args.store,
        metric=args.metric,
        where=_where(args.where),
        arrays=True,  # plain files as float64 arrays: no list of 10^6 floats converted again and again (issue 42)
    )
    from abstat.render.unit_align import align, unshown_units, variant_sides
    from abstat.report.matrix import one_row_report

    sides = variant_sides(variants, args.unit, args.store, args.metric)
    base_side = next((side for side in sides if side.name == args.baseline), sides[0])
    sides = [base_side, *(side for side in sides if side is not base_side)]  # the baseline's unit shown
    unit, unit_notes = align(sides, args.metric)
    unit_notes += unshown_units(sides)
    judging = compare_judging(args, variants)
    # the direction by the baseline's unit only: a candidate's own unit (a fork's 'op/s') does not turn a
    # slowdown into a gain (attack22 A13)
    direction_unit = unit if base_side.unit else None
    args.confidence, args.threshold = judging.percent, judging.threshold  # (the gate's too)
    report = one_row_report(  # a one-row report: the report's steps, Holm over the candidates
        variants,
        baseline=args.baseline,
        warnings=unit_notes,
        confidence=args.confidence / 100.0,
        center=args.center,
        threshold=args.threshold,
        higher_is_better=compare_higher_is_better(args, variants.values(), direction_unit, judging),
        seed=args.seed,
        outliers=args.outliers,
    )
    comparisons = table_comparisons(report)
    metric = _stored_metric(args, variants.values())
    if args.format == "github":
        from abstat.cli.commands.compare_extra import github_output
        from abstat.render.ci_formats import render_comparisons

        text = github_output(
            render_comparisons(comparisons, "github", unit=unit, metric=metric, split=True), args.store
        )
    else:
        text = render_table(
            report,
            args.format,
            color=terminal.color_wanted(sys.stdout, args.color),
            verbose=args.verbose,
            unit=unit,
            metric=metric,
        )
    terminal.write(sys.stdout, text)
    if args.fail_on is None:
        return 0
    from abstat.cli.commands.compare_extra import gate_status

    return gate_status(args, comparisons)


def _where(items: list[str]) -> dict[str, set[str]]:
    """``--where`` as the store takes it (:func:`abstat.report.inputs.parse_where_args`; imported when given)."""
    if not items:
        return {}
    from abstat.report.inputs import parse_where_args

    return parse_where_args(items)


def _stored_metric(args: Any, variants: Any) -> str | None:
    """The stored metric's name, for stored variants (:func:`abstat.cli.args.stored_metric`; files: None)."""
    if not any(source.startswith("store:") for variant in variants for source in variant.sources):
        return None
    from abstat.cli.args import stored_metric

    return stored_metric(args.store, args.metric, variants)[0]
