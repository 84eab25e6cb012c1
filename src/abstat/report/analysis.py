"""The one analysis path from sample sets to the comparisons a table shows.

``compare`` (one or more candidates), ``run``'s end report and ``show``
(metrics x candidates) and ``report`` (cells of a table) all go through it:

1. :func:`abstat.comparison.compare` per candidate (the statistics);
2. :func:`abstat.report.centres.agree`: the centres printed, the medians of
   exactly the samples compared, checked against the change;
3. :func:`abstat.report.adjust.adjust_family`: the family's rule (Holm) over
   every comparison shown together.
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from abstat.report.adjust import adjust_family
from abstat.report.centres import agree


def analyse(data: Mapping[str, Any], *, baseline: str | None = None, adjust: str | None = "holm",
            **options: Any) -> list[Any]:
    """Every variant of ``data`` (name -> samples, runs, Summary or VariantData) compared with
    ``baseline`` (the first by default), centres agreed, and adjusted as one family (``adjust=None``:
    not yet; the caller adjusts a larger family with :func:`abstat.report.adjust.adjust_sections`)."""
    from abstat.comparison import compare_many

    comparisons = [agree(c, data[c.baseline], data[c.candidate]) if c.baseline in data and c.candidate in data else c
                   for c in compare_many(data, baseline=baseline, **options)]
    return adjust_family(comparisons, adjust) if adjust else comparisons
