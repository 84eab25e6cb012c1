"""Input shapes of ``abstat.compare``: samples, runs of samples, summaries;
and the exact power-of-two rescaling that keeps extreme data in range."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from abstat.errors import InputError, UsageError
from abstat.fastdataclass import dataclass
from abstat.readers.summary import Summary


@dataclass
class VariantSamples:
    name: str
    runs: list[Any] | None  # numpy arrays
    summary: Summary | None

    @property
    def nested(self) -> bool:
        return self.runs is not None and len(self.runs) > 1


def _is_number(value: Any) -> bool:
    return (
        isinstance(value, (int, float))
        and not isinstance(value, bool)
        or (hasattr(value, "dtype") and getattr(value, "ndim", 1) == 0)
    )


def _equal_length_runs(groups: list[Any]) -> Any:
    """Runs of one length as a 2-D float array (one conversion, not one per
    run), else None."""
    import numpy as np

    try:
        array = np.asarray(groups, dtype=float)
    except (TypeError, ValueError):
        return None
    return array if array.ndim == 2 and array.shape[1] > 0 else None


def as_variant(data: Any, name: str) -> VariantSamples:
    import numpy as np

    from abstat.readers.specs import VariantData

    if isinstance(data, VariantData):
        return as_variant(data.data, data.name)
    if isinstance(data, Summary):
        if not (isinstance(data.n, int) and data.n >= 2):
            raise InputError(f"summary: n must be an integer of at least 2, not {data.n!r}", path=name)
        if not (math.isfinite(data.mean) and math.isfinite(data.stddev) and data.stddev >= 0):
            raise InputError("summary: the mean and standard deviation must be finite, the deviation >= 0", path=name)
        return VariantSamples(name, None, data)
    if isinstance(data, (str, bytes)) or not isinstance(data, (Sequence, np.ndarray)):
        raise UsageError(f"{name}: expected a sequence of numbers, of runs, or a Summary, not {type(data).__name__}")
    if len(data) == 0:
        raise InputError("no samples", path=name)
    first = data[0]
    if _is_number(first):
        groups = [data]
    else:
        groups = list(data)
        equal_runs = _equal_length_runs(groups)
        if equal_runs is not None:
            bad = np.argwhere(~np.isfinite(equal_runs))
            if bad.size:
                raise InputError(
                    f"value {int(bad[0][1]) + 1} of run {int(bad[0][0]) + 1} is not a finite number", path=name
                )
            return VariantSamples(name, list(equal_runs), None)
    runs = []
    for index, group in enumerate(groups, start=1):
        try:
            arr = np.asarray(group, dtype=float)
        except (TypeError, ValueError):
            raise InputError(f"run {index} is not a sequence of numbers", path=name) from None
        if arr.ndim != 1:
            raise InputError(f"run {index} is not a flat sequence of numbers", path=name)
        if arr.size == 0:
            raise InputError(f"run {index} has no samples", path=name)
        finite = np.isfinite(arr)
        if not finite.all():
            bad_at = (~finite).nonzero()[0]
            raise InputError(f"value {int(bad_at[0]) + 1} of run {index} is not a finite number", path=name)
        runs.append(arr)
    return VariantSamples(name, runs, None)


def scale_factor(vx: VariantSamples, vy: VariantSamples) -> float:
    """A power of two that brings the largest magnitude near 1: multiplying
    by it is exact in floating point, invisible in relative changes and
    p-values, and keeps squares of 1e-300 or 1e300 from under- or
    overflowing (1.0 when the data are in a safe range)."""
    import numpy as np

    magnitudes = []
    for v in (vx, vy):
        if v.summary is not None:
            magnitudes += [abs(v.summary.mean), v.summary.stddev]
        else:
            assert v.runs is not None
            magnitudes += [float(np.max(np.abs(r))) for r in v.runs]
    top = max(magnitudes)
    if top == 0.0 or not math.isfinite(top):
        return 1.0
    exponent = math.frexp(top)[1]
    if -64 <= exponent <= 64:
        return 1.0
    return math.ldexp(1.0, min(-exponent, 1023))  # 2**1024 is not a double


def rescaled(vx: VariantSamples, vy: VariantSamples, factor: float) -> tuple[VariantSamples, VariantSamples]:
    """Both variants multiplied by ``factor`` (see :func:`scale_factor`)."""
    if factor == 1.0:
        return vx, vy

    def scale(v: VariantSamples) -> VariantSamples:
        if v.summary is not None:
            s = v.summary
            return VariantSamples(v.name, None, Summary(s.n, s.mean * factor, s.stddev * factor))
        assert v.runs is not None
        return VariantSamples(v.name, [r * factor for r in v.runs], None)

    return scale(vx), scale(vy)
