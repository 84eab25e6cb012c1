"""Pilots at the ends of double precision, planned as at ordinary sizes (attack20 A7).

Sums of squares of values near 1e-300 underflow to 0 and of values near 1e200 overflow, so ``plan`` printed a
standard deviation of 0 or inf and sizes that had nothing to do with the data, while ``compare`` judged the same
files right.  A plan's sizes do not depend on the unit the values are in, so pilots whose largest magnitude is
beyond 2^±500 are multiplied by a power of two (exact: only the exponent changes) that brings it near 1, planned,
and the plan's absolute figures (the change to detect, the pilots' means and standard deviations, the variance
components) divided back; variance components that double precision cannot hold (values beyond ~1e154) are an
OverflowError, which ``plan`` reports in one line.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from types import SimpleNamespace
from typing import Any

LIMIT = 2.0**500  # beyond this magnitude (or below its inverse) a square leaves double precision


def _largest(data: object) -> float:
    """The largest finite magnitude a pilot holds (a summary's mean and standard deviation, a sample, runs)."""
    import numpy as np

    data = getattr(data, "data", data)
    if hasattr(data, "n") and hasattr(data, "mean") and hasattr(data, "stddev"):
        values = np.abs([float(data.mean), float(data.stddev)])
    else:
        runs = list(data)  # type: ignore[call-overload]
        if not runs:
            return 0.0  # (no values: plan says so)
        nested = bool(runs) and hasattr(runs[0], "__len__")
        values = np.abs(
            np.concatenate([np.asarray(r, dtype=float) for r in runs]) if nested else np.asarray(runs, dtype=float)
        )
    finite = values[np.isfinite(values)]
    return float(finite.max()) if finite.size else 0.0


def scale_of(variants: Mapping[str, object]) -> float:
    """1.0 for ordinary pilots, else the power of two that brings the largest magnitude near 1."""
    top = max((_largest(data) for data in variants.values()), default=0.0)
    if top == 0.0 or 1.0 / LIMIT <= top <= LIMIT:
        return 1.0
    return math.ldexp(1.0, -math.frexp(top)[1])


def _scaled_one(data: object, factor: float) -> object:
    data = getattr(data, "data", data)
    if hasattr(data, "n") and hasattr(data, "mean") and hasattr(data, "stddev"):
        return SimpleNamespace(n=data.n, mean=float(data.mean) * factor, stddev=float(data.stddev) * factor)
    values = list(data)  # type: ignore[call-overload]
    if values and hasattr(values[0], "__len__"):
        return [[float(v) * factor for v in run] for run in values]
    return [float(v) * factor for v in values]


def scaled(variants: Mapping[str, object], factor: float) -> dict[str, object]:
    """The pilots multiplied by ``factor`` (a power of two)."""
    return {name: _scaled_one(data, factor) for name, data in variants.items()}


def scaled_pilots(variants: Mapping[str, object], detect: float, relative: bool) -> tuple[Any, float, float]:
    """(the pilots, the change to detect, the factor): multiplied by :func:`scale_of`'s power of two when their
    magnitudes leave the safe range (an absolute change with them), else as given with factor 1."""
    factor = scale_of(variants)
    if factor == 1.0:
        return variants, detect, factor
    return scaled(variants, factor), detect if relative else detect * factor, factor


def unscale(result: Any, factor: float) -> None:
    """A plan made on pilots multiplied by ``factor``, in the pilots' own unit again."""
    if factor == 1.0:
        return
    result.detect = result.detect / factor
    for pilot in result.variants:
        pilot.mean, pilot.stddev = pilot.mean / factor, pilot.stddev / factor
    for name in ("within", "between"):  # variances: the factor twice, one at a time (its square may not exist)
        value = getattr(result, name)
        if value is not None:
            back = value / factor / factor
            if value and not 0.0 < abs(back) < math.inf:  # a variance double precision cannot hold
                raise OverflowError(f"the variance components' {name} leaves double precision")
            setattr(result, name, back)
