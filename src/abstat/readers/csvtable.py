"""CSV with a header: numeric columns are metrics (one sample per row), the others labels;
``value_columns``/``label_columns`` choose."""

from __future__ import annotations

import csv
import io
import re

from typing import TYPE_CHECKING

from abstat.errors import InputError, UsageError
from abstat.readers.sampleset import SampleSet
from abstat.readers.source import read_text
from abstat.readers.values import is_number, looks_numeric, shown

if TYPE_CHECKING:
    from abstat.readers.csvconfig import Configurations

Body = list[tuple[int, list[str]]]  # (line number, fields) of each data row
_COMMA_NUMBER = re.compile(r"[+-]?\d+(?:,\d+)+(?:\.\d+)?")  # 12,5 or 1,234,567.5: quoted, one CSV cell


def read_csv(
    path: str,
    text: str | None = None,
    *,
    value_columns: list[str] | None = None,
    label_columns: list[str] | None = None,
) -> list[SampleSet]:
    """CSV with a header; numeric columns are metrics, the others labels."""
    if text is None:
        text = read_text(path)
    header_line, header, body = _table(path, _rows(path, text))
    if value_columns is None and label_columns is None:
        from abstat.readers.csvexport import is_export, read_export

        if is_export(header):  # abstat export's rows: read back as the store's sets
            return read_export(path, header, body)
    labels_cols, metrics, configurations = _columns(path, header, body, value_columns, label_columns)
    _refuse_metric_column(path, header_line, labels_cols, metrics)
    if not metrics:
        raise InputError(
            "CSV file has no numeric column to use as values (choose one with {csv_value})",
            path=path,
            line=header_line,
            fields=["csv_value"],
        )
    sets = _sets(path, header, body, labels_cols, metrics)
    notes = configurations.notes(path, value_columns or ())
    for sample_set in sets:
        sample_set.notes.extend(notes)
    return sets


def _columns(
    path: str, header: list[str], body: Body, value_columns: list[str] | None, label_columns: list[str] | None
) -> tuple[list[str], list[str], Configurations]:
    """The label columns, the value columns and the configuration columns among the labels: those chosen
    (both: nothing else); else the columns of text, those chosen and the configurations
    (:mod:`abstat.readers.csvconfig`) are labels, and the other columns of numbers values."""
    from abstat.readers.csvconfig import Configurations, configuration_columns

    _check_chosen(path, header, (value_columns or []) + (label_columns or []))
    if value_columns is not None and label_columns is not None:
        return list(label_columns), list(value_columns), Configurations()
    labels_cols = list(
        dict.fromkeys([*(label_columns or ()), *_text_columns(path, header, body, value_columns, label_columns)])
    )
    numeric = [h for h in header if h not in labels_cols]
    configurations = configuration_columns(header, body, labels_cols, numeric)
    configurations.found = [h for h in configurations.found if h not in (value_columns or ())]
    labels_cols += configurations.found
    metrics = list(value_columns) if value_columns is not None else [h for h in header if h not in labels_cols]
    return labels_cols, metrics, configurations


def _text_columns(
    path: str, header: list[str], body: Body, value_columns: list[str] | None, label_columns: list[str] | None
) -> list[str]:
    """The columns not chosen as values that are not all numbers (nor all numbers with commas, unless chosen as
    labels: refused)."""
    found = [
        h
        for i, h in enumerate(header)
        if h not in (value_columns or ()) and not all(looks_numeric(r[i]) for _, r in body)
    ]
    if value_columns is None:  # values chosen: a column of CPU lists ("0,1") is only a label
        _refuse_comma_numbers(path, header, body, [h for h in found if h not in (label_columns or ())])
    return found


def _refuse_comma_numbers(path: str, header: list[str], body: Body, labels_cols: list[str]) -> None:
    """A column whose every cell is digits around commas (``"12,5"``, quoted) holds numbers written with a decimal
    comma or thousands separators: refused as the plain reader refuses ``12,5``, never taken for labels."""
    at = {name: i for i, name in enumerate(header)}
    for name in labels_cols:
        index = at[name]
        if all(_COMMA_NUMBER.fullmatch(row[index].strip()) for _, row in body):
            line, row = body[0]
            raise InputError(
                f"column {name!r}: {shown(row[index].strip())}: a decimal comma or a thousands separator? "
                "Write numbers with '.' as the decimal point and no grouping",
                path=path,
                line=line,
            )


def _refuse_metric_column(path: str, line: int, labels_cols: list[str], metrics: list[str]) -> None:
    """A ``metric`` column beside several columns of values: each row names its metric, so the other
    numbers are no metrics (run, iteration, a time stamp); which column holds the values is asked,
    never guessed (read as metrics of their own, rows of different metrics were pooled)."""
    if "metric" in labels_cols and len(metrics) > 1:
        raise InputError(
            f"a 'metric' column names each row's metric, but several columns hold numbers "
            f"({', '.join(metrics[:6])}): choose the column of values with {{csv_value}}",
            path=path,
            line=line,
            fields=["csv_value"],
        )


def _check_chosen(path: str, header: list[str], chosen: list[str]) -> None:
    for name in chosen:
        if name not in header:
            raise UsageError(f"{path}: no CSV column {name!r} (columns: {', '.join(header)})")


def _rows(path: str, text: str) -> list[list[str]]:
    """Every row of the file; InputError naming the line csv cannot read."""
    reader = csv.reader(io.StringIO(text))
    rows = []
    try:
        for row in reader:
            rows.append(row)
    except csv.Error as err:
        raise InputError(f"bad CSV: {err}", path=path, line=reader.line_num) from None
    return rows


def _table(path: str, rows: list[list[str]]) -> tuple[int, list[str], Body]:
    """The header's line, the header (names stripped) and the data rows, blank and ``#`` rows
    left out; every row has as many fields as the header."""
    numbered = [(i + 1, row) for i, row in enumerate(rows) if _content(row)]
    if not numbered:
        raise InputError("empty CSV file", path=path)
    header_line, header = numbered[0]
    header = _header(path, header_line, header)
    body = numbered[1:]
    if not body:
        raise InputError("CSV file has a header but no rows", path=path)
    _check_widths(path, header, body)
    return header_line, header, body


def _check_widths(path: str, header: list[str], body: Body) -> None:
    """Every row has as many fields as the header."""
    for lineno, row in body:
        if len(row) != len(header):
            raise InputError(f"{len(row)} fields, header has {len(header)}", path=path, line=lineno)


def _content(row: list[str]) -> bool:
    """A row that is neither blank nor a ``#`` comment."""
    return bool(row) and any(cell.strip() for cell in row) and not row[0].lstrip().startswith("#")


def _header(path: str, line: int, fields: list[str]) -> list[str]:
    """The column names, checked: none empty, none repeated, not all numbers."""
    header = [h.strip() for h in fields]
    if len(set(header)) != len(header) or any(not h for h in header):
        raise InputError("CSV header has empty or repeated column names", path=path, line=line)
    if all(looks_numeric(h) for h in header):
        raise InputError("no CSV header: the first row holds numbers, not column names", path=path, line=line)
    return header


def _sets(path: str, header: list[str], body: Body, labels_cols: list[str], metrics: list[str]) -> list[SampleSet]:
    """One set per metric and combination of the label columns' values, in the order first seen (each cell
    read once, each set's labels made once: linear in the size of the table)."""
    found: dict[tuple[tuple[str, str], ...], SampleSet] = {}
    values: dict[tuple[tuple[str, ...], str], list[float]] = {}  # (row's labels, metric) -> its set's values
    at = {name: i for i, name in enumerate(header)}
    label_index = [at[h] for h in labels_cols]
    metric_index = [(metric, at[metric]) for metric in metrics]
    for lineno, row in body:
        labels = tuple(row[i].strip() for i in label_index)
        for metric, index in metric_index:
            cell = row[index].strip()
            if not is_number(cell):
                raise InputError(f"column {metric!r}: not a finite number: {shown(cell)}", path=path, line=lineno)
            into = values.get((labels, metric))
            if into is None:
                set_labels = _set_labels(dict(zip(labels_cols, labels, strict=True)), metric, len(metrics))
                into = values[labels, metric] = _found(found, set_labels, path).runs[0]
            into.append(float(cell))
    return list(found.values())


def _found(found: dict[tuple[tuple[str, str], ...], SampleSet], labels: dict[str, str], path: str) -> SampleSet:
    """The set of these labels, made when first met."""
    key = tuple(sorted(labels.items()))
    if key not in found:
        found[key] = SampleSet(labels=labels, runs=[[]], source=path)
    return found[key]


def _set_labels(labels: dict[str, str], metric: str, metrics: int) -> dict[str, str]:
    """The row's labels and the metric's name, unless the row names its one metric in a ``metric`` column."""
    set_labels = dict(labels)
    if metrics > 1 or "metric" not in set_labels:
        set_labels["metric"] = metric
    return set_labels
