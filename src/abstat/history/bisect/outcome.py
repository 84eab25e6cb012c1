"""What a bisection's search asks for next and what it concluded (library code, no I/O).

:class:`Batch`: runs to do; :class:`Outcome`: the answer (:mod:`abstat.history.bisect.search` produces both).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from abstat.stats.warnings import StatWarning

if TYPE_CHECKING:
    from abstat.comparison.model import Comparison


@dataclass
class Batch:
    """Runs to do, in this order: commit indices (0 = good reference, N = bad reference)."""

    commits: list[int]
    test: int | None  # the commit under test (None for a reference-only batch)


@dataclass
class Outcome:
    status: str  # found | inconclusive | no-change | untestable
    culprit: int | None
    probability: float
    candidates: list[tuple[int, float]]  # most probable first
    runs: int
    # bad against good as ``abstat compare GOOD BAD`` gives it on the references' runs (:func:`change`)
    change: Comparison | None = None
    reference_p: float | None = None  # the search's gate: Brunner-Munzel between the references
    notes: list[StatWarning] = field(default_factory=list)  # codes: ends-not-different, untestable
    intermediate: int | None = None  # status "several": a tested commit measuring unlike both ends
    steps: list[Outcome] = field(default_factory=list)  # status "several": the steps isolated
    # status "several": the parts (good end, bad end) in which a change lies that no step names, with how they ended
    unresolved: list[tuple[int, int, str]] = field(default_factory=list)


def conclude(search: Any, status: str) -> Outcome:
    """The outcome of ``search`` (a :class:`abstat.history.bisect.search.Search`) ending with ``status``."""
    import numpy as np

    good, bad = search._references()
    posterior = search.posterior() if good and bad else np.full(search.n, 1.0 / search.n)
    order = np.argsort(-posterior)
    candidates = [(int(i) + 1, float(posterior[i])) for i in order[:8] if posterior[i] > 0.001]
    result = Outcome(
        status=status, culprit=None, probability=float(posterior[order[0]]), candidates=candidates, runs=search.runs
    )
    if status == "found":
        result.culprit = int(order[0]) + 1
    if status == "several":
        result.intermediate = search.intermediate()
    if len(good) >= 2 and len(bad) >= 2:
        result.change = change(good, bad, search.unit, search.confidence)
        result.reference_p = search.reference_p()
    if status == "inconclusive" and result.reference_p is not None and not search.gated:
        result.candidates = []
        result.notes.append(
            StatWarning(
                "ends-not-different",
                f"the good and bad revisions do not differ so far ({len(good)} and {len(bad)} "
                f"runs, Brunner-Munzel p={result.reference_p:.2g}): the budget ran out before a search could start",
            )
        )
    if status == "untestable":
        result.notes.append(
            StatWarning("untestable", "the remaining candidates cannot be told apart: their neighbours did not build")
        )
    return result


def change(good: list[float], bad: list[float], unit: float | None, confidence: float) -> Comparison:
    """The change from the ``good`` runs to the ``bad`` ones (in the search's ``unit``) as ``abstat compare GOOD BAD
    -c CONFIDENCE`` gives it: the library's one comparison (:func:`abstat.comparison.core.compare`, its estimand,
    interval, p-value and label) of the runs' values, restored exactly (the unit is a power of two)."""
    from abstat.comparison.core import compare

    scale = unit or 1.0
    return compare([v * scale for v in good], [v * scale for v in bad], confidence=confidence, names=("good", "bad"))
