"""``abstat show EXPERIMENT``: invocations, machines, failures and the comparison."""
from __future__ import annotations

import argparse
import sys
from typing import Any

from abstat.cli.commands import (ArgumentParser, add_baseline, add_format, add_higher_is_better, add_metric_choice,
                             add_store, add_where)
from abstat.cli.commands.where import resolve_revisions
from abstat.errors import InputError, UsageError
from abstat.render import escape
from abstat.render.show import combine, invocation_lines

_SET_KEYS = ("experiment", "variant", "metric")  # what a configuration's sample sets differ in


def configurations(store: Any, experiment: str, where: dict[str, set[str]]) -> list[tuple[dict[str, str], list[int]]]:
    """(labels, invocation ids) of each label configuration of ``experiment``.

    Invocations recorded with different labels (``--label host=milan`` and
    ``host=naples``) are different configurations, not repeated runs of one;
    the grouping is the store's (``Store.sample_sets``), less the experiment,
    variant and metric each set also carries; invocations with no successful
    run have no samples and form none.
    """
    # From the invocations (their labels and host, as Store.sample_sets labels its sets), not
    # from the samples: reading every sample only to learn the labels cost most of `show`.
    found: dict[tuple[tuple[str, str], ...], tuple[dict[str, str], list[int]]] = {}
    for invocation in store.invocations(experiment):
        if not _selected(invocation, where) or not any(
                entry["status"] == "ok" and entry["count"] for entry in invocation["runs"]):
            continue
        labels = dict(invocation["labels"])
        if invocation.get("hostname") is not None:
            labels.setdefault("host", invocation["hostname"])
        labels = {k: v for k, v in labels.items() if k not in _SET_KEYS}
        _, ids = found.setdefault(tuple(sorted(labels.items())), (labels, []))
        ids.append(invocation["id"])
    return [found[key] for key in sorted(found)]


def _selected(invocation: dict[str, Any], where: dict[str, set[str]]) -> bool:
    labels = dict(invocation["labels"])
    if invocation.get("hostname") is not None:
        labels.setdefault("host", invocation["hostname"])  # as Store.sample_sets
    return all(labels.get(key) in values for key, values in where.items())


def _reports(store: Any, experiment: str, configs: list[tuple[dict[str, str], list[int]]],
             **options: Any) -> list[tuple[dict[str, str], str | None, str | None]]:
    """(labels, report, error) per configuration; an error (no baseline there) is kept, not raised,
    unless every configuration has it."""
    from abstat.render.run_report import comparison_report

    done: list[tuple[dict[str, str], str | None, str | None]] = []
    for labels, ids in configs:
        try:
            done.append((labels, comparison_report(store, experiment, invocations=ids, **options), None))
        except UsageError as err:
            done.append((labels, None, str(err)))
    if all(report is None for _, report, _ in done):
        raise UsageError(done[0][2] or "nothing to compare")
    return done


def build_parser() -> argparse.ArgumentParser:
    parser = ArgumentParser(prog="abstat show", examples=("abstat show ipi --metric wall --where host=milan",),
                            description="Show a stored experiment: runs, machines, comparison.")
    parser.add_argument("experiment", metavar="EXPERIMENT", help="the experiment's name (abstat list shows them)")
    add_store(parser)
    add_baseline(parser)
    add_metric_choice(parser, repeatable=True)
    add_higher_is_better(parser)
    add_format(parser, ("text", "markdown", "json", "csv"), default="text")
    add_where(parser, help="only the invocations whose labels match (repeatable); invocations with "
                           "different labels are compared separately, one block per label set")
    return parser


def main(argv: list[str]) -> int:
    args = build_parser().parse_args(argv)
    args.where = resolve_revisions(args.where, args.store)  # --where rev=PREFIX: the stored full revision
    args.metric = [m.strip() for item in args.metric for m in item.split(",") if m.strip()] or None
    from abstat.render.run_report import comparison_report
    from abstat.render import terminal
    from abstat.report.inputs import parse_where_args
    from abstat.store import open_store, resolve_store_path

    where = parse_where_args(args.where)
    for key in where:
        if key in _SET_KEYS:
            raise UsageError(f"--where {key}=...: " + ("use --metric" if key == "metric" else
                             "use --baseline and the experiment argument"))

    path = resolve_store_path(args.store)
    with open_store(path, create=False) as store:
        from abstat.cli.commands.list import _tell_journals

        _tell_journals(store)
        if not store.has_experiment(args.experiment):
            names = store.experiment_names()
            raise InputError(
                f"no experiment {args.experiment!r}" + (f" (experiments: {', '.join(names)})" if names else ""),
                path=store.display,
            )
        if args.metric:
            known = store.metrics(args.experiment)
            for metric in args.metric:
                if metric not in known:
                    raise UsageError(f"--metric {metric!r}: experiment has {', '.join(known) or 'no metrics'}")
        options: dict[str, Any] = {
            "baseline": args.baseline, "fmt": args.format, "metrics": args.metric,
            "higher_is_better": args.higher_is_better, "verbose": True,
            "color": args.format == "text" and terminal.color_wanted(sys.stdout),
        }
        configs = configurations(store, args.experiment, where)
        if where and not configs:
            raise InputError(f"experiment {args.experiment!r} has no successful runs with "
                             + ", ".join(f"{k}={','.join(sorted(v))}" for k, v in where.items()), path=store.display)
        if len(configs) > 1:
            report = combine(args.experiment, _reports(store, args.experiment, configs, **options), args.format)
        else:
            report = comparison_report(store, args.experiment,
                                       invocations=configs[0][1] if where else None, **options)
        if args.format != "text":
            terminal.write(sys.stdout, report)
            return 0
        shown = [inv for inv in store.invocations(args.experiment) if _selected(inv, where)]
        shown_ids = {inv["id"] for inv in shown}
        failures = [f for f in store.failed_runs(args.experiment) if f["invocation"] in shown_ids]
        out = invocation_lines(args.experiment, store.display, shown, failures)
    # everything above comes from the store: commands, labels, notes, machine records
    terminal.write(sys.stdout, "\n".join(map(escape.terminal, out)) + "\n" + report)
    return 0
