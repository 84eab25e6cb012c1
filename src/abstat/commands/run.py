"""``abstat run``: measure variants, store every run, compare at the end.

    abstat run -n 30 --warmup 3 -v before='./bench-old' -v after='./bench-new'

The runner itself (``abstat.runner``) is standard library only; this
command layer adds the progress display (rich on a terminal, plain lines
otherwise) and the final comparison (``abstat.comparison``).
"""
from __future__ import annotations

import argparse
import math
import random
import shlex
import shutil
import sys
import time
from collections.abc import Sequence
from typing import Any

from abstat.commands import (ArgumentParser, add_baseline, add_confidence, add_format, add_higher_is_better,
                             add_label, add_no_progress, add_runs, add_seed, add_store, add_warmup)
from abstat.errors import InputError, UsageError

MAX_RUNS = 1_000_000  # per variant: the schedule is built in memory
_NAME_CHARS = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.+-")


def build_parser(prog: str = "abstat run") -> argparse.ArgumentParser:
    parser = ArgumentParser(
        prog=prog,
        description="Run benchmark variants (interleaved), store every run, and compare them.",
        epilog="Example: abstat run -n 30 --warmup 3 -v before='./bench-old' -v after='./bench-new'",
    )
    parser.add_argument("-v", "--variant", action="append", default=[], metavar="NAME=COMMAND",
                        help="a variant to measure (repeat for each variant)")
    add_runs(parser, default=10)
    add_warmup(parser, default=0)
    parser.add_argument("--order", choices=("interleaved", "sequential", "random"), default="interleaved",
                        help="run order (default interleaved: seeded random blocks)")
    add_seed(parser, default=None, help="seed of the run order (default: random, stored)")
    parser.add_argument("--shell", action="store_true", help="run commands and hooks through /bin/sh -c")
    parser.add_argument("--timeout", type=float, default=None, metavar="SECONDS",
                        help="kill a run (its whole process group) after this long; the run counts as failed")
    parser.add_argument("--ignore-failure", action="store_true",
                        help="record failed runs and go on instead of stopping")
    parser.add_argument("--setup", metavar="CMD", help="run once per variant before its runs")
    parser.add_argument("--cleanup", metavar="CMD", help="run once per variant after its runs")
    parser.add_argument("--prepare", metavar="CMD", help="run before every run (e.g. 'make clean')")
    parser.add_argument("--conclude", metavar="CMD", help="run after every run")
    parser.add_argument("--background", action="append", default=[], metavar="CMD",
                        help="background load, started before the first run and stopped (whole process "
                             "group) after the last; repeatable")
    parser.add_argument("--metric", action="append", default=[], metavar="NAME=REGEX[:UNIT]",
                        help="a number the benchmark prints: every match adds a value (group 1); repeatable")
    parser.add_argument("--no-json-lines", action="store_true",
                        help="do not read numeric fields of JSON-object lines the benchmark prints")
    parser.add_argument("--perf", action="store_true",
                        help="count hardware events with perf stat (cycles, instructions) where supported")
    parser.add_argument("--perf-events", metavar="LIST", help="events for --perf (comma separated)")
    parser.add_argument("--experiment", metavar="NAME",
                        help="add to this experiment (created if new; default: a new one per invocation)")
    add_store(parser)
    add_label(parser, help="label these runs (e.g. host=milan mode=pv64); repeatable")
    parser.add_argument("--rev", action="store_true",
                        help="label the runs with the git revision of the current directory (rev, commit_time)")
    add_baseline(parser)
    add_higher_is_better(parser)
    add_confidence(parser)
    add_format(parser, ("text", "markdown", "json", "csv"), default="text", help="format of the final comparison")
    add_no_progress(parser)
    parser.add_argument("--verbose", action="store_true",
                        help="text: each metric's tables before the summary lines (-v is --variant here)")
    lab = parser.add_argument_group("lab: several machines and boots, over ssh (docs/lab.md)")
    lab.add_argument("--host", action="append", default=[], metavar="NAME|LABEL=DEST",
                     help="run on this ssh destination (repeatable; in parallel; runs labelled host=NAME)")
    lab.add_argument("--boot", action="append", default=[], metavar="VARIANT=COMMAND",
                     help="the command that boots the host into VARIANT (e.g. grub-reboot X && reboot)")
    lab.add_argument("--check", action="append", default=[], metavar="VARIANT=COMMAND",
                     help="must exit 0 on the host once booted into VARIANT, or the boot is refused")
    lab.add_argument("--boots", type=int, default=None, metavar="K", help="boots per variant (default 1)")
    lab.add_argument("--boot-timeout", type=float, default=None, metavar="S",
                     help="wait at most S seconds for a host to come back (default 600)")
    lab.add_argument("--resume", metavar="EXPERIMENT",
                     help="continue a --host experiment where it stopped (stored boots are not repeated)")
    return parser


# ---------------------------------------------------------------------------
# parsing


def parse_variants(specs: Sequence[str], shell: bool) -> list[Any]:
    from abstat.runner import Command, Variant

    variants: list[Variant] = []
    seen: set[str] = set()
    for spec in specs:
        name, sep, text = spec.partition("=")
        if not sep or not name or not set(name) <= _NAME_CHARS or not text.strip():
            raise UsageError(f"-v {spec!r}: expected NAME=COMMAND (NAME of letters, digits, '_.+-')")
        if name in seen:
            raise UsageError(f"variant {name!r} given twice")
        seen.add(name)
        command = Command(text, shell)
        check_command(command, f"variant {name!r}")
        variants.append(Variant(name, command))
    return variants


def check_utf8(text: str, what: str) -> str:
    """Refuse text that holds bytes which are not UTF-8 (os.fsdecode's surrogates): the store holds UTF-8."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise UsageError(f"{what} {text!r}: not valid UTF-8 (abstat stores text as UTF-8)") from None
    return text


def check_command(command: Any, what: str) -> None:
    """Fail before anything runs when a command cannot be executed."""
    check_utf8(command.text, what)
    try:
        argv = command.argv()
    except ValueError as err:
        raise UsageError(f"{what}: cannot split {command.text!r}: {err}") from None
    if not argv:
        raise UsageError(f"{what}: empty command")
    if shutil.which(argv[0]) is None:
        raise UsageError(f"{what}: command not found or not executable: {argv[0]!r}"
                         + ("" if command.shell else " (use --shell for shell syntax)"))


def parse_labels(specs: Sequence[str]) -> dict[str, str]:
    labels: dict[str, str] = {}
    reserved = {"experiment", "variant", "metric"}  # host=NAME overrides the hostname label
    for spec in specs:
        key, sep, value = spec.partition("=")
        key = key.strip()
        if not sep or not key or not set(key) <= _NAME_CHARS:
            raise UsageError(f"--label {spec!r}: expected KEY=VALUE")
        if key in reserved:
            raise UsageError(f"--label {spec!r}: {key!r} is set by abstat itself")
        check_utf8(spec, "--label")
        labels[key] = value
    return labels


def _default_experiment(store: Any) -> str:
    base = time.strftime("run-%Y%m%d-%H%M%S", time.localtime())
    name, counter = base, 1
    while store.has_experiment(name):
        counter += 1
        name = f"{base}-{counter}"
    return name


# ---------------------------------------------------------------------------
# rendering lives in render/: the progress display and the final comparison

from abstat.render import escape  # noqa: E402
from abstat.render.progress import Progress  # noqa: E402
from abstat.render.units import fits  # noqa: E402
from abstat.render.run_report import comparison_report  # noqa: E402


# ---------------------------------------------------------------------------
# the command


def execute(args: argparse.Namespace, argv: Sequence[str], *, store_path: str) -> int:
    """Run the experiment described by parsed ``args``; shared with ``abstat demo``."""
    from abstat import machine as machine_mod
    from abstat.runner import (
        Command,
        ExperimentPlan,
        ProcessExecutor,
        parse_metric_pattern,
        run_experiment,
    )
    from abstat.runner import perf as perf_mod
    from abstat.runner import signals as run_signals
    from abstat.store import open_store

    if args.host or args.boot or args.check or args.resume or (args.boots, args.boot_timeout) != (None, None):
        from abstat.lab import run_lab

        return run_lab(args, argv, store_path=store_path)
    stdout, stderr = sys.stdout, sys.stderr
    if not args.variant:
        raise UsageError("give at least one variant: -v NAME=COMMAND")
    if args.runs < 1:
        raise UsageError("-n must be at least 1")
    if args.warmup < 0:
        raise UsageError("--warmup cannot be negative")
    if args.runs > MAX_RUNS or args.warmup > MAX_RUNS:
        raise UsageError(f"-n and --warmup are at most {MAX_RUNS:,} runs per variant")
    if args.timeout is not None and not (args.timeout > 0 and math.isfinite(args.timeout)):
        raise UsageError("--timeout must be a positive number of seconds")
    if not 0 < args.confidence < 100:
        raise UsageError("--confidence must be between 0 and 100 (a percentage)")
    variants = parse_variants(args.variant, args.shell)
    if args.baseline is not None and args.experiment is None and args.baseline not in {v.name for v in variants}:
        raise UsageError(f"--baseline {args.baseline!r} is not one of the variants")
    if args.experiment is not None:
        from abstat.store import check_experiment_name

        check_utf8(args.experiment, "--experiment")
        check_experiment_name(args.experiment)  # before the store file is created
    labels = parse_labels(args.label)
    if args.rev:
        from abstat.history.revision import head_labels

        labels = {**head_labels("."), **labels}  # an explicit --label rev=... wins
    patterns = []
    for spec in args.metric:
        try:
            patterns.append(parse_metric_pattern(spec))
        except ValueError as err:
            raise UsageError(str(err)) from None
    hooks: dict[str, Command | None] = {}
    for kind in ("setup", "cleanup", "prepare", "conclude"):
        text = getattr(args, kind)
        hooks[kind] = Command(text, args.shell) if text else None
        if hooks[kind] is not None:
            check_command(hooks[kind], f"--{kind}")
    backgrounds = [Command(text, args.shell) for text in args.background]
    for command in backgrounds:
        check_command(command, "--background")
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(2**31)

    notes: list[str] = []
    perf_support = None
    if args.perf or args.perf_events:
        events = tuple(e.strip() for e in (args.perf_events or ",".join(perf_mod.DEFAULT_EVENTS)).split(",")
                       if e.strip())
        perf_support = perf_mod.probe(events)
        if perf_support.note:
            notes.append(perf_support.note)
    from abstat.runner.containment import leftover_notes

    notes.extend(leftover_notes())  # what a run killed together with its supervisor left behind

    plan = ExperimentPlan(
        variants=variants, runs=args.runs, warmup=args.warmup, order=args.order, seed=seed,
        timeout=args.timeout, background=backgrounds, ignore_failure=args.ignore_failure, **hooks,
    )
    record = machine_mod.collect()
    from abstat.doctor import run_preflight

    record["doctor"], doctor_warnings = run_preflight(perf_support)
    store = open_store(store_path)
    invocation = None
    finished = False
    store.spool_on_disconnect(lambda line: (stderr.write(line + "\n"), stderr.flush()))  # PostgreSQL only
    try:
        experiment = args.experiment or _default_experiment(store)
        if args.baseline is not None and args.baseline not in (
                {v.name for v in variants} | set(store.variant_names(experiment))):
            raise UsageError(f"--baseline {args.baseline!r} is neither one of the variants nor stored in "
                             f"experiment {experiment!r}")  # before any run, not after all of them
        settings = {
            "runs": args.runs, "warmup": args.warmup, "order": args.order, "seed": seed,
            "timeout": args.timeout, "shell": args.shell, "ignore_failure": args.ignore_failure,
            "hooks": {k: v.text for k, v in hooks.items() if v is not None},
            "background": [c.text for c in backgrounds], "metrics": list(args.metric),
            "json_lines": not args.no_json_lines,
            "perf_events": perf_support.supported if perf_support else [],
            "variants": {v.name: v.command.text for v in variants},
        }
        from abstat import __version__

        settings["abstat"] = __version__
        invocation = store.start_invocation(
            experiment, record, argv=list(argv), settings=settings, labels=labels,
            variants=[v.name for v in variants],
        )
        total = len(variants) * args.runs
        stderr.write(fits(stderr, escape.terminal(
            f"abstat run: experiment {experiment!r}, {len(variants)} variant(s) x {args.runs} runs"
            f" (+{args.warmup} warm-up), order {args.order}, seed {seed}, store {store.display}") + "\n"))
        for note in notes:
            stderr.write(fits(stderr, escape.terminal(f"note: {note}") + "\n"))
        for warning in doctor_warnings:
            stderr.write(fits(stderr, escape.terminal(f"note: abstat doctor warns: {warning}") + "\n"))
        if perf_support is not None and perf_support.usable:
            stderr.write("note: with --perf, wall/user/sys time and peak RSS include perf stat itself\n")
        stderr.flush()
        progress = Progress([v.name for v in variants], total, stderr, enabled=not args.no_progress)
        commands = {v.name: v.command.text for v in variants}

        def persist(result: Any) -> None:
            measurement = result.measurement
            with run_signals.deferred():  # Ctrl-C lands after the commit, never inside the transaction
                store.add_run(
                invocation, variant=result.variant, command=commands[result.variant],
                    iteration=result.iteration, position=result.position, status=measurement.status,
                    exit_code=measurement.exit_code, started_at=result.started_at,
                    wall=measurement.wall_s, values=measurement.values, units=measurement.units,
                    notes=measurement.notes + ([f"stderr: {measurement.stderr_tail}"]
                                               if measurement.stderr_tail else []),
                )
            progress.result(result)

        executor = ProcessExecutor(patterns=patterns, json_lines=not args.no_json_lines, perf=perf_support)
        previous = _interrupt_on_termination()
        try:
            outcome = run_experiment(plan, executor, on_result=persist, on_slot=progress.slot)
        except BaseException:  # e.g. the store failed: end the processes first (the invocation: below)
            with run_signals.deferred(deliver=False):
                executor.close()
                progress.stop()
                _restore_signals(previous)
            raise
        with run_signals.deferred(deliver=False) as held:  # a teardown no signal abandons
            executor.close()
            progress.stop()
            _restore_signals(previous)
            outcome.interrupted = outcome.interrupted or bool(held.received)
            status = "complete" if outcome.completed else ("interrupted" if outcome.interrupted else "failed")
            notes.extend(outcome.notes)
            store.finish_invocation(invocation, status, notes + ([outcome.error] if outcome.error else []))
            finished = True
        failed = [r for r in outcome.results if not r.ok]
        for note in outcome.notes:
            stderr.write(fits(stderr, escape.terminal(f"note: {note}") + "\n"))
        if failed:
            stderr.write(f"note: {len(failed)} failed run(s) recorded as failed, not used in the comparison\n")
        if outcome.interrupted:
            stderr.write(f"abstat run: interrupted: {len(outcome.results)} of {total} runs done;"
                         " partial report follows\n")
        stderr.flush()
        from abstat.render import terminal

        report = comparison_report(
            store, experiment, baseline=args.baseline, fmt=args.format, confidence=args.confidence,
            higher_is_better=args.higher_is_better, seed=seed, color=terminal.color_wanted(stdout), labels=labels,
            verbose=args.verbose,
        )
        terminal.write(stdout, report)
        stdout.flush()
    except BaseException as err:
        if invocation is not None and not finished:  # never leave it "running"
            with run_signals.deferred(deliver=False):
                try:
                    store.finish_invocation(invocation, "interrupted" if isinstance(err, KeyboardInterrupt)
                                            else "failed", [*notes, f"abstat stopped: {err!r}"])
                except Exception:
                    pass  # the original error says more
        raise
    finally:
        store.close()
    if outcome.error:
        raise InputError(f"{outcome.error}; the runs so far are stored in {store.display} "
                         f"(experiment {experiment!r})")
    return 130 if outcome.interrupted else 0


def main(argv: list[str]) -> int:
    from abstat.store import resolve_store_path

    args = build_parser().parse_args(argv)
    store_path = resolve_store_path(args.store)
    return execute(args, ["abstat", "run", *argv], store_path=store_path)


def _raise_interrupt(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt


def _interrupt_on_termination() -> dict[int, Any]:
    """SIGTERM/SIGHUP stop the experiment like Ctrl-C: background load and
    the run in progress are killed, what ran is kept and reported."""
    import signal
    import threading

    previous: dict[int, Any] = {}
    if threading.current_thread() is not threading.main_thread():
        return previous
    for signum in (signal.SIGTERM, signal.SIGHUP):
        try:
            previous[signum] = signal.signal(signum, _raise_interrupt)
        except (OSError, ValueError):
            pass
    return previous


def _restore_signals(previous: dict[int, Any]) -> None:
    import signal

    for signum, handler in previous.items():
        signal.signal(signum, handler)


def quote_command(argv: Sequence[str]) -> str:
    return " ".join(shlex.quote(a) for a in argv)
