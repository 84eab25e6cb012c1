"""``abstat bisect``: find the commit that changed a benchmark, noise and all.

    abstat bisect --good v6.1 --bad v6.2 --build 'make -j8' --run './bench' --metric 'cycles=cycles: (\\d+)'
    abstat bisect --good v6.1 --bad v6.2 --host box --build 'make -j8 bzImage' --artifact arch/x86/boot/bzImage \\
        --install 'sudo cp "$ABSTAT_ARTIFACT" /boot/vmlinuz-bisect' --boot 'sudo kexec ...' --run ./bench ...
    git bisect run abstat bisect step --run './bench' --metric 'cycles=cycles: (\\d+)'

Exit status: 0 culprit found, 1 no change found, 3 inconclusive, 4 more than one change, 2 bad input,
130 interrupted.
"""

from __future__ import annotations

import argparse
import math
import os
import sys

from abstat.cli.args.bisect_parser import build_parser, metric_choice, step_parser
from abstat.cli.commands.bisect_host import box_bisect_from_args, resume, run_on_host
from abstat.errors import UsageError

EXIT_STATUS = {"found": 0, "no-change": 1, "inconclusive": 3, "untestable": 3, "several": 4}


def _step(argv: list[str]) -> int:
    """``abstat bisect step``: every error exits 128, which stops ``git bisect run``."""
    from abstat.history.bisect.step import StepConfig, guarded, run_step

    def step() -> int:
        args = step_parser().parse_args(argv)
        metric, spec = metric_choice(args.metric)
        config = StepConfig(
            run=args.run,
            metric=metric,
            metric_spec=spec,
            metric_text=args.metric,
            build=args.build,
            repo=args.repo,
            timeout=args.timeout,
            experiment=args.experiment,
            store=args.store,
            max_runs=args.max_runs,
        )
        return run_step(config, ["abstat", "bisect", "step", *argv])

    return guarded(step)


def _progress(no_progress: bool):
    def progress(text: str) -> None:
        from abstat.render.escape import terminal

        if not no_progress:  # what a box or a build says is escaped for the terminal
            sys.stderr.write(f"abstat bisect: {terminal(text)}\n")
            sys.stderr.flush()

    return progress


def _resume(argv: list[str]) -> int:
    """``--resume``: go on with an interrupted bisection on a test box (SIGTERM/SIGHUP like Ctrl-C)."""
    from abstat.box.runner import signals
    from abstat.history.bisect.render import render

    previous = signals.interrupt_on_termination()
    try:
        report, fmt = resume(argv, _progress)
    finally:
        signals.restore_handlers(previous)
    sys.stdout.write(render(report, fmt))
    return EXIT_STATUS[report.outcome.status]


def _budget(args: argparse.Namespace) -> int:
    """The run budget (150 on a test box, else 400, unless given), once --budget, --artifact and --timeout
    are checked."""
    budget = args.budget if args.budget is not None else 150 if args.host else 400
    if budget < 20:
        raise UsageError("--budget must be at least 20 runs")
    if args.artifact is not None and (
        os.path.isabs(args.artifact) or os.path.normpath(args.artifact).split(os.sep)[0] in ("..", "")
    ):
        raise UsageError(f"--artifact {args.artifact!r}: give a path inside the repository's tree, relative to its top")
    if args.timeout is not None and not (args.timeout > 0 and math.isfinite(args.timeout)):
        raise UsageError("--timeout must be a positive number of seconds")
    return budget


def main(argv: list[str]) -> int:
    if argv[:1] == ["step"]:
        return _step(argv[1:])
    from abstat.box.runner import signals
    from abstat.history.bisect.render import render

    if any(arg == "--resume" or arg.startswith("--resume=") for arg in argv):
        return _resume(argv)
    from abstat.history.bisect.driver import Config, run_bisect
    from abstat.history.bisect.search import OVERRUN
    from abstat.store import open_store, resolve_store_path

    args = build_parser().parse_args(argv)
    budget = _budget(args)
    metric, spec = metric_choice(args.metric)
    box = box_bisect_from_args(args, metric, spec, budget)
    config = Config(
        repo=args.repo,
        good=args.good,
        bad=args.bad,
        run=args.run,
        metric=metric,
        metric_spec=spec,
        build=args.build,
        budget=budget,
        overrun=OVERRUN if args.budget is None else 0.0,  # a budget given is a hard limit
        confidence=args.confidence / 100.0,
        artifact=args.artifact,
        timeout=args.timeout,
    )
    if args.experiment is not None:
        from abstat.store import check_experiment_name

        check_experiment_name(args.experiment)
    store_path = resolve_store_path(args.store)
    progress = _progress(args.no_progress)
    previous = signals.interrupt_on_termination()  # SIGTERM/SIGHUP: like Ctrl-C, worktrees removed, runs kept
    try:
        if box is not None:
            report = run_on_host(box, store_path, args.experiment, ["abstat", "bisect", *argv], progress)
        else:
            with open_store(store_path) as store:
                report = run_bisect(config, store, args.experiment, ["abstat", "bisect", *argv], progress)
    finally:
        signals.restore_handlers(previous)
    sys.stdout.write(render(report, args.format))
    return EXIT_STATUS[report.outcome.status]


__all__ = ["main"]
