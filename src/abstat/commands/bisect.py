"""``abstat bisect``: find the commit that changed a benchmark, noise and all.

    abstat bisect --good v6.1 --bad v6.2 --build 'make -j8' --run './bench' --metric 'cycles=cycles: (\\d+)'
    git bisect run abstat bisect step --run './bench' --metric 'cycles=cycles: (\\d+)'
"""
from __future__ import annotations

import argparse
import json
import math
import os
import sys
from typing import Any

from abstat.commands import ArgumentParser, add_confidence, add_format, add_no_progress, add_store
from abstat.bisect.search import GATE_PVALUE
from abstat.errors import UsageError


def build_parser() -> argparse.ArgumentParser:
    parser = ArgumentParser(
        prog="abstat bisect",
        description="Probabilistic bisection on continuous measurements: builds and runs commits in its "
                    "own git worktrees, re-measures the good and bad ends interleaved, stops when one "
                    "commit holds the posterior probability asked for (-c/--confidence, in percent).",
        epilog="Inside git bisect run: abstat bisect step --run CMD --metric NAME=REGEX [--build CMD]",
    )
    parser.add_argument("--good", required=True, metavar="REV", help="a revision without the change")
    parser.add_argument("--bad", required=True, metavar="REV", help="a later revision with it")
    _common(parser)
    parser.add_argument("--budget", type=int, default=400, metavar="N", help="most benchmark runs (default 400)")
    add_confidence(parser)  # here: the posterior probability (in percent) that ends the search
    parser.add_argument("--artifact", metavar="PATH",
                        help="built file (relative to the tree) compared between the culprit and its parent")
    add_format(parser, ("text", "json"), default="text")
    add_no_progress(parser)
    return parser


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--build", metavar="CMD", help="build command (shell), run in the tree; failure = skip")
    parser.add_argument("--run", required=True, metavar="CMD", help="benchmark command (shell), run in the tree")
    parser.add_argument("--metric", required=True, metavar="NAME=REGEX",
                        help="the number to compare (a regex with one group), or a built-in metric (wall, user...)")
    parser.add_argument("--repo", default=".", metavar="DIR", help="git repository (default: current directory)")
    parser.add_argument("--timeout", type=float, default=None, metavar="SECONDS", help="per build and run")
    parser.add_argument("--experiment", metavar="NAME",
                        help="store experiment (default bisect-GOOD-BAD, abbreviated hashes; "
                             "step: bisect-step-BAD of the first bad revision)")
    add_store(parser)


def metric_choice(spec: str) -> tuple[str, str | None]:
    """(metric name, pattern spec or None for a built-in metric)."""
    from abstat.runner import BUILTIN_METRICS, parse_metric_pattern

    if spec in BUILTIN_METRICS:
        return spec, None
    try:
        return parse_metric_pattern(spec).name, spec
    except ValueError as err:
        raise UsageError(str(err)) from None


def _pct(value: float | None, base: float | None) -> str:
    if value is None or not base:
        return "?"
    return f"{value / abs(base) * 100:+.2f}%"


def render(report: Any, fmt: str) -> str:
    outcome = report.outcome
    commits = report.commits
    candidates = [{"rev": commits[i], "probability": p, "subject": report.subjects.get(commits[i], "")}
                  for i, p in outcome.candidates]
    if fmt == "json":
        return json.dumps({
            "status": outcome.status, "culprit": commits[outcome.culprit] if outcome.culprit else None,
            "probability": outcome.probability if outcome.culprit else None, "candidates": candidates,
            "runs": outcome.runs, "commits": len(commits) - 1,
            "change": {"shift": outcome.shift, "low": outcome.shift_low, "high": outcome.shift_high,
                       "good_level": outcome.good_level, "references_p": outcome.reference_p},
            "skipped": report.skipped, "warnings": report.warnings + outcome.notes, "experiment": report.experiment,
            "graph": report.graph,
        }, indent=2) + "\n"
    from abstat.render.escape import terminal as _t

    lines = []
    size = (f"change {_pct(outcome.shift, outcome.good_level)} [{_pct(outcome.shift_low, outcome.good_level)}, "
            f"{_pct(outcome.shift_high, outcome.good_level)}] (bad - good, Hodges-Lehmann on the references, "
            f"p={outcome.reference_p:.2g})" if outcome.shift is not None and outcome.reference_p is not None else "")
    if outcome.status == "found":
        sha = commits[outcome.culprit]
        lines.append(f"culprit: {sha} {_t(report.subjects.get(sha, ''))}")
        lines.append(f"  probability {outcome.probability:.3f}; {size}")
    elif outcome.status == "no-change":
        lines.append("no change found: the good and bad revisions do not differ clearly "
                     f"(Mann-Whitney p={outcome.reference_p:.2g} between them, above the {GATE_PVALUE:g} a search "
                     "needs); "
                     "no culprit named")
    else:
        word = "inconclusive" if outcome.status == "inconclusive" else "inconclusive (untestable commits)"
        lines.append(f"{word}: no commit reached probability {report.confidence:g}")
        if size:
            lines.append("  " + size)
        if candidates:
            lines.append("  remaining candidates:")
        for c in candidates:
            lines.append(f"    {c['probability']:.3f}  {c['rev'][:12]} {_t(c['subject'])}")
    merges = report.graph.get("merges", 0)
    lines.append(f"  {outcome.runs} benchmark runs over {len(commits) - 1} commits"
                 + (f" ({merges} merge(s): searched the commit graph; {report.graph['model']})" if merges else "")
                 + (f"; {len(report.skipped)} skipped (did not build, or every run failed): "
                    + ", ".join(s[:12] for s in report.skipped) if report.skipped else ""))
    for warning in report.warnings + outcome.notes:
        lines.append(f"warning: {_t(warning)}")
    lines.append(f"  measurements stored in experiment {_t(report.experiment)} (see abstat history)")
    return "\n".join(lines) + "\n"


def main(argv: list[str]) -> int:
    if argv[:1] == ["step"]:
        from abstat.bisect.step import main as step_main

        return step_main(argv[1:])
    from abstat.bisect.driver import Config, run_bisect
    from abstat.store import open_store, resolve_store_path

    args = build_parser().parse_args(argv)
    if args.budget < 20:
        raise UsageError("--budget must be at least 20 runs")
    if args.artifact is not None and (os.path.isabs(args.artifact)
                                      or os.path.normpath(args.artifact).split(os.sep)[0] in ("..", "")):
        raise UsageError(f"--artifact {args.artifact!r}: give a path inside the repository's tree, "
                         "relative to its top")
    if args.timeout is not None and not (args.timeout > 0 and math.isfinite(args.timeout)):
        raise UsageError("--timeout must be a positive number of seconds")
    metric, spec = metric_choice(args.metric)
    config = Config(repo=args.repo, good=args.good, bad=args.bad, run=args.run, metric=metric, metric_spec=spec,
                    build=args.build, budget=args.budget, confidence=args.confidence / 100.0, artifact=args.artifact,
                    timeout=args.timeout)
    if args.experiment is not None:
        from abstat.store import check_experiment_name

        check_experiment_name(args.experiment)
    store_path = resolve_store_path(args.store)

    def progress(text: str) -> None:
        if not args.no_progress:
            sys.stderr.write(f"abstat bisect: {text}\n")
            sys.stderr.flush()

    from abstat.commands.run import _interrupt_on_termination, _restore_signals

    previous = _interrupt_on_termination()  # SIGTERM/SIGHUP: like Ctrl-C, worktrees removed, runs kept
    try:
        with open_store(store_path) as store:
            report = run_bisect(config, store, args.experiment, ["abstat", "bisect", *argv], progress)
    finally:
        _restore_signals(previous)
    sys.stdout.write(render(report, args.format))
    return 0


__all__ = ["main"]
