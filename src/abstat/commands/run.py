"""``abstat run``: measure variants, store every run, compare at the end.

    abstat run -n 30 --warmup 3 -v before='./bench-old' -v after='./bench-new'

The runner itself (``abstat.runner``) is standard library only; this
command layer adds the progress display (rich on a terminal, plain lines
otherwise) and the final comparison (``abstat.comparison``).
"""
from __future__ import annotations

import argparse
import json
import math
import random
import shlex
import shutil
import statistics
import sys
import time
from collections.abc import Sequence
from typing import Any, TextIO

from abstat.commands import ArgumentParser
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
    parser.add_argument("-n", "--runs", type=int, default=10, help="measured runs per variant (default 10)")
    parser.add_argument("--warmup", type=int, default=0, help="warm-up runs per variant, not recorded")
    parser.add_argument("--order", choices=("interleaved", "sequential", "random"), default="interleaved",
                        help="run order (default interleaved: seeded random blocks)")
    parser.add_argument("--seed", type=int, default=None, help="seed of the run order (default: random, stored)")
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
    parser.add_argument("--store", metavar="PATH", default=None, help="result store (default ./abstat.db)")
    parser.add_argument("--label", action="append", default=[], metavar="KEY=VALUE",
                        help="label these runs (e.g. host=milan mode=pv64); repeatable")
    parser.add_argument("--rev", action="store_true",
                        help="label the runs with the git revision of the current directory (rev, commit_time)")
    parser.add_argument("--baseline", metavar="NAME", help="variant the others are compared with")
    parser.add_argument("--higher-is-better", action="append", default=[], metavar="METRIC",
                        help="a metric where larger values are better (throughput); repeatable")
    parser.add_argument("--confidence", type=float, default=95.0, help="confidence level in percent")
    parser.add_argument("--format", choices=("text", "markdown", "json", "csv"), default="text",
                        help="format of the final comparison")
    parser.add_argument("--no-progress", action="store_true", help="no progress display")
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


def check_command(command: Any, what: str) -> None:
    """Fail before anything runs when a command cannot be executed."""
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
# formatting helpers


def format_value(value: float, unit: str | None) -> str:
    if unit == "s":
        magnitude = abs(value)
        if magnitude >= 1:
            return f"{value:.3f} s"
        if magnitude >= 1e-3:
            return f"{value * 1e3:.3f} ms"
        return f"{value * 1e6:.1f} µs"
    text = f"{value:.6g}"
    return f"{text} {unit}" if unit and unit != "count" else text


def _format_eta(seconds: float) -> str:
    seconds = max(0, int(round(seconds)))
    return f"{seconds // 3600}:{seconds % 3600 // 60:02d}:{seconds % 60:02d}"


class Progress:
    """Progress with ETA and each variant's running median of wall time."""

    def __init__(self, variants: list[str], total_runs: int, stream: TextIO, enabled: bool) -> None:
        self.variants = variants
        self.total = total_runs
        self.stream = stream
        self.enabled = enabled
        self.walls: dict[str, list[float]] = {name: [] for name in variants}
        self.failed: dict[str, int] = dict.fromkeys(variants, 0)
        self.done = 0
        self.started = time.monotonic()
        self._rich: Any = None
        self._task: Any = None
        if enabled and stream.isatty():
            try:
                from rich.console import Console
                from rich.progress import (
                    BarColumn,
                    MofNCompleteColumn,
                    TextColumn,
                    TimeRemainingColumn,
                )
                from rich.progress import Progress as RichProgress
            except ImportError:
                self._rich = None
            else:
                self._rich = RichProgress(
                    TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
                    TextColumn("ETA"), TimeRemainingColumn(), TextColumn("{task.fields[medians]}"),
                    console=Console(file=stream), transient=False,
                )
                self._rich.start()
                self._task = self._rich.add_task("running", total=total_runs, medians="")

    def medians_text(self) -> str:
        parts = []
        for name in self.variants:
            values = self.walls[name]
            text = format_value(statistics.median(values), "s") if values else "-"
            if self.failed[name]:
                text += f" ({self.failed[name]} failed)"
            parts.append(f"{name} {text}")
        return "median: " + ", ".join(parts)

    def slot(self, slot: Any, position: int, total: int) -> None:
        if self._rich is not None:
            label = f"warm-up {slot.variant}" if slot.warmup else slot.variant
            self._rich.update(self._task, description=label)

    def result(self, result: Any) -> None:
        self.done += 1
        measurement = result.measurement
        if measurement.ok:
            self.walls[result.variant].append(measurement.wall_s)
        else:
            self.failed[result.variant] += 1
        if not self.enabled:
            return
        if self._rich is not None:
            self._rich.update(self._task, advance=1, medians=self.medians_text())
            return
        elapsed = time.monotonic() - self.started
        eta = elapsed / self.done * (self.total - self.done) if self.done else 0.0
        outcome = format_value(measurement.wall_s, "s") if measurement.ok else measurement.status.upper()
        self.stream.write(
            f"[{self.done}/{self.total}] {result.variant} run {result.iteration + 1}: {outcome}"
            f"  {self.medians_text()}  ETA {_format_eta(eta)}\n"
        )
        self.stream.flush()

    def stop(self) -> None:
        if self._rich is not None:
            self._rich.stop()
            self._rich = None


# ---------------------------------------------------------------------------
# the final comparison


def machine_differences(store: Any, experiment: str, variants: list[str], baseline: str,
                        invocations: Sequence[int] | None = None) -> dict[str, str]:
    """Variant -> warning text, for variants measured under another machine record than the baseline
    (only the records of ``invocations`` when given)."""
    from abstat.machine import differing_fields

    base_records = store.machine_records(experiment, baseline, invocations=invocations)
    warnings: dict[str, str] = {}
    for name in variants:
        if name == baseline:
            continue
        fields: list[str] = []
        for other in store.machine_records(experiment, name, invocations=invocations):
            for base in base_records:
                for field_name in differing_fields(base, other):
                    if field_name not in fields:
                        fields.append(field_name)
        if fields:
            warnings[name] = (
                f"{baseline} and {name} were measured under different machine records: {', '.join(fields)}"
            )
    return warnings


def comparison_report(
    store: Any,
    experiment: str,
    *,
    baseline: str | None = None,
    fmt: str = "text",
    confidence: float = 95.0,
    higher_is_better: Sequence[str] = (),
    metrics: Sequence[str] | None = None,
    seed: int = 0,
    color: bool = False,
    labels: dict[str, str] | None = None,
    invocations: Sequence[int] | None = None,
) -> str:
    """Compare every stored variant of ``experiment`` for every metric.

    Each ``abstat run`` invocation is a run group (nested data) once a
    variant has more than one.  With ``labels``, only the invocations with
    exactly these ``--label``s count: runs on another host or mode of the
    same experiment are another configuration, not another run group.
    ``invocations`` (ids, e.g. one configuration's from ``Store.sample_sets``)
    restricts the comparison the same way.  Returns the rendered text.
    """
    if invocations is not None:
        invocations = list(invocations) or [-1]
    if labels is not None:
        matching = [i["id"] for i in store.invocations(experiment) if i["labels"] == labels]
        invocations = [i for i in matching if invocations is None or i in invocations] or [-1]
    groups = store.groups_by_metric(experiment, invocations=invocations)  # metric -> variant -> runs
    variants = [v for v in store.variant_names(experiment) if any(v in by_variant for by_variant in groups.values())]
    if not variants:
        return f"experiment {experiment}: no successful runs stored\n" if fmt == "text" else ""
    if baseline is None:
        baseline = variants[0]
    elif baseline not in variants:
        raise UsageError(f"--baseline {baseline!r}: experiment {experiment!r} has no successful runs of it "
                         f"(variants: {', '.join(variants)})")
    metric_names = list(metrics) if metrics else store.metrics(experiment)
    machine_notes = machine_differences(store, experiment, variants, baseline, invocations)
    sections: list[tuple[str, str | None, dict[str, Any]]] = []
    for metric in metric_names:
        by_variant = groups.get(metric, {})
        data = {name: runs[0] if len(runs) == 1 else runs
                for name in variants if (runs := by_variant.get(name))}
        if baseline in data and len(data) >= 2:
            sections.append((metric, store.unit(experiment, metric), data))
    if len(variants) < 2 or not sections:
        return _summary_only(store, experiment, variants, metric_names, fmt, groups)
    from abstat.comparison import compare_many
    from abstat.errors import AbstatError
    from abstat.render.compare_text import render
    from abstat.stats.warnings import StatWarning

    rendered: list[tuple[str, str | None, list[Any]]] = []
    not_compared: list[tuple[str, str]] = []
    for metric, unit, data in sections:
        try:
            comparisons = compare_many(
                data, baseline=baseline, confidence=confidence / 100.0,
                higher_is_better=metric in higher_is_better, seed=seed,
            )
        except AbstatError as err:
            not_compared.append((metric, str(err)))
            continue
        for comparison in comparisons:
            note = machine_notes.get(comparison.candidate)
            if note is not None:
                comparison.warnings.append(StatWarning("machine-differs", note, comparison.candidate))
        rendered.append((metric, unit, comparisons))
    if fmt == "json":
        document = {
            "experiment": experiment,
            "baseline": baseline,
            "metrics": {
                metric: {"unit": unit, "comparisons": json.loads(render(comparisons, fmt="json"))}
                for metric, unit, comparisons in rendered
            },
            "machine_warnings": list(machine_notes.values()),
            "not_compared": {metric: reason for metric, reason in not_compared},
        }
        return json.dumps(document, indent=2) + "\n"
    if fmt == "csv":
        out: list[str] = []
        for index, (metric, _unit, comparisons) in enumerate(rendered):
            lines = render(comparisons, fmt="csv").splitlines()
            if not lines:
                continue
            if index == 0 or not out:
                out.append("metric," + lines[0])
            out.extend(f"{metric},{line}" for line in lines[1:])
        return "\n".join(out) + "\n"
    parts: list[str] = []
    heading = "## " if fmt == "markdown" else ""
    for metric, unit, comparisons in rendered:
        parts.append(f"{heading}{experiment}: {metric}" + (f" ({unit})" if unit else ""))
        parts.append(render(comparisons, fmt=fmt, color=color and fmt == "text").rstrip("\n"))
        parts.append("")
    for metric, reason in not_compared:
        parts.append(f"{experiment}: {metric}: not compared: {reason}")
    if not rendered:
        for note in machine_notes.values():
            parts.append(f"warning: {note}")
    return "\n".join(parts).rstrip("\n") + "\n"


def _summary_only(store: Any, experiment: str, variants: list[str], metrics: Sequence[str], fmt: str,
                  groups: dict[str, dict[str, list[list[float]]]]) -> str:
    """Per-variant medians when there is nothing to compare (``groups`` as ``Store.groups_by_metric``)."""
    rows = []
    for metric in metrics:
        unit = store.unit(experiment, metric)
        for name in variants:
            values = [v for group in groups.get(metric, {}).get(name, []) for v in group]
            if values:
                rows.append({"metric": metric, "variant": name, "n": len(values), "unit": unit,
                             "median": statistics.median(values), "min": min(values), "max": max(values)})
    if fmt == "json":
        # "note" stays in the document's shape (it is always null now that the comparison always exists)
        return json.dumps({"experiment": experiment, "summary": rows, "note": None}, indent=2) + "\n"
    if fmt == "csv":
        lines = ["metric,variant,n,median,min,max,unit"]
        lines += [f"{r['metric']},{r['variant']},{r['n']},{r['median']!r},{r['min']!r},{r['max']!r},{r['unit'] or ''}"
                  for r in rows]
        return "\n".join(lines) + "\n"
    lines = [f"experiment {experiment}" + (" (one variant: nothing to compare)" if len(variants) < 2 else "")]
    lines.append(f"  {'metric':<14} {'variant':<14} {'N':>5} {'median':>14} {'min':>14} {'max':>14}")
    for r in rows:
        lines.append(
            f"  {r['metric']:<14} {r['variant']:<14} {r['n']:>5} {format_value(r['median'], r['unit']):>14}"
            f" {format_value(r['min'], r['unit']):>14} {format_value(r['max'], r['unit']):>14}"
        )
    return "\n".join(lines) + "\n"


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
    from abstat.store import open_store

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

    plan = ExperimentPlan(
        variants=variants, runs=args.runs, warmup=args.warmup, order=args.order, seed=seed,
        timeout=args.timeout, background=backgrounds, ignore_failure=args.ignore_failure, **hooks,
    )
    record = machine_mod.collect()
    store = open_store(store_path)
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
        stderr.write(
            f"abstat run: experiment {experiment!r}, {len(variants)} variant(s) x {args.runs} runs"
            f" (+{args.warmup} warm-up), order {args.order}, seed {seed}, store {store_path}\n"
        )
        for note in notes:
            stderr.write(f"note: {note}\n")
        if perf_support is not None and perf_support.usable:
            stderr.write("note: with --perf, wall/user/sys time and peak RSS include perf stat itself\n")
        stderr.flush()
        progress = Progress([v.name for v in variants], total, stderr, enabled=not args.no_progress)
        commands = {v.name: v.command.text for v in variants}

        def persist(result: Any) -> None:
            measurement = result.measurement
            store.add_run(
                invocation, variant=result.variant, command=commands[result.variant],
                iteration=result.iteration, position=result.position, status=measurement.status,
                exit_code=measurement.exit_code, started_at=result.started_at,
                wall=measurement.wall_s, values=measurement.values, units=measurement.units,
                notes=measurement.notes + ([f"stderr: {measurement.stderr_tail}"] if measurement.stderr_tail else []),
            )
            progress.result(result)

        executor = ProcessExecutor(patterns=patterns, json_lines=not args.no_json_lines, perf=perf_support)
        previous = _interrupt_on_termination()
        try:
            outcome = run_experiment(plan, executor, on_result=persist, on_slot=progress.slot)
        finally:
            _restore_signals(previous)
            executor.close()
            progress.stop()
        status = "complete" if outcome.completed else ("interrupted" if outcome.interrupted else "failed")
        notes.extend(outcome.notes)
        store.finish_invocation(invocation, status, notes + ([outcome.error] if outcome.error else []))
        failed = [r for r in outcome.results if not r.ok]
        for note in outcome.notes:
            stderr.write(f"note: {note}\n")
        if failed:
            stderr.write(f"note: {len(failed)} failed run(s) recorded as failed, not used in the comparison\n")
        if outcome.interrupted:
            stderr.write(f"abstat run: interrupted: {len(outcome.results)} of {total} runs done;"
                         " partial report follows\n")
        stderr.flush()
        report = comparison_report(
            store, experiment, baseline=args.baseline, fmt=args.format, confidence=args.confidence,
            higher_is_better=args.higher_is_better, seed=seed, color=_isatty(stdout), labels=labels,
        )
        stdout.write(report)
        stdout.flush()
    finally:
        store.close()
    if outcome.error:
        raise InputError(f"{outcome.error}; the runs so far are stored in {store_path} "
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


def _isatty(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def quote_command(argv: Sequence[str]) -> str:
    return " ".join(shlex.quote(a) for a in argv)
