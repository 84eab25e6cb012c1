"""perf stat text printed in a comma-decimal locale (de_DE): read as perf meant it, or refused.

References: perf 6.1's own output (tests/data/kernel/SOURCE.md, wave 19): two recordings reported by
``perf stat report`` under de_DE.UTF-8 and under C.UTF-8 (the same numbers, two locales), a ``-r 5`` run
and a ``-x,`` run in de_DE.  perf prints with ``setlocale(LC_ALL, "")`` and ``%'18.0f`` / ``%'18.2f``
(tools/perf/util/stat-display.c), so ``1.508,55 msec`` is 1508.55 ms and ``205.306`` is 205306.
"""

from __future__ import annotations

import math
import os

import pytest

from abstat.errors import InputError
from abstat.readers import perfstat
from support import paths
from support.cli import run_abstat

KERNEL = os.path.join(str(paths.TESTS), "data", "kernel")


def _sets(name: str) -> dict:
    with open(os.path.join(KERNEL, name)) as handle:
        text = handle.read()
    return {s.labels["metric"]: s for s in perfstat.read_text(name, text)}


def test_de_de_report_reads_as_the_c_locale_report_of_the_same_recordings():
    german, c = _sets("perf_stat_report_de_DE.txt"), _sets("perf_stat_report_C.txt")
    assert set(german) == set(c) == {"task-clock", "page-faults", "context-switches", "seconds-time-elapsed"}
    for metric, reference in c.items():
        assert german[metric].runs == reference.runs, metric
        assert german[metric].unit == reference.unit
    assert c["task-clock"].runs == [[1508.55, 1252.89]] and c["page-faults"].runs == [[205306.0, 205222.0]]


def test_de_de_r5_block_gives_the_summary_perf_printed():
    sets = _sets("perf_stat_r5_de_DE.txt")
    clock = sets["task-clock"].summary
    assert (clock.n, clock.mean) == (5, 147.32)
    assert clock.stddev == pytest.approx(2.12 / 100 * 147.32 * math.sqrt(5))
    faults = sets["page-faults"].summary
    assert faults.mean == 19420.0 and faults.stddev == pytest.approx(0.07 / 100 * 19420 * math.sqrt(5))
    elapsed = sets["seconds-time-elapsed"].summary
    assert elapsed.mean == 0.5983 and elapsed.stddev == pytest.approx(0.0329 * math.sqrt(5))


BLOCK = "\n Performance counter stats for './bench':\n\n{lines}\n"


@pytest.mark.parametrize(
    ("lines", "line", "says"),
    [
        # a dot then three digits, and nothing else in the file showing the decimal mark
        ("        205.306      page-faults\n               473      context-switches", 4, "'205.306'"),
        # the elapsed time says ',' is the decimal mark, the count says '.'
        ("      1,224,637.50 msec task-clock\n\n       0,000415123 seconds time elapsed", 6, "decimal comma"),
        # not three-digit groups
        ("      12.34.567      cycles\n\n       0,000415123 seconds time elapsed", 4, "'12.34.567'"),
    ],
)
def test_undecidable_or_mixed_numbers_are_refused_naming_the_line(lines, line, says):
    with pytest.raises(InputError) as err:
        perfstat.read_text("p.txt", BLOCK.format(lines=lines))
    assert err.value.line == line and says in err.value.message


def test_compare_cli_refuses_de_de_csv_and_reads_de_de_text(tmp_path):
    refused = run_abstat(
        "compare", os.path.join(KERNEL, "perf_stat_de_DE.csv"), os.path.join(KERNEL, "perf_stat_de_DE.csv")
    )
    assert refused.returncode == 2 and "perf_stat_de_DE.csv:1:" in refused.stderr and "LC_ALL=C" in refused.stderr
    assert len(refused.stderr.strip().splitlines()) == 1
    german = os.path.join(KERNEL, "perf_stat_report_de_DE.txt")
    read = run_abstat("report", "--input-format", "perf-stat", german, "--format", "csv", cwd=tmp_path)
    assert read.returncode == 0, read.stderr
    assert "1380.72" in read.stdout  # the median of 1508.55 and 1252.89 ms
