"""Order statistics of pairwise sums without forming them: O(n log n) per count.

The two-sample Hodges-Lehmann estimate is the median of the ``n1 n2``
differences ``y_j - x_i``, the one-sample one (the pseudo-median) the median
of the ``n (n + 1) / 2`` Walsh averages ``(x_i + x_j) / 2, i <= j``.  Both
are order statistics of a *sorted matrix* ``a_i + b_j`` (``a`` and ``b``
ascending; for the Walsh sums row ``j`` holds ``i <= j``): the number of its
entries up to a value is one vectorised binary search of ``p - b`` in ``a``.
An order statistic is found by interpolation on that count (Illinois regula
falsi, bisection as the safeguard), from a bracket guessed by sampling
entries, until few entries lie in the bracket; those are gathered and
partially sorted.  With 10^6 values per side about six counts suffice.  This
is the selection of Johnson & Mizoguchi (1978) and Monahan (1984) with a
different search for the bracket.

Points may carry weights (a weight ``w`` stands for ``w`` equal points; the
entry ``a_i + b_j`` then stands for ``w_i w_j`` entries): large groups of tied
values are represented so (:func:`abstat.stats.hodges_lehmann.spread_ties`).
"""

from __future__ import annotations

import math
from typing import Literal

import numpy as np

GATHER = 200_000  # gather the entries of a bracket holding at most this many
WALK = 8  # steps of :meth:`SortedSums.walk` before the rows still moving are searched


def _cumulative(weights: np.ndarray | None, n: int) -> np.ndarray | None:
    """``c[k]`` = the weight of the first ``k`` points (None: unweighted, ``c[k] = k``)."""
    if weights is None:
        return None
    out = np.empty(n + 1)
    out[0] = 0.0
    np.cumsum(weights, out=out[1:])
    return out


def _end_magnitude(v: np.ndarray) -> float:
    """``np.max(np.abs(v[[0, -1]]))`` (NaN if either end is), in Python floats."""
    first, last = abs(float(v[0])), abs(float(v[-1]))
    return last if last > first or last != last else first


class SortedSums:
    """The entries ``a_i + b_j`` (``a``, ``b`` ascending; with ``walsh``, only
    ``i <= j`` of ``a = b``), the points weighted by ``wa``, ``wb`` (None: 1)."""

    def __init__(
        self,
        a: np.ndarray,
        b: np.ndarray,
        wa: np.ndarray | None = None,
        wb: np.ndarray | None = None,
        walsh: bool = False,
    ) -> None:
        self.a, self.b, self.wa, self.wb, self.walsh = a, b, wa, wb, walsh
        self._ca = _cumulative(wa, a.size)
        self._rb = b[::-1]  # queries p - b ascend when b is reversed: cache-friendly searches
        self._rows = np.arange(b.size)
        if walsh:
            w = np.ones(b.size) if wb is None else wb
            self.size = float(np.sum(w * (w + 1.0) / 2.0) + np.sum(w * (np.cumsum(w) - w)))
        else:
            self.size = float(a.size if self._ca is None else self._ca[-1]) * float(b.size if wb is None else wb.sum())
        # the largest magnitudes lie at the ends of ascending points (NaN too: sorted last)
        self.scale = _end_magnitude(a) + _end_magnitude(b)
        self.density = math.nan  # entries per unit of value about the last order statistic found
        self.last_count = math.nan  # the weight of the entries up to it (NaN: unknown)
        self.last_next = math.nan  # the smallest entry above it, if it was among those gathered
        self._kept: tuple[float, float, np.ndarray, np.ndarray | None] | None = None  # the last gathered bracket
        self._rows_kept: tuple[float, float, np.ndarray, np.ndarray] | None = None  # its ends, positions, entries' rows
        self._sorted: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None  # weighted entries gathered, sorted

    @property
    def cumulative_a(self) -> np.ndarray | None:
        """0, then the running sums of ``a``'s weights (None: unweighted)."""
        return self._ca

    def positions(self, p: float, side: Literal["left", "right"] = "right") -> np.ndarray:
        """Per row ``j``: how many ``a_i`` have ``a_i + b_j <= p`` (``< p`` for ``side="left"``), capped at ``j + 1``."""
        found = np.searchsorted(self.a, p - self._rb, side=side)[::-1]
        return np.minimum(found, self._rows + 1) if self.walsh else found

    def weight_of(self, positions: np.ndarray) -> float:
        """The weight of the entries before ``positions`` in every row."""
        inner = positions if self._ca is None else self._ca[positions]
        total = float(np.add.reduce(inner)) if self.wb is None else float(np.dot(inner, self.wb))
        if self.walsh:  # the diagonal entry x_j + x_j counts w (w + 1) / 2 times, not w^2
            w = np.ones(self.b.size) if self.wb is None else self.wb
            total -= float(np.sum((w * (w - 1.0) / 2.0)[positions > self._rows]))
        return total

    def count(self, p: float, side: Literal["left", "right"] = "right") -> float:
        """The weight of the entries ``<= p`` (``< p`` for ``side="left"``)."""
        return self.weight_of(self.positions(p, side))

    def next_above(self, p: float, rows: np.ndarray | None = None) -> float:
        """The smallest entry ``> p`` (inf if none); ``rows``: :meth:`positions` at ``p``."""
        start = self.positions(p) if rows is None else rows
        cap = self._rows + 1 if self.walsh else self.a.size
        ok = start < cap
        if not ok.any():
            return math.inf
        return float(np.min(self.a[start[ok]] + self.b[ok]))

    def previous_at_most(self, p: float, rows: np.ndarray | None = None) -> float:
        """The largest entry ``<= p`` (-inf if none)."""
        stop = self.positions(p) if rows is None else rows
        ok = stop > 0
        if not ok.any():
            return -math.inf
        return float(np.max(self.a[stop[ok] - 1] + self.b[ok]))

    def rows_near(self, p: float) -> np.ndarray | None:
        """About :meth:`positions` at ``p`` (a guess, off by rounding at most), when ``p`` lies in the
        last gathered bracket: its low end's positions and the gathered entries up to ``p``; else None."""
        kept, rows = self._kept, self._rows_kept
        if kept is None or rows is None or not rows[0] <= p <= rows[1]:
            return None
        return rows[2] + np.bincount(rows[3][kept[2] <= p], minlength=self.b.size)

    def walk(self, p: float, start: np.ndarray, stop: np.ndarray, up: bool) -> np.ndarray:
        """:meth:`positions` at ``p`` (``side="right"``) when they are known to lie between ``start``
        and ``stop`` row by row (the positions at a value below ``p`` and at one above it): a step at a
        time from ``start`` (``up``) or from ``stop``, vectorised over the rows still moving, for when
        few entries lie between (then cheaper than a binary search per row); rows still moving after
        :data:`WALK` steps are searched.  The same positions as :meth:`positions` (``a_i <= p - b_j``)."""
        if not (math.isfinite(p) and math.isfinite(self.scale)):  # (no NaN keys: searched as numpy orders them)
            return self.positions(p)
        keys = p - self.b  # (p - self._rb)[::-1], element by element
        idx = (start if up else stop).copy()
        last = self.a.size - 1
        if up:  # the first step on every row at once (most rows do not move), then on those that do
            active = ((self.a.take(np.minimum(idx, last)) <= keys) & (idx < stop)).nonzero()[0]
        else:
            active = ((self.a.take(np.maximum(idx - 1, 0)) > keys) & (idx > start)).nonzero()[0]
        for _ in range(WALK):
            if active.size == 0:
                return idx
            idx[active] += 1 if up else -1
            at, limit = idx.take(active), (stop if up else start).take(active)
            if up:
                active = active[(at < limit) & (self.a.take(np.minimum(at, last)) <= keys.take(active))]
            else:
                active = active[(at > limit) & (self.a.take(np.maximum(at - 1, 0)) > keys.take(active))]
        if active.size:
            found = np.searchsorted(self.a, keys[active], side="right")
            idx[active] = np.clip(found, start[active], stop[active])  # (a Walsh row is capped at j + 1)
        return idx

    def _gather(self, start: np.ndarray, stop: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
        """The entries with ``start_j <= i < stop_j`` and their weights."""
        sizes = stop - start
        nonempty = sizes.nonzero()[0]  # (most rows hold none: work on those that do)
        sizes = sizes[nonempty]
        total = int(sizes.sum())
        rows = nonempty.repeat(sizes)
        cols = (start[nonempty] - (sizes.cumsum() - sizes)).repeat(sizes) + np.arange(total)
        values = self.a[cols] + self.b[rows]
        self._gathered_rows = rows
        if self.wa is None and self.wb is None:  # unweighted (a diagonal Walsh entry counts 1 x 2 / 2 = 1)
            return values, None
        wa = np.ones(total) if self.wa is None else self.wa[cols]
        wb = np.ones(total) if self.wb is None else self.wb[rows]
        weights = wa * wb
        if self.walsh:
            diagonal = cols == rows
            weights[diagonal] = wb[diagonal] * (wb[diagonal] + 1.0) / 2.0
        return values, weights

    def kth(self, k: float, near: tuple[float, float] | None = None) -> float:
        """The entry at weighted rank ``k`` (0-based: the smallest entry whose
        count of entries up to it exceeds ``k``); ``near``: a guess ``(value,
        half-width)`` of where it lies, to start the search."""
        if not 0 <= k < self.size:
            raise IndexError(k)
        kept = self._kept
        if kept is not None and kept[0] <= k < kept[1]:  # among the entries gathered last: no count
            return self._pick(k, *kept)
        lo = float(self.a[0] + self.b[0])
        lo -= abs(lo) * 1e-12 + 1.0  # below every entry: count 0
        hi = float(self.a[-1] + self.b[-1])
        hi += abs(hi) * 1e-12 + 1e-300  # above every entry, whatever the rounding of p - b
        r_hi = self._rows + 1 if self.walsh else np.full(self.b.size, self.a.size, dtype=np.int64)
        br = _Bracket(lo, hi, 0.0, self.size, np.zeros(self.b.size, dtype=np.int64), r_hi)
        self._start(k, near, br)
        if not self._narrow(k, br):  # a block of equal entries holds the k-th
            self.last_count = math.nan
            return self.next_above(br.lo, br.r_lo)
        self.density = (br.c_hi - br.c_lo) / (br.hi - br.lo) if br.hi > br.lo else math.inf  # entries per unit
        return self._select(k, br)

    def _start(self, k: float, near: tuple[float, float] | None, br: _Bracket) -> None:
        """Narrow the bracket by counting at the ends of ``near``, else of :meth:`_guess`."""
        guesses = (near[0] - near[1], near[0] + near[1]) if near is not None else self._guess(k)
        for p in guesses or ():
            if br.lo < p < br.hi:
                rows = self.positions(p)
                br.move(p, self.weight_of(rows), rows, k)

    def _narrow(self, k: float, br: _Bracket) -> bool:
        """Secant steps on the count until few entries are left in the
        bracket; after a step lands close to the k-th on one side, the next
        aims as far beyond it on the other side (from the slope of the last
        two counts there), so that two counts close the bracket; when that
        would leave the bracket it aims at the k-th, and bisects only when
        that does too.  False when the bracket shrinks to one value."""
        moved = 0
        last: tuple[float, float] | None = None  # the previous step's (value, count) on the side it landed
        # gather when few entries are left: a count costs about one pass over the rows
        limit = min(GATHER if self.wa is None and self.wb is None else GATHER // 10, max(8 * self.b.size, 4096))
        slow = 0  # steps in a row that did not halve the bracket's entries (a secant stalled at a gap): bisect
        unweighted = self.wa is None and self.wb is None  # then the counts are the entries: no pass over the rows
        while (br.c_hi - br.c_lo if unweighted else int((br.r_hi - br.r_lo).sum())) > limit:
            if not br.hi - br.lo > 1e-15 * self.scale:
                return False
            before = br.c_hi - br.c_lo
            p = br.step(k, moved, last) if slow < 2 else br.lo + (br.hi - br.lo) / 2.0
            last = (br.hi, br.c_hi) if moved > 0 else (br.lo, br.c_lo)
            rows = self.positions(p)
            landed = br.move(p, self.weight_of(rows), rows, k)
            # after a secant step, overshoot from where it landed; once across, a secant step again
            moved = landed if moved == 0 else (0 if landed != moved else moved)
            slow = slow + 1 if br.c_hi - br.c_lo > before / 2.0 else 0
        return True

    def _select(self, k: float, br: _Bracket) -> float:
        """The k-th among the entries gathered from a narrow bracket."""
        values, weights = self._gather(br.r_lo, br.r_hi)
        if values.size == 0:
            self.last_count = math.nan
            return self.next_above(br.lo, br.r_lo)
        self._kept = (br.c_lo, br.c_hi, values, weights)  # the next order statistic may lie among them
        self._rows_kept = (br.lo, br.hi, br.r_lo, self._gathered_rows)
        return self._pick(k, br.c_lo, br.c_hi, values, weights)

    def _pick(self, k: float, c_lo: float, c_hi: float, values: np.ndarray, weights: np.ndarray | None) -> float:
        """The k-th entry, from the entries ``values`` of a bracket holding the ranks ``c_lo`` to ``c_hi``."""
        rank = k - c_lo
        if weights is not None:
            ordered, running = self._ordered(values, weights)
            value = float(ordered[min(int(running.searchsorted(rank, side="right")), values.size - 1)])
            end = int(ordered.searchsorted(value, side="right"))
            self.last_count = c_lo + float(running[end - 1])  # the weight of the entries up to the value
            self.last_next = float(ordered[end]) if end < values.size else math.nan  # the next entry, gathered
            return value
        value = float(np.partition(values, int(rank))[int(rank)])
        self.last_count = c_lo + float(np.count_nonzero(values <= value))
        above = values[values > value]
        self.last_next = float(above.min()) if above.size else math.nan  # the next entry, when gathered
        return value

    def _ordered(self, values: np.ndarray, weights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Gathered weighted entries sorted, with their running weight; sorted once per gather (the
        interval's second pick at an end reads the entries gathered for its first).  Any order of equal
        values: the running weight at the end of their run is the same sum, exact when the weights are
        multiples of a power of two small enough, as spread ties' are."""
        if self._sorted is not None and self._sorted[0] is values:
            return self._sorted[1], self._sorted[2]
        order = values.argsort()
        ordered, running = values[order], weights[order].cumsum()
        self._sorted = (values, ordered, running)
        return ordered, running

    def _guess(self, k: float) -> tuple[float, float] | None:
        """A bracket of the k-th entry from a sample of entries (checked by
        counting, so a wrong guess costs time, never correctness)."""
        if self.size <= 4 * GATHER:
            return None
        from abstat.stats.permutation import uniforms  # SplitMix64: numpy.random stays off the compare path

        # a narrower bracket saves counts, when they cost more than the sample
        s = max(2_000, min(200_000, self.b.size // 5))
        u = uniforms(12345, 2 * s)
        rows = np.minimum((u[:s] * self.b.size).astype(np.int64), self.b.size - 1)
        if self.walsh:
            cols = np.minimum((u[s:] * (rows + 1)).astype(np.int64), rows)
        else:
            cols = np.minimum((u[s:] * self.a.size).astype(np.int64), self.a.size - 1)
        values = self.a[cols] + self.b[rows]
        q = k / self.size
        spread = 4.0 * math.sqrt(q * (1 - q) / s) + 4.0 / s
        if self.wa is None and self.wb is None and not self.walsh:  # every entry equally likely: no sort
            low, high = max(0, int((q - spread) * s)), min(s - 1, int(math.ceil((q + spread) * s)))
            part = np.partition(values, [low, high])
            return float(part[low]), float(part[high])
        weights = (np.ones(s) if self.wa is None else self.wa[cols]) * (
            np.ones(s) if self.wb is None else self.wb[rows]
        )
        if self.walsh:
            weights = weights * (rows + 1)  # rows are drawn evenly, entries are not
        order = np.argsort(values)
        values, running = values[order], np.cumsum(weights[order])
        running /= running[-1]
        low = int(np.searchsorted(running, q - spread))
        high = int(np.searchsorted(running, q + spread))
        return float(values[max(0, low - 1)]), float(values[min(s - 1, high)])


def differences(x: np.ndarray, y: np.ndarray, wx: np.ndarray | None = None, wy: np.ndarray | None = None) -> SortedSums:
    """The ``y_j - x_i`` of all pairs (``x``, ``y`` ascending)."""
    return SortedSums(-x[::-1], y, None if wx is None else wx[::-1], wy)


def walsh_sums(x: np.ndarray, w: np.ndarray | None = None) -> SortedSums:
    """The ``x_i + x_j, i <= j`` (twice the Walsh averages; ``x`` ascending)."""
    return SortedSums(x, x, w, w, walsh=True)


def median_of(matrix: SortedSums) -> float:
    """The median of the entries (the mean of the two middle ones for an even count)."""
    n = matrix.size
    low = matrix.kth((n - 1) // 2)
    if n % 2:
        return low
    up_to = matrix.last_count
    if up_to != up_to:  # unknown: count
        up_to = matrix.count(low)
    following = (
        low
        if up_to > n // 2
        else (matrix.last_next if matrix.last_next == matrix.last_next and up_to == up_to else matrix.next_above(low))
    )
    middle = (low + following) / 2.0
    return middle if math.isfinite(middle) else low / 2.0 + following / 2.0


def hodges_lehmann_shift(x: np.ndarray, y: np.ndarray) -> float:
    """Median of the pairwise differences ``y_j - x_i`` (both ascending)."""
    return median_of(differences(x, y))


def pseudo_median(x: np.ndarray, w: np.ndarray | None = None) -> float:
    """Median of the Walsh averages (the one-sample Hodges-Lehmann estimate; ``x`` ascending)."""
    return median_of(walsh_sums(x, w)) / 2.0


class _Bracket:
    """Values ``lo < hi`` with the counts of entries up to them and the rows' positions there."""

    def __init__(self, lo: float, hi: float, c_lo: float, c_hi: float, r_lo: np.ndarray, r_hi: np.ndarray) -> None:
        self.lo, self.hi, self.c_lo, self.c_hi, self.r_lo, self.r_hi = lo, hi, c_lo, c_hi, r_lo, r_hi

    def move(self, p: float, c: float, rows: np.ndarray, k: float) -> int:
        """Narrow to ``p`` (count ``c``): -1 when it became the low end, 1 the high."""
        if c <= k:
            self.lo, self.c_lo, self.r_lo = p, c, rows
            return -1
        self.hi, self.c_hi, self.r_hi = p, c, rows
        return 1

    def step(self, k: float, moved: int, last: tuple[float, float] | None) -> float:
        """The next value to count at (``moved``: the side the last step landed on, 0 after crossing)."""
        lo, hi, width = self.lo, self.hi, self.hi - self.lo
        slope = (self.c_hi - self.c_lo) / width
        if last is not None and moved != 0:  # from where it landed: the slope of the last two counts there
            here = (hi, self.c_hi) if moved > 0 else (lo, self.c_lo)
            if here[0] != last[0] and (here[1] - last[1]) / (here[0] - last[0]) > 0:
                slope = (here[1] - last[1]) / (here[0] - last[0])
        if moved != 0:
            start, gap = (hi, k + 0.5 - self.c_hi) if moved > 0 else (lo, k + 0.5 - self.c_lo)
            p = start + 2.0 * gap / slope
            if not lo < p < hi:  # the k-th lies near the other end: aim at it
                p = start + gap / slope
        else:
            p = lo + (k + 0.5 - self.c_lo) / slope
        return p if lo < p < hi else lo + width / 2.0
