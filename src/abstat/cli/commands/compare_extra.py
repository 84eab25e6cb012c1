"""What ``abstat compare`` does beyond plain inputs shown as text, imported on those branches only: the
``--fail-on`` gate (:func:`gate_status`, ``abstat report``'s too), ``--format github``'s output and files of
peer tools (:func:`compare_peer_files`)."""

from __future__ import annotations

import argparse
import sys
from typing import Any


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


def github_output(parts: tuple[str, str], store: str | None = None) -> str:
    """The workflow commands to print; the summary appended to ``$GITHUB_STEP_SUMMARY``
    when it is set (else printed after the commands), never to a SQLite database or the store in use
    (``store``: ``--store``; attack23 #10c: Markdown was appended to a store)."""
    import os

    commands, summary = parts
    path = os.environ.get("GITHUB_STEP_SUMMARY")
    if not path:
        return commands + summary
    from abstat.cli.outfile import is_database
    from abstat.errors import InputError
    from abstat.store import resolve_store_path

    target, used = os.path.realpath(path), os.path.realpath(resolve_store_path(store))
    if is_database(target) or target in {used + tail for tail in ("", "-wal", "-shm", "-journal")}:
        raise InputError(
            "$GITHUB_STEP_SUMMARY names a SQLite database or the store in use: the Markdown summary is not appended",
            path=path,
        )
    try:
        with open(path, "a", encoding="utf-8") as handle:
            handle.write(summary + "\n")
    except OSError as err:
        raise InputError(f"cannot append the step summary: {err.strerror or err}", path=path) from None
    return commands


def compare_peer_files(args: argparse.Namespace, peers: list[tuple[str | None, str]]) -> int:
    """Files of peer tools hold many labelled sample sets (benchmarks, units,
    commands): compare them as ``abstat report FILE...`` does, one column per file."""
    from abstat.report import api
    from abstat.report.inputs import load_files

    from abstat.readers.specs import inputs_apart

    sets = inputs_apart(  # each input its own variant: two criterion files "new" are not pooled into one
        [
            (
                name,
                path,
                load_files(
                    [path], labels={"variant": name} if name else None, column=args.column, delimiters=args.delimiters
                ),
            )
            for name, path in peers
        ]
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
        lower_is_better=args.lower_is_better,
        seed=args.seed,
        threshold=args.threshold,
        outliers=args.outliers,
    )
    if args.format == "github":
        from abstat.render.ci_formats import render_report

        sys.stdout.write(github_output(render_report(report, "github", split=True), args.store))
    else:
        sys.stdout.write(api.render(report, args.format))
    return gate_status(args, report=report)
