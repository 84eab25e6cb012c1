"""Probabilistic bisection on continuous measurements (library code, no I/O).

Commits are numbered ``0`` (known good) .. ``N`` (known bad) in a
topological order of the commit graph (:mod:`abstat.history.bisect.graph`); the
unknown is ``k`` in ``1..N``, the culprit: a commit is bad exactly when
``k`` is itself or one of its ancestors (git bisect's model; on a history
without merges, "``i >= k``").  The posterior over ``k`` starts uniform
(commits that failed to build keep their mass but are never measured) and
is updated with every sample:

- **Likelihood.** A sample ``x`` at commit ``i`` has density ``f(x - b)`` when
  ``i`` is bad and ``f(x - g)`` otherwise: ``g`` the median of the good references,
  ``b - g`` the Hodges-Lehmann shift to the bad ones (the ends plus test commits the
  posterior places on one side with probability >= 0.99), ``f`` the density of the ends'
  pooled residuals (:mod:`abstat.history.bisect.density`: a kernel density, so two paths
  are two humps, with 5% of a Student-t of the robust scale; a Student-t alone below 10).
  Each sample's log-likelihood ratio is clipped to +-``CLIP`` (a dear search's ``DEAR_CLIP``) so a few wild samples
  cannot carry the decision (``TEMPER`` weighs it; the answer itself rests on the checks of fresh runs below).  All
  samples are re-scored whenever the references grow.
- **Drift.** Every batch interleaves one reference run (good and bad in
  turn) with the runs of the commit under test.  When the references'
  deviations from the model trend over time (Kendall, p < 0.01), test
  samples are corrected by a Theil-Sen line through them, so slow drift of
  the machine cancels; without a trend nothing is corrected (a per-batch
  correction from one or two references adds more noise than it removes).
- **Next commit.** The one maximising the expected information gain of a
  batch (:mod:`abstat.history.bisect.choose`), ``H(Y) - H(Y | side)`` with ``P(side = bad)`` the posterior mass of
  the commit's ancestors, treating the batch as a binary channel whose
  error is the Bayes error of ``m`` samples at the estimated effect size
  (Waeber, Frazier & Henderson 2013: on a line with a symmetric channel this
  is the posterior median, as in Horstein's scheme).
- **Stopping.** One commit holds posterior >= ``confidence``, and still does after one more batch of it and
  its parents (all of a merge's parents in the range: git bisect's rule that a merge is the culprit only
  when its parents are good), and the runs of the culprit and of its parents taken from then on place
  them on their sides (:mod:`abstat.history.bisect.levels`; more batches of them and of the ends until
  they do) (found); or a tested commit measures unlike both ends, also on fresh runs of it and of the ends
  interleaved (:mod:`abstat.history.bisect.several`) (several: more than one change,
  :mod:`abstat.history.bisect.segments` bisects each part); or the budget is spent (inconclusive), or the
  references do not differ by Brunner-Munzel's test nor :mod:`abstat.history.bisect.scoretest`'s (no change).
- **Dear runs** (``dear``: each a boot): the ends start at 2 a side and open the gate by Student's t (on logarithms:
  positive values); a search batch may be 1 boot; a confirmed commit needs 2 fresh boots, and the ends as many, where
  a half-way level would show in them; no reference in a search batch once the ends have theirs (docs/history.md).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from abstat.history.bisect import choose, density, levels, scoretest, several
from abstat.history.bisect.graph import Graph
from abstat.history.bisect.outcome import Batch, Outcome, conclude

__all__ = ["Batch", "Outcome", "Search", "simulate"]

CLIP = 3.0
DEAR_CLIP = 5.0  # a dear search's: one boot of a commit at a large change places it past ``confidence`` (4 commits)
TEMPER = 1.0  # weight of a sample's log-likelihood ratio: the posterior only steers the search and says when to
# confirm; the answer rests on fresh runs and shape-free checks (levels.py), so samples count in full (at 0.75, 35
# of 40 simulated clean 32-commit bisections were right within 400 runs, at 1.0 39; docs/history.md)
STEP_TEMPER = 0.75  # ``abstat bisect step``'s sequential test, whose verdict rests on its likelihood alone
T_DF = 4.0
INITIAL_REFERENCES = 5  # runs of each reference before the search starts
DEAR_REFERENCES = 2  # the same when the unit is dear (boots): then one more a side at a time, Student's t at the gate
GATE_PVALUE = 0.001  # good and bad references must differ this clearly
OVERRUN = 0.5  # abstat bisect's default (no --budget): half the budget more to finish a confirmation (docs/history.md)
SIDE_CERTAINTY = 0.99  # a test commit this surely on one side also estimates that side's level


class Search:
    def __init__(
        self,
        n: int,
        *,
        graph: Graph | None = None,
        confidence: float = 0.95,
        budget: int = 400,
        batch_max: int = 24,
        initial_references: int | None = None,
        dear: bool = False,
        overrun: float = 0.0,
    ) -> None:
        """``n`` commits after the good end; ``graph``: their parents (default: a line, ``i - 1``); ``dear``: each run
        is dear (a boot): fewer first runs of the ends and of the commits when the ends are many spreads apart;
        ``overrun``: the budget's share the search may spend beyond it to finish confirming a culprit."""
        if n < 1:
            raise ValueError("need at least one commit after the good one")
        self.graph = graph if graph is not None else Graph.linear(n)
        if self.graph.n != n:
            raise ValueError(f"the graph has {self.graph.n} commits, not {n}")
        self.n = n
        self.confidence = confidence
        self.budget, self.overrun = budget, overrun
        self.batch_max = batch_max
        self.initial = initial_references or (DEAR_REFERENCES if dear else INITIAL_REFERENCES)
        self.dear, self.least = dear, levels.DEAR_MIN_RUNS if dear else levels.SIDE_MIN_RUNS
        self.skipped: set[int] = set()
        self.samples: list[tuple[int, float, int]] = []  # (commit, value, batch number)
        self.batches, self.attempts, self.next_reference = 0, 0, 0  # next_reference 0: good next, else bad
        self.max_reference_runs = max(30, budget // 3)  # a bimodal change needs ~110 a side to pass the gate
        self._sides: dict[int, int] = {}  # test commit -> 0 good / 1 bad, once nearly certain
        self._verified: int | None = None  # culprit above the threshold, given one more batch
        self._fresh: dict[int, int] = {}  # culprit -> the batch from which its and its parents' runs confirm it
        self._strikes: dict[int, int] = {}  # commits whose runs differed from the side they were put on
        self._passed: dict[int, dict[int, set[str]]] = {}  # culprit -> commit -> placement checks passed
        self.gated = False  # the ends have differed (:meth:`ends_differ`) at some look
        self.several_from: dict[int, int] = {}  # commit measuring unlike both ends -> the batch its fresh runs start
        self.cleared: set[int] = set()  # such commits whose fresh runs measured like an end (:mod:`.several`)
        self._memos: dict[tuple, object] = {}
        self.unit: float | None = None  # the samples are the values divided by it (:func:`levels.unit_of`)

    # -- recording ---------------------------------------------------------

    def record(self, batch: Batch, values: Sequence[float | None]) -> list[int]:
        """Values of the batch's runs in order (None: the run failed, ignored; it still counts
        against the budget).  A commit under test none of whose runs in the batch succeeded is
        skipped from then on, like one that does not build; returns those commits."""
        succeeded: dict[int, int] = {}
        self.unit = self.unit or (None if self.samples else levels.unit_of(values))  # samples given raw: none
        for commit, value in zip(batch.commits, levels.rescaled(values, self.unit)):
            self.attempts += 1
            succeeded.setdefault(commit, 0)
            if value is not None and math.isfinite(value):
                self.samples.append((commit, float(value), self.batches))
                succeeded[commit] += 1
        self.batches += 1
        failing = [c for c, count in succeeded.items() if count == 0 and 0 < c < self.n]
        for commit in failing:
            self.skip(commit)
        return failing

    def skip(self, commit: int) -> None:
        self.skipped.add(commit)

    def limit(self) -> int:
        """Runs at which the search ends: the budget, and ``overrun`` times more while it confirms a culprit."""
        return math.ceil(self.budget * (1 + self.overrun)) if self._verified is not None else self.budget

    @property
    def runs(self) -> int:
        """Benchmark runs spent, failed ones included."""
        return self.attempts

    # -- the model ---------------------------------------------------------

    def _references(self) -> tuple[list[float], list[float]]:
        return [v for c, v, _ in self.samples if c == 0], [v for c, v, _ in self.samples if c == self.n]

    def _memo(self, name: str, compute):
        """``compute()``, kept until the samples, the batches or the sides change (samples are only
        ever appended, so their number identifies them)."""
        key = (name, id(self.samples), len(self.samples), self.batches, tuple(sorted(self._sides.items())))
        if key not in self._memos:
            if len(self._memos) > 64:
                self._memos.clear()
            self._memos[key] = compute()
        return self._memos[key]

    def _model(self) -> tuple[float, float, float]:
        """(good location, bad location, scale): the references, plus the test commits that
        the posterior already places on one side with near certainty (drift-corrected)."""
        return self._memo("model", self._compute_model)

    def _compute_model(self) -> tuple[float, float, float]:
        import numpy as np

        good, bad = self._references()
        if self._sides:
            good = good + [v for c, v, _ in self.samples if self._sides.get(c) == 0]
            bad = bad + [v for c, v, _ in self.samples if self._sides.get(c) == 1]
        g = float(np.median(good))  # the shift by Hodges-Lehmann: a median falls between two paths' humps
        b = g + float(np.median(np.subtract.outer(np.asarray(bad[-400:]), np.asarray(good[-400:]))))
        residuals = np.concatenate([np.asarray(good) - g, np.asarray(bad) - b])
        scale = max(
            1.4826 * float(np.median(np.abs(residuals))),
            float(np.subtract(*np.percentile(residuals, [75, 25]))) / 1.349,
        )
        levels = np.unique(np.concatenate([good, bad]))
        if levels.size > 1:  # quantized data: add Sheppard's correction of the grid step
            step = float(np.min(np.diff(levels)))
            scale = math.sqrt(scale * scale + step * step / 12.0)
        if scale <= 0:
            scale = float(np.std(residuals))
        if scale <= 0:
            scale = abs(b - g) / 4 or abs(g) * 1e-6 or 1e-12
        return g, b, scale

    def _density(self) -> density.Density | None:
        return self._memo("density", self._compute_density)

    def _compute_density(self) -> density.Density | None:
        (g, b, scale), (good, bad) = self._model(), self._references()
        return density.fit([v - g for v in good] + [v - b for v in bad], scale)

    def reference_p(self) -> float:
        return self._memo("reference_p", self._compute_reference_p)

    def _compute_reference_p(self) -> float:
        return levels.ends_differ_p(*self._references())

    def ends_differ(self) -> bool:
        """Brunner-Munzel, or the permutation test scored by the noise's density (two paths: two humps), at the gate;
        Student's t while a dear search's ends have fewer than ``INITIAL_REFERENCES`` runs."""
        if min(map(len, self._references())) < INITIAL_REFERENCES:
            return levels.ends_apart_p(*self._references()) <= GATE_PVALUE
        return (
            self.reference_p() <= GATE_PVALUE
            or self._memo("score_p", lambda: scoretest.differ_p(*self._references())) <= GATE_PVALUE
        )

    def values_of(self, commit: int) -> list[float]:
        return [v for c, v, _ in self.samples if c == commit]

    def fresh_values(self, commit: int, start: int) -> list[float]:
        """The runs of ``commit`` from batch ``start`` on."""
        return [v for c, v, batch in self.samples if c == commit and batch >= start]

    def intermediate(self) -> int | None:
        """The tested commit with the most runs among those measuring unlike both ends, or None."""
        return self._memo("intermediate", self._compute_intermediate)

    def _compute_intermediate(self) -> int | None:
        good, bad = self._references()
        tested = sorted(
            {c for c, _, _ in self.samples if 0 < c < self.n} - self.cleared, key=lambda c: -len(self.values_of(c))
        )
        return next((c for c in tested if levels.intermediate(self.values_of(c), good, bad)), None)

    def attributed(self, culprit: int) -> bool:
        """The culprit's own runs and its parents' fresh runs confirm it, each commit once (:func:`levels.placing`); a
        dear search's, all their runs as well (2-3 fresh boots can all fall in one mode of two-mode noise)."""
        start = self._fresh.get(culprit, 0)
        good, bad = self._references()
        sides = [(p, self.fresh_values(p, start), good) for p in self.graph.parents_of(culprit) if p != 0]
        if culprit != self.n:
            sides.append((culprit, self.fresh_values(culprit, start), bad))
        settled = levels.placing(sides, good, bad, self._strikes, self._passed.setdefault(culprit, {}), self.least)
        done = levels.ends_ready(good, bad, self.least) and len(settled) == len(sides)
        every = [(self.values_of(c), "bad" if end is bad else "good") for c, _, end in sides] if self.dear else []
        return done and all(levels.placed(values, good, bad, side) for values, side in every)

    def _offsets(self, g: float, b: float) -> dict[int, float]:
        """Batch number -> drift offset (:func:`abstat.history.bisect.levels.drift`)."""
        points = [
            (batch, value - (g if commit == 0 else b)) for commit, value, batch in self.samples if commit in (0, self.n)
        ]
        return levels.drift(points, self.batches)

    def log_posterior(self):  # -> numpy array over k = 1..N
        return self._memo("log_posterior", self._compute_log_posterior).copy()

    def _compute_log_posterior(self):
        import numpy as np

        g, b, scale = self._model()
        offsets = self._offsets(g, b)
        per_commit = np.zeros(self.n + 1)
        tests = [(c, v, batch) for c, v, batch in self.samples if 0 < c < self.n]
        if tests:
            commits = np.array([c for c, _, _ in tests])
            x = np.array([v - offsets.get(batch, 0.0) for _, v, batch in tests])
            shape, llr = self._density(), density.log_llr(x, *self._references()) if self.dear else None  # boots: logs
            if llr is None and shape is not None:
                llr = shape.log_pdf(x - b) - shape.log_pdf(x - g)
            elif llr is None:
                zg, zb = (x - g) / scale, (x - b) / scale
                llr = -(T_DF + 1) / 2 * (np.log1p(zb * zb / T_DF) - np.log1p(zg * zg / T_DF))
            np.add.at(per_commit, commits, TEMPER * np.clip(llr, -(c := DEAR_CLIP if self.dear else CLIP), c))
        # log P(k) = sum of LLR_i over the measured i that are bad if k is the culprit: k's descendants
        return self.graph.descendant_sums(per_commit[1:])

    def posterior(self):
        import numpy as np

        logs = self.log_posterior()
        weights = np.exp(logs - logs.max())
        return weights / weights.sum()

    def _update_sides(self, posterior) -> None:
        import numpy as np

        bad = self.graph.bad_mass(posterior)  # bad[i - 1] = P(commit i is bad)
        self._sides = {}
        for commit in {c for c, _, _ in self.samples if 0 < c < self.n}:
            p_bad = float(bad[commit - 1])
            if p_bad >= SIDE_CERTAINTY:
                self._sides[commit] = 1
            elif p_bad <= 1 - SIDE_CERTAINTY:
                self._sides[commit] = 0

    def effect(self) -> float:
        g, b, scale = self._model()
        shape = self._density()
        return abs(b - g) / scale if shape is None else density.effect(shape, b - g)

    # -- choosing ----------------------------------------------------------

    def _batch_size(self) -> int:
        d = max(self.effect(), 0.05)
        return int(min(self.batch_max, max(1 if self.dear else 2, math.ceil(4.0 / (d * d)))))

    def _choose(self, posterior, m: int) -> int | None:
        from scipy.stats import norm

        error = float(norm.cdf(-math.sqrt(m) * min(self.effect(), 6.0) / 2.0))
        return choose.most_informative(self.graph.bad_mass(posterior)[:-1], error, self.skipped, self.n)

    def _reference_batch(self, each: int) -> Batch:
        return Batch([c for _ in range(each) for c in (0, self.n)], None)

    def plan(self) -> Batch | Outcome:
        """The next batch to run, or the outcome when the search is over."""
        good, bad = self._references()
        if len(good) < self.initial or len(bad) < self.initial:
            return self._reference_batch(self.initial - min(len(good), len(bad)))
        if self.runs >= self.limit():  # a commit unlike both ends still being confirmed: the claim from all runs
            pending = self.intermediate() is not None and any(c not in self.cleared for c in self.several_from)
            return self.outcome("several" if pending else "inconclusive")
        if not self.gated and not self.ends_differ():
            if min(len(good), len(bad)) >= self.max_reference_runs:
                return self.outcome("no-change")
            return self._reference_batch(1 if min(len(good), len(bad)) < INITIAL_REFERENCES else 2)
        self.gated = True  # once the ends differ the search goes on (p wanders as references are added)
        posterior = self.posterior()
        self._update_sides(posterior)
        posterior = self.posterior()
        confirming = self._several()
        if confirming is not None:
            return confirming
        top = int(posterior.argmax())
        m = self._batch_size()
        if posterior[top] >= self.confidence:
            return self._verify(top + 1, m)
        self._verified = None
        test = self._choose(posterior, m)
        if test is None:
            return self.outcome("untestable")
        # a reference in every batch (against drift); a dear search's only while the ends lack runs (a boot each)
        ends = [] if self.dear and min(map(len, (good, bad))) >= levels.ends_target(good, bad, self.least) else [0]
        reference = [0 if self.next_reference == 0 else self.n for _ in ends]
        self.next_reference ^= len(ends)
        half = m // 2
        return Batch([test] * half + reference + [test] * (m - half), test)

    def _several(self) -> Batch | Outcome | None:
        """While a tested commit measures unlike both ends: the fresh runs confirming it, or ``several``
        (:mod:`abstat.history.bisect.several`; a dear search's claim rests on all runs); None without one."""
        while (commit := self.intermediate()) is not None:
            step = True if self.dear else several.confirm(self, commit)
            if not isinstance(step, bool):
                return step
            if step:
                return self.outcome("several")
            self.cleared.add(commit)
            self._memos.clear()
        return None

    def _verify(self, culprit: int, m: int) -> Batch | Outcome:
        """Found, once a culprit above the threshold stays there for one more batch of it and its parents
        and their runs place them on their sides (:meth:`attributed`); else that batch."""
        if self._verified == culprit and self.attributed(culprit):
            return self.outcome("found")
        self._verified = culprit
        # confirmed by runs taken from now on: the runs that led the search here are chosen by it (a parent
        # whose runs happened to look good is why a commit tops the posterior), so they cannot also confirm it
        self._fresh.setdefault(culprit, self.batches)
        tests = [c for c in (*self.graph.parents_of(culprit), culprit) if 0 < c < self.n and c not in self.skipped]
        if not tests:
            return self.outcome("found")
        # a commit whose runs placed it is settled: the rounds go to the others (all of them for the last batch)
        passed = self._passed.get(culprit, {})
        tests = [c for c in tests if passed.get(c) != levels.CHECKS] or tests
        good, bad = self._references()
        need = levels.runs_needed(good, bad, self.least)
        fresh = [len(self.fresh_values(c, self._fresh[culprit])) for c in tests]
        missing = max(need * (1 + self._strikes.get(c, 0)) - k for c, k in zip(tests, fresh, strict=True))
        # alternating (a burst of load hits them and the ends alike); dear: no more rounds than the checks miss
        half = max(1, min(missing, max(2, m // 2))) if self.dear else max(2, m // 2)
        # runs the ends still miss, and the tests': both ends each round while they miss some, twice while more
        short = levels.ends_target(good, bad, self.least) - min(len(good), len(bad))
        behind, rounds = short - max(0, need - min(fresh)), []
        for round_number in range(half):
            ends = [0, self.n] * (1 + (behind > 2 * round_number)) if short > round_number else []
            # once the ends have their runs, one of them every other round (interleaved against drift; dear too:
            # without, two changes of 4 SD were named as one, tests/history/bisect/test_bisect_dear.py)
            rounds += [*tests, *(ends or [0 if self.next_reference == 0 else self.n][: 1 - round_number % 2])]
            self.next_reference ^= 1 - round_number % 2
        return Batch(rounds, tests[-1])

    def outcome(self, status: str) -> Outcome:
        return conclude(self, status)


def simulate(search: Search, measure) -> Outcome:
    """Drive ``search`` with ``measure(commit) -> value`` (benchmarks and tests)."""
    while True:
        step = search.plan()
        if isinstance(step, Outcome):
            return step
        search.record(step, [measure(c) for c in step.commits])
