"""``abstat export --format csv`` streams: the table an independent materialising
exporter builds, flat memory; machine records once per invocation, never per sample."""

from __future__ import annotations

import csv
import io
import tracemalloc

from abstat.render.rows_export import COLUMNS, MACHINE_COLUMNS, write_csv, write_machines_csv

MACHINES = {
    1: {"hostname": "a", "cpu": {"model": "X", "flags": ["sse", "avx"]}, "governor": None},
    2: {"hostname": "b", "cpu": {"model": "Y"}, "boost": True},
}


def _rows(count: int):
    for index in range(count):
        invocation = 1 if index < count // 2 else 2
        yield {
            "experiment": "e",
            "variant": "ab"[index % 2],
            "metric": "m",
            "value": index / 7,
            "unit": "s",
            "run": index,
            "iteration": index // 2 + 1,
            "index": 0,
            "invocation": invocation,
            "boot_id": None,
            "host": 'h,"q"',
            "started_at": "t",
            "command": "./x",
            "labels": {"k": "v w"},
            "notes": ["peak RSS not recorded", "=1+2"] if index % 3 == 0 else [],
            "variant_order": 1 + index % 2,
        }


def _values(rows):
    """The rows as ``Store.sample_values`` gives them."""
    for row in rows:
        yield row, row["metric"], row["value"], row["unit"], row["index"]


def _reference(rows) -> list[list[str]]:
    """The samples table as a row-materialising exporter builds it (independent code)."""
    rows = list(rows)
    table = [list(COLUMNS)]
    for row in rows:
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
        table.append(cells)
    return table


def test_streamed_csv_equals_materialised_table() -> None:
    out = io.StringIO()
    assert write_csv(_values(_rows(10)), out) == 10
    table = list(csv.reader(io.StringIO(out.getvalue())))
    assert table == _reference(_rows(10))
    assert not any("machine" in column for column in table[0])


def test_machine_records_go_out_once_per_invocation() -> None:
    def machine_rows():
        for invocation, machine in MACHINES.items():
            yield {
                "experiment": "e",
                "invocation": invocation,
                "host": "h",
                "boot_id": None,
                "started_at": "t",
                "machine": machine,
            }

    out = io.StringIO()
    assert write_machines_csv(machine_rows, out) == 2
    table = list(csv.reader(io.StringIO(out.getvalue())))
    assert table[0] == [
        *MACHINE_COLUMNS,
        "machine.hostname",
        "machine.cpu.model",
        "machine.cpu.flags",
        "machine.governor",
        "machine.boost",
    ]
    assert table[1:] == [
        ["e", "1", "h", "", "t", "a", "X", "sse avx", "", ""],
        ["e", "2", "h", "", "t", "b", "Y", "", "", "True"],
    ]


def _peak(count: int) -> int:
    class Sink(io.TextIOBase):
        def write(self, text: str) -> int:
            return len(text)

    tracemalloc.start()
    try:
        write_csv(_values(_rows(count)), Sink())
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_csv_memory_is_flat_in_row_count() -> None:
    small, large = _peak(2_000), _peak(40_000)
    assert large < small + 64 * 1024, (small, large)  # the old exporter grew by ~1 KiB a row
