"""Descriptive statistics of one sample: n, min, max, median, mean, stddev.

:func:`describe` is the general-purpose summary (median = mean of the two
middle values for even n, two-pass sample variance with n - 1).  Two
*methods* reproduce what ``ministat`` computes bit for bit:

``"freebsd"``
    today's FreeBSD ministat: mean = running sum in input order / n, true
    median, two-pass variance summed over the *sorted* values.  This is also
    the default (``"standard"``), so abstat agrees with FreeBSD's numbers.
``"classic"``
    the ministat Linux distributions ship: upper median (``x[n // 2]``),
    one-pass variance ``(Σx² - (Σx)²/n) / (n - 1)`` with both sums
    accumulated in input order in doubles.  That variance can come out
    negative; its square root is then ``-nan`` as in C (a NaN with the sign
    bit set), and the negative variance itself is kept in ``variance``.

Pure Python (no numpy): this sits on the fast start-up path.
"""

import math

METHODS = ("standard", "freebsd", "classic")
_NEG_NAN = -math.nan  # NaN with the sign bit set, like x86's default NaN


def c_sqrt(value: float) -> float:
    """``sqrt`` as C on x86-64 computes it: a negative argument gives -nan."""
    if value < 0:
        return _NEG_NAN
    return math.sqrt(value) if value == value else value


def c_div(numerator: float, denominator: float) -> float:
    """IEEE division as C on x86-64 does it: never an exception; 0/0 gives
    the default NaN, which has its sign bit set (printed ``-nan``)."""
    try:
        return numerator / denominator
    except ZeroDivisionError:
        if numerator != numerator:
            return numerator
        if numerator == 0:
            return _NEG_NAN
        return math.copysign(math.inf, numerator) * math.copysign(1.0, denominator)


class Description:
    """Summary of one sample.  ``variance`` is the value the standard
    deviation was taken from (possibly negative for the classic method)."""

    __slots__ = ("n", "min", "max", "median", "mean", "stddev", "variance", "sum", "method")

    def __init__(
        self,
        n: int,
        min: float,
        max: float,
        median: float,
        mean: float,
        stddev: float,
        variance: float,
        sum: float,
        method: str = "standard",
    ) -> None:
        self.n = n
        self.min = min
        self.max = max
        self.median = median
        self.mean = mean
        self.stddev = stddev
        self.variance = variance
        self.sum = sum
        self.method = method

    def to_dict(self) -> dict[str, float | int]:
        return {name: getattr(self, name) for name in ("n", "min", "max", "median", "mean", "stddev")}

    def __repr__(self) -> str:
        fields = ", ".join(
            f"{name}={getattr(self, name)!r}" for name in ("n", "min", "max", "median", "mean", "stddev")
        )
        return f"Description({fields})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Description):
            return NotImplemented
        return all(
            _same(getattr(self, name), getattr(other, name))
            for name in ("n", "min", "max", "median", "mean", "stddev", "variance")
        )

    __hash__ = None  # type: ignore[assignment]


def _same(a: float, b: float) -> bool:
    return a == b or (a != a and b != b)


def running_sums(values) -> tuple[float, float]:
    """``(Σx, Σx²)`` accumulated left to right in doubles, as ministat does."""
    total = 0.0
    squares = 0.0
    for value in values:
        total += value
        squares += value * value
    return total, squares


def one_pass_variance(n: int, total: float, squares: float) -> float:
    """Classic ministat's ``(syy - sy * sy / n) / (n - 1.0)``."""
    return (squares - total * total / n) / (n - 1.0)


def two_pass_variance(sorted_values, mean: float) -> float:
    """FreeBSD ministat's Σ(x - mean)² over the sorted values / (n - 1)."""
    acc = 0.0
    for value in sorted_values:
        acc += (value - mean) * (value - mean)
    return acc / (len(sorted_values) - 1.0)


def describe(
    values: "list[float] | tuple[float, ...]", *, method: str = "standard", presorted: bool = False
) -> Description:
    """Summarise *values* (any iterable of numbers, at least one).

    *method* is ``"standard"`` (= ``"freebsd"``) or ``"classic"``, see the
    module documentation.  With ``presorted=True`` the values must already
    be in ascending order and the running sum is taken in that order.
    For n = 1 the standard deviation is NaN.
    """
    if method not in METHODS:
        raise ValueError(f"unknown method {method!r}; use one of {', '.join(METHODS)}")
    data = [float(value) for value in values]
    n = len(data)
    if n == 0:
        raise ValueError("describe() needs at least one value")
    if method == "classic":
        total, squares = running_sums(data)
    else:
        total = 0.0
        for value in data:
            total += value
        squares = 0.0
    ordered = data if presorted else sorted(data)
    mean = total / n
    half = n // 2
    if method == "classic":
        median = ordered[half]
        variance = one_pass_variance(n, total, squares) if n > 1 else math.nan
    else:
        median = ordered[half] if n % 2 else (ordered[half] + ordered[half - 1]) / 2
        variance = two_pass_variance(ordered, mean) if n > 1 else math.nan
    return Description(
        n=n,
        min=ordered[0],
        max=ordered[-1],
        median=median,
        mean=mean,
        stddev=c_sqrt(variance),
        variance=variance,
        sum=total,
        method=method,
    )
