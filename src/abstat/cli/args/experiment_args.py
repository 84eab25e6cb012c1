"""The command-line grammar of an experiment, once: options -> :class:`~abstat.engine.spec.ExperimentSpec`.

``abstat run`` (and ``--resume`` of experiments stored as a command line),
``abstat demo`` and ``abstat noise`` build their specifications here.  Each
option's check and its one-line message live here; the specification then
checks the whole again as data.  A new option of an experiment (a metric
source's flag, a lab option) is added here, not in ``run.py``.
"""

from __future__ import annotations

import argparse
import math
import shlex
from collections.abc import Sequence
from typing import Any

from abstat.cli.args import add_seed
from abstat.cli.args.decide_args import add_sequential_options, sequential_from_args
from abstat.cli.args.grid_args import add_grid_options, parameters_from_args
from abstat.cli.args.cpu_args import add_cpu_options, cpu_fields
from abstat.cli.args.lab_args import lab_from_args
from abstat.engine.spec import MAX_RUNS, NAME_CHARS, Analysis, ExperimentSpec, Hooks, Variant
from abstat.errors import UsageError, usage_error

# perf stat counts these without a PMU (in a VM without hardware counters too)
SOFTWARE_EVENTS = ("task-clock", "context-switches", "cpu-migrations", "page-faults")


def add_run_options(parser: argparse.ArgumentParser) -> None:
    """What is run and how (after -v/--variant, -n and --warmup)."""
    parser.add_argument(
        "--order",
        choices=("interleaved", "sequential", "random"),
        default="interleaved",
        help="run order (default interleaved: seeded random blocks)",
    )
    add_seed(parser, default=None, help="seed of the run order (default: random, stored)")
    parser.add_argument("--shell", action="store_true", help="run commands and hooks through /bin/sh -c")
    parser.add_argument(
        "--timeout",
        type=float,
        default=None,
        metavar="SECONDS",
        help="kill a run (its whole process group) after this long; the run counts as failed",
    )
    parser.add_argument(
        "--ignore-failure", action="store_true", help="record failed runs and go on instead of stopping"
    )
    parser.add_argument("--setup", metavar="CMD", help="run once per variant before its runs")
    parser.add_argument("--cleanup", metavar="CMD", help="run once per variant after its runs")
    parser.add_argument("--prepare", metavar="CMD", help="run before every run (e.g. 'make clean')")
    parser.add_argument("--conclude", metavar="CMD", help="run after every run")
    parser.add_argument(
        "--background",
        action="append",
        default=[],
        metavar="CMD",
        help="background load, started before the first run and stopped (whole process "
        "group) after the last; repeatable",
    )
    add_cpu_options(parser)
    add_metric_options(parser)
    add_sequential_options(parser)
    add_grid_options(parser)


def add_metric_options(parser: argparse.ArgumentParser) -> None:
    """The metric sources' options (a new source's flag goes here, and into :func:`metric_sources`)."""
    parser.add_argument(
        "--metric",
        action="append",
        default=[],
        metavar="NAME=REGEX[:UNIT]",
        help="a number the benchmark prints: every match adds a value (group 1); "
        "[NAME=]json:PATH[:UNIT] reads one value per run from the JSON it prints (jobs[0].read.iops); "
        "repeatable",
    )
    parser.add_argument(
        "--metric-source",
        choices=("output", "kmsg"),
        default="output",
        help="where --metric patterns look: the command's output (default) or the kernel log "
        "lines written during each run (kmsg: /dev/kmsg, needs root)",
    )
    parser.add_argument(
        "--trace",
        action="append",
        default=[],
        metavar="[NAME=]FUNC|tracepoint:G:ENTER,EXIT",
        help="a kernel function's calls (NAME.calls) and time per call (NAME.ns) in each run, "
        "with bpftrace, in the measured process tree; repeatable",
    )
    parser.add_argument(
        "--trace-all-cpus",
        action="store_true",
        help="--trace every process on the machine during each run, not only the measured ones",
    )
    parser.add_argument(
        "--no-json-lines",
        action="store_true",
        help="do not read numeric fields of JSON-object lines the benchmark prints",
    )
    parser.add_argument(
        "--perf",
        action="store_true",
        help="count events with perf stat where supported: cycles, instructions and the "
        "software events task-clock, context-switches, cpu-migrations, page-faults",
    )
    parser.add_argument("--perf-events", metavar="LIST", help="events for --perf (comma separated)")
    parser.add_argument(
        "--monitor",
        action="append",
        default=[],
        metavar="NAME[,NAME]",
        help="the kernel's counters before and after each run, stored as monitor.NAME.FIELD: "
        "interrupts (IPIs, TLB shootdowns, timer...), softirqs, vmstat, schedstat, pressure; "
        "compare and report list what else changed",
    )


# --------------------------------------------------------------------------
# values


def quote_command(argv: Sequence[str]) -> str:
    """A command line that runs ``argv`` as given (without ``--shell``)."""
    return " ".join(shlex.quote(a) for a in argv)


def check_utf8(text: str, what: str) -> str:
    """Refuse text that holds bytes which are not UTF-8 (os.fsdecode's surrogates): the store holds UTF-8."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise UsageError(f"{what} {text!r}: not valid UTF-8 (abstat stores text as UTF-8)") from None
    return text


def parse_variants(specs: Sequence[str]) -> tuple[Variant, ...]:
    variants: list[Variant] = []
    for spec in specs:
        name, sep, text = spec.partition("=")
        if not sep or not name or not set(name) <= NAME_CHARS or not text.strip():
            raise UsageError(f"-v {spec!r}: expected NAME=COMMAND (NAME of letters, digits, '_.+-')")
        if any(v.name == name for v in variants):
            raise UsageError(f"variant {name!r} given twice")
        variants.append(Variant(name, check_utf8(text, f"variant {name!r}")))
    return tuple(variants)


def one_variant(words: Sequence[str], shell: bool, given: bool) -> str:
    """``abstat run -- COMMAND``'s one variant as ``NAME=COMMAND``, named after its program (``./bench`` -> bench)."""
    if given:
        raise UsageError("give the variants either with -v NAME=COMMAND or as one command after --, not both")
    command = " ".join(words) if shell else quote_command(words)
    program = (shlex.split(command) or [""])[0] if shell else words[0]
    name = "".join(c for c in program.rstrip("/").rsplit("/", 1)[-1] if c in NAME_CHARS).lstrip(".") or "command"
    return f"{name}={command}"


def parse_labels(specs: Sequence[str]) -> dict[str, str]:
    labels: dict[str, str] = {}
    for spec in specs:
        key, sep, value = spec.partition("=")
        key = key.strip()
        if not sep or not key or not set(key) <= NAME_CHARS:
            raise UsageError(f"--label {spec!r}: expected KEY=VALUE")
        if key in ("experiment", "variant", "metric"):  # host=NAME overrides the hostname label
            raise UsageError(f"--label {spec!r}: {key!r} is set by abstat itself")
        check_utf8(spec, "--label")
        labels[key] = value
    return labels


def metric_sources(args: argparse.Namespace) -> tuple[Any, ...]:
    """The metric sources the options ask for, in the order the executor applies them."""
    from abstat.box.runner import perf as perf_mod
    from abstat.box.runner.sources import JsonLines, Kmsg, Monitor, Perf, RegexMetric, Trace

    sources: list[Any] = []
    try:
        patterns = [RegexMetric.parse(text) for text in args.metric]
        kmsg = getattr(args, "metric_source", "output") == "kmsg"
        if kmsg and not patterns:
            raise UsageError("--metric-source kmsg: give the numbers to read with --metric NAME=REGEX[:UNIT]")
        sources.extend([Kmsg(tuple(patterns))] if kmsg else patterns)
        if getattr(args, "trace", None):
            sources.append(Trace.parse(args.trace, args.trace_all_cpus))
        elif getattr(args, "trace_all_cpus", False):
            raise UsageError("--trace-all-cpus: give the probes with --trace")
        if getattr(args, "monitor", None):
            sources.append(Monitor.parse(args.monitor))
    except ValueError as err:
        raise usage_error(err) from None
    if not getattr(args, "no_json_lines", False):
        sources.append(JsonLines())
    events_text = getattr(args, "perf_events", None)
    if args.perf or events_text:
        default = ",".join(perf_mod.DEFAULT_EVENTS + SOFTWARE_EVENTS)
        events = tuple(perf_mod.split_events(events_text or default))
        if events:
            sources.append(Perf(events))
    return tuple(sources)


def check_counts(args: argparse.Namespace) -> None:
    """-n, --warmup, --timeout and -c, in the options' words."""
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


def spec_from_args(args: argparse.Namespace, store: str) -> ExperimentSpec:
    """The specification ``abstat run``'s options describe (checked first as options, in their words)."""
    if not args.variant:
        raise UsageError("give at least one variant: -v NAME=COMMAND")
    sequential = sequential_from_args(args)  # --max-runs sets -n
    check_counts(args)
    variants = parse_variants(args.variant)
    if args.experiment is not None:
        from abstat.store import check_experiment_name

        check_experiment_name(check_utf8(args.experiment, "--experiment"))  # before the store file is created
    labels = parse_labels(args.label)
    lab = lab_from_args(args, [v.name for v in variants], labels)
    hooks = {
        kind: check_utf8(getattr(args, kind), f"--{kind}")
        for kind in ("setup", "cleanup", "prepare", "conclude")
        if getattr(args, kind)
    }
    return ExperimentSpec(
        variants,
        runs=args.runs,
        warmup=args.warmup,
        order=args.order,
        seed=args.seed,
        shell=args.shell,
        timeout=args.timeout,
        on_failure="continue" if args.ignore_failure else "stop",
        hooks=Hooks(**hooks),
        background=tuple(check_utf8(text, "--background") for text in args.background),
        metrics=metric_sources(args),
        experiment=args.experiment,
        labels=labels,
        rev="." if args.rev else None,
        lab=lab,
        analysis=Analysis(args.baseline, args.confidence, tuple(args.higher_is_better), tuple(args.lower_is_better)),
        store=store,
        **cpu_fields(args),
        sequential=sequential,
        parameters=parameters_from_args(args),
    )
