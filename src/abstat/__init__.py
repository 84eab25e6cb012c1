"""abstat: prove or refute performance claims.

The public API (docs/api.md shows each part with an example):

- experiments: :func:`run` an :class:`ExperimentSpec` here or on test boxes
  (made of :class:`Variant`, :class:`Hooks`, the metric sources :class:`RegexMetric`,
  :class:`JsonLines` and :class:`Perf`, a :class:`Lab` of :class:`Host` and an
  :class:`Analysis`), :func:`resume` a lab experiment, or drive an :class:`Engine`
  with events;
- this machine and the boxes: :func:`noise_floor`, :func:`analyse_noise`,
  :func:`check_machine` (the doctor's checks), :func:`check_hosts`;
- revisions: :func:`analyse_history`, :func:`find_commit` (bisection);
- statistics: :func:`compare`, :func:`compare_many`, :func:`plan` (confidence and
  power as fractions: 0.95, 0.8), :func:`load_sample_sets` / :func:`iter_sample_sets`
  (one :class:`SampleSet` model) / :func:`build_report` / :func:`render_report_as`,
  :func:`audit_text`, :func:`audit_file`; the store: :func:`open_store`.
  Every error abstat raises on bad input is an :class:`AbstatError`.

It is imported lazily so that ``import abstat`` stays cheap; numpy and scipy
load only when a statistic is computed.
"""

__version__ = "0.1.0"

# public name -> (module, attribute); filled in as features land.
_LAZY: dict[str, tuple[str, str]] = {
    "AbstatError": ("abstat.errors", "AbstatError"),
    "InputError": ("abstat.errors", "InputError"),
    "UsageError": ("abstat.errors", "UsageError"),
    "SpecError": ("abstat.engine.parts", "SpecError"),
    "run": ("abstat.api", "run"),
    "resume": ("abstat.api", "resume"),
    "stored_commands": ("abstat.api", "stored_commands"),
    "noise_floor": ("abstat.api", "noise_floor"),
    "analyse_noise": ("abstat.api", "analyse_noise"),
    "NoiseReport": ("abstat.api", "NoiseReport"),
    "analyse_history": ("abstat.api", "analyse_history"),
    "find_commit": ("abstat.api", "find_commit"),
    "check_machine": ("abstat.api", "check_machine"),
    "check_hosts": ("abstat.api", "check_hosts"),
    "HostFindings": ("abstat.api", "HostFindings"),
    "Engine": ("abstat.engine", "Engine"),
    "ExperimentResult": ("abstat.engine.record", "ExperimentResult"),
    "ExperimentSpec": ("abstat.engine.spec", "ExperimentSpec"),
    "Variant": ("abstat.engine.parts", "Variant"),
    "Hooks": ("abstat.engine.parts", "Hooks"),
    "Host": ("abstat.engine.parts", "Host"),
    "Lab": ("abstat.engine.parts", "Lab"),
    "Analysis": ("abstat.engine.parts", "Analysis"),
    "RegexMetric": ("abstat.box.runner.sources", "RegexMetric"),
    "JsonLines": ("abstat.box.runner.sources", "JsonLines"),
    "Perf": ("abstat.box.runner.sources", "Perf"),
    "compare": ("abstat.api", "compare"),
    "compare_many": ("abstat.api", "compare_many"),
    "Comparison": ("abstat.comparison", "Comparison"),
    "Summary": ("abstat.readers.summary", "Summary"),
    "audit_text": ("abstat.audit", "audit_text"),
    "audit_file": ("abstat.audit", "audit_file"),
    "plan": ("abstat.api", "plan"),
    "SampleSet": ("abstat.readers.sampleset", "SampleSet"),
    "load_sample_sets": ("abstat.report.api", "load"),
    "build_report": ("abstat.report.api", "build"),
    "render_report_as": ("abstat.report.api", "render"),
    "run_experiment": ("abstat.box.runner", "run_experiment"),
    "ExperimentPlan": ("abstat.box.runner", "ExperimentPlan"),
    "open_store": ("abstat.store", "open_store"),
    "resolve_variant": ("abstat.store", "resolve_variant"),
    "iter_sample_sets": ("abstat.store", "iter_sample_sets"),
    "machine_record": ("abstat.box.machine", "collect"),
    "read_samples": ("abstat.readers.text", "read_samples"),
    "read_ministat": ("abstat.readers.text", "read_ministat"),
    "describe": ("abstat.stats.descriptive", "describe"),
    "t_critical": ("abstat.stats.student", "t_critical"),
    "pooled_t": ("abstat.stats.student", "pooled_t"),
    "ministat_report": ("abstat.ministat", "render_report"),
}

__all__ = ["__version__", *_LAZY]


def __getattr__(name: str):
    try:
        module_name, attr = _LAZY[name]
    except KeyError:
        raise AttributeError(f"module 'abstat' has no attribute {name!r}") from None
    module = __import__(module_name, fromlist=[attr])
    value = getattr(module, attr)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))
