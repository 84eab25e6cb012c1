"""The one analysis path from sample sets to the comparisons a table shows.

``compare`` (a one-row report: :func:`abstat.report.matrix.build_report`), ``run``'s end report and
``show`` (metrics x candidates) and ``report`` (cells of a table) all go through it:

1. :func:`compare_pair`: :func:`abstat.comparison.compare` of one candidate with its baseline (the
   statistics, and the centres every format prints: the medians of exactly the samples compared,
   checked against the change, :func:`abstat.comparison.centres.agree`; ``abstat.compare`` returns
   the same);
2. :func:`abstat.report.adjust.adjust_family`: the family's rule (Holm) over every comparison shown
   together.

How they are judged is decided here too, once for every command ("one result, one story"):
:func:`higher_is_better` is the direction of a metric (named in ``--higher-is-better``, else higher when
its unit ends in ``/s``), and :func:`stored_judging` the analysis ``abstat run`` stored with an experiment
(its spec's ``analysis``: baseline, confidence, higher-is-better metrics, threshold), which every command that reads
the experiment from a store judges it by unless its flags say otherwise (:meth:`Judging.over`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from abstat.errors import UsageError
from abstat.fastdataclass import dataclass  # start-up: its methods compiled only when used (issue 42)
from abstat.report.adjust import adjust_family


def compare_pair(baseline: Any, candidate: Any, *, names: tuple[str, str], **options: Any) -> Any:
    """``candidate`` compared with ``baseline`` (what :func:`abstat.compare` takes and gives: with the
    centres every format prints, :func:`abstat.comparison.centres.agree`)."""
    from abstat.comparison import compare

    return compare(baseline, candidate, names=names, **options)  # (beyond the float range: cannot judge, in core)


def analyse(
    data: Mapping[str, Any], *, baseline: str | None = None, adjust: str | None = "holm", **options: Any
) -> list[Any]:
    """Every variant of ``data`` (name -> samples, runs or Summary) compared with ``baseline`` (the first
    by default) and adjusted as one family (``adjust=None``: not yet; the caller adjusts
    a larger family with :func:`abstat.report.adjust.adjust_sections`)."""
    names = list(data)
    if len(names) < 2:
        raise UsageError("need at least two variants to compare")
    base = names[0] if baseline is None else baseline
    if base not in data:
        raise UsageError(f"no variant named {base!r} (have: {', '.join(names)})")
    from abstat.stats.tie_cells import shown_together

    comparisons = shown_together(  # (the baseline's ties read one way in every comparison: its centre is one)
        lambda: [compare_pair(data[base], data[name], names=(base, name), **options) for name in names if name != base]
    )
    return adjust_family(comparisons, adjust) if adjust else comparisons


def common_unit_data(x: Any, y: Any, names: tuple[str, str]) -> tuple[list[Any], list[Any]]:
    """What compare takes of a pair of sample sets, both sides at one replicated unit when the store says
    what their run groups are (boots against one invocation's runs: :func:`abstat.store.run_groups.common_unit`),
    and the warnings that say so."""
    data = [x.comparison_data(), y.comparison_data()]
    if not (x.invocations and y.invocations) or x.summary is not None or y.summary is not None:
        return data, []
    from abstat.stats.warnings import StatWarning
    from abstat.store.run_groups import common_unit

    found = _separate(x.invocations, y.invocations, names)
    groups, notes = common_unit([(name, s.runs, s.invocations) for name, s in zip(names, (x, y), strict=True)])
    if not notes:
        return data, found
    data = [runs[0] if len(runs) == 1 else runs for runs in groups]
    return data, [StatWarning("unit-mismatch", text, name) for name, text in notes] + found


def _separate(x: Sequence[int], y: Sequence[int], names: tuple[str, str]) -> list[Any]:
    """A warning when each side is one ``abstat run`` invocation and not the same one: the two were measured
    at different times, so what changed between the runs is read as the change (newcomer22 #2: a cell measured
    while the machine was busy, -60% starred for an identical command; docs/ci.md's one job against one)."""
    if len(set(x)) != 1 or len(set(y)) != 1 or x[0] == y[0]:
        return []
    from abstat.stats.warnings import StatWarning

    text = (
        f"{names[1]} vs {names[0]}: each measured in one abstat run of its own (invocations {x[0]} and {y[0]}), "
        "not interleaved: the run-to-run shift is not measured"
    )
    return [StatWarning("separate-invocations", text, names[1])]


def higher_is_better(
    metric: str | None, unit: str | None, chosen: Iterable[str] | bool, lower: Iterable[str] = ()
) -> bool:
    """Whether larger values are better for ``metric``: not if named in ``--lower-is-better METRIC[,METRIC]``
    (``lower``: an error rate in a unit ending in ``/s``, or a stored --higher-is-better taken back), else if
    named in ``--higher-is-better``; else not if ``all`` is lower-is-better, else if ``all`` is higher-is-better;
    else a unit ending in ``/s`` (a throughput).  A metric's own name beats ``all`` (``--lower-is-better all
    --higher-is-better t``: every metric but t lower-is-better; attack23 #10a).  ``chosen=True`` is ``all``."""
    higher = () if isinstance(chosen, bool) else metric_names(chosen)
    lowered = metric_names(lower)
    if metric is not None and metric in lowered:
        return False
    if metric is not None and metric in higher:
        return True
    if "all" in lowered:
        return False
    if chosen is True or "all" in higher:
        return True
    return bool(unit and unit.endswith("/s"))


def metric_names(items: Iterable[str]) -> list[str]:
    """The metric names of repeatable ``METRIC[,METRIC]`` options, each once, in order."""
    return list(dict.fromkeys(name.strip() for item in items for name in item.split(",") if name.strip()))


def is_exact(*sets: Any) -> bool:
    """Whether every sample set is of a unit declared exact (and holds samples): then
    :func:`abstat.report.exact.exact_comparison` compares them."""
    return all(s.extra.get("assume") == "exact" and s.summary is None and s.values for s in sets)


MAX_CONFIDENCE = 99.99  # percent, as the command line's -c (cli/args/values.py): a stored level beyond is not used
MAX_STORED_NAMES = 1000  # higher-is-better metrics read from a stored analysis (the spec's own limit is lower)
MAX_NAME_CHARS = 4096
NEWEST_READ = 20  # invocations looked at, newest first, for a stored analysis


@dataclass(frozen=True)
class Judging:
    """How an experiment's comparisons are judged: the baseline variant (None: the first), the confidence in
    percent (None: 95), the metrics where higher is better (besides units ending in ``/s``), those where
    lower is better (whatever their unit) and the practical threshold in percent (None: none, as
    ``--threshold``)."""

    baseline: str | None = None
    confidence: float | None = None
    higher_is_better: tuple[str, ...] = ()
    lower_is_better: tuple[str, ...] = ()
    threshold: float | None = None
    disputed: tuple[str, ...] = ()  # metrics whose direction the experiments' stored analyses disagree on

    def over(
        self,
        *,
        baseline: str | None = None,
        confidence: float | None = None,
        higher_is_better: Iterable[str] = (),
        lower_is_better: Iterable[str] = (),
        threshold: float | None = None,
    ) -> Judging:
        """These settings with the flags given instead (None: not given); a metric a flag names takes that
        direction, whichever the stored analysis gave it (a flag's ``all``: every stored name of the other
        direction dropped)."""
        higher, lower = metric_names(higher_is_better), metric_names(lower_is_better)
        both = [name for name in higher if name in lower]
        unsettled = [name for name in self.disputed if not {name, "all"} & {*higher, *lower}]
        if unsettled:
            raise UsageError(
                f"the experiments compared were run with different directions for {unsettled[0]!r} "
                "(named higher- or lower-is-better in one, not in another): say which with "
                "{higher_is_better} or {lower_is_better}",
                fields=["higher_is_better", "lower_is_better"],
            )
        if both:
            raise UsageError(
                f"{{higher_is_better}} and {{lower_is_better}} both name {both[0]!r}",
                fields=["higher_is_better", "lower_is_better"],
            )
        return Judging(
            self.baseline if baseline is None else baseline,
            self.confidence if confidence is None else confidence,
            tuple(dict.fromkeys([*_kept(self.higher_is_better, lower), *higher])),
            tuple(dict.fromkeys([*_kept(self.lower_is_better, higher), *lower])),
            threshold=self.threshold if threshold is None else threshold,
        )

    @property
    def percent(self) -> float:
        """The confidence in percent (95 when neither stored nor given)."""
        return 95.0 if self.confidence is None else self.confidence


def _kept(stored: Iterable[str], opposite: list[str]) -> list[str]:
    """The stored metric names a flag of the opposite direction leaves (it names them, or ``all``)."""
    return [] if "all" in opposite else [name for name in metric_names(stored) if name not in opposite]


def stored_judging(store: Any, experiments: Iterable[str]) -> Judging:
    """The analysis ``abstat run`` stored with ``experiments`` (the newest invocation's spec that has one):
    the baseline, confidence and threshold where every experiment stored the same; the metrics named
    higher- or lower-is-better by every experiment, and those some name and others do not as ``disputed``
    (:meth:`Judging.over` refuses them unless a flag names them: an experiment, e.g. a fork's artifact imported
    beside a trusted baseline, cannot turn a metric's direction for all, attack22 A13).  An experiment stored
    without an analysis (by an older abstat, ``bisect``'s runs, damaged settings) names no metric: a direction
    another names is disputed, not taken (attack23 #6: else a fork's stored one ruled beside such a baseline).
    Read as untrusted: a field of the wrong type or range is left out."""
    stored = [_stored(store, name) for name in dict.fromkeys(experiments)]
    found = [judging or Judging() for judging in stored]
    baselines = {judging.baseline for judging in found}
    levels = {judging.confidence for judging in found}
    thresholds = {judging.threshold for judging in found}
    higher, higher_disputed = _agreed(found, "higher_is_better")
    lower, lower_disputed = _agreed(found, "lower_is_better")
    return Judging(
        baselines.pop() if len(baselines) == 1 else None,
        levels.pop() if len(levels) == 1 else None,
        higher,
        lower,
        threshold=thresholds.pop() if len(thresholds) == 1 else None,
        disputed=tuple(dict.fromkeys([*higher_disputed, *lower_disputed])),
    )


def _agreed(found: list[Judging], field: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The metric names every analysis in ``found`` gives ``field``, and those only some give."""
    named = [metric_names(getattr(judging, field)) for judging in found]
    every = [name for name in dict.fromkeys(n for names in named for n in names) if all(name in n for n in named)]
    some = [name for names in named for name in names if name not in every]
    return tuple(every), tuple(dict.fromkeys(some))


def judging_of_sets(store_path: str | None, sets: Iterable[Any], by: str = "variant") -> Judging:
    """:func:`stored_judging` of the experiments stored sample sets were read from (their ``experiment``
    label); its baseline only when the sets are compared by variant and one of them is that variant."""
    sets = list(sets)
    experiments = sorted({s.labels["experiment"] for s in sets if "experiment" in s.labels})
    if not experiments:
        return Judging()
    from abstat.store import open_store, resolve_store_path

    with open_store(resolve_store_path(store_path), create=False) as store:
        found = stored_judging(store, experiments)
    if by != "variant" or not any(s.labels.get("variant") == found.baseline for s in sets):
        found = Judging(
            None, found.confidence, found.higher_is_better, found.lower_is_better, found.threshold, found.disputed
        )
    return found


def _stored(store: Any, experiment: str) -> Judging | None:
    for count, settings in enumerate(store.settings_newest_first(experiment)):
        spec = settings.get("spec") if isinstance(settings, dict) else None
        analysis = spec.get("analysis") if isinstance(spec, dict) else None
        if isinstance(analysis, dict):
            return _checked(analysis)
        if count + 1 >= NEWEST_READ:
            break
    return None


def _checked(analysis: dict[str, Any]) -> Judging:
    baseline, level, names = analysis.get("baseline"), analysis.get("confidence"), analysis.get("higher_is_better")
    if not isinstance(baseline, str) or not 0 < len(baseline) <= MAX_NAME_CHARS:
        baseline = None
    if isinstance(level, bool) or not isinstance(level, (int, float)) or not 50 <= level <= MAX_CONFIDENCE:
        level = None
    higher, lower = _names(names), _names(analysis.get("lower_is_better"))
    level = None if level is None else float(level)
    return Judging(baseline, level, higher, lower, threshold=_threshold(analysis.get("threshold")))


def _names(names: Any) -> tuple[str, ...]:
    """A stored list of metric names, as untrusted data: nothing unless a list, and only its names."""
    if not isinstance(names, list) or len(names) > MAX_STORED_NAMES:
        return ()
    return tuple(n for n in names if isinstance(n, str) and 0 < len(n) <= MAX_NAME_CHARS)


def _threshold(value: Any) -> float | None:
    """A stored threshold: a percentage from 0 to below 100, as the spec's ``analysis.threshold`` (else None)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value < 100:
        return None
    return float(value)
