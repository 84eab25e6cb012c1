"""``abstat plan`` on nested pilots, sized for what ``abstat compare`` compares on runs.

``compare`` reduces each run to its median, ties read as spread over their grid cell
(:func:`abstat.stats.nested.run_centres`), and compares the run medians with its default rule (the
Hodges-Lehmann ratio and Brunner-Munzel; ``--center median``: the geometric means of the run
medians).  The plan therefore sizes that comparison (:func:`abstat.comparison.sizing.sizing`) on the
pilot's run medians: the runs per variant at the pilot's run length are its answer.

For other run lengths (Kalibera & Jones' allocation) the variance of a run median is split into the
runs' offsets and the samples' share, ``V(r) = B + W / r``.  ``W / L`` is read without the offsets
from each run's two interleaved halves (odd and even samples): their medians share the run's offset,
so ``(m_odd - m_even)^2 / 4`` estimates the within-run part of a median of ``L`` samples (Var of a
half's median ~ 2 W / L, of their difference ~ 4 W / L); ``B`` is the rest of the run medians'
variance.  A plan at ``r`` samples per run sizes the pilot's run medians with their spread about
their centre scaled by ``sqrt(V(r) / V(L))``; ``r`` is ``ceil(sqrt(cost ratio x W / B))``, and with
no offsets seen (``B = 0``) few long runs, the cheapest that reach the power.

On a grid a real change is sized as what it does to the run medians (:mod:`abstat.comparison.planning_grid`):
it moves their centre by less than itself, and it reshapes them, wider where the latent centre comes to a
cell boundary (:mod:`abstat.comparison.planning_grid_runs`: the candidate's run medians moved by the
simulated runs' shift function, the change by their Hodges-Lehmann ratio).

``--center mean`` keeps the allocation for Welch's t on the run means
(:func:`abstat.stats.power.plan_nested`), which is what ``compare --center mean`` does.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, cast

from abstat.comparison.model import estimand_label
from abstat.comparison.planning_grid import attenuation_note
from abstat.comparison.planning_model import DEFAULT_COST_RATIOS, Allocation, Plan, VariantPilot, change_to_detect

#: Fewest samples per run whose halves can estimate the within-run share of a run median.
MIN_SPLIT = 4
MEDIAN_NOTE = (
    "runs x samples: the run medians' variance split into the runs' offsets (between) and the samples' "
    "share of a run median (within, from each run's odd and even halves), Kalibera & Jones' allocation "
    "of it, each size found for compare's comparison of the run medians"
)
_FEW_RUNS = (3, 4, 5, 6, 7, 8, 10, 12, 15, 20, 25, 30, 40, 50, 60)


def median_components(runs: list[Any]) -> tuple[float, float, float] | None:
    """(between B, within W, run length L) of the run medians of ``runs`` (numpy arrays): their
    variance at the pilot's run length is ``B + W / L``; None with fewer than 2 runs or runs shorter
    than :data:`MIN_SPLIT`."""
    import numpy as np

    from abstat.stats.nested import run_centres

    if len(runs) < 2 or min(r.size for r in runs) < MIN_SPLIT:
        return None
    centres = run_centres(runs, "median")
    halves = run_centres([h for r in runs for h in (r[0::2], r[1::2])], "median")
    share = float(np.mean((halves[0::2] - halves[1::2]) ** 2)) / 4.0  # W / L, offsets cancelled
    length = float(np.mean([r.size for r in runs]))
    between = max(0.0, float(np.var(centres, ddof=1)) - share)
    return between, share * length, length


def _scaled(centres: Any, factor: float) -> Any:
    """``centres`` with their spread about their median scaled by ``factor``."""
    import numpy as np

    middle = float(np.median(centres))
    return middle + (centres - middle) * factor


def common_spread(cx: Any, cy: Any) -> tuple[Any, Any]:
    """``cx`` and ``cy`` with their spreads scaled to their pooled variance (each variant's own when one
    does not vary).  On a 5-run pilot of grid values the two variants' run medians varied by 0.53 and 2.04
    (sd) from one population: sized apart, the noisier one made plan promise 40% power for a real 1%
    where compare reached 79% (300 simulated experiments), and 71% sized pooled."""
    import numpy as np

    vx, vy = float(np.var(cx, ddof=1)), float(np.var(cy, ddof=1))
    if not (vx > 0 and vy > 0):
        return cx, cy
    pooled = ((cx.size - 1) * vx + (cy.size - 1) * vy) / (cx.size + cy.size - 2)
    return _scaled(cx, math.sqrt(pooled / vx)), _scaled(cy, math.sqrt(pooled / vy))


class RunSizer:
    """The runs per variant compare's comparison of run medians needs, at any samples per run.  On a grid
    the changes asked about are real changes of the values, sized as the change of the spread run medians
    they make (:mod:`abstat.comparison.planning_grid`; ``samples``: the pilots' samples pooled), with the
    candidate's run medians reshaped as that change reshapes them (:mod:`abstat.comparison.planning_grid_runs`)."""

    def __init__(
        self,
        cx: Any,
        cy: Any,
        between: float,
        within: float,
        length: float,
        center: str,
        confidence: float,
        samples: Any = None,
    ):
        from abstat.comparison.planning_grid import spread_median_change
        from abstat.comparison.planning_grid_runs import grid_runs

        self.change = None if samples is None or center == "mean" else spread_median_change(samples)
        self.model = None
        if self.change is not None:  # one latent model for both variants: their run medians' spread pooled
            cx, cy = common_spread(cx, cy)
            self.model = grid_runs(samples, length, between + within / length)
        self.cx, self.cy, self.center, self.confidence = cx, cy, center, confidence
        self.between, self.within, self.length = between, within, length
        self._sizes: dict[tuple[float, float], Any] = {}
        self.pilot = self.sizing(length)

    def estimand_pct(self, pct: float) -> float:
        """The change of the spread run medians a real change of ``pct`` percent makes."""
        return pct if self.change is None else float(self.change(pct))

    def at(self, per_run: float, pct: float) -> Any:
        """The sizing for a real change of ``pct`` at ``per_run`` samples a run (the pilot's without a
        grid model: a change then only moves the run medians)."""
        if self.model is None or not pct:
            return self.pilot if per_run == self.length else self.sizing(per_run)
        key = (per_run, pct)
        if key not in self._sizes:
            self._sizes = self._sizes if len(self._sizes) < 64 else {}
            self._sizes[key] = self.sizing(per_run, pct)
        return self._sizes[key]

    def shift_pct(self, per_run: float, pct: float) -> float:
        """The change of compare's estimand a real change of ``pct`` makes at ``per_run`` samples a run."""
        return self.estimand_pct(pct) if self.model is None else self.model.change_pct(round(per_run), pct)

    def power(self, per_run: float, pct: float, n1: int, n2: int, alpha: float) -> float:
        return float(self.at(per_run, pct).power(self.shift_pct(per_run, pct), n1, n2, alpha))

    def detectable(self, per_run: float, n1: int, n2: int, alpha: float, power: float) -> float | None:
        """The smallest real change (percent) detected with ``power`` at ``n1``/``n2`` runs of ``per_run``."""
        from abstat.comparison.planning_grid import real_change
        from abstat.stats.distributions import brentq

        size = self.pilot if per_run == self.length else self.sizing(per_run)
        found = size.detectable(n1, n2, alpha, power)
        if found is None or self.change is None:
            return found
        start = real_change(self.change, found)
        if self.model is None or start is None or not start > 0:
            return start

        def gap(pct: float) -> float:
            p = self.power(per_run, pct, n1, n2, alpha)
            return -1.0 if p != p else p - power

        lo, hi = start, start
        if gap(start) < 0:  # the reshaped run medians need a larger change, rarely a smaller one
            while gap(hi) < 0:
                lo, hi = hi, hi * 1.25
                if hi > 100.0 * start:
                    return None
        else:
            while gap(lo) >= 0:
                lo, hi = lo / 1.25, lo
                if lo < 1e-3 * start:
                    return hi
        return brentq(gap, lo, hi, xtol=1e-3 * hi)

    def sizing(self, per_run: float, pct: float = 0.0) -> Any:
        from abstat.comparison.sizing import sizing

        now = self.between + self.within / self.length
        then = self.between + self.within / per_run
        factor = math.sqrt(then / now) if now > 0 else 1.0
        cy = _scaled(self.cy, factor)
        if self.model is not None and pct:
            cy = self.model.reshaped(cy, round(per_run), pct)
        size = sizing(_scaled(self.cx, factor), cy, "auto", self.confidence)
        if self.center == "median" and size.small is not None:  # compare: geometric means of the run medians
            size = size.small
            size.center = "median"
        return size

    def runs(self, per_run: float, pct: float, alpha: float, power: float) -> int | None:
        needed = self.at(per_run, pct).needed(self.shift_pct(per_run, pct), alpha, power)
        return None if needed is None else max(needed, 2)


def median_allocation(
    sizer: RunSizer, ratio: float, assumed: bool, pct: float, alpha: float, power: float
) -> Allocation:
    """Kalibera & Jones' allocation at cost ratio ``ratio`` for the run medians' components."""
    from abstat.stats.power import optimal_samples_per_run

    per_run = optimal_samples_per_run(sizer.within, sizer.between, ratio)
    if per_run is None:
        return _few_long_runs(sizer, ratio, assumed, pct, alpha, power)
    runs = sizer.runs(per_run, pct, alpha, power)
    return Allocation(
        cost_ratio=ratio,
        assumed=assumed,
        samples_per_run=per_run,
        runs_per_variant=runs,
        samples_per_variant=None if runs is None else runs * per_run,
        relative_cost=None if runs is None else runs * (ratio + per_run),
    )


def _few_long_runs(sizer: RunSizer, ratio: float, assumed: bool, pct: float, alpha: float, power: float) -> Allocation:
    """No offsets seen: for each run count (3 and up), the shortest run (at least the pilot's) at which
    that many runs reach the power; the cheapest wins."""
    best: tuple[float, int, int] | None = None
    shortest = max(2, round(sizer.length))
    for runs in _FEW_RUNS:

        def enough(per_run: int, runs: int = runs) -> bool:
            p = sizer.power(per_run, pct, runs, runs, alpha)
            return p == p and p >= power

        lo, hi = shortest, shortest
        while not enough(hi, runs):
            lo, hi = hi + 1, hi * 4
            if hi > 10**7:
                break
        else:
            while lo < hi:
                mid = (lo + hi) // 2
                lo, hi = (lo, mid) if enough(mid, runs) else (mid + 1, hi)
            cost = runs * (ratio + hi)
            if best is None or cost < best[0]:
                best = (cost, runs, hi)
    if best is None:
        return Allocation(ratio, assumed, shortest, None, None, None)
    cost, runs, per_run = best
    return Allocation(ratio, assumed, per_run, runs, runs * per_run, cost)


def _pooled_components(arrays: dict[str, list[Any]], notes: list[str]) -> tuple[float, float, float] | None:
    """(B, W, L) averaged over the variants whose run medians' variance splits (why not: ``notes``)."""
    parts = {name: median_components(runs) for name, runs in arrays.items()}
    notes.extend(
        f"{name}: too few runs or samples per run to split a run median's variance"
        for name, found in parts.items()
        if found is None
    )
    usable = [p for p in parts.values() if p is not None]
    if not usable:
        return None
    between, within, length = (sum(p[i] for p in usable) / len(usable) for i in range(3))
    return between, within, length


def _pair_sizes(
    result: Plan,
    centres: dict[str, Any],
    flats: list[Any],
    parts: tuple[float, float, float],
    center: str,
    alpha: float,
) -> list[RunSizer]:
    """Each comparison's runs at the pilot's run length (and the samples if each were its own run) into
    ``result.pairs``, the pilots' power at their runs; the sizers, one per pair."""
    import numpy as np

    from abstat.comparison.sizing import sizing

    pilots, (between, within, length) = result.variants, parts
    base, pct = pilots[0], float(result.detect_pct or 0.0)
    others = list(enumerate(pilots))[1:]
    if not others:
        result.notes.append("one variant given: the other is assumed to be like it")
        others = [(0, VariantPilot(base.name + " (the same)", base.n, base.mean, base.stddev, runs=base.runs))]
    sizers = []
    for index, other in others:
        cx, cy = centres[base.name], centres[pilots[index].name]
        pooled = np.concatenate([flats[0], flats[index]])
        sizer = RunSizer(cx, cy, between, within, length, center, 1.0 - alpha, pooled)
        sizers.append(sizer)
        result.pairs.append(
            {
                "baseline": base.name,
                "candidate": other.name,
                "samples_per_variant": sizing(flats[0], flats[index], center, 1.0 - alpha).needed(
                    pct, alpha, result.power
                ),
                "runs_per_variant": sizer.runs(length, pct, alpha, result.power),
                "samples_per_run": round(length),
                "estimand": sizer.pilot.estimand,
            }
        )
        if index:
            p = sizer.power(length, pct, cx.size, cy.size, alpha)
            other.current_power = None if p != p else p
    powers = [o.current_power for o in pilots[1:] if o.current_power is not None]
    base.current_power = min(powers) if powers else None
    return sizers


def add_median_plan(
    result: Plan,
    nested: dict[str, list[list[float]]],
    flats: list[Any],
    alpha: float,
    cost_ratio: float | None,
    center: str,
) -> None:
    """The plan of nested pilots for the run medians (module documentation) into ``result``: each
    pair's runs per variant at the pilot's run length, the pilots' power, the allocations."""
    import numpy as np

    from abstat.stats.nested import run_centres

    arrays = {name: [np.asarray(run, dtype=float) for run in runs] for name, runs in nested.items()}
    parts = _pooled_components(arrays, result.notes)
    if parts is None:
        result.method = "flat"
        return
    result.between, result.within, length = parts
    result.notes.append(MEDIAN_NOTE)
    centres = {name: run_centres(runs, "median") for name, runs in arrays.items()}
    sizers = _pair_sizes(result, centres, flats, parts, center, alpha)
    counts = [p["samples_per_variant"] for p in result.pairs]
    result.samples_per_variant = None if None in counts else max(cast(int, c) for c in counts)
    result.estimand = sizers[0].pilot.estimand
    result.estimand_label = estimand_label(result.estimand, center, "runs")
    result.center = center
    pct = float(result.detect_pct or 0.0)
    note = attenuation_note(sizers[0].change, pct)
    result.notes.extend([note] if note else [])
    ratios = [(cost_ratio, False)] if cost_ratio is not None else [(r, True) for r in DEFAULT_COST_RATIOS]
    worst = max(sizers, key=lambda s: s.runs(length, pct, alpha, result.power) or 10**8)
    for ratio, assumed in ratios:
        result.allocations.append(median_allocation(worst, ratio, assumed, pct, alpha, result.power))


def median_plan(
    pilots: list[VariantPilot],
    nested: dict[str, list[list[float]]],
    flats: list[Any],
    detect: float,
    relative: bool,
    power: float,
    confidence: float,
    cost_ratio: float | None,
    center: str,
) -> Plan:
    """Nested pilots sized for compare's comparison of their run medians
    (:mod:`abstat.comparison.planning_nested`); ``method`` "flat" when no run median's variance splits."""
    from abstat.comparison.estimands import centre_of

    centre, _ = centre_of(nested[pilots[0].name], center, [nested[p.name] for p in pilots[1:] if p.name in nested])
    detect_pct, delta = change_to_detect(centre, detect, relative)
    result = Plan(
        baseline=pilots[0].name,
        detect=delta,
        detect_pct=detect_pct,
        power=power,
        confidence=confidence,
        method="nested",
        variants=pilots,
        samples_per_variant=None,
    )
    add_median_plan(result, nested, flats, 1.0 - confidence / 100.0, cost_ratio, center)
    return result


def common_units(variants: Mapping[str, object]) -> tuple[Mapping[str, object], list[str]]:
    """The pilots at one replicated unit when the store says what their run groups are (stored
    variants: boots against one invocation's runs, :func:`abstat.store.run_groups.common_unit`), and
    the notes that say what was changed."""
    stored = {name: v for name, v in variants.items() if getattr(v, "invocations", None)}
    if len(stored) < 2 or len(stored) != len(variants):
        return variants, []
    from abstat.store.run_groups import common_unit

    sides = [(name, list(v.runs), list(v.invocations)) for name, v in stored.items()]  # type: ignore[attr-defined]
    groups, notes = common_unit(sides)
    if not notes:
        return variants, []
    return {name: runs if len(runs) > 1 else runs[0] for (name, _, _), runs in zip(sides, groups, strict=True)}, [
        text for _, text in notes
    ]
