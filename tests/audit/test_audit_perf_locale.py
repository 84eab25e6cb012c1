"""audit on perf stat blocks printed in de_DE: the numbers perf meant, or the block named unreadable.

References: perf 6.1's own output (tests/data/kernel/SOURCE.md, wave 19): the same two recordings
reported under de_DE.UTF-8 and C.UTF-8 must audit to the same numbers; a ``-r 5`` run in de_DE gives
the standard deviation from perf's ``( +-  2,12% )`` (standard error of the mean, relative).
"""

from __future__ import annotations

import math
import os

import pytest

from abstat.audit.report import audit_text
from support import paths

KERNEL = os.path.join(str(paths.TESTS), "data", "kernel")


def _text(name: str) -> str:
    with open(os.path.join(KERNEL, name)) as handle:
        return handle.read()


def _datasets(text: str) -> list[tuple]:
    blocks = audit_text(text).to_dict()["blocks"]
    return [(d["metric"], d["n"], d["avg"], d["stddev"]) for b in blocks for d in b["datasets"]]


def test_de_de_blocks_audit_as_the_c_locale_report_of_the_same_recordings():
    german, c = _datasets(_text("perf_stat_report_de_DE.txt")), _datasets(_text("perf_stat_report_C.txt"))
    assert german == c and ("task-clock", 1, 1508.55, None) in c and ("page-faults", 1, 205306.0, None) in c


def test_de_de_r5_blocks_give_perfs_standard_deviation():
    block = _text("perf_stat_r5_de_DE.txt")
    found = _datasets("Before:\n" + block + "\nAfter:\n" + block)
    clock = [d for d in found if d[0] == "task-clock"]
    assert clock and all(d[1:3] == (5, 147.32) for d in clock)
    assert clock[0][3] == pytest.approx(2.12 / 100 * 147.32 * math.sqrt(5))
    elapsed = [d for d in found if d[0] == "seconds-time-elapsed"]
    assert elapsed[0][2] == 0.5983 and elapsed[0][3] == pytest.approx(0.0329 * math.sqrt(5))


def test_a_block_whose_decimal_mark_cannot_be_told_is_named_not_compared():
    block = " Performance counter stats for './bench' (10 runs):\n\n        205.306      page-faults    ( +-  1.00% )\n"
    odd = " Performance counter stats for './bench' (10 runs):\n\n        205.306      page-faults\n"
    report = audit_text("Before:\n" + odd + "\nAfter:\n" + block).to_dict()
    messages = [f["message"] for b in report["blocks"] for f in b["findings"]]
    assert any("line 4" in m and "'205.306'" in m and "not compared" in m for m in messages), messages
    assert [d["name"] for b in report["blocks"] for d in b["datasets"]] == ["After"]  # the +- shows '.' there


@pytest.mark.parametrize("cell", ["12,5 (0,3)", "12,5 (0.3)"])
def test_a_decimal_comma_in_a_mean_sd_table_is_not_read_as_a_thousands_group(cell):
    text = f"Mean (standard deviation) of 10 runs:\n\n            before        after\nwall      {cell}    13.0 (0.3)\n"
    found = _datasets(text)
    assert all(d[2] not in (125.0, 5.0) for d in found), found
