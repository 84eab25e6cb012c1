"""Student's t: ministat's critical-value table and the pooled two-sample test.

``t_critical`` reproduces the table ``ministat`` prints its confidence
intervals from, so that ``abstat ministat`` matches it digit for digit:
two-sided critical values for 80, 90, 95, 98 and 99 % confidence for
1 to 100 degrees of freedom, rounded to three decimals, and the normal
quantiles (the "infinity" row) for more than 100 degrees of freedom.

Two historical quirks of that table are kept on purpose (the test-suite
checks every entry against ``scipy.stats.t.ppf``):

* the column ministat labels 99.5 % holds the one-sided 0.999 quantile
  (a 99.8 % two-sided interval), not the 0.9975 one;
* seven entries of that column are off in the last digit
  (df 1, 7-12: e.g. 318.313 where t(0.999, 1) = 318.309).

Everything here is plain Python: it is on the fast start-up path.
"""

import math

from abstat.stats.descriptive import c_div, c_sqrt

CONFIDENCE_LEVELS = (80.0, 90.0, 95.0, 98.0, 99.0, 99.5)
# One-sided quantile each column really holds (see module docstring).
COLUMN_QUANTILES = (0.90, 0.95, 0.975, 0.99, 0.995, 0.999)
MAX_TABLE_DF = 100

# Row 0: df = infinity (used for df > 100); row k: df = k.
_TABLE = (
    (1.282, 1.645, 1.960, 2.326, 2.576, 3.090),  # inf
    (3.078, 6.314, 12.706, 31.821, 63.657, 318.313),  # 1
    (1.886, 2.920, 4.303, 6.965, 9.925, 22.327),  # 2
    (1.638, 2.353, 3.182, 4.541, 5.841, 10.215),  # 3
    (1.533, 2.132, 2.776, 3.747, 4.604, 7.173),  # 4
    (1.476, 2.015, 2.571, 3.365, 4.032, 5.893),  # 5
    (1.440, 1.943, 2.447, 3.143, 3.707, 5.208),  # 6
    (1.415, 1.895, 2.365, 2.998, 3.499, 4.782),  # 7
    (1.397, 1.860, 2.306, 2.896, 3.355, 4.499),  # 8
    (1.383, 1.833, 2.262, 2.821, 3.250, 4.296),  # 9
    (1.372, 1.812, 2.228, 2.764, 3.169, 4.143),  # 10
    (1.363, 1.796, 2.201, 2.718, 3.106, 4.024),  # 11
    (1.356, 1.782, 2.179, 2.681, 3.055, 3.929),  # 12
    (1.350, 1.771, 2.160, 2.650, 3.012, 3.852),  # 13
    (1.345, 1.761, 2.145, 2.624, 2.977, 3.787),  # 14
    (1.341, 1.753, 2.131, 2.602, 2.947, 3.733),  # 15
    (1.337, 1.746, 2.120, 2.583, 2.921, 3.686),  # 16
    (1.333, 1.740, 2.110, 2.567, 2.898, 3.646),  # 17
    (1.330, 1.734, 2.101, 2.552, 2.878, 3.610),  # 18
    (1.328, 1.729, 2.093, 2.539, 2.861, 3.579),  # 19
    (1.325, 1.725, 2.086, 2.528, 2.845, 3.552),  # 20
    (1.323, 1.721, 2.080, 2.518, 2.831, 3.527),  # 21
    (1.321, 1.717, 2.074, 2.508, 2.819, 3.505),  # 22
    (1.319, 1.714, 2.069, 2.500, 2.807, 3.485),  # 23
    (1.318, 1.711, 2.064, 2.492, 2.797, 3.467),  # 24
    (1.316, 1.708, 2.060, 2.485, 2.787, 3.450),  # 25
    (1.315, 1.706, 2.056, 2.479, 2.779, 3.435),  # 26
    (1.314, 1.703, 2.052, 2.473, 2.771, 3.421),  # 27
    (1.313, 1.701, 2.048, 2.467, 2.763, 3.408),  # 28
    (1.311, 1.699, 2.045, 2.462, 2.756, 3.396),  # 29
    (1.310, 1.697, 2.042, 2.457, 2.750, 3.385),  # 30
    (1.309, 1.696, 2.040, 2.453, 2.744, 3.375),  # 31
    (1.309, 1.694, 2.037, 2.449, 2.738, 3.365),  # 32
    (1.308, 1.692, 2.035, 2.445, 2.733, 3.356),  # 33
    (1.307, 1.691, 2.032, 2.441, 2.728, 3.348),  # 34
    (1.306, 1.690, 2.030, 2.438, 2.724, 3.340),  # 35
    (1.306, 1.688, 2.028, 2.434, 2.719, 3.333),  # 36
    (1.305, 1.687, 2.026, 2.431, 2.715, 3.326),  # 37
    (1.304, 1.686, 2.024, 2.429, 2.712, 3.319),  # 38
    (1.304, 1.685, 2.023, 2.426, 2.708, 3.313),  # 39
    (1.303, 1.684, 2.021, 2.423, 2.704, 3.307),  # 40
    (1.303, 1.683, 2.020, 2.421, 2.701, 3.301),  # 41
    (1.302, 1.682, 2.018, 2.418, 2.698, 3.296),  # 42
    (1.302, 1.681, 2.017, 2.416, 2.695, 3.291),  # 43
    (1.301, 1.680, 2.015, 2.414, 2.692, 3.286),  # 44
    (1.301, 1.679, 2.014, 2.412, 2.690, 3.281),  # 45
    (1.300, 1.679, 2.013, 2.410, 2.687, 3.277),  # 46
    (1.300, 1.678, 2.012, 2.408, 2.685, 3.273),  # 47
    (1.299, 1.677, 2.011, 2.407, 2.682, 3.269),  # 48
    (1.299, 1.677, 2.010, 2.405, 2.680, 3.265),  # 49
    (1.299, 1.676, 2.009, 2.403, 2.678, 3.261),  # 50
    (1.298, 1.675, 2.008, 2.402, 2.676, 3.258),  # 51
    (1.298, 1.675, 2.007, 2.400, 2.674, 3.255),  # 52
    (1.298, 1.674, 2.006, 2.399, 2.672, 3.251),  # 53
    (1.297, 1.674, 2.005, 2.397, 2.670, 3.248),  # 54
    (1.297, 1.673, 2.004, 2.396, 2.668, 3.245),  # 55
    (1.297, 1.673, 2.003, 2.395, 2.667, 3.242),  # 56
    (1.297, 1.672, 2.002, 2.394, 2.665, 3.239),  # 57
    (1.296, 1.672, 2.002, 2.392, 2.663, 3.237),  # 58
    (1.296, 1.671, 2.001, 2.391, 2.662, 3.234),  # 59
    (1.296, 1.671, 2.000, 2.390, 2.660, 3.232),  # 60
    (1.296, 1.670, 2.000, 2.389, 2.659, 3.229),  # 61
    (1.295, 1.670, 1.999, 2.388, 2.657, 3.227),  # 62
    (1.295, 1.669, 1.998, 2.387, 2.656, 3.225),  # 63
    (1.295, 1.669, 1.998, 2.386, 2.655, 3.223),  # 64
    (1.295, 1.669, 1.997, 2.385, 2.654, 3.220),  # 65
    (1.295, 1.668, 1.997, 2.384, 2.652, 3.218),  # 66
    (1.294, 1.668, 1.996, 2.383, 2.651, 3.216),  # 67
    (1.294, 1.668, 1.995, 2.382, 2.650, 3.214),  # 68
    (1.294, 1.667, 1.995, 2.382, 2.649, 3.213),  # 69
    (1.294, 1.667, 1.994, 2.381, 2.648, 3.211),  # 70
    (1.294, 1.667, 1.994, 2.380, 2.647, 3.209),  # 71
    (1.293, 1.666, 1.993, 2.379, 2.646, 3.207),  # 72
    (1.293, 1.666, 1.993, 2.379, 2.645, 3.206),  # 73
    (1.293, 1.666, 1.993, 2.378, 2.644, 3.204),  # 74
    (1.293, 1.665, 1.992, 2.377, 2.643, 3.202),  # 75
    (1.293, 1.665, 1.992, 2.376, 2.642, 3.201),  # 76
    (1.293, 1.665, 1.991, 2.376, 2.641, 3.199),  # 77
    (1.292, 1.665, 1.991, 2.375, 2.640, 3.198),  # 78
    (1.292, 1.664, 1.990, 2.374, 2.640, 3.197),  # 79
    (1.292, 1.664, 1.990, 2.374, 2.639, 3.195),  # 80
    (1.292, 1.664, 1.990, 2.373, 2.638, 3.194),  # 81
    (1.292, 1.664, 1.989, 2.373, 2.637, 3.193),  # 82
    (1.292, 1.663, 1.989, 2.372, 2.636, 3.191),  # 83
    (1.292, 1.663, 1.989, 2.372, 2.636, 3.190),  # 84
    (1.292, 1.663, 1.988, 2.371, 2.635, 3.189),  # 85
    (1.291, 1.663, 1.988, 2.370, 2.634, 3.188),  # 86
    (1.291, 1.663, 1.988, 2.370, 2.634, 3.187),  # 87
    (1.291, 1.662, 1.987, 2.369, 2.633, 3.185),  # 88
    (1.291, 1.662, 1.987, 2.369, 2.632, 3.184),  # 89
    (1.291, 1.662, 1.987, 2.368, 2.632, 3.183),  # 90
    (1.291, 1.662, 1.986, 2.368, 2.631, 3.182),  # 91
    (1.291, 1.662, 1.986, 2.368, 2.630, 3.181),  # 92
    (1.291, 1.661, 1.986, 2.367, 2.630, 3.180),  # 93
    (1.291, 1.661, 1.986, 2.367, 2.629, 3.179),  # 94
    (1.291, 1.661, 1.985, 2.366, 2.629, 3.178),  # 95
    (1.290, 1.661, 1.985, 2.366, 2.628, 3.177),  # 96
    (1.290, 1.661, 1.985, 2.365, 2.627, 3.176),  # 97
    (1.290, 1.661, 1.984, 2.365, 2.627, 3.175),  # 98
    (1.290, 1.660, 1.984, 2.365, 2.626, 3.175),  # 99
    (1.290, 1.660, 1.984, 2.364, 2.626, 3.174),  # 100
)


def confidence_index(confidence: float) -> int:
    """Column of *confidence* (percent like 95, or a fraction like 0.95)."""
    value = float(confidence)
    for index, level in enumerate(CONFIDENCE_LEVELS):
        if value == level or value * 100.0 == level or round(value * 100.0, 9) == level:
            return index
    levels = ", ".join(f"{level:g}" for level in CONFIDENCE_LEVELS)
    raise ValueError(f"no t table entry for confidence {confidence:g}; use one of {levels} (%)")


def t_critical(df: int, confidence: float) -> float:
    """ministat's two-sided critical t for *df* degrees of freedom.

    *confidence* is one of 80, 90, 95, 98, 99, 99.5 (percent; fractions
    such as 0.95 are accepted too).  For df > 100 the normal quantile (the
    table's infinity row) is returned.
    """
    df = int(df)
    if df < 1:
        raise ValueError(f"degrees of freedom must be at least 1, not {df}")
    column = confidence_index(confidence)
    row = 0 if df > MAX_TABLE_DF else df
    return _TABLE[row][column]


class PooledT:
    """Result of :func:`pooled_t`.  ``difference`` is mean2 - mean1
    (candidate minus baseline); relative values are in percent of mean1."""

    __slots__ = (
        "n1",
        "n2",
        "df",
        "confidence",
        "t",
        "difference",
        "half_width",
        "pooled_sd",
        "significant",
        "relative_pct",
        "relative_half_width_pct",
        "relative_half_width_pct_freebsd",
    )
    # The fields, for mypy and readers (annotations only: no class attributes, so __slots__ holds).
    n1: int
    n2: int
    df: int
    confidence: float
    t: float
    difference: float
    half_width: float
    pooled_sd: float
    significant: bool
    relative_pct: float
    relative_half_width_pct: float
    relative_half_width_pct_freebsd: float

    def __init__(self, **fields: float) -> None:
        for name in self.__slots__:
            setattr(self, name, fields[name])

    def relative_half_width(self, dialect: str = "classic") -> float:
        """Half-width of the relative interval, percent, for a ministat dialect."""
        if dialect == "freebsd":
            return self.relative_half_width_pct_freebsd
        return self.relative_half_width_pct

    def to_dict(self) -> dict[str, float]:
        return {name: getattr(self, name) for name in self.__slots__}

    def __repr__(self) -> str:
        return "PooledT(" + ", ".join(f"{name}={getattr(self, name)!r}" for name in self.__slots__) + ")"


def pooled_t(
    n1: int,
    mean1: float,
    sd1: float,
    n2: int,
    mean2: float,
    sd2: float,
    confidence: float = 95.0,
    *,
    var1: float | None = None,
    var2: float | None = None,
) -> PooledT:
    """Student's two-sample t with pooled variance, as ministat computes it.

    Sample 1 is the baseline, sample 2 the candidate.  Returns the
    difference of means, the half-width ``t * s_pooled * sqrt(1/n1 + 1/n2)``
    of its confidence interval (t from :func:`t_critical`), the pooled
    standard deviation and the relative difference and half-widths in percent
    of mean1: ``relative_half_width_pct`` as classic ministat (half-width /
    mean1) and ``relative_half_width_pct_freebsd`` as today's FreeBSD
    ministat (which also accounts for the baseline's variance).  *var1* /
    *var2* override ``sd ** 2`` so callers can pass the exact variances.
    The floating-point operations follow ministat's order exactly.
    """
    n1 = int(n1)
    n2 = int(n2)
    if n1 < 2 or n2 < 2:
        raise ValueError("pooled_t needs at least two values in each sample")
    v1 = sd1 * sd1 if var1 is None else var1
    v2 = sd2 * sd2 if var2 is None else var2
    df = n1 + n2 - 2
    t = t_critical(df, confidence)
    # ministat's Relative(ds = candidate, rs = baseline).
    spool = (n2 - 1) * v2 + (n1 - 1) * v1
    spool /= df
    spool = c_sqrt(spool)
    s = spool * c_sqrt(1.0 / n2 + 1.0 / n1)
    d = mean2 - mean1
    e = t * s
    re = (n2 - 1) * v2 + c_div((n1 - 1) * v1 * (mean2 * mean2), mean1 * mean1)
    re *= (n2 + n1) / (n2 * n1 * (n2 + n1 - 2.0))
    re = t * c_sqrt(re)
    return PooledT(
        n1=n1,
        n2=n2,
        df=df,
        confidence=CONFIDENCE_LEVELS[confidence_index(confidence)],
        t=t,
        difference=d,
        half_width=e,
        pooled_sd=spool,
        significant=bool(math.fabs(d) > e),
        relative_pct=_ratio(d * 100, mean1),
        relative_half_width_pct=_ratio(e * 100, mean1),
        relative_half_width_pct_freebsd=_ratio(re * 100, mean1),
    )


def _ratio(numerator: float, denominator: float) -> float:
    return c_div(numerator, denominator)
