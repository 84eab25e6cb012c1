"""The one analysis path from sample sets to the comparisons a table shows.

``compare`` (a one-row report: :func:`abstat.report.matrix.build_report`), ``run``'s end report and
``show`` (metrics x candidates) and ``report`` (cells of a table) all go through it:

1. :func:`compare_pair`: :func:`abstat.comparison.compare` of one candidate with its baseline (the
   statistics, and the centres every format prints: the medians of exactly the samples compared,
   checked against the change, :func:`abstat.comparison.centres.agree`; ``abstat.compare`` returns
   the same);
2. :func:`abstat.report.adjust.adjust_family`: the family's rule (Holm) over every comparison shown
   together.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from abstat.errors import UsageError
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

    groups, notes = common_unit([(name, s.runs, s.invocations) for name, s in zip(names, (x, y), strict=True)])
    if not notes:
        return data, []
    data = [runs[0] if len(runs) == 1 else runs for runs in groups]
    return data, [StatWarning("unit-mismatch", text, name) for name, text in notes]


def higher_is_better(metric: str | None, unit: str | None, chosen: Iterable[str] | bool) -> bool:
    """Whether larger values are better for ``metric``: named (or ``all``) in
    ``--higher-is-better METRIC[,METRIC]``, else a unit ending in ``/s`` (a
    throughput).  ``chosen=True`` is ``all``."""
    if chosen is True:
        return True
    named = set() if chosen is False else {name.strip() for item in chosen for name in item.split(",") if name.strip()}
    if "all" in named or (metric is not None and metric in named):
        return True
    return bool(unit and unit.endswith("/s"))


def is_exact(*sets: Any) -> bool:
    """Whether every sample set is of a unit declared exact (and holds samples): then
    :func:`abstat.report.exact.exact_comparison` compares them."""
    return all(s.extra.get("assume") == "exact" and s.summary is None and s.values for s in sets)
