"""More than one change in the range: bisect each part between levels (library code, no I/O).

:class:`Bisection` drives :class:`abstat.history.bisect.search.Search` and has its
interface (``plan``, ``record``, ``skip``, ``runs``, ``samples``,
``posterior``).  While one change explains the measurements it is that search.
When a tested commit measures unlike both ends (its status ``several``,
:func:`abstat.history.bisect.levels.intermediate`), the range is cut there: on a
history without merges the part from the good end to that commit and the part
from it to the bad end are each bisected on their own, that commit's runs
serving as the bad end of the one and the good end of the other (and cut
again when one of them holds another level).  The answer names each step a
part isolated, with its size, and never one commit for the whole change.
On a history with merges the range is not cut: the answer says that more
than one change is in it and names none.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from abstat.history.bisect import levels
from abstat.history.bisect.graph import Graph
from abstat.history.bisect.outcome import Batch, Outcome, change
from abstat.history.bisect.search import Search

MIN_PART_BUDGET = 40


@dataclass
class Part:
    low: int  # its good end (index in the whole range)
    high: int  # its bad end
    search: Search
    outcome: Outcome | None = None


class Bisection:
    def __init__(
        self,
        n: int,
        *,
        graph: Graph | None = None,
        confidence: float = 0.95,
        budget: int = 400,
        batch_max: int = 24,
        dear: bool = False,
        overrun: float = 0.0,
    ) -> None:
        self.dear = dear  # each run a boot (:class:`abstat.history.bisect.search.Search`)
        self.overrun = overrun  # runs beyond the budget to finish confirming a culprit (the same)
        self.root = Search(
            n, graph=graph, confidence=confidence, budget=budget, batch_max=batch_max, dear=dear, overrun=overrun
        )
        self.n, self.graph = n, self.root.graph
        self.confidence, self.budget, self.batch_max = confidence, budget, batch_max
        self.parts = [Part(0, n, self.root)]
        self.samples: list[tuple[int, float, int]] = []
        self.skipped: set[int] = set()
        self.attempts = 0
        self.batches = 0
        self.intermediates: list[int] = []
        self._current = self.parts[0]
        self.unit: float | None = None  # every search's samples are the values divided by it

    @property
    def runs(self) -> int:
        return self.attempts

    def record(self, batch: Batch, values: Sequence[float | None]) -> list[int]:
        part = self._current
        if self.unit is None and not self.samples:
            self.unit = levels.unit_of(values)
            for each in self.parts:
                each.search.unit = self.unit
        local = Batch([c - part.low for c in batch.commits], None if batch.test is None else batch.test - part.low)
        failing = [c + part.low for c in part.search.record(local, values)]
        for commit, value in zip(batch.commits, levels.rescaled(values, self.unit), strict=False):
            self.attempts += 1
            if value is not None and math.isfinite(value):
                self.samples.append((commit, float(value), self.batches))
        self.batches += 1
        self.skipped.update(failing)
        return failing

    def skip(self, commit: int) -> None:
        self.skipped.add(commit)
        for part in self.parts:
            if part.low < commit < part.high:
                part.search.skip(commit - part.low)

    def posterior(self):  # over the whole range: the part being searched, zero elsewhere
        import numpy as np

        part = self._current
        full = np.zeros(self.n)
        full[part.low : part.high] = part.search.posterior()
        return full

    def plan(self) -> Batch | Outcome:
        while True:
            open_parts = [p for p in self.parts if p.outcome is None]
            if not open_parts:
                return self._combine()
            open_parts = self._within_budget(open_parts)
            if not open_parts:
                continue
            part = min(open_parts, key=lambda p: p.search.runs)
            step = part.search.plan()
            if isinstance(step, Batch):
                self._current = part
                return Batch([c + part.low for c in step.commits], None if step.test is None else step.test + part.low)
            if step.status == "several" and step.intermediate is not None and not self.graph.merges:
                self._split(part, part.low + step.intermediate)
            else:
                part.outcome = step

    def _within_budget(self, open_parts: list[Part]) -> list[Part]:
        """The parts that may go on: all while the budget lasts; once it is spent, those confirming a culprit, up to
        ``overrun`` times more (the others end inconclusive)."""
        if self.attempts < self.budget:
            return open_parts
        for part in open_parts:
            confirming = part.search.limit() > part.search.budget
            if not confirming or self.attempts >= math.ceil(self.budget * (1 + self.overrun)):
                part.outcome = part.search.outcome("inconclusive")
        return [p for p in open_parts if p.outcome is None]

    def _split(self, part: Part, at: int) -> None:
        self.intermediates.append(at)
        remaining = max(MIN_PART_BUDGET, (self.budget - self.attempts) // 2)
        halves = []
        for low, high in ((part.low, at), (at, part.high)):
            search = Search(
                high - low,
                confidence=self.confidence,
                budget=remaining,
                batch_max=self.batch_max,
                dear=self.dear,
                overrun=self.overrun,
            )
            search.samples = [(c - low, v, b) for c, v, b in self.samples if low <= c <= high]
            search.unit = self.unit
            search.batches = self.batches
            search.skipped = {c - low for c in self.skipped if low < c < high}
            halves.append(Part(low, high, search))
        where = self.parts.index(part)
        self.parts[where : where + 1] = halves
        self._current = halves[0]

    def _combine(self) -> Outcome:
        if len(self.parts) == 1:
            return self.parts[0].outcome or self.root.outcome("inconclusive")
        whole = Search(self.n, confidence=self.confidence)
        whole.samples, whole.unit = self.samples, self.unit
        result = whole.outcome("inconclusive")
        result.status, result.candidates, result.probability, result.runs = "several", [], 0.0, self.attempts
        result.intermediate = self.intermediates[0]
        for part in self.parts:
            outcome = part.outcome
            if outcome is not None and outcome.status == "found" and outcome.culprit is not None:
                # its change on all runs of the part's ends (the next part measured one of them further)
                ends = self._values(part.low), self._values(part.high)
                outcome.change = change(ends[0], ends[1], self.unit, self.confidence)
                outcome.culprit += part.low
                outcome.candidates = [(c + part.low, p) for c, p in outcome.candidates]
                result.steps.append(outcome)
            else:  # its ends are cut points that measure unlike each other: a change lies in it, not isolated
                result.unresolved.append((part.low, part.high, outcome.status if outcome else "inconclusive"))
        result.notes = [n for n in result.notes if n.code != "ends-not-different"]
        return result

    def _values(self, commit: int) -> list[float]:
        return [v for c, v, _ in self.samples if c == commit]


def simulate(search: Bisection | Search, measure) -> Outcome:
    """Drive ``search`` with ``measure(commit) -> value`` (benchmarks and tests)."""
    while True:
        step = search.plan()
        if isinstance(step, Outcome):
            return step
        search.record(step, [measure(c) for c in step.commits])
