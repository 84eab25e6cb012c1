"""Kernel tools' outputs that ``abstat audit`` recognizes by their signature lines but cannot compare,
named as such (an unreadable :class:`~abstat.audit.kernel_blocks.Claim`) instead of passed over in
silence: what each is, and why no comparison can be recomputed from it."""

from __future__ import annotations

import re

from abstat.audit.findings import Finding
from abstat.audit.kernel_blocks import Claim
from abstat.audit.scan_lines import strip_quote

# (name, signature, why it is not compared); searched line by line, first match wins
SIGNATURES: tuple[tuple[str, re.Pattern[str], str], ...] = (
    (
        "kernel test robot table (rewrapped)",
        re.compile(r"%stddev\s+%change\s+%stddev\s+\S"),
        "its rows are not on lines of their own (the archive rewrapped the mail): not compared",
    ),
    (
        "kernel test robot fail:runs table",
        re.compile(r"fail:runs\s+%reproduction\s+fail:runs"),
        "it counts failed runs (fail:runs), it holds no measurements to compare",
    ),
    (
        "schbench output",
        re.compile(r"Latencies percentiles \((?:usec|nsec)\)"),
        "percentiles of one run's samples: no spread over runs, nothing to compare them with",
    ),
    (
        "UnixBench results",
        re.compile(r"\(\s*\d+(?:\.\d+)?\s+s,\s+\d+\s+samples?\)"),
        "UnixBench prints one score per test (from its samples) without their spread: not compared",
    ),
    (
        "sysbench events (avg/stddev)",
        re.compile(r"events \(avg/stddev\)", re.IGNORECASE),
        "sysbench's avg/stddev is over the threads of one run, not over runs: not compared",
    ),
    (
        "sysbench per-run lines",
        re.compile(r"read/write requests:\s+\d+\s+\(\s*[\d.]+ per sec\.\)"),
        "per-run lines of the sysbench 0.4 text are not read: not compared",
    ),
    (
        "mdtest SUMMARY table",
        re.compile(r"SUMMARY rate: \(of \d+ iterations\)"),
        "mdtest's Max/Min/Mean/Std Dev tables are not read: not compared",
    ),
    (
        "perf stat -I interval counts",
        re.compile(r"^#\s+time\s+counts\s+unit\s+events$"),
        "counts per interval of one run, not runs: not compared",
    ),
    (
        "LKP stats.csv values",
        re.compile(r"^[a-z][\w-]*\.[\w.%-]+,[-+]?\d[\d.]*(?:e[-+]?\d+)?$"),
        "one run's values (LKP's stats.csv): no spread over runs; give LKP's %stddev table or the runs",
    ),
)


# named only when nothing else was found in the text (their signature also heads tables abstat reads)
WEAK_SIGNATURES: tuple[tuple[str, re.Pattern[str], str], ...] = (
    (
        "stress-ng bogo ops table",
        re.compile(r"\bbogo ops(?:/s)?\b.*\S\s*$"),
        "bogo ops without a spread over runs (no mean (sd) cells): not compared",
    ),
)


def find_unreadable(lines: list[str], taken: set[int], found_other: bool = False) -> list[Claim]:
    """One claim per signature found outside the ``taken`` lines (1-based), at its first line; the weak
    signatures only when ``found_other`` is false."""
    claims: list[Claim] = []
    seen: set[str] = set()
    signatures = SIGNATURES if found_other else SIGNATURES + WEAK_SIGNATURES
    for index, raw in enumerate(lines):
        if index + 1 in taken:
            continue
        text = strip_quote(raw).strip()
        for name, signature, why in signatures:
            if name not in seen and signature.search(text):
                seen.add(name)
                claim = Claim("unreadable", index + 1, index + 1, name, readable=False)
                claim.findings.append(Finding("unreadable", "warning", f"line {index + 1}: {name}: {why}"))
                claims.append(claim)
                break
    return claims
