"""Printed numbers as intervals.

ministat prints the vitals with ``%13.8g`` (8 significant digits) and the
comparison lines with ``%g`` (6 significant digits).  ``%g`` drops trailing
zeros, so ``420`` printed by ``%.8g`` stands for 420.00000, i.e. every
number in [419.999995, 420.000005].  A printed value is therefore the
interval of all doubles that print as that text at the given precision.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation

VITALS_DIGITS = 8  # %13.8g
LINE_DIGITS = 6  # %g
DOUBLE_DECADES = 400  # beyond 10^308 and below 10^-324 (and their digits) a double is inf or 0


@dataclass(frozen=True)
class Printed:
    """A number as printed, with the interval of values that print so."""

    text: str
    value: float
    low: float
    high: float

    def contains(self, low: float, high: float) -> bool:
        """True when [low, high] meets this printed interval."""
        return low <= self.high and high >= self.low

    def to_json(self) -> float | None:
        return None if math.isnan(self.value) else self.value


def printed(text: str, digits: int) -> Printed:
    """Interval of the reals that ``%.{digits}g`` prints as ``text``.

    ``nan``/``-nan`` (ministat's classic one-pass variance of constant data)
    gives a NaN interval; ``0`` is exact (``%g`` never rounds a non-zero value
    to 0).
    """
    stripped = text.strip()
    if stripped.lstrip("+-").lower() in ("nan", "inf", "infinity"):
        value = float(stripped)
        return Printed(stripped, value, value, value)
    try:
        number = Decimal(stripped)
    except InvalidOperation:
        raise ValueError(f"not a number: {text!r}") from None
    value = float(number)
    if number == 0:
        return Printed(stripped, 0.0, 0.0, 0.0)
    exponent = number.adjusted()  # position of the leading digit
    if not math.isfinite(value) or abs(exponent) > DOUBLE_DECADES:
        # beyond a double's range no double prints as this text: the double it reads as (inf or 0), alone
        # (the decimal context cannot scale such an exponent: '-25.1e9993489' was an internal error)
        return Printed(stripped, value, value, value)
    half = Decimal(5).scaleb(exponent - digits)  # half a unit in the last digit
    magnitude = abs(number)
    # A power of ten may be the rounded-up image of numbers one decade below,
    # whose last digit is ten times finer.
    lower_half = half / 10 if magnitude == Decimal(1).scaleb(exponent) else half
    if number > 0:
        low, high = number - lower_half, number + half
    else:
        low, high = number - half, number + lower_half
    return Printed(stripped, value, float(low), float(high))


def format_g(value: float, digits: int = LINE_DIGITS) -> str:
    """C's ``%.{digits}g`` (Python's ``%g`` follows C)."""
    return "%.*g" % (digits, value)
