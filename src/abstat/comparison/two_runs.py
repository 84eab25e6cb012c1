"""Two runs a variant (README's cycle recipe, ``abstat run -n 2``): not judged when they differ.

Two run centres cannot estimate the run-to-run variation, so the store compares a variant of two process runs
on its samples (:func:`abstat.readers.run_units.replicates`), which reads them as independent.  That holds when
the runs do not differ by more than their samples do; with a per-process offset (address-space layout, page
placement) the pooled samples read the offset as the change: A/A comparisons of 2 runs x 49 TSC samples a side
with a 2% per-process offset were called significant 70% of the time (docs/statistics.md, "Two runs a
variant").  So the store pools two runs only when they agree (:func:`abstat.readers.run_units.two_runs_differ`)
and keeps them as runs otherwise; a comparison of at most two runs a side whose two runs differ says it cannot
be judged (:func:`reason`), whichever side's runs (or boots) they are."""

from __future__ import annotations

from typing import Any

from abstat.readers.run_units import DISAGREE_P, two_runs_p


def reason(bx: list[Any], by: list[Any], names: tuple[str, str]) -> str:
    """Why runs of at most two a side are not judged: the variants whose two runs differ ('' if none)."""
    if max(len(bx), len(by)) > 2:
        return ""
    found = [(name, two_runs_p(runs)) for name, runs in zip(names, (bx, by), strict=True) if len(runs) == 2]
    differ = [f"{name} (Brunner-Munzel p = {p:.2g})" for name, p in found if p is not None and p < DISAGREE_P]
    if not differ:
        return ""
    return (
        f"the 2 runs of {' and of '.join(differ)} differ by more than their samples do: a run-to-run "
        "variation larger than the samples' noise, which two runs a variant cannot estimate, so their samples "
        "are not pooled; make 5 or more runs a variant"
    )
