"""Stop when decided: ``abstat run --until-decided``, a group-sequential design over the default comparison.

A fixed design runs n and judges once.  This one looks at the data at a few
planned sample sizes (:meth:`SequentialDesign.looks`: from ``min_runs``,
each look 1.5 times the last, the last at ``max_runs``) and stops as soon as
every candidate's verdict is settled:

- **a difference** (faster, slower) when the default comparison at the
  look's level with the threshold calls it so, as ``compare --threshold``
  does: significant and the estimate beyond +-threshold (a proven change
  within the threshold does not matter: it settles nothing);
- **equivalent within the threshold** when its interval at twice that
  level (the two one-sided tests) lies inside +-threshold;
- **undecided at the maximum** otherwise, at ``max_runs``.

Looking several times spends the error rate several times; so each look
gets only its share (alpha spending, Lan & DeMets 1983, with the power
family ``alpha * t**rho`` of the information fraction ``t = n / max_runs``):
the shares add up to ``alpha``, and split again over the candidates
(Bonferroni), so that the chance of calling any difference where there is
none, or equivalence where the change is at the threshold, stays at most
``alpha`` whatever the looks' dependence.  ``rho = 2`` spends little early
(a 3x difference is still settled at the second or third look) and keeps
about 60% of ``alpha`` for the last look.  A look whose level is below the
smallest p-value the rank test can reach at its sizes (``2 / C(n_a + n_b,
n_a)``), or, where the reference is drawn, below the smallest p-value its
draws resolve (``1 / (DRAWS_MAX + 1)``, :func:`smallest_level`), is skipped:
it could settle nothing (with 1000 runs at most and one candidate: the looks
at 12 and 18 runs per variant, levels 4e-6 and 9e-6).  ``benchmarks/sequential.py`` measures all of it through
:meth:`SequentialDesign.decide`, the code ``abstat run`` calls.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

GROWTH = 1.5
RHO = 2.0


@dataclass(frozen=True)
class Settled:
    """One candidate's settled verdict: ``verdict`` as the comparison words it (``faster``, ``slower``)
    or ``equivalent``; the change and interval at the look that settled it."""

    candidate: str
    verdict: str
    runs: int
    delta_pct: float
    ci_pct: tuple[float, float]
    level: float


@dataclass
class SequentialState:
    """Where a sequential experiment stands: the candidates settled so far, and why it stops (None: go on)."""

    settled: dict[str, Settled] = field(default_factory=dict)
    stop_reason: str | None = None


@dataclass(frozen=True)
class SequentialDesign:
    """The looks and levels of a sequential experiment (see the module's documentation)."""

    min_runs: int = 5
    max_runs: int = 100
    threshold_pct: float = 2.0
    alpha: float = 0.05
    rho: float = RHO
    growth: float = GROWTH

    def __post_init__(self) -> None:
        if not 2 <= self.min_runs <= self.max_runs:
            raise ValueError(f"min_runs must be 2 to max_runs ({self.max_runs}), not {self.min_runs}")
        if not (self.threshold_pct > 0 and math.isfinite(self.threshold_pct)):
            raise ValueError("threshold_pct must be a positive percentage")
        if not 0 < self.alpha < 0.5:
            raise ValueError("alpha must be between 0 and 0.5")

    def looks(self) -> list[int]:
        """The runs per variant at which the data are judged, increasing, the last ``max_runs``."""
        looks = [self.min_runs]
        while looks[-1] < self.max_runs:
            step = max(looks[-1] + 1, math.ceil(looks[-1] * self.growth))
            if self.max_runs - step < (step - looks[-1]) / 2:  # no last step too small to spend much on
                step = self.max_runs
            looks.append(min(self.max_runs, step))
        return looks

    def spent(self, runs: int) -> float:
        """The error rate spent by the look at ``runs`` per variant (all looks before it included)."""
        return self.alpha * min(1.0, runs / self.max_runs) ** self.rho

    def level(self, runs: int, candidates: int = 1) -> float:
        """The two-sided level of the look at ``runs``: its share of the spending, split over the candidates."""
        looks = self.looks()
        if runs not in looks:
            raise ValueError(f"{runs} is not a look of this design ({looks})")
        previous = looks[looks.index(runs) - 1] if looks.index(runs) else 0
        return (self.spent(runs) - (self.spent(previous) if previous else 0.0)) / max(1, candidates)

    def decide(
        self,
        samples: Mapping[str, Any],
        baseline: str,
        runs: int,
        state: SequentialState | None = None,
        *,
        higher_is_better: bool = False,
    ) -> SequentialState:
        """Judge the look at ``runs`` per variant: ``samples`` maps each variant to its values so far, or its runs
        (sequences of values: runs are then the unit, as ``abstat.compare`` takes them).  Returns
        ``state`` (new when None) with the candidates settled at this look added, and ``stop_reason`` set
        when every candidate is settled or this is the last look."""
        from abstat.comparison.core import compare

        state = state if state is not None else SequentialState()
        candidates = [name for name in samples if name != baseline]
        level = self.level(runs, len(candidates))
        for name in candidates:
            if name in state.settled or level < smallest_level(len(samples[baseline]), len(samples[name])):
                continue
            settled = self._judge(compare, samples[baseline], samples[name], name, runs, level, higher_is_better)
            if settled is not None:
                state.settled[name] = settled
        if len(state.settled) == len(candidates):
            state.stop_reason = f"stopped early at {runs} of at most {self.max_runs} runs per variant: " + "; ".join(
                _said(s, self.alpha) for s in state.settled.values()
            )
            if runs == self.max_runs:
                state.stop_reason = state.stop_reason.replace("stopped early at", "settled at")
        elif runs >= self.max_runs:
            open_ones = [name for name in candidates if name not in state.settled]
            state.stop_reason = (
                f"undecided at the maximum of {self.max_runs} runs per variant: "
                f"{', '.join(open_ones)} (neither a difference beyond nor equivalence within "
                f"+-{self.threshold_pct:g}% at the spent error rate)"
            )
        return state

    def _judge(self, compare, base, cand, name: str, runs: int, level: float, higher_is_better: bool) -> Settled | None:
        tost = compare(base, cand, confidence=1 - 2 * level, higher_is_better=higher_is_better)
        if tost.ci_pct is not None and -self.threshold_pct < tost.ci_pct[0] and tost.ci_pct[1] < self.threshold_pct:
            return Settled(name, "equivalent", runs, tost.delta_pct, (tost.ci_pct[0], tost.ci_pct[1]), 2 * level)
        two_sided = compare(
            base, cand, confidence=1 - level, threshold=self.threshold_pct, higher_is_better=higher_is_better
        )
        ci = two_sided.ci_pct
        if ci is not None and two_sided.verdict in ("faster", "slower"):  # compare --threshold's words at this level
            return Settled(name, two_sided.verdict, runs, two_sided.delta_pct, (ci[0], ci[1]), level)
        return None


def smallest_p(n_a: int, n_b: int) -> float:
    """The smallest two-sided p-value a rank test can give at these sizes: 2 / C(n_a + n_b, n_a)."""
    log_count = math.lgamma(n_a + n_b + 1) - math.lgamma(n_a + 1) - math.lgamma(n_b + 1)
    return min(1.0, 2.0 * math.exp(-log_count))


def smallest_level(n_a: int, n_b: int) -> float:
    """The smallest level a look at these sizes can settle anything at: :func:`smallest_p`, and where the
    permutation reference is drawn (more than :data:`~abstat.stats.permutation.EXACT` arrangements) the
    smallest p-value its draws resolve, ``1 / (DRAWS_MAX + 1)`` (below it the draws are capped and the test
    rejects nothing: attack22 A2)."""
    from abstat.stats.permutation import DRAWS_MAX, EXACT

    log_count = math.lgamma(n_a + n_b + 1) - math.lgamma(n_a + 1) - math.lgamma(n_b + 1)
    floor = smallest_p(n_a, n_b)
    return max(floor, 1.0 / (DRAWS_MAX + 1.0)) if log_count > math.log(EXACT) else floor


def _said(settled: Settled, alpha: float) -> str:
    """A settled candidate as the note tells it: the estimate the end table prints (the same comparison of the
    same runs), and the interval at the look's own level, which it names beside the table's (attack23 #10d: the
    note's pooled samples and unnamed level told another story than the table)."""
    low, high = settled.ci_pct
    return (
        f"{settled.candidate} {settled.verdict} ({settled.delta_pct:+.3g}% [{low:+.3g}, {high:+.3g}]: "
        f"a {_percent(1 - settled.level)} interval, the look's level {settled.level:.2g}; the table's "
        f"intervals are {_percent(1 - alpha)})"
    )


def _percent(fraction: float) -> str:
    """``99.44%``: a confidence with the digits that tell it from 100%."""
    text = f"{100 * fraction:.4g}"
    return f"{text}%" if text != "100" else f"{100 * fraction:.6g}%"
