"""``abstat show EXPERIMENT``: invocations, machines, failures and the comparison."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from abstat.cli.args import (
    STORED_THRESHOLD,
    ArgumentParser,
    add_baseline,
    add_confidence,
    add_format,
    add_higher_is_better,
    add_metric_choice,
    add_store,
    add_threshold,
    add_where,
)
from abstat.cli.commands.where import resolve_revisions
from abstat.errors import InputError, UsageError
from abstat.render import escape
from abstat.render.show import combine, invocation_lines
from abstat.report.configurations import SET_KEYS, check_experiment, configurations, shown


def _reports(
    store: Any, experiment: str, configs: list[tuple[dict[str, str], list[int]]], **options: Any
) -> list[tuple[dict[str, str], str | None, str | None]]:
    """(labels, report, error) per configuration; an error (no baseline there) is kept, not raised,
    unless every configuration has it."""
    from abstat.cli.flags import namer
    from abstat.render.run_report import comparison_report

    done: list[tuple[dict[str, str], str | None, str | None]] = []
    for labels, ids in configs:
        try:
            done.append((labels, comparison_report(store, experiment, invocations=ids, **options), None))
        except UsageError as err:
            done.append((labels, None, err.named(namer("show"))))
    if all(report is None for _, report, _ in done):
        raise UsageError(done[0][2] or "nothing to compare")
    return done


def build_parser() -> argparse.ArgumentParser:
    parser = ArgumentParser(
        prog="abstat show",
        examples=("abstat show ipi --metric wall --where host=milan",),
        description="Show a stored experiment: runs, machines, comparison.",
    )
    parser.add_argument("experiment", metavar="EXPERIMENT", help="the experiment's name (abstat list shows them)")
    add_store(parser)
    add_baseline(parser, help="variant the others are compared with (default: the run's --baseline, else the first)")
    add_metric_choice(parser, repeatable=True)
    add_higher_is_better(parser)
    add_confidence(parser, stored=True)
    add_threshold(parser, default=STORED_THRESHOLD)
    add_format(parser, ("text", "markdown", "json", "csv"), default="text")
    add_where(
        parser,
        help="only the invocations whose labels match (repeatable); invocations with "
        "different labels are compared separately, one block per label set",
    )
    return parser


def _where(given: list[str]) -> dict[str, Any]:
    """The --where filters; a data set's own keys (metric, variant) are refused: other options choose them."""
    from abstat.report.inputs import parse_where_args

    where = parse_where_args(given)
    for key in where:
        if key in SET_KEYS:
            raise UsageError(
                f"--where {key}=...: "
                + ("use --metric" if key == "metric" else "use --baseline and the experiment argument")
            )
    return where


def _configurations(
    store: Any, experiment: str, where: dict[str, Any], invocations: list[dict[str, Any]]
) -> list[tuple[dict[str, str], list[int]]]:
    """The label configurations the filters leave; an error naming the filters when they leave none."""
    configs = configurations(store, experiment, where, invocations)
    if where and not configs:
        raise InputError(
            f"experiment {experiment!r} has no successful runs with "
            + ", ".join(f"{k}={','.join(sorted(v))}" for k, v in where.items()),
            path=store.display,
        )
    return configs


def _report(
    store: Any, experiment: str, where: dict[str, Any], configs: list[tuple[dict[str, str], list[int]]], options: Any
) -> str:
    """The experiment's report: one per configuration the filters leave, combined when there are several."""
    from abstat.render.run_report import comparison_report

    if len(configs) > 1:
        return combine(experiment, _reports(store, experiment, configs, **options), options["fmt"])
    return comparison_report(store, experiment, invocations=configs[0][1] if where else None, **options)


def main(argv: list[str]) -> int:
    args = build_parser().parse_args(argv)
    args.where = resolve_revisions(args.where, args.store)  # --where rev=PREFIX: the stored full revision
    args.metric = [m.strip() for item in args.metric for m in item.split(",") if m.strip()] or None
    from abstat.render import terminal
    from abstat.store import open_store, resolve_store_path

    where = _where(args.where)
    path = resolve_store_path(args.store)
    with open_store(path, create=False) as store:
        from abstat.cli.commands.list import _tell_journals

        _tell_journals(store)
        check_experiment(store, args.experiment, args.metric)
        options: dict[str, Any] = {
            "baseline": args.baseline,
            "fmt": args.format,
            "metrics": args.metric,
            "confidence": args.confidence,  # None: as the experiment was run (abstat.report.analysis.stored_judging)
            "higher_is_better": args.higher_is_better,
            "lower_is_better": args.lower_is_better,
            "threshold": args.threshold,  # None: as the experiment was run
            "verbose": True,
            "color": args.format == "text" and terminal.color_wanted(sys.stdout),
        }
        invocations = store.invocations(args.experiment)  # read once, for the configurations and the text's lines
        configs = _configurations(store, args.experiment, where, invocations)
        listed = ""  # as text, the invocations first; everything listed comes from the store, escaped
        if args.format == "text":
            lines = invocation_lines(args.experiment, store.display, *shown(store, args.experiment, where, invocations))
            listed = "\n".join(map(escape.terminal, lines)) + "\n"
            del lines
        del invocations  # not held while the report is made (10^4 machine records: 225 MB)
        report = _report(store, args.experiment, where, configs, options)
    terminal.write(sys.stdout, listed + report)
    return 0
