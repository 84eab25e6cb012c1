"""The kernel tools' formats :mod:`abstat.readers.kernel` reads, named without importing their readers
(``compare FILE FILE`` and ``--input-format`` checks need the names, not the parsers: start-up)."""

FORMATS = (
    "perf-stat",
    "perf-stat-csv",
    "perf-stat-json",
    "fio",
    "iperf3",
    "hackbench",
    "perf-bench",
    "schbench",
    "stress-ng",
    "stress-ng-yaml",
    "kernbench",
    "sysbench",
    "will-it-scale",
)
