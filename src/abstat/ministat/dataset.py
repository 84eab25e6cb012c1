"""One data set as ministat sees it: its values sorted, its statistics computed with ministat's
arithmetic in either dialect, and the plot column of each value as C computes it.  Pure Python: this
module is on the fast start-up path (:mod:`abstat.ministat.fast` gives the numpy path for large inputs).
"""

from abstat.stats.descriptive import c_div, c_sqrt, one_pass_variance, running_sums

INT_MIN = -(2**31)
INT_MAX = 2**31 - 1


class SampleSet:
    """One data set as ministat sees it: sorted values and its statistics.

    ``variance`` is the value the standard deviation was computed from
    (classic: one-pass, possibly negative; freebsd: two-pass).  Subclasses
    (the numpy path for large inputs) override :meth:`column_counts`.
    """

    __slots__ = ("n", "min", "max", "median", "mean", "variance", "stddev", "sorted_values")

    def __init__(self, n, minimum, maximum, median, mean, variance, stddev, sorted_values=None) -> None:
        self.n = n
        self.min = minimum
        self.max = maximum
        self.median = median
        self.mean = mean
        self.variance = variance
        self.stddev = stddev
        self.sorted_values = sorted_values

    def column_counts(self, x0: float, dx: float) -> list[tuple[int, int]]:
        """``[(column, count), ...]`` in ascending order of the values, where
        column = ``(int)((value - x0) / dx)`` as C computes it and count is
        the length of each run of equal columns."""
        return column_runs(self.sorted_values, x0, dx)


def column_runs(sorted_values, x0: float, dx: float) -> list[tuple[int, int]]:
    """Runs of equal plot columns of ``sorted_values`` (see ``column_counts``)."""
    runs: list[tuple[int, int]] = []
    last = None
    count = 0
    for value in sorted_values:
        column = c_int(c_div(value - x0, dx))
        if column == last:
            count += 1
        else:
            if last is not None:
                runs.append((last, count))
            last = column
            count = 1
    if last is not None:
        runs.append((last, count))
    return runs


def _freebsd_statistics(data: list[float], ordered: list[float]) -> tuple[float, float, float]:
    """FreeBSD's mean (a sum in input order), median (the middle two averaged) and two-pass variance."""
    n = len(data)
    half = n // 2
    total = 0.0
    for value in data:
        total += value
    mean = total / n
    median = ordered[half] if n % 2 else (ordered[half] + ordered[half - 1]) / 2
    acc = 0.0
    for value in ordered:
        acc += (value - mean) * (value - mean)
    return mean, median, c_div(acc, n - 1.0)


def _classic_statistics(data: list[float], ordered: list[float]) -> tuple[float, float, float]:
    """Classic ministat's mean and one-pass variance (running sums in input order) and upper median."""
    n = len(data)
    total, squares = running_sums(data)
    mean = total / n
    median = ordered[n // 2]
    variance = one_pass_variance(n, total, squares) if n > 1 else c_div(squares - total * total / n, 0.0)
    return mean, median, variance


def c_int(value: float) -> int:
    """C's ``(int)`` of a double on x86-64: truncation, INT_MIN when out of range."""
    if value != value or value >= 2147483648.0 or value <= -2147483649.0:
        return INT_MIN
    return int(value)


def sample_set(values, dialect: str = "classic") -> SampleSet:
    """Build a :class:`SampleSet` from values in input order (ministat's
    arithmetic: running sums in input order, statistics on sorted values)."""
    # values read by the text reader are a list of floats already: no copy of them
    data = values if type(values) is list and set(map(type, values)) <= {float} else [float(v) for v in values]
    n = len(data)
    if n == 0:
        raise ValueError("a data set needs at least one value")
    ordered = sorted(data)
    if dialect == "freebsd":
        mean, median, variance = _freebsd_statistics(data, ordered)
    elif dialect == "classic":
        mean, median, variance = _classic_statistics(data, ordered)
    else:
        raise ValueError(f"unknown ministat dialect {dialect!r}; use classic or freebsd")
    return SampleSet(n, ordered[0], ordered[-1], median, mean, variance, c_sqrt(variance), ordered)
