"""``abstat compare [options] INPUTS...``: compare variants honestly.

The first input is the baseline; every other one is compared with it.
Inputs are described in :mod:`abstat.readers.specs`; statistics in
``docs/statistics.md``.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from abstat.cli.args import stored_metric
from abstat.errors import UsageError
from abstat.cli.args.compare_parser import build_parser


def main(argv: list[str]) -> int:
    args = build_parser().parse_args(argv)
    if args.where:
        from abstat.cli.commands.where import resolve_revisions

        args.where = resolve_revisions(args.where, args.store)  # --where rev=PREFIX: the stored full revision
    if len(args.inputs) < 2:
        hint = "; --higher-is-better takes a metric name (or all) before the inputs" if args.higher_is_better else ""
        raise UsageError(f"need at least two inputs: a baseline and a candidate{hint}")
    if args.threshold is not None and args.threshold < 0:
        raise UsageError("--threshold must not be negative")
    if args.column < 1:
        raise UsageError("--column must be 1 or more")

    from abstat.readers.specs import parse_variant_specs, peer_files

    peers = peer_files(args.inputs)
    if peers:  # peers' files: a table of their benchmarks, as abstat report makes
        return _compare_peer_files(args, peers)
    from abstat.render import terminal
    from abstat.render.compare_text import render_table, table_comparisons
    from abstat.report.inputs import parse_where_args

    variants = parse_variant_specs(
        args.inputs,
        column=args.column,
        delimiters=args.delimiters,
        store=args.store,
        metric=args.metric,
        where=parse_where_args(args.where),
        arrays=True,  # plain files as float64 arrays: no list of 10^6 floats converted again and again (issue 42)
    )
    from abstat.render.unit_align import align, variant_sides
    from abstat.report.matrix import one_row_report

    unit, unit_notes = align(variant_sides(variants, args.unit, args.store, args.metric), args.metric)
    report = one_row_report(  # a one-row report: the report's steps, Holm over the candidates
        variants,
        baseline=args.baseline,
        warnings=unit_notes,
        confidence=args.confidence / 100.0,
        center=args.center,
        threshold=args.threshold,
        higher_is_better=_higher_is_better(args, variants.values()),
        seed=args.seed,
        outliers=args.outliers,
    )
    comparisons = table_comparisons(report)
    metric = stored_metric(args.store, args.metric, variants.values())[0]
    if args.format == "github":
        from abstat.render.ci_formats import render_comparisons

        text = github_output(render_comparisons(comparisons, "github", unit=unit, metric=metric, split=True))
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
    return gate_status(args, comparisons)


def gate_status(args: argparse.Namespace, comparisons: Any = None, report: Any = None) -> int:
    """The exit status of ``--fail-on`` (0 without it); its lines go to standard error."""
    if args.fail_on is None:
        return 0
    from abstat.report.gate import evaluate, gate_report

    if report is not None:
        result = gate_report(report, args.fail_on, args.threshold)
    else:
        result = evaluate(comparisons, args.fail_on, args.threshold, confidence=args.confidence / 100.0)
    sys.stdout.flush()
    sys.stderr.write("".join(line + "\n" for line in result.lines()))
    return result.exit_status


def github_output(parts: tuple[str, str]) -> str:
    """The workflow commands to print; the summary appended to ``$GITHUB_STEP_SUMMARY``
    when it is set (else printed after the commands)."""
    import os

    commands, summary = parts
    path = os.environ.get("GITHUB_STEP_SUMMARY")
    if not path:
        return commands + summary
    from abstat.errors import InputError

    try:
        with open(path, "a", encoding="utf-8") as handle:
            handle.write(summary + "\n")
    except OSError as err:
        raise InputError(f"cannot append the step summary: {err.strerror or err}", path=path) from None
    return commands


def _higher_is_better(args: argparse.Namespace, variants: Any) -> bool:
    """``--higher-is-better`` for the one metric compared: stored variants'
    is ``--metric``; files hold one unnamed metric, which any name given names."""
    from abstat.report.inputs import higher_is_better

    if any(source.startswith("store:") for variant in variants for source in variant.sources):
        return higher_is_better(args.metric, None, args.higher_is_better)
    return bool(args.higher_is_better)


def _compare_peer_files(args: argparse.Namespace, peers: list[tuple[str | None, str]]) -> int:
    """Files of peer tools hold many labelled sample sets (benchmarks, units,
    commands): compare them as ``abstat report FILE...`` does, one column per file."""
    from abstat.report import api
    from abstat.report.inputs import load_files

    sets = []
    for name, path in peers:
        sets.extend(
            load_files(
                [path], labels={"variant": name} if name else None, column=args.column, delimiters=args.delimiters
            )
        )
    metrics = (
        None if args.metric == "wall" and not any(s.labels.get("metric") == "wall" for s in sets) else [args.metric]
    )
    from abstat.render.unit_align import align_sets, parse_unit_args
    from abstat.report.inputs import beside_peers

    align_sets(beside_peers(sets, args.metric, parse_unit_args(args.unit)[0]))  # every input has a cell
    report = api.build(
        sets,
        baseline=args.baseline,
        metrics=metrics,
        where=args.where,
        confidence=args.confidence / 100.0,
        center=args.center,
        higher_is_better=args.higher_is_better,
        seed=args.seed,
        threshold=args.threshold,
        outliers=args.outliers,
    )
    if args.format == "github":
        from abstat.render.ci_formats import render_report

        sys.stdout.write(github_output(render_report(report, "github", split=True)))
    else:
        sys.stdout.write(api.render(report, args.format))
    return gate_status(args, report=report)
