"""A history CSV read as columns (numpy's C reader), for files of many revisions.

:func:`read_columns` reads what :func:`abstat.history.files.read_history_csv` reads, as arrays: each
metric column's values (NaN where a cell is empty), each label column's and the revision's cells, the
times.  It takes only files it reads exactly as that reader does: no quotes, no line separator but
``\\n``, ``\\r\\n`` and ``\\r``, no NUL, every row as wide as the header, every cell of a metric a
finite number or empty, every time a time; anything else (and every error) is left to that reader
(None), which names the file and line.  Values are parsed by ``PyOS_string_to_double`` (numpy's
reader), which takes a subset of what ``float`` takes and gives the same double; cells it does not
take go through ``float``.
"""

from __future__ import annotations

import io
import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from abstat.history.files import REV_COLUMNS, _delimiter, parse_time, time_column
from abstat.history.revision import TIME_LABEL

_UNTAKEN = re.compile('["\x00\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]')  # quotes, NUL, splitlines' rarer breaks
_SKIPPED = re.compile(r"\n[^\S\n]*(?:#|\n|\Z)")  # after a "\n": a comment or a blank line
_HEAD = 1 << 20  # peers.detect_format reads no further than this, and the first two content lines


@dataclass
class Table:
    """A CSV's rows as columns: ``revs`` (the revision's cells, stripped), ``times`` (NaN: none),
    ``labels`` (name -> cells), ``metrics`` (name -> values, NaN: an empty cell)."""

    revs: np.ndarray
    times: np.ndarray
    labels: dict[str, np.ndarray]
    metrics: dict[str, np.ndarray]

    @property
    def rows(self) -> int:
        return int(self.revs.size)


def looks_csv(path: str, text: str) -> str | None:
    """``peers.detect_format(path, text)``, reading only the file's head when no line can be a Go result
    (no ``Benchmark`` in it) and it is no JSON: the head then decides (kernel tools' output from its first
    64 KiB, a CSV from its first two content lines)."""
    from abstat.readers.peers import detect_format

    stripped = text[:4096].lstrip()
    cut = text.find("\n", _HEAD)
    if cut < 0 or "Benchmark" in text or stripped[:1] in ("{", "[") or not stripped or "\n{" in text[:4096]:
        return detect_format(path, text)
    head = text[:cut]
    if sum(1 for line in head.splitlines() if line.strip() and not line.lstrip().startswith("#")) < 2:
        return detect_format(path, text)
    return detect_format(path, head)


def _body(text: str) -> str | None:
    """The content lines (comments and blank lines left out) joined by ``\\n``; None if untaken."""
    if _UNTAKEN.search(text):
        return None
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    text = text[:-1] if text.endswith("\n") else text
    first = text[: (text.find("\n") + 1) or len(text)].rstrip("\n")
    if _SKIPPED.match(f"\n{first}\n") or _SKIPPED.search(text):
        text = "\n".join(line for line in text.split("\n") if line.strip() and not line.lstrip().startswith("#"))
    return text


class _Reader:
    """numpy's reader over the body's columns."""

    def __init__(self, body: str, delimiter: str) -> None:
        self.body, self.delimiter = body, delimiter
        self.found: dict[int, np.ndarray | None] = {}

    def prefetch(self, columns: Sequence[int]) -> None:
        """The columns' numbers in one pass, when every cell of them is a number."""
        try:
            matrix = self.load(columns, float) if columns else None
        except ValueError:
            return
        for i, column in enumerate(columns):
            values = np.ascontiguousarray(matrix[:, i])  # type: ignore[index]
            self.found[column] = values if np.isfinite(values).all() else None

    def load(self, columns: Sequence[int], dtype: type) -> np.ndarray:
        return np.loadtxt(
            io.StringIO(self.body),
            delimiter=self.delimiter,
            comments=None,
            skiprows=1,
            usecols=list(columns),
            dtype=dtype,
            ndmin=2,
            encoding=None,
        )

    def strings(self, column: int) -> np.ndarray:
        return np.char.strip(self.load([column], str)[:, 0])

    def numbers(self, column: int) -> np.ndarray | None:
        """The column's values, NaN where a cell is empty; None when a cell is neither a finite number nor
        empty."""
        if column not in self.found:
            self.found[column] = self._numbers(column)
        return self.found[column]

    def _numbers(self, column: int) -> np.ndarray | None:
        try:
            values = self.load([column], float)[:, 0]
        except ValueError:
            cells = self.strings(column)
            values = np.full(cells.size, np.nan)
            filled = cells != ""
            try:
                values[filled] = [float(cell) for cell in cells[filled].tolist()]
            except ValueError:
                return None
            return values if np.isfinite(values[filled]).all() else None
        return values if np.isfinite(values).all() else None

    def widths_agree(self, width: int) -> bool:
        """Every line has ``width`` fields (``\\n`` and the delimiter are single bytes in UTF-8)."""
        raw = np.frombuffer(self.body.encode("utf-8", "surrogatepass"), dtype=np.uint8)
        ends = np.append(np.flatnonzero(raw == 10), raw.size)
        fields = np.diff(np.searchsorted(np.flatnonzero(raw == ord(self.delimiter)), ends), prepend=0)
        return bool(np.all(fields == width - 1))


def _finite(cell: str) -> bool:
    try:
        return math.isfinite(float(cell))
    except ValueError:
        return False


def _times(reader: _Reader, column: int) -> np.ndarray | None:
    """The time column's Unix seconds (NaN: an empty cell); None when a cell is no time, or is -0."""
    times = reader.numbers(column)
    if times is None:
        cells = reader.strings(column)
        distinct, inverse = np.unique(cells, return_inverse=True)
        parsed = [parse_time(cell) if cell else np.nan for cell in distinct.tolist()]
        if any(when is None for when in parsed):
            return None
        times = np.asarray(parsed, dtype=float)[inverse.reshape(-1)]
    return None if np.any((times == 0) & np.signbit(times)) else times


def _choose(
    reader: _Reader,
    header: list[str],
    position: set[str],
    metrics: Sequence[str] | None,
    label_columns: Sequence[str] | None,
) -> tuple[dict[str, np.ndarray], list[str]] | None:
    """(the metric columns' values, the label columns) as ``files._csv_columns`` chooses them; None when
    it would fail or choose none (or a metric twice: that reader adds its cells twice)."""

    def numeric(name: str) -> bool:
        found = reader.numbers(header.index(name))
        return found is not None and not np.isnan(found).all()

    if metrics:
        chosen = [m for m in metrics if m in header]
    else:
        chosen = [h for h in header if h not in position and h not in (label_columns or ()) and numeric(h)]
    labels = _labels(header, position, chosen, label_columns, numeric)
    found = {name: reader.numbers(header.index(name)) for name in chosen}
    if len(found) != len(chosen) or not found or set(chosen) & (position | set(labels)):
        return None
    values = {name: v for name, v in found.items() if v is not None}
    return (values, labels) if len(values) == len(found) else None


def _labels(
    header: list[str],
    position: set[str],
    chosen: list[str],
    label_columns: Sequence[str] | None,
    numeric: Callable[[str], bool],
) -> list[str]:
    """The label columns: those named (once each), else those neither numbers nor positions nor chosen."""
    if label_columns is not None:
        return list(dict.fromkeys(label_columns))
    return [h for h in header if h not in position and h not in chosen and not numeric(h)]


def _positions(
    header: list[str], rev_label: str, reader: _Reader, metrics: Sequence[str] | None
) -> tuple[str | None, str | None]:
    """The revision's column and the time's (``files._position_columns``)."""

    def smallest(name: str) -> float | None:
        values = reader.numbers(header.index(name))
        return None if values is None or np.isnan(values).all() else float(np.nanmin(values))

    def varies(name: str) -> bool:
        values = reader.numbers(header.index(name))
        if rev_column is None or values is None:
            return False
        filled = ~np.isnan(values)
        _, group = np.unique(reader.strings(header.index(rev_column))[filled], return_inverse=True)
        order = np.lexsort((values[filled], group.reshape(-1)))
        group, values = group.reshape(-1)[order], values[filled][order]
        return bool(np.any((group[1:] == group[:-1]) & (values[1:] != values[:-1])))

    rev_column = next((c for c in (rev_label, *REV_COLUMNS) if c in header), None)
    return rev_column, time_column(header, metrics, smallest, varies)


def _header(body: str) -> tuple[_Reader, list[str]] | None:
    """The reader over the body and the header's names; None when the names are not unique, or a row is
    not as wide as the header."""
    header_line = body[: body.index("\n")]
    delimiter = _delimiter(header_line)
    header = [cell.strip() for cell in header_line.split(delimiter)]
    reader = _Reader(body, delimiter)
    if len(set(header)) != len(header) or not all(header) or not reader.widths_agree(len(header)):
        return None
    end = body.find("\n", len(header_line) + 1)
    second = body[len(header_line) + 1 : end if end > 0 else len(body)].split(delimiter)
    reader.prefetch([i for i, cell in enumerate(second) if _finite(cell)])
    return reader, header


def read_columns(
    text: str,
    *,
    metrics: Sequence[str] | None,
    label_columns: Sequence[str] | None,
    rev_label: str,
    reserved: frozenset[str],
) -> Table | None:
    """The CSV as a :class:`Table`, or None for ``files.read_history_csv`` to read (see the module);
    a label column named in ``reserved`` (the position labels, ``metric``) is left to it too."""
    body = _body(text)
    opened = _header(body) if body is not None and "\n" in body else None
    if opened is None:
        return None
    reader, header = opened
    rev_column, when = _positions(header, rev_label, reader, metrics)
    if (rev_column or when) is None or any(name not in header for name in label_columns or ()):
        return None
    position = {c for c in (rev_column, when) if c is not None}
    chosen = _choose(reader, header, position, metrics, label_columns)
    if chosen is None or set(chosen[1]) & (reserved | {rev_label, TIME_LABEL}):
        return None
    times = np.full(reader.body.count("\n"), np.nan) if when is None else _times(reader, header.index(when))
    if times is None:
        return None
    revs = reader.strings(header.index(rev_column or when))  # type: ignore[arg-type]
    return Table(revs, times, {name: reader.strings(header.index(name)) for name in chosen[1]}, chosen[0])
