"""Summary-statistics inputs: ``name=n:mean:stddev``.

A table of vitals (N, Avg, Stddev as ministat prints them, or from a paper)
stands in for a sample file wherever abstat accepts one, e.g.
``before=98:438.97959:6.6564899``.  Only analyses that can work from these
three numbers (Welch's t on means) run on them; the rest say that they need
raw samples.
"""

from __future__ import annotations

import math
import re

from abstat.errors import InputError
from abstat.fastdataclass import dataclass

_NUMBER = r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?"
_SUMMARY = rf"\A\s*(\d+)\s*:\s*({_NUMBER})\s*:\s*({_NUMBER})\s*\Z"  # compiled for the first summary parsed
MAX_N_DIGITS = 15  # beyond this a sample count is a typo, and int() of thousands of digits raises


@dataclass(frozen=True)
class Summary:
    """The vitals of a sample whose values are not available."""

    n: int
    mean: float
    stddev: float

    def to_dict(self) -> dict[str, float | int]:
        return {"n": self.n, "mean": self.mean, "stddev": self.stddev}


def looks_like_summary(text: str) -> bool:
    """True for ``n:mean:stddev``, well-formed or not: three colon-separated fields and no path separator
    (meant as a summary even when a field is malformed: then parse_summary says which)."""
    return text.count(":") == 2 and "/" not in text


def parse_summary(text: str, *, source: str | None = None) -> Summary:
    """Parse ``n:mean:stddev``; InputError naming ``source`` when invalid."""
    where = source if source is not None else text
    match = re.match(_SUMMARY, text, re.ASCII)
    if match is None:
        raise InputError(f"not a summary n:mean:stddev ({_what_is_wrong(text)}): {text!r}", path=where)
    if len(match.group(1).lstrip("0")) > MAX_N_DIGITS:
        raise InputError(f"n has {len(match.group(1).lstrip('0'))} digits: not a plausible sample count", path=where)
    n = int(match.group(1))
    mean = float(match.group(2))
    stddev = float(match.group(3))
    _check_values(n, mean, stddev, where)
    return Summary(n, mean, stddev)


def _check_values(n: int, mean: float, stddev: float, where: str) -> None:
    """Two values at least, a finite mean and a finite standard deviation that is not negative."""
    if n < 2:
        raise InputError(f"a summary needs n >= 2 to carry a spread, got n={n}", path=where)
    if not (math.isfinite(mean) and math.isfinite(stddev)):
        raise InputError("summary values must be finite numbers", path=where)
    if stddev < 0:
        raise InputError(f"a standard deviation cannot be negative: {stddev!r}", path=where)


def _what_is_wrong(text: str) -> str:
    fields = [field.strip() for field in text.split(":")]
    if len(fields) != 3:
        return "it needs exactly three fields"
    if not re.fullmatch(r"\d+", fields[0], re.ASCII):
        return "n must be a whole number"
    for name, field in zip(("mean", "stddev"), fields[1:]):
        if not re.fullmatch(_NUMBER, field, re.ASCII):
            return f"{name} must be a finite number"
    return "malformed"
