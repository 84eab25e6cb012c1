"""Tables kernel developers paste, as :class:`~abstat.audit.kernel_blocks.Claim` records:

* mmtests ``compare-kernels`` tables: ``Amean|Hmean|Gmean|Stddev|CoeffVar|Min|Max METRIC`` rows, one
  ``VALUE (  PCT%)`` column per kernel, ``*  PCT%*`` marking a change mmtests found significant; its
  percentages are gains (positive is better: lower for Amean rows of times, higher for Hmean rows of
  rates).  The standard deviation comes from the Stddev row (else CoeffVar x mean); N from the prose.
* ``mean (sd)`` and ``mean ± sd`` tables: a label then one such cell per column (the columns named by
  the line above), or one cell per row in blocks, one block per kernel (kernbench's ``Elapsed Time
  28.094 (0.182565)``), paired in order.  N from ``run number K`` lines or the prose.
* per-run tables: rows are runs (``1``, ``run 2``, ``#3``...), columns the kernels; ``avg``/``mean``
  rows after them are the printed means, checked against the runs.
"""

from __future__ import annotations

import re
import statistics

from abstat.audit.findings import Finding
from abstat.audit.kernel_blocks import TABLE_NUMBER, Claim, PrintedChange, Row, Side, number, runs_in_prose
from abstat.audit.scan_lines import strip_quote

_NUM = TABLE_NUMBER  # a comma only between three-digit groups: a decimal comma is no number
MM_STATS = r"Amean|Hmean|Gmean|Stddev|CoeffVar|Min|Max|B[AH]mean-\d+"
MM_ROW = re.compile(rf"^(?P<stat>{MM_STATS})\s+(?P<metric>\S+)\s+(?P<rest>{_NUM}.*)$")
MM_CELL = re.compile(rf"({_NUM})\s*(?:\(\s*([-+]?[\d.]+|nan|-?inf)%\)|\*\s*([-+]?[\d.]+|nan|-?inf)%\*)")
_SD_CELL = rf"({_NUM})\s*(?:\(\s*({_NUM})\s*\)(?!\s*%)|(?:±|\+/-|\+-)\s*({_NUM})(?![\d.]*\s*%))"
SD_CELL = re.compile(_SD_CELL)
# a label of 16 words at most: bounded matching on a one-line paste of megabytes (attack18 M5)
SD_LABEL = re.compile(r"(?P<label>[A-Za-z][^\s:]*(?:[ \t]+[A-Za-z(][^\s:]*){0,15}?):?\s+(?=[-+.\d])")
TRAILING_PCT = re.compile(r"\s*[-+]?\d+(?:\.\d+)?%")
RUN_INDEX = re.compile(r"^(?:run\s*|#)?(\d{1,4})[:.)]?$", re.IGNORECASE)
SUMMARY_WORDS = re.compile(r"^(avg|average|mean|amean)[:]?$", re.IGNORECASE)
KERNBENCH_RUN = re.compile(r"run number (\d+)")
MAX_COLUMNS = 64  # a table of runs wider than this is no table a developer pastes


def _cells(text: str) -> list[str]:
    return text.split()


# --------------------------------------------------------------------------
# mmtests


def _mm_cells(text: str) -> list[tuple[str, float, bool]]:
    """``(value text, printed percent, marked significant)`` per column (a nan percent reads as 0)."""
    cells = []
    for match in MM_CELL.finditer(text):
        pct = match.group(2) or match.group(3)
        try:
            value = float(pct)
        except ValueError:
            value = 0.0
        cells.append((match.group(1), value if value == value else 0.0, match.group(3) is not None))
    return cells


def _mm_labels(lines: list[str], first: int, columns: int) -> list[str]:
    for position in range(first - 1, max(-1, first - 4), -1):
        words = strip_quote(lines[position]).split()
        if len(words) >= columns:
            return words[-columns:]
    return [f"kernel {i + 1}" for i in range(columns)]


def find_mmtests(lines: list[str]) -> list[Claim]:
    claims, index = [], 0
    while index < len(lines):
        if not MM_ROW.match(strip_quote(lines[index]).strip()):
            index += 1
            continue
        start = index
        rows: list[tuple[int, str, str, list[tuple[str, float, bool]]]] = []
        while index < len(lines) and (match := MM_ROW.match(strip_quote(lines[index]).strip())):
            cells = _mm_cells(match.group("rest"))
            rows.append((index + 1, match.group("stat"), match.group("metric"), cells))
            index += 1
        claims.append(_mm_claim(lines, start, index, rows))
    return claims


def _mm_claim(lines: list[str], start: int, end: int, rows: list) -> Claim:
    width = max(len(cells) for *_, cells in rows)
    labels = _mm_labels(lines, start, width)
    n = runs_in_prose(lines, start, end)
    claim = Claim("mmtests", start + 1, end, "mmtests compare-kernels " + " vs ".join(labels))
    for metric, stats in _mm_by_metric(claim, rows, width).items():
        row = _mm_row(metric, stats, labels, n)
        if row is not None:
            claim.rows.append(row)
    if n is None:
        claim.findings.append(
            Finding(
                "runs_unknown",
                "warning",
                "the number of iterations is not stated near "
                "the table: no test can be recomputed (the * marks are mmtests's own)",
            )
        )
    claim.readable = bool(claim.rows)
    return claim


def _mm_by_metric(claim: Claim, rows: list, width: int) -> dict[str, dict[str, tuple[int, list]]]:
    """Each metric's statistics rows (``Amean``, ``Stddev``...): their line and cells; a finding on each
    row whose columns are not the table's."""
    by_metric: dict[str, dict[str, tuple[int, list]]] = {}
    for line, stat, metric, cells in rows:
        if len(cells) != width or width < 2:
            claim.findings.append(
                Finding(
                    "unreadable",
                    "warning",
                    f"line {line}: {stat} {metric}: {len(cells)} columns where the table has {width}: not compared",
                )
            )
            continue
        by_metric.setdefault(metric, {})[stat] = (line, cells)
    return by_metric


def _mm_row(metric: str, stats: dict[str, tuple[int, list]], labels: list[str], n: int | None) -> Row | None:
    """The row of a metric's mean (arithmetic, harmonic or geometric), its spread and printed changes."""
    mean_stat = next((s for s in ("Amean", "Hmean", "Gmean") if s in stats), None)
    if mean_stat is None:
        return None
    line, cells = stats[mean_stat]
    sds = _mm_sds(stats, cells)
    sides = [
        Side(label, n, number(cell[0]), sd, mean_text=cell[0], how=how)
        for label, cell, (sd, how) in zip(labels, cells, sds, strict=False)
    ]
    changes = [PrintedChange(f"{cell[1]:g}%", cell[1], True, marked=cell[2], gain=True) for cell in cells[1:]]
    return Row(f"{mean_stat} {metric}", line, sides, list(changes))


def _mm_sds(stats: dict[str, tuple[int, list]], cells: list) -> list[tuple[float | None, str]]:
    if "Stddev" in stats and len(stats["Stddev"][1]) == len(cells):
        return [(number(c[0]), "the Stddev row") for c in stats["Stddev"][1]]
    if "CoeffVar" in stats and len(stats["CoeffVar"][1]) == len(cells):
        return [
            (number(cv[0]) * abs(number(m[0])) / 100.0, "CoeffVar x mean")
            for cv, m in zip(stats["CoeffVar"][1], cells, strict=False)
        ]
    return [(None, "no Stddev row")] * len(cells)


# --------------------------------------------------------------------------
# mean (sd) tables and blocks


def _sd_side(label: str, cell: tuple[str, str, str], n: int | None) -> Side:
    sd_text = cell[1] or cell[2]
    return Side(label, n, number(cell[0]), number(sd_text), mean_text=cell[0], how="printed standard deviation")


def _runs_near(lines: list[str], start: int, end: int) -> int | None:
    counted = [int(m.group(1)) for line in lines[max(0, start - 40) : end] for m in KERNBENCH_RUN.finditer(line)]
    return max(counted) if counted else runs_in_prose(lines, start, end)


def find_mean_sd(lines: list[str], covered: set[int]) -> list[Claim]:
    """Runs of consecutive ``LABEL mean (sd) ...`` rows; one-cell runs are paired in order."""
    groups = _sd_groups(lines, covered)
    claims = [_wide_claim(lines, g) for g in groups if _most_cells(g) >= 2]
    narrow = [g for g in groups if _most_cells(g) == 1]
    if len(narrow) >= 2:
        claims.append(_blocks_claim(lines, narrow))
    return claims


def _most_cells(group: tuple[int, int, list[tuple[int, str, list[tuple[str, str, str]]]]]) -> int:
    """The most cells a row of the group has: one for a block of its own, more for a table's columns."""
    return max(len(row[2]) for row in group[2])


def _sd_groups(
    lines: list[str], covered: set[int]
) -> list[tuple[int, int, list[tuple[int, str, list[tuple[str, str, str]]]]]]:  # noqa: E501
    """Each run of consecutive ``mean (sd)`` rows: (first index, index after it, its rows with their line)."""
    groups: list[tuple[int, int, list[tuple[int, str, list[tuple[str, str, str]]]]]] = []
    index = 0
    while index < len(lines):
        row = _sd_row(lines[index]) if index + 1 not in covered else None
        if row is None:
            index += 1
            continue
        start, found = index, []
        while index < len(lines) and (row := _sd_row(lines[index])) is not None and index + 1 not in covered:
            found.append((index + 1, *row))
            index += 1
        groups.append((start, index, found))
    return groups


def _sd_row(raw: str) -> tuple[str, list[tuple[str, str, str]]] | None:
    """``(label, cells)`` of ``LABEL  mean (sd)  mean ± sd ...`` (then optional ``+1.2%`` columns), parsed
    cell by cell: no regular expression with a repeated group of numbers (whose backtracking explodes)."""
    text = strip_quote(raw).strip()
    label = SD_LABEL.match(text)
    if label is None:
        return None
    cells, position = _sd_cells(text, label.end())
    while (pct := TRAILING_PCT.match(text, position)) is not None:
        position = pct.end()
    if not cells or text[position:].strip():
        return None
    return label.group("label").strip(), cells


def _sd_cells(text: str, position: int) -> tuple[list[tuple[str, str, str]], int]:
    """The ``mean (sd)`` / ``mean ± sd`` cells from ``position`` on: (mean, sd, sd) texts, and where they end."""
    cells: list[tuple[str, str, str]] = []
    while (cell := SD_CELL.match(text, position)) is not None:
        cells.append((cell.group(1), cell.group(2) or "", cell.group(3) or ""))
        position = cell.end()
        while position < len(text) and text[position].isspace():
            position += 1
    return cells, position


def _wide_claim(lines: list[str], group: tuple) -> Claim:
    start, end, rows = group
    width = max(len(cells) for _, _, cells in rows)
    labels = _mm_labels(lines, start, width)
    n = _runs_near(lines, start, end)
    claim = Claim("mean-sd", start + 1, end, "mean (sd) table " + " vs ".join(labels))
    for line, label, cells in rows:
        if len(cells) != width:
            claim.findings.append(
                Finding(
                    "unreadable",
                    "warning",
                    f"line {line}: {label}: {len(cells)} cells where the table has {width}: not compared",
                )
            )
            continue
        sides = [_sd_side(name, cell, n) for name, cell in zip(labels, cells, strict=False)]
        claim.rows.append(Row(label, line, sides, [None] * (width - 1)))
    _runs_finding(claim, n)
    return claim


def _blocks_claim(lines: list[str], groups: list) -> Claim:
    labels = _block_labels(lines, groups)
    claim = Claim("mean-sd", groups[0][0] + 1, groups[-1][1], "mean (sd) blocks " + " vs ".join(labels))
    per_block = [{label: (line, cells[0]) for line, label, cells in rows} for _, _, rows in groups]
    ns = [_runs_near(lines, start, end) for start, end, _ in groups]
    claim.rows += _common_rows(per_block, labels, ns)
    _runs_finding(claim, ns[0] if len(set(ns)) == 1 else None)
    claim.readable = bool(claim.rows)
    return claim


def _block_labels(lines: list[str], groups: list) -> list[str]:
    """Each block's heading (the line before it), else ``block N``."""
    labels = []
    for number_, (start, _end, _rows) in enumerate(groups):
        heading = strip_quote(lines[start - 1]).strip().rstrip(":") if start else ""
        labels.append(heading[:60] if heading else f"block {number_ + 1}")
    return labels


def _common_rows(
    per_block: list[dict[str, tuple[int, tuple[str, str, str]]]], labels: list[str], ns: list[int | None]
) -> list[Row]:
    """A row per metric of the first block that every block has."""
    rows = []
    for metric, (line, _cell) in per_block[0].items():
        if not all(metric in block for block in per_block):
            continue
        sides = [_sd_side(labels[i], block[metric][1], ns[i]) for i, block in enumerate(per_block)]
        rows.append(Row(metric, line, sides, [None] * (len(sides) - 1)))
    return rows


def _runs_finding(claim: Claim, n: int | None) -> None:
    if n is None:
        claim.findings.append(
            Finding(
                "runs_unknown",
                "warning",
                "the number of runs behind each mean is not stated near the table: no test can be recomputed",
            )
        )


# --------------------------------------------------------------------------
# per-run tables


def find_per_run(lines: list[str], covered: set[int]) -> list[Claim]:
    claims, index = [], 0
    while index < len(lines):
        found = _per_run_at(lines, index, covered)
        if found is None:
            index += 1
            continue
        claim, index = found
        claims.append(claim)
    return claims


def _index_row(text: str, width: int) -> tuple[int, list[float]] | None:
    words = text.split()
    if len(words) >= 2 and words[0].lower() == "run":
        words = [words[0] + words[1]] + words[2:]
    if len(words) != width + 1 or not RUN_INDEX.match(words[0]):
        return None
    try:
        return int(RUN_INDEX.match(words[0]).group(1)), [number(w) for w in words[1:]]  # type: ignore[union-attr]
    except ValueError:
        return None


def _per_run_rows(lines: list[str], index: int, width: int) -> list[tuple[int, tuple[int, list[float]]]]:
    """The rows after a header whose first field counts the runs up (1, 2, 3... or 0, 1, 2...)."""
    runs = []
    position = index + 1
    while position < len(lines) and (row := _index_row(strip_quote(lines[position]).strip(), width)) is not None:
        runs.append((position + 1, row))
        position += 1
    if len(runs) < 2 or [r[1][0] for r in runs] != list(range(runs[0][1][0], runs[0][1][0] + len(runs))):
        return []
    return runs


def _indexed(first: str) -> bool:
    return bool(RUN_INDEX.match(first)) or first.lower() in ("run", "runs", "#", "iteration")


def _per_run_at(lines: list[str], index: int, covered: set[int]) -> tuple[Claim, int] | None:
    header = strip_quote(lines[index]).split(maxsplit=MAX_COLUMNS)  # bounded: a one-line paste of MBs
    if len(header) > MAX_COLUMNS or not _per_run_header(header, index + 1 in covered):
        return None
    width = len(header) - 1 if _indexed(header[0]) else len(header)
    runs = _per_run_rows(lines, index, width) if width >= 2 else []
    if not runs:
        return None
    position = runs[-1][0]
    labels = header[-width:]
    claim = Claim("per-run", index + 1, position, "per-run table " + " vs ".join(labels))
    sides = _column_sides(labels, runs, width)
    claim.rows.append(Row("value", runs[0][0], sides, [None] * (width - 1)))
    return claim, _summary_rows(lines, position, claim, sides)


def _per_run_header(header: list[str], covered: bool) -> bool:
    """Words that may head a table of runs: two at least, none a number, on a line no other audit took."""
    return len(header) >= 2 and not covered and not any(re.fullmatch(_NUM, w) for w in header)


def _column_sides(labels: list[str], runs: list[tuple[int, tuple[int, list[float]]]], width: int) -> list[Side]:
    """Each column's runs: their mean and standard deviation."""
    columns = [[row[1][c] for _, row in runs] for c in range(width)]
    return [
        Side(label, len(values), statistics.fmean(values), statistics.stdev(values), values=values, how="from the runs")
        for label, values in zip(labels, columns, strict=False)
    ]


def _summary_rows(lines: list[str], position: int, claim: Claim, sides: list[Side]) -> int:
    """Check the summary rows (``mean``, ``avg``...) under the runs against them; the line after them."""
    while position < len(lines):
        words = strip_quote(lines[position]).split()
        if not words or not SUMMARY_WORDS.match(words[0]) or len(words) != len(sides) + 1:
            break
        _check_printed_means(claim, position + 1, words[1:], sides)
        position += 1
    return position


def _check_printed_means(claim: Claim, line: int, texts: list[str], sides: list[Side]) -> None:
    for text, side in zip(texts, sides, strict=False):
        try:
            printed = number(text)
        except ValueError:
            continue
        digits = len(text.split(".")[1]) if "." in text else 0
        if abs(printed - side.mean) > 0.5 * 10**-digits + 1e-12 * abs(side.mean):
            claim.findings.append(
                Finding(
                    "inconsistent",
                    "error",
                    f"line {line}: {side.label}: the printed mean {text} is not the mean of the runs ({side.mean:.6g})",
                )
            )
