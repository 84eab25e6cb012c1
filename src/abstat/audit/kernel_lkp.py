"""The kernel test robot's (LKP's) ``%stddev %change %stddev`` tables, and the per-run values a mail
may give beside them, as :class:`~abstat.audit.kernel_blocks.Claim` records.

A row is ``BASE [± s%]  CHANGE  NEW [± s%]  METRIC``, as LKP's ``lib/compare.rb`` prints it:

* a mean is printed ``%.2f`` below 1000, ``%.4g`` above 1e8 and ``%d`` (truncated, not rounded) between;
* ``± s%`` is ``%d`` of ``100 * sd / mean`` where ``sd`` is the *population* standard deviation of the
  runs (``lib/statistics.rb``: divided by N, not N - 1), printed only when it exceeds 2%; a single run
  has no ``±`` either;
* CHANGE is ``100 * (new - base) / base`` (``%+.1f%%``) or, for metrics that are percentages, the
  difference ``new - base`` (``%+.1f``), computed from the unrounded means.

The number of runs is not in the table: it is taken from the text around (``N runs``) or from the
per-run values, else unknown.  Per-run values (what LKP keeps in ``matrix.json``) are read when the
mail quotes them for a metric of the table, in any of these forms::

    ec81deb6b769dc1b:                          will-it-scale.per_process_ops:
      "will-it-scale.per_process_ops": [         ec81deb6b7: 129388 129512 129567 129489
        129388,                                  6e553c6bcb: 252015 252210 252098 252281
        ...
      ],

(a commit, or a column's label, alone on a line before ``"METRIC": [values]`` or ``METRIC: values``;
or a metric alone on a line before ``COMMIT: values``).  The test is then recomputed from the values
themselves, and the printed mean, ``± s%`` and change are checked against them.
"""

from __future__ import annotations

import math
import re
import statistics

from abstat.audit.findings import Finding
from abstat.audit.kernel_blocks import TABLE_NUMBER, Claim, PrintedChange, Row, Side, number, runs_in_prose
from abstat.audit.scan_lines import strip_quote

_NUM = TABLE_NUMBER  # a comma only between three-digit groups: a decimal comma is no number
LKP_HEAD = re.compile(r"^%stddev\s+%change\s+%stddev$")
LKP_ROW = re.compile(
    rf"^(?P<base>{_NUM})(?:\s*±\s*(?P<bsd>\d+(?:\.\d+)?)%)?\s+(?P<change>[-+]?\d+(?:\.\d+)?%?)\s+"
    rf"(?P<new>{_NUM})(?:\s*±\s*(?P<nsd>\d+(?:\.\d+)?)%)?\s+(?P<metric>\S+)$"
)
LKP_COMMITS = re.compile(r"^(\S{1,60})\s+(\S{1,60})$")
_DASHES = re.compile(r"^-{8,}\s+-{8,}$")
_ONE_NUMBER = re.compile(r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?")
_OPEN_ARRAY = re.compile(r'^"(?P<key>[^"]{1,200})"\s*:\s*\[(?P<rest>.*)$')
_COMMIT_HEADING = re.compile(r'"?([^\s":(]{1,60})"?\s*(?:\(.{0,200}\))?\s*:?\s*\{?')
_KEYED = re.compile(r'^"?(?P<key>[^\s":]{1,200})"?\s*:\s*(?P<rest>.*)$')
RSD_PRINTED_ABOVE = 2.0  # LKP prints ± only when 100 * sd / mean > 2


def _labels(lines: list[str], head: int) -> tuple[list[str], list[str]]:
    """(short labels, full names) of the two columns: the line of names above the dashes."""
    for position in range(head - 1, max(-1, head - 4), -1):
        text = strip_quote(lines[position]).strip()
        if _DASHES.match(text) and position > 0:
            match = LKP_COMMITS.match(strip_quote(lines[position - 1]).strip())
            if match:
                full = [match.group(1), match.group(2)]
                return [_short(name) for name in full], full
    return ["base", "new"], []


def _short(name: str) -> str:
    return name[:12] if re.fullmatch(r"[0-9a-f]{7,40}", name) else name


def _side(label: str, text: str, sd_pct: str | None, n: int | None) -> Side:
    mean = number(text)
    truncated = re.fullmatch(r"[-+]?\d+", text.replace(",", "")) is not None
    if sd_pct is None:
        return Side(
            label,
            n,
            mean,
            None,
            mean_text=text,
            truncated=truncated,
            how="no ± printed: LKP prints it only above 2% of the mean",
        )
    pct = float(sd_pct) + 0.5  # LKP prints %d of the percentage: the value lies in [s, s + 1)
    sd = abs(mean) * pct / 100.0
    how = (
        f"± {sd_pct}% is LKP's population standard deviation (divided by N) relative to the mean, "
        f"printed truncated: taken as {pct:g}%"
    )
    if n is not None and n >= 2:
        sd *= math.sqrt(n / (n - 1))
        how += f", x sqrt({n}/{n - 1}) for the sample standard deviation"
    return Side(label, n, mean, sd, mean_text=text, how=how, truncated=truncated)


def find_lkp_tables(lines: list[str]) -> list[Claim]:
    claims = []
    for index, raw in enumerate(lines):
        if LKP_HEAD.match(strip_quote(raw).strip()):
            claims.append(_table(lines, index))
    return claims


def _table(lines: list[str], index: int) -> Claim:
    labels, full = _labels(lines, index)
    rows_at, position = _rows_span(lines, index)
    n = runs_in_prose(lines, index, position)
    claim = Claim("lkp", index + 1, position, f"kernel test robot table {labels[0]} vs {labels[1]}")
    shown = _read_rows(claim, lines[rows_at:position], rows_at, labels, n)
    runs = per_run_values(lines, (index, position), full or labels, {row.metric for row in claim.rows})
    used = [_use_runs(claim, row, runs, shown[row.line]) for row in claim.rows]
    if n is None and not any(used):
        claim.findings.append(
            Finding(
                "runs_unknown",
                "warning",
                "the number of runs per commit is not in the table nor stated near it: no test can be recomputed",
            )
        )
    claim.readable = bool(claim.rows)
    return claim


def _rows_span(lines: list[str], index: int) -> tuple[int, int]:
    """Where the rows under the table's head at ``index`` start (after its ``| |`` line) and end (a blank line)."""
    position = index + 1
    if position < len(lines) and re.fullmatch(r"[\\|\s]+", strip_quote(lines[position]).strip() or "x"):
        position += 1
    rows_at = position
    while position < len(lines) and strip_quote(lines[position]).strip():
        position += 1
    return rows_at, position


def _read_rows(
    claim: Claim, rows: list[str], rows_at: int, labels: list[str], n: int | None
) -> dict[int, tuple[str | None, str | None]]:
    """Add a Row per ``%stddev %change`` row (a finding for each unreadable one); the spreads each row shows."""
    shown: dict[int, tuple[str | None, str | None]] = {}
    for offset, raw_row in enumerate(rows):
        text = strip_quote(raw_row).strip()
        match = LKP_ROW.match(text)
        if match is None:
            claim.findings.append(
                Finding(
                    "unreadable",
                    "warning",
                    f"line {rows_at + offset + 1}: not a %stddev %change row, not compared: {text[:60]!r}",
                )
            )
            continue
        change = match.group("change")
        printed = PrintedChange(change, float(change.rstrip("%")), change.endswith("%"))
        sides = [
            _side(labels[0], match.group("base"), match.group("bsd"), n),
            _side(labels[1], match.group("new"), match.group("nsd"), n),
        ]
        claim.rows.append(Row(match.group("metric"), rows_at + offset + 1, sides, [printed]))
        shown[rows_at + offset + 1] = (match.group("bsd"), match.group("nsd"))
    return shown


# --------------------------------------------------------------------------
# per-run values


def _column(token: str, names: list[str]) -> int | None:
    """Which column ``token`` (a commit, or a label) names: a prefix of at least 7 characters either way."""
    token = token.strip().strip('"').rstrip(":/").split("/")[0]
    for column, name in enumerate(names):
        if token == name or (len(token) >= 7 and len(name) >= 7 and (name.startswith(token) or token.startswith(name))):
            return column
    return None


def _numbers(text: str) -> list[float] | None:
    """The numbers of ``v, v, v`` / ``[v v v]`` (split, not matched by one pattern: linear time)."""
    words = [w for w in re.split(r"[\s,]+", _unbracketed(text)) if w]
    if not words or not all(_ONE_NUMBER.fullmatch(w) for w in words):
        return None
    return [float(w) for w in words]


def _unbracketed(text: str) -> str:
    """``text`` without a trailing comma nor the brackets of an array around it."""
    body = text.strip().rstrip(",").strip()
    if body.startswith("["):
        body = body[1:]
    if body.endswith("]"):
        body = body[:-1]
    return body


def per_run_values(
    lines: list[str], table: tuple[int, int], names: list[str], metrics: set[str]
) -> dict[tuple[int, str], tuple[int, list[float]]]:
    """``{(column, metric): (line, values)}`` for every metric of the table whose runs the text quotes."""
    found: dict[tuple[int, str], tuple[int, list[float]]] = {}
    column: int | None = None
    metric: str | None = None
    position = 0
    while position < len(lines):
        if table[0] <= position < table[1]:
            position = table[1]
            continue
        text = strip_quote(lines[position]).strip()
        position += 1
        heading = _COMMIT_HEADING.fullmatch(text)
        if heading is not None and _column(heading.group(1), names) is not None:
            column, metric = _column(heading.group(1), names), None
            continue
        if text.endswith(":") and text[:-1].strip('"') in metrics:
            metric, column = text[:-1].strip('"'), None
            continue
        position = _value_line(lines, position, text, (column, metric), names, metrics, found)
    return found


def _value_line(
    lines: list[str],
    position: int,
    text: str,
    context: tuple[int | None, str | None],
    names: list[str],
    metrics: set[str],
    found: dict,
) -> int:
    """Reads the values on ``text`` (and, for an open JSON array, the lines after it); the next position."""
    column, metric = context
    array = _OPEN_ARRAY.match(text)
    if array is not None and column is not None and array.group("key") in metrics:
        return _array_values(lines, position, array, column, found)
    keyed = _KEYED.match(text)
    if keyed is not None:
        _keyed_values(keyed, position, context, (names, metrics), found)
    return position


def _keyed_values(
    keyed: re.Match[str],
    position: int,
    context: tuple[int | None, str | None],
    keys: tuple[list[str], set[str]],
    found: dict,
) -> None:
    """The values of a ``key: v, v, v`` line: a metric's under a commit's heading, or a commit's under a
    metric's."""
    (column, metric), (names, metrics) = context, keys
    values = _numbers(keyed.group("rest"))
    if not values:
        return
    if column is not None and keyed.group("key") in metrics:
        found[(column, keyed.group("key"))] = (position, values)
    elif metric is not None and (named := _column(keyed.group("key"), names)) is not None:
        found[(named, metric)] = (position, values)


def _array_values(lines: list[str], position: int, array: re.Match[str], column: int, found: dict) -> int:
    """The values of a JSON array opened on the line before ``position`` (up to its ``]``); the next position."""
    parts, start = [array.group("rest")], position
    while "]" not in parts[-1] and position < len(lines) and position - start < 10000:
        parts.append(strip_quote(lines[position]).strip())
        position += 1
    values = _numbers(" ".join(parts).split("]")[0])
    if values:
        found[(column, array.group("key"))] = (start, values)
    return position


def _use_runs(
    claim: Claim, row: Row, runs: dict[tuple[int, str], tuple[int, list[float]]], shown: tuple[str | None, str | None]
) -> bool:
    """Replaces the row's sides by their per-run values when the text gives them for both; checks the
    printed mean and ± against them."""
    given = [runs.get((column, row.metric)) for column in range(len(row.sides))]
    if not all(g is not None and len(g[1]) >= 2 for g in given):
        return False
    for column, (line, values) in enumerate(g for g in given if g is not None):
        printed = row.sides[column]
        side = _runs_side(printed, line, values)
        _check_printed(claim, row, printed, side, shown[column])
        row.sides[column] = side
    return True


def _runs_side(printed: Side, line: int, values: list[float]) -> Side:
    """A side computed from its per-run values (on ``line``), keeping the printed side's label and mean."""
    return Side(
        printed.label,
        len(values),
        statistics.fmean(values),
        statistics.stdev(values),
        mean_text=printed.mean_text,
        values=values,
        how=f"from the {len(values)} per-run values on line {line}",
    )


def _check_printed(claim: Claim, row: Row, printed: Side, side: Side, shown: str | None) -> None:
    mean = side.mean
    where = f"line {row.line}: {row.metric}: {side.label}"
    if not _mean_fits(printed, mean):
        claim.findings.append(
            Finding(
                "inconsistent",
                "error",
                f"{where}: the printed mean {printed.mean_text} is not the mean of the runs ({mean:.6g})",
            )
        )
    rsd = 100.0 * statistics.pstdev(side.values or []) / mean if mean else 0.0
    fits = rsd <= RSD_PRINTED_ABOVE + 1e-9 if shown is None else math.floor(rsd + 1e-9) == int(float(shown))
    if not fits:
        printed_as = "no ±" if shown is None else f"± {shown}%"
        claim.findings.append(
            Finding(
                "inconsistent",
                "error",
                f"{where}: the printed spread ({printed_as}) does "
                f"not follow from the runs (population sd {rsd:.3g}% of the mean)",
            )
        )


def _mean_fits(printed: Side, mean: float) -> bool:
    text = printed.mean_text.replace(",", "")
    if printed.truncated:
        return math.trunc(mean) == int(text)
    digits = text.lower().split("e")[0]
    decimals = len(digits.split(".")[1]) if "." in digits else 0
    exponent = int(text.lower().split("e")[1]) if "e" in text.lower() else 0
    return abs(mean - float(text)) <= 0.5 * 10.0 ** (exponent - decimals) * (1 + 1e-9)
