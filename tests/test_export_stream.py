"""``abstat export --format csv`` streams: same table as before, flat memory."""
from __future__ import annotations

import csv
import io
import tracemalloc

from abstat.commands.export import COLUMNS, flatten, write_csv

MACHINES = {
    1: {"hostname": "a", "cpu": {"model": "X", "flags": ["sse", "avx"]}, "governor": None},
    2: {"hostname": "b", "cpu": {"model": "Y"}, "boost": True},
}


def _rows(count: int):
    for index in range(count):
        invocation = 1 if index < count // 2 else 2
        yield {
            "experiment": "e", "variant": "ab"[index % 2], "metric": "m", "value": index / 7, "unit": "s",
            "run": index, "iteration": index // 2 + 1, "index": 0, "invocation": invocation,
            "boot_id": None, "host": "h,\"q\"", "started_at": "t", "command": "./x", "labels": {"k": "v w"},
            "notes": ["peak RSS not recorded", "=1+2"] if index % 3 == 0 else [],
            "machine": MACHINES[invocation],
        }


def _reference(rows) -> list[list[str]]:
    """The table as the row-materialising exporter built it (independent code)."""
    rows = list(rows)
    columns: list[str] = []
    for row in rows:
        for key in flatten(row["machine"]):
            if key not in columns:
                columns.append(key)
    table = [[*COLUMNS, *columns]]
    for row in rows:
        flat = flatten(row["machine"])
        cells = []
        for column in COLUMNS:
            value = row[column]
            if column == "labels":
                value = " ".join(f"{k}={v}" for k, v in value.items())
            elif column == "value":
                value = repr(value)
            elif column == "notes":
                value = "; ".join(value)
                value = "'" + value if value.startswith(("=", "+", "-", "@", "\t", "\r")) else value
            cells.append("" if value is None else str(value))
        cells += ["" if flat.get(key) is None else str(flat[key]) for key in columns]
        table.append(cells)
    return table


def test_streamed_csv_equals_materialised_table() -> None:
    out = io.StringIO()
    assert write_csv(lambda: _rows(10), out) == 10
    table = list(csv.reader(io.StringIO(out.getvalue())))
    assert table == _reference(_rows(10))
    assert table[0][len(COLUMNS):] == ["machine.hostname", "machine.cpu.model", "machine.cpu.flags",
                                       "machine.governor", "machine.boost"]


def _peak(count: int) -> int:
    class Sink(io.TextIOBase):
        def write(self, text: str) -> int:
            return len(text)

    tracemalloc.start()
    try:
        write_csv(lambda: _rows(count), Sink())
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_csv_memory_is_flat_in_row_count() -> None:
    small, large = _peak(2_000), _peak(40_000)
    assert large < small + 64 * 1024, (small, large)  # the old exporter grew by ~1 KiB a row
