"""The public API's functions for what runs and what is run: experiments, noise, history, bisect, doctor.

Each is what the command of the same name does, without a command line:
typed arguments in, data out (with its warnings), nothing printed.  They are
re-exported from :mod:`abstat` (``abstat.run(spec)``; names that are not
those of abstat's subpackages: ``abstat.noise`` is the package,
``abstat.noise_floor`` the function); docs/api.md shows each with an example, and the tests run those examples.

Confidence levels and power are fractions everywhere in the library
(``confidence=0.95``, ``power=0.8``); percents are the command line's.
Results are typed: :class:`abstat.history.analysis.HistoryReport`,
:class:`abstat.history.bisect.driver.Report`, :class:`abstat.box.doctor.Finding`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from abstat.engine import Engine, ExperimentResult, ExperimentSpec
from abstat.engine.events import EventSink, ignore
from abstat.errors import UsageError

if TYPE_CHECKING:
    from abstat.history.bisect.driver import Report as BisectReport
    from abstat.comparison.model import Comparison
    from abstat.comparison.planning import Plan
    from abstat.box.doctor.base import Finding
    from abstat.history.analysis import HistoryReport
    from abstat.noise.analysis import MetricNoise


def _fraction(value: float, name: str, low: float = 0.5) -> float:
    """``value`` when it is a fraction in [low, 1); a percent (95) is refused in one line."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not low <= value < 1.0:
        hint = f" (a fraction: {value / 100:g}, not a percent)" if isinstance(value, (int, float)) and value > 1 else ""
        raise UsageError(f"{name} must be a fraction in [{low:g}, 1), not {value!r}{hint}")
    return float(value)


# --------------------------------------------------------------------------
# statistics


def compare(baseline: Any, candidate: Any, *, confidence: float = 0.95, **options: Any) -> Comparison:
    """:func:`abstat.comparison.compare` with ``confidence`` a fraction (0.95): compare ``candidate`` with
    ``baseline`` (each a sequence of numbers, of runs, a :class:`Summary` or a :class:`SampleSet`)."""
    from abstat.comparison import compare as compare_two

    return compare_two(_data(baseline), _data(candidate), confidence=_fraction(confidence, "confidence"), **options)


def compare_many(
    variants: dict[str, Any], *, baseline: str | None = None, confidence: float = 0.95, **options: Any
) -> list[Comparison]:
    """Every variant compared with ``baseline`` (the first by default); ``confidence`` a fraction."""
    from abstat.comparison import compare_many as compare_all

    return compare_all(
        _named(variants, "compare_many"),
        baseline=baseline,
        confidence=_fraction(confidence, "confidence"),
        **options,
    )


def plan(
    variants: dict[str, Any], *, detect: float, power: float = 0.8, confidence: float = 0.95, **options: Any
) -> Plan:
    """Samples (or runs x samples) per variant to detect a change of ``detect`` (percent of the baseline's
    centre, a practical size) with ``power`` at ``confidence``, both fractions (:func:`abstat.comparison.
    planning.plan`; the plan's own ``confidence`` field is in percent, as printed)."""
    from abstat.comparison.planning import plan as plan_sizes

    return plan_sizes(
        _named(variants, "plan"),
        detect=detect,
        power=_fraction(power, "power", 0.0),
        confidence=_fraction(confidence, "confidence") * 100.0,
        **options,
    )


def _named(variants: Any, function: str) -> dict[str, Any]:
    """``variants`` (name -> data) with each one's data as the comparison takes it; a list (no names to
    compare by) is refused in one line naming the argument."""
    if not isinstance(variants, Mapping):
        raise TypeError(f"{function}(variants=...) takes a mapping of name -> data, not a {type(variants).__name__}")
    return {name: _data(data) for name, data in variants.items()}


def _data(data: Any) -> Any:
    """A :class:`abstat.SampleSet` as its samples (or summary); anything else as given."""
    from abstat.readers.sampleset import SampleSet

    return data.comparison_data() if isinstance(data, SampleSet) else data


def run(spec: ExperimentSpec, *, on_event: EventSink | None = None) -> ExperimentResult:
    """Run the experiment ``spec`` describes, here or (``spec.lab``) on its hosts across boots.

    Every run is stored as it completes (``spec.store``, else ``$ABSTAT_STORE``,
    else ``./abstat.db``); ``on_event`` gets the progress
    (:mod:`abstat.engine.events`).  Returns the runs and how the experiment
    ended; a failing run or hook ends it with ``status == "failed"`` and
    ``error``.  Bad input raises :class:`abstat.UsageError` before anything runs.
    """
    return Engine(on_event=on_event or ignore).run(spec)


def stored_commands(experiment: str, *, store: str | None = None) -> list[str]:
    """What :func:`resume` of ``experiment`` would run and where, one line each: a store may have been
    imported or shared, so show these and check them before passing them to :func:`resume`."""
    from abstat.engine.stored import stored_commands as lines
    from abstat.engine.stored import stored_experiment
    from abstat.store import resolve_store_path

    stored = stored_experiment(resolve_store_path(store), experiment)
    if stored.spec is None:  # stored as a command line by an older abstat: says how to convert it
        stored.resumable(stored.store)
    assert stored.spec is not None
    return lines(stored.spec)


def resume(
    experiment: str,
    *,
    store: str | None = None,
    boot_timeout: float | None = None,
    approved: Sequence[str] | None = None,
    on_event: EventSink | None = None,
) -> ExperimentResult:
    """Continue a lab experiment from the specification stored with it; stored boots are not repeated.
    Nothing runs unless ``approved`` is the list :func:`stored_commands` returned (seen and checked):
    otherwise :class:`abstat.UsageError` names the stored commands."""
    return Engine(on_event=on_event or ignore).resume(
        experiment, store=store, boot_timeout=boot_timeout, approved=approved
    )


# --------------------------------------------------------------------------
# noise


@dataclass
class NoiseReport:
    """An A/A experiment and its analysis: one :class:`abstat.noise.MetricNoise` per metric."""

    experiment: str
    metrics: list[MetricNoise]
    result: ExperimentResult | None = None  # the runs, when they were made now
    warnings: list[Any] = field(default_factory=list)

    def metric(self, name: str) -> MetricNoise:
        return next(m for m in self.metrics if m.metric == name)


def noise_floor(
    command: str,
    *,
    runs: int = 40,
    warmup: int = 0,
    metrics: Sequence[str] = (),
    shell: bool = False,
    timeout: float | None = None,
    seed: int | None = None,
    host: str | None = None,
    experiment: str | None = None,
    store: str | None = None,
    confidence: float = 0.95,
    blocks: int | None = None,
    on_event: EventSink | None = None,
) -> NoiseReport:
    """Run ``command`` as two identical variants, interleaved (here, or on ``host``: ``NAME`` or
    ``LABEL=DESTINATION``), store them, and analyse this machine's noise floor
    (``metrics``: ``NAME=REGEX[:UNIT]`` the command prints)."""
    from abstat.engine import Host, Lab, Variant
    from abstat.engine.record import default_name
    from abstat.box.runner.sources import JsonLines, RegexMetric
    from abstat.store import open_store, resolve_store_path

    path = resolve_store_path(store)
    if experiment is None:
        with open_store(path) as opened:
            experiment = default_name(opened, "noise")
    label, _, destination = (host or "").partition("=")
    lab = Lab((Host(label, destination or label),)) if host else None
    spec = ExperimentSpec(
        (Variant("a", command), Variant("b", command)),
        runs=runs,
        warmup=warmup,
        seed=seed,
        shell=shell,
        timeout=timeout,
        experiment=experiment,
        lab=lab,
        store=path,
        metrics=(*(RegexMetric.parse(text) for text in metrics), JsonLines()),
    )
    result = run(spec, on_event=on_event)
    report = analyse_noise(
        experiment, store=path, host=label or None, confidence=confidence, blocks=blocks, seed=result.spec.seed or 0
    )
    report.result = result
    return report


def analyse_noise(
    experiment: str,
    *,
    store: str | None = None,
    host: str | None = None,
    metrics: Sequence[str] | None = None,
    confidence: float = 0.95,
    blocks: int | None = None,
    seed: int = 0,
) -> NoiseReport:
    """The noise analysis of a stored A/A experiment (of ``host``'s runs only, when given);
    ``confidence`` a fraction."""
    from abstat.comparison.commands import experiment_command_warnings
    from abstat.noise import analyse_experiment
    from abstat.store import open_store, resolve_store_path

    labels = {"host": host} if host else None
    with open_store(resolve_store_path(store), create=False) as opened:
        found = analyse_experiment(
            opened,
            experiment,
            metrics=list(metrics) if metrics else None,
            confidence=_fraction(confidence, "confidence"),
            blocks=blocks,
            seed=seed,
            labels=labels,
        )
        chosen = [i["id"] for i in opened.invocations(experiment) if i["labels"].get("host") == host] if host else None
        warnings = experiment_command_warnings(opened, experiment, chosen)
    return NoiseReport(experiment, found, warnings=list(warnings))


# --------------------------------------------------------------------------
# history and bisect


def analyse_history(
    experiment: str | None = None,
    *,
    store: str | None = None,
    inputs: Sequence[str] = (),
    metrics: Sequence[str] | None = None,
    where: dict[str, set[str]] | None = None,
    repo: str | None = ".",
    rev_label: str = "rev",
    label_columns: Sequence[str] | None = None,
    min_magnitude: float = 0.0,
    confidence: float = 0.95,
    **settings: Any,
) -> HistoryReport:
    """Change points of a benchmark across git revisions (``abstat history``): the report of
    :func:`abstat.history.analysis.analyse` for the runs of ``experiment`` in the store and/or the
    files ``inputs`` (``min_magnitude`` in percent of the level, ``confidence`` a fraction;
    ``settings``: the other fields of :class:`abstat.history.analysis.Settings`, e.g. ``max_pvalue``, ``min_segment``, ``drift``).
    No change-point record is read or written."""
    from abstat.history.analysis import Settings, analyse
    from abstat.history.load import load_history
    from abstat.store import resolve_store_path

    loaded = load_history(
        store_path=resolve_store_path(store) if experiment is not None else None,
        experiment=experiment,
        inputs=list(inputs),
        metrics=list(metrics) if metrics else None,
        where=where or {},
        repo=repo,
        rev_label=rev_label,
        label_columns=list(label_columns) if label_columns else None,
    )
    chosen = Settings(min_magnitude=min_magnitude / 100.0, confidence=_fraction(confidence, "confidence"), **settings)
    return analyse(loaded, chosen, {})[0]


def find_commit(
    good: str,
    bad: str,
    *,
    run: str,
    metric: str,
    repo: str = ".",
    build: str | None = None,
    budget: int = 400,
    confidence: float = 0.95,
    artifact: str | None = None,
    timeout: float | None = None,
    experiment: str | None = None,
    store: str | None = None,
    progress: Callable[[str], None] = lambda text: None,
) -> BisectReport:
    """Find the commit between ``good`` and ``bad`` that changed ``metric`` (a built-in one such as
    ``wall``, or ``NAME=REGEX`` the benchmark prints): the :class:`abstat.history.bisect.driver.Report`;
    ``confidence`` a fraction."""
    from abstat.history.bisect.driver import Config, run_bisect
    from abstat.box.runner import BUILTIN_METRICS
    from abstat.box.runner.sources import RegexMetric
    from abstat.store import open_store, resolve_store_path

    name, spec = (metric, None) if metric in BUILTIN_METRICS else (RegexMetric.parse(metric).name, metric)
    config = Config(
        repo=repo,
        good=good,
        bad=bad,
        run=run,
        metric=name,
        metric_spec=spec,
        build=build,
        budget=budget,
        confidence=_fraction(confidence, "confidence"),
        artifact=artifact,
        timeout=timeout,
    )
    with open_store(resolve_store_path(store)) as opened:
        return run_bisect(config, opened, experiment, ["abstat.history.bisect", good, bad], progress)


# --------------------------------------------------------------------------
# doctor


def check_machine(
    only: Sequence[str] | None = None,
    *,
    cpus: Sequence[int] | None = None,
    interval: float = 0.5,
    perf: bool = True,
    root: str = "",
) -> list[Finding]:
    """This machine's noise sources: one :class:`abstat.box.doctor.Finding` per check (or those ``only`` names);
    ``root``: read /proc and /sys under this directory instead (a copy of another machine's)."""
    from abstat.box.doctor import Context, run_checks
    from abstat.box.runner.perf import counters_probe

    context = Context(
        root,
        cpus=list(cpus) if cpus is not None else None,
        interval=interval,
        probe_counters=counters_probe if perf and not root else None,
    )
    return run_checks(context, only)


@dataclass
class HostFindings:
    host: str  # the host's label
    destination: str
    findings: list[Finding] | None  # None when it could not be checked
    error: str | None = None


def check_hosts(
    hosts: Sequence[Any],
    *,
    only: Sequence[str] | None = None,
    cpus: Sequence[int] | None = None,
    interval: float = 0.5,
    perf: bool = True,
    timeout: float = 30.0,
    root: str = "",
) -> list[HostFindings]:
    """The same checks on each test box (``NAME``, ``LABEL=DESTINATION`` or a :class:`~abstat.engine.Host`)
    over ssh, in parallel; a host that cannot be checked has its one-line ``error``."""
    from abstat.box.doctor import STATUSES, Finding
    from abstat.engine import Host
    from abstat.lab.protocol import ProtocolError, decode_findings
    from abstat.lab.query import ask_hosts

    boxes = [
        h if isinstance(h, Host) else Host(h.partition("=")[0], h.partition("=")[2] or h.partition("=")[0])
        for h in hosts
    ]
    options = {
        "root": root,
        "cpus": list(cpus) if cpus is not None else None,
        "interval": interval,
        "only": list(only) if only else None,
        "no_perf": not perf,
    }
    found = []
    for answer in ask_hosts(boxes, {"doctor": options}, timeout=timeout):
        findings, error = None, answer.error
        if error is None:
            try:
                findings = [
                    Finding(item["name"], item["status"], item["evidence"], item["fix"])
                    for item in decode_findings(answer.answer, tuple(STATUSES))
                ]
            except ProtocolError as err:
                error = f"the host sent an invalid answer: {err}"
        found.append(HostFindings(answer.host.label, answer.host.destination, findings, error))
    return found
