"""``abstat.compare(...)``: compare a candidate with a baseline.

The package splits the work by concern: :mod:`.inputs` (input shapes,
rescaling), :mod:`.summaries` (per-variant summaries and diagnostics),
:mod:`.analyses` (one function per estimand family), :mod:`.core` (the
orchestration and the verdict), :mod:`.model` (the result values).
"""

from abstat.comparison.core import compare, compare_many, decide
from abstat.comparison.model import (
    CENTERS,
    ESTIMANDS,
    JSON_VERSION,
    OUTLIER_RULES,
    VERDICTS,
    Comparison,
    RunSummary,
    VariantSummary,
    estimand_label,
)

__all__ = [
    "CENTERS",
    "ESTIMANDS",
    "JSON_VERSION",
    "OUTLIER_RULES",
    "VERDICTS",
    "Comparison",
    "RunSummary",
    "VariantSummary",
    "compare",
    "compare_many",
    "decide",
    "estimand_label",
]
