"""``abstat noise``: A/A runs of one command -- this machine's noise floor.

    abstat noise -n 40 [--metric NAME=REGEX] [--host NAME|LABEL=DEST] -- ./bench --args

The command runs as two identical variants, ``a`` and ``b``, interleaved in
seeded blocks by ``abstat run``'s own code, and is stored as an experiment
(``abstat plan`` and ``abstat show`` can use it later; run ``abstat noise``
again with the same ``--experiment`` after a reboot to measure the
between-invocation share).  Without a command, ``--experiment NAME``
re-analyses stored runs.  ``--host`` runs the A/A experiment on that test box
through the lab (``abstat run --host``: ssh, the shipped runner, runs
labelled ``host=NAME``) and analyses that host's runs.
"""

from __future__ import annotations

import shlex
import sys
from typing import Any

from abstat.cli.args.noise_parser import build_parser
from abstat.errors import InputError, UsageError


def _default_experiment(store_path: str) -> str:
    from abstat.engine.record import default_name
    from abstat.store import open_store

    with open_store(store_path) as store:
        return default_name(store, "noise")


def _spec(args, command: str, experiment: str, store_path: str, host: Any) -> Any:
    """Two identical variants, a and b, interleaved: the A/A experiment."""
    from abstat.cli.args.experiment_args import metric_sources
    from abstat.engine import ExperimentSpec, Lab, Variant

    return ExperimentSpec(
        (Variant("a", command), Variant("b", command)),
        runs=args.runs,
        warmup=args.warmup,
        order="interleaved",
        seed=args.seed,
        shell=args.shell,
        timeout=args.timeout,
        metrics=metric_sources(args),
        experiment=experiment,
        lab=Lab((host,)) if host is not None else None,
        store=store_path,
    )


def _run(args, spec: Any, argv: list[str]) -> int:
    """The A/A runs, through the engine as ``abstat run`` runs them (its comparison of a with b is not
    printed: the noise report replaces it)."""
    from abstat.box.runner.experiment import IGNORE_FAILURE_ADVICE
    from abstat.cli.commands.run import execute

    try:
        return execute(
            spec,
            fmt="json",
            verbose=False,
            progress=not args.no_progress,
            argv=["abstat", "noise", *argv],
            report=False,
        )[0]
    except InputError as err:  # noise has no --ignore-failure: a noise floor is measured on runs that succeed
        raise InputError(
            err.message.replace(IGNORE_FAILURE_ADVICE, " (abstat noise needs every run to succeed)"),
            err.path,
            err.line,
            fields=err.fields,
        ) from None


def _check(args) -> None:
    if args.runs < 2:
        raise UsageError("-n must be at least 2 runs per variant")
    if not 0 < args.confidence < 100:
        raise UsageError("--confidence must be between 0 and 100 (a percentage)")
    if args.blocks is not None and args.blocks < 2:
        raise UsageError("--blocks must be at least 2")


def _host(args) -> Any:
    """The one --host, or None."""
    if not args.host:
        return None
    from abstat.cli.args.lab_args import parse_hosts

    if len(args.host) > 1:
        raise UsageError("--host: one host at a time (the noise floor is a property of one machine)")
    return parse_hosts(args.host)[0]


def _measure(args, argv: list[str], store_path: str, host: Any) -> tuple[str, str | None, int]:
    """Run the A/A experiment when given a command: (the experiment, the command, the runs' exit status)."""
    if not args.command:  # abstat noise -- ./bench --quick, or abstat noise ./bench
        if args.experiment is None:
            raise UsageError("give the benchmark command after --, or --experiment NAME to analyse stored runs")
        return args.experiment, None, 0
    from abstat.cli.args.experiment_args import check_counts

    command = " ".join(args.command) if args.shell else shlex.join(args.command)
    if args.experiment is not None:
        from abstat.store import check_experiment_name

        check_experiment_name(args.experiment)
    check_counts(args)
    if host is None:  # before the default experiment's name is looked up in the store (which makes the store)
        from abstat.box.runner.model import command_problem

        problem = command_problem("the benchmark command", command, args.shell)
        if problem is not None:
            raise UsageError(problem)
    experiment = args.experiment or _default_experiment(store_path)
    return experiment, command, _run(args, _spec(args, command, experiment, store_path, host), argv)


def main(argv: list[str]) -> int:
    args = build_parser().parse_args(argv)
    _check(args)
    host = _host(args)
    from abstat.noise.stored import analyse_stored
    from abstat.render.noise import render
    from abstat.store import display_name, open_store, resolve_store_path

    store_path = resolve_store_path(args.store)
    experiment, command, status = _measure(args, argv, store_path, host)
    with open_store(store_path, create=False) as store:
        results, warnings = analyse_stored(
            store,
            experiment,
            metrics=args.report or None,
            confidence=args.confidence / 100.0,
            blocks=args.blocks,
            seed=args.seed or 0,
            host=host.label if host is not None else None,
        )
    header = {
        "experiment": experiment,
        "store": display_name(store_path),
        "command": command,
        "host": host.label if host is not None else None,
        "confidence": args.confidence,
        "warnings": [w.to_dict() for w in warnings],
    }
    sys.stdout.write(render(header, results, args.format))
    if status == 0 and args.exit_code and any(result.stable is False for result in results):
        return 1
    return status
