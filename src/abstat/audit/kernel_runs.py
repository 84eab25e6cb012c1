"""Runs listed one per line, as benchmarks print them and developers paste them: blocks of two or more
consecutive lines of the same shape (the same text once numbers are set aside) in which exactly one
number varies from line to line -- the run's value -- such as sysbench 0.4's::

    MAX_FIELDS=64 with std::bitset
        read/write requests:                 70000  (3374.50 per sec.)
        read/write requests:                 70000  (3102.42 per sec.)
    AVERAGE= 3238.46

Blocks of the same shape are compared, the first (or the one whose heading says before, base,
without...) being the baseline; each is labelled by the line above it.  An ``AVERAGE=``/``mean:`` line
right after a block is checked against the mean of its runs (rounded or truncated to its digits).
"""

from __future__ import annotations

import math
import re
import statistics

from abstat.audit.findings import Finding
from abstat.audit.kernel_blocks import BASE_WORDS, Claim, Row, Side
from abstat.audit.scan_lines import strip_quote

_NUMBER = re.compile(r"(?<![\w.])[-+]?(?:\d+(?:\.\d+)?|\.\d+)(?![\w.])")
_AVERAGE = re.compile(r"^(?:average|avg|mean)\s*[=:]\s*([-+]?(?:\d+(?:\.\d*)?|\.\d+))\s*$", re.IGNORECASE)
MAX_LINE = 400  # longer lines are not runs


def _shape(text: str) -> tuple[str, list[str]]:
    return _NUMBER.sub("#", text), _NUMBER.findall(text)


def _blocks(lines: list[str], taken: set[int]) -> list[tuple[int, int, str, list[list[str]]]]:
    """``(first, end, shape, numbers of each line)`` of every run of two or more same-shaped lines."""
    found, index = [], 0
    while index < len(lines):
        text = strip_quote(lines[index]).strip()
        shape, numbers = _shape(text) if text and len(text) <= MAX_LINE and index + 1 not in taken else ("", [])
        rows = [numbers, *_same_shape(lines, taken, index + 1, shape)] if numbers else [numbers]
        end = index + len(rows)
        if numbers and len(rows) >= 2:
            found.append((index, end, shape, rows))
        index = max(end, index + 1)
    return found


def _same_shape(lines: list[str], taken: set[int], start: int, shape: str) -> list[list[str]]:
    """The numbers of each line from ``start`` on that has ``shape`` (up to a line taken, too long or of
    another shape)."""
    rows = []
    end = start
    while end < len(lines) and end + 1 not in taken:
        other = strip_quote(lines[end]).strip()
        if len(other) > MAX_LINE or _shape(other)[0] != shape:
            break
        rows.append(_shape(other)[1])
        end += 1
    return rows


def _varying(rows: list[list[str]]) -> int | None:
    """The one position whose number changes from run to run, else None."""
    varying = [p for p in range(len(rows[0])) if len({float(r[p]) for r in rows}) > 1]
    return varying[0] if len(varying) == 1 else None


def _heading(lines: list[str], first: int) -> str | None:
    for position in range(first - 1, max(-1, first - 3), -1):
        text = strip_quote(lines[position]).strip()
        if text:
            return text.rstrip(":").strip()[:60] or None
    return None


def find_listed_runs(lines: list[str], taken: set[int]) -> list[Claim]:
    by_shape: dict[str, list[tuple[int, int, list[list[str]]]]] = {}
    for first, end, shape, rows in _blocks(lines, taken):
        by_shape.setdefault(shape, []).append((first, end, rows))
    claims = []
    for shape, blocks in by_shape.items():
        positions = {_varying(rows) for _, _, rows in blocks}
        if len(blocks) < 2 or len(positions) != 1 or None in positions:
            continue
        claims.append(_claim(lines, shape, blocks, positions.pop()))  # type: ignore[arg-type]
    return claims


def _claim(lines: list[str], shape: str, blocks: list[tuple[int, int, list[list[str]]]], position: int) -> Claim:
    labels = [_heading(lines, first) or f"block {i + 1}" for i, (first, _, _) in enumerate(blocks)]
    order = _baseline_first(labels)
    last = max(end for _, end, _ in blocks)
    claim = Claim("per-run", blocks[0][0] + 1, last, "runs listed per line " + " vs ".join(labels[i] for i in order))
    sides = []
    for i in order:
        first, end, rows = blocks[i]
        side = _listed_side(labels[i], first, end, [float(r[position]) for r in rows])
        sides.append(side)
        _check_average(claim, lines, end, side)
    claim.rows.append(Row(_metric(shape, position), blocks[order[0]][0] + 1, sides, [None] * (len(sides) - 1)))
    return claim


def _baseline_first(labels: list[str]) -> list[int]:
    """The blocks' indexes, the one labelled as the baseline (before, base, without...) first, else the first."""
    base = next((i for i, label in enumerate(labels) if BASE_WORDS.search(label)), 0)
    return [base] + [i for i in range(len(labels)) if i != base]


def _metric(shape: str, position: int) -> str:
    """The lines' shape as the metric's name, the varying number written VALUE."""
    metric = shape.replace("#", "VALUE", 1) if shape.count("#") == 1 else _mark(shape, position)
    return re.sub(r"\s+", " ", metric)[:80]


def _listed_side(label: str, first: int, end: int, values: list[float]) -> Side:
    """A block's runs, listed on lines ``first + 1`` to ``end``: their mean and standard deviation."""
    return Side(
        label,
        len(values),
        statistics.fmean(values),
        statistics.stdev(values),
        values=values,
        how=f"from the {len(values)} runs listed on lines {first + 1}-{end}",
    )


def _mark(shape: str, position: int) -> str:
    parts = shape.split("#")
    return "".join(part + ("VALUE" if i == position else "#") for i, part in enumerate(parts[:-1])) + parts[-1]


def _check_average(claim: Claim, lines: list[str], end: int, side: Side) -> None:
    if end >= len(lines):
        return
    match = _AVERAGE.match(strip_quote(lines[end]).strip())
    if match is None:
        return
    text = match.group(1)
    decimals = len(text.split(".")[1]) if "." in text else 0
    scale = 10.0**decimals
    rounded = round(side.mean * scale) / scale
    truncated = math.trunc(side.mean * scale) / scale
    if not any(abs(float(text) - v) <= 1e-9 * max(1.0, abs(v)) for v in (rounded, truncated)):
        claim.findings.append(
            Finding(
                "inconsistent",
                "error",
                f"line {end + 1}: {side.label}: the printed average "
                f"{text} is not the mean of the runs ({side.mean:.6g})",
            )
        )
