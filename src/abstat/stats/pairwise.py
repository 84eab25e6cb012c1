"""Order statistics of pairwise sums without forming them: O(n log n) per count.

The two-sample Hodges-Lehmann estimate is the median of the ``n1 n2``
differences ``y_j - x_i``, the one-sample one (the pseudo-median) the median
of the ``n (n + 1) / 2`` Walsh averages ``(x_i + x_j) / 2, i <= j``.  Both
are order statistics of a *sorted matrix* ``a_i + b_j`` (``a`` and ``b``
ascending, row ``j`` holding ``i < cap_j``): the number of its entries up to
a value is one vectorised binary search of ``p - b`` in ``a``.  An order
statistic is found by interpolation on that count (Illinois regula falsi,
bisection as the safeguard) until few entries lie in the bracket, which are
then gathered and partially sorted; with 10^6 values per side about ten
counts suffice.  This is the selection of Johnson & Mizoguchi (1978) and
Monahan (1984) by a different search for the bracket.
"""
from __future__ import annotations

import math

import numpy as np

GATHER = 200_000  # gather the entries of a bracket holding at most this many (or 4 n)


class SortedSums:
    """The entries ``a_i + b_j`` for ``i < cap_j`` (``a``, ``b`` ascending,
    ``cap`` non-decreasing)."""

    def __init__(self, a: np.ndarray, b: np.ndarray, cap: np.ndarray | int) -> None:
        self.a, self.b = a, b
        self.cap = np.broadcast_to(np.asarray(cap, dtype=np.int64), b.shape)
        self.size = int(self.cap.sum())
        self._rb = b[::-1]  # queries p - b ascend when b is reversed: cache-friendly searches

    def _row_counts(self, p: float, side: str) -> np.ndarray:
        """Per row: entries ``< p`` (``side="left"``) or ``<= p`` (``"right"``)."""
        found = np.searchsorted(self.a, p - self._rb, side=side)[::-1]
        return np.minimum(found, self.cap)

    def count(self, p: float, side: str = "right") -> int:
        return int(self._row_counts(p, side).sum())

    def _gather(self, start: np.ndarray, stop: np.ndarray) -> np.ndarray:
        """The entries ``a_i + b_j`` with ``start_j <= i < stop_j``."""
        sizes = stop - start
        total = int(sizes.sum())
        rows = np.repeat(np.arange(self.b.size), sizes)
        cols = np.repeat(start - (np.cumsum(sizes) - sizes), sizes) + np.arange(total)
        return self.a[cols] + self.b[rows]

    def next_above(self, p: float, rows: np.ndarray | None = None) -> float:
        """The smallest entry ``> p`` (inf if none); ``rows``: the per-row counts at ``p``."""
        start = self._row_counts(p, "right") if rows is None else rows
        ok = start < self.cap
        if not ok.any():
            return math.inf
        return float(np.min(self.a[start[ok]] + self.b[ok]))

    def kth(self, k: int) -> float:
        """The ``k``-th smallest entry (0-based)."""
        return self._kth(k)[0]

    def _kth(self, k: int) -> tuple[float, np.ndarray]:
        """The ``k``-th smallest entry (0-based) and the per-row counts of entries up to it."""
        if not 0 <= k < self.size:
            raise IndexError(k)
        lo = float(self.a[0] + self.b[0]) - 1.0  # below every entry: count 0
        lo = lo - abs(lo) * 1e-12
        hi = float(self.a[-1] + self.b[-1])
        hi = hi + abs(hi) * 1e-12 + 1e-300  # above every entry, whatever the rounding of p - b
        r_lo, r_hi = np.zeros(self.b.size, dtype=np.int64), self.cap
        c_lo, c_hi = 0, self.size
        for p in self._guess(k) or ():
            rows = self._row_counts(p, "right")
            c = int(rows.sum())
            if c <= k and p > lo:
                lo, c_lo, r_lo = p, c, rows
            elif c > k and p < hi:
                hi, c_hi, r_hi = p, c, rows
        resolution = 1e-15 * (float(np.max(np.abs(self.a))) + float(np.max(np.abs(self.b))))
        side = 0  # Illinois: which end was kept last
        f_lo, f_hi = float(c_lo - k - 0.5), float(c_hi - k - 0.5)
        while c_hi - c_lo > GATHER:
            width = hi - lo
            if not width > resolution:  # a block of equal entries holds the k-th
                value = self.next_above(lo, r_lo)
                return value, self._row_counts(value, "right")
            p = hi - f_hi * width / (f_hi - f_lo)
            if not lo < p < hi:
                p = lo + width / 2.0
            rows = self._row_counts(p, "right")
            c = int(rows.sum())
            f = float(c - k - 0.5)
            if c <= k:
                lo, c_lo, r_lo, f_lo = p, c, rows, f
                if side == -1:
                    f_hi /= 2.0
                side = -1
            else:
                hi, c_hi, r_hi, f_hi = p, c, rows, f
                if side == 1:
                    f_lo /= 2.0
                side = 1
        values = self._gather(r_lo, r_hi)
        order = np.argpartition(values, k - c_lo)
        value = float(values[order[k - c_lo]])
        # counts up to the value: those up to lo, and the gathered ones not above it
        inside = np.zeros(self.b.size, dtype=np.int64)
        sizes = r_hi - r_lo
        keep = values <= value
        if keep.any():
            rows_of = np.repeat(np.arange(self.b.size), sizes)
            inside = np.bincount(rows_of[keep], minlength=self.b.size)
        return value, r_lo + inside

    def _guess(self, k: int) -> tuple[float, float] | None:
        """A bracket of the k-th entry from a sample of entries (checked by
        counting, so a wrong guess costs time, never correctness)."""
        if self.size <= 4 * GATHER:
            return None
        rng = np.random.default_rng(k)
        s = 20_000
        weights = np.cumsum(self.cap)
        pick = rng.integers(0, self.size, s)
        rows = np.searchsorted(weights, pick, side="right")
        cols = (rng.random(s) * self.cap[rows]).astype(np.int64)
        sample = np.sort(self.a[cols] + self.b[rows])
        q = k / self.size
        spread = 4.0 * math.sqrt(q * (1 - q) / s) + 2.0 / s
        low = sample[max(0, int((q - spread) * s))]
        high = sample[min(s - 1, int(math.ceil((q + spread) * s)))]
        return float(low), float(high)


def differences(x_sorted: np.ndarray, y_sorted: np.ndarray) -> SortedSums:
    """The ``y_j - x_i`` of all pairs."""
    return SortedSums(-x_sorted[::-1], y_sorted, x_sorted.size)


def walsh_sums(x_sorted: np.ndarray) -> SortedSums:
    """The ``x_i + x_j, i <= j`` (twice the Walsh averages)."""
    return SortedSums(x_sorted, x_sorted, np.arange(1, x_sorted.size + 1))


def median_of(matrix: SortedSums) -> float:
    """The median of the entries (the mean of the two middle ones for an even count)."""
    n = matrix.size
    low, rows = matrix._kth((n - 1) // 2)
    if n % 2:
        return low
    following = low if int(rows.sum()) > n // 2 else matrix.next_above(low, rows)
    middle = (low + following) / 2.0
    return middle if math.isfinite(middle) else low / 2.0 + following / 2.0


def hodges_lehmann_shift(x_sorted: np.ndarray, y_sorted: np.ndarray) -> float:
    """Median of the pairwise differences ``y_j - x_i``."""
    return median_of(differences(x_sorted, y_sorted))


def pseudo_median(x_sorted: np.ndarray) -> float:
    """Median of the Walsh averages (the one-sample Hodges-Lehmann estimate)."""
    return median_of(walsh_sums(x_sorted)) / 2.0
