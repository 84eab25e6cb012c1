"""perf stat layouts read as what they are, or refused in one line (attack19 F1, F3, F11).

The layouts follow perf's own printf formats (tools/perf/util/stat-display.c: counts ``%'18.0f`` grouped by
the locale, ``aggr_printout``'s ``CPU%-4d`` / ``S%d-D%d-C%-8d %4d`` before the value, ``print_cgroup`` after the
event, and ``-x,`` rows that print the event as given, commas included).  Each test failed before the fix:
the counters were dropped or pooled without a word.
"""

from __future__ import annotations

import pytest

from abstat.errors import InputError
from abstat.readers import perfstat


def _block(*counters: str, elapsed: str = "       1.000415123 seconds time elapsed") -> str:
    return "\n Performance counter stats for './bench':\n\n" + "\n".join(counters) + "\n\n" + elapsed + "\n\n"


def _values(text: str, fmt: str = "perf-stat") -> dict[str, list[float]]:
    return {s.labels["metric"]: list(s.runs[0]) for s in perfstat.read("f.txt", fmt, text)}


@pytest.mark.parametrize(
    ("group", "decimal"),
    [("\u202f", ","), ("\u00a0", ","), ("'", "."), ("\u2019", ".")],
    ids=["fr_FR-NNBSP", "NBSP", "de_CH-apostrophe", "right-quote"],
)
def test_counts_grouped_by_a_space_or_an_apostrophe_are_read(group: str, decimal: str) -> None:
    text = "".join(
        _block(
            f"      1{group}224{group}63{k}      cycles                    #    3{decimal}012 GHz",
            f"              0{decimal}41 msec task-clock                #    0{decimal}987 CPUs utilized",
            elapsed=f"       0{decimal}000415123 seconds time elapsed",
        )
        for k in range(3)
    )
    got = _values(text)
    assert got["cycles"] == [1224630.0, 1224631.0, 1224632.0]
    assert got["task-clock"] == [0.41] * 3


def test_counts_grouped_by_an_ascii_space_are_refused_not_dropped() -> None:
    text = _block("      1 224 637      cycles", "              0.41 msec task-clock")
    with pytest.raises(InputError, match="layout abstat cannot read") as err:
        perfstat.read("f.txt", "perf-stat", text)
    assert err.value.line == 4


def test_per_cpu_and_per_core_prefixes_name_the_counter() -> None:
    text = _block(
        "CPU0           995,926      cycles                    #    3.012 GHz",
        "CPU1           996,500      cycles                    #    3.012 GHz",
        "CPU0          1,000.08 msec cpu-clock                 #    1.000 CPUs utilized",
    ) + _block(
        "S0-D0-C0           2          1,983,532      cycles",
        "S0-D0-C1           2          1,990,000      cycles",
        "S0        4          3,000,000      instructions",
    )
    got = _values(text)
    assert got["cycles.CPU0"] == [995926.0]
    assert got["cycles.CPU1"] == [996500.0]
    assert got["cpu-clock.CPU0"] == [1000.08]
    assert got["cycles.S0-D0-C0.2"] == [1983532.0]
    assert got["cycles.S0-D0-C1.2"] == [1990000.0]
    assert got["instructions.S0.4"] == [3000000.0]
    assert "cycles" not in got


def test_cgroups_are_not_pooled() -> None:
    text = "".join(
        _block(
            f"            {fast:,}      cycles                    fast.slice",
            f"            {slow:,}      cycles                    slow.slice",
        )
        for fast, slow in ((998867, 1999969), (1001489, 2002845))
    )
    got = _values(text)
    assert got["cycles.fast.slice"] == [998867.0, 1001489.0]
    assert got["cycles.slow.slice"] == [1999969.0, 2002845.0]
    assert "cycles" not in got


def test_a_counter_with_noise_and_running_keeps_its_plain_name() -> None:
    got = _values(_block("      1,234,567      cycles      #  3.0 GHz   ( +-  0.50% )  (50.00%)"))
    assert list(got) == ["cycles", "seconds-time-elapsed"]


def test_raw_pmu_events_with_commas_in_csv_are_kept_whole() -> None:
    rows = []
    for k in range(4):
        rows.append(f"{998857 + k},,cpu/event=0x3c,umask=0x0/,2003112,100.00,,")
        rows.append(f"{50079 + k},,cpu/event=0x3c,umask=0x1/,2003112,100.00,,")
    rows.append("12,,context-switches,2003112,100.00,5.99,K/sec")
    text = "\n".join(rows) + "\n"
    assert perfstat.detect(text) == "perf-stat-csv"
    sets = {s.labels["metric"]: s for s in perfstat.read("f.csv", "perf-stat-csv", text)}
    assert list(sets["cpu/event=0x3c,umask=0x0/"].runs[0]) == [998857.0, 998858.0, 998859.0, 998860.0]
    assert list(sets["cpu/event=0x3c,umask=0x1/"].runs[0]) == [50079.0, 50080.0, 50081.0, 50082.0]
    assert list(sets["context-switches"].runs[0]) == [12.0]
    assert "cpu/event=0x3c" not in sets


@pytest.mark.parametrize(
    "row",
    ["CPU0,0,41,msec,task-clock,410000,100.00,0.987,CPUs utilized", "S0,4,0,41,msec,task-clock,410000,100.00,,"],
)
def test_a_decimal_comma_after_a_csv_prefix_is_refused(row: str) -> None:
    """attack19 F14: de_DE's ``-x,`` with ``-A`` gave task-clock 41 ms for 0,41 ms (the prefix ``CPU0,0``)."""
    text = row + "\n" + row.replace("task-clock", "cpu-clock") + "\n"
    with pytest.raises(InputError, match="a decimal comma"):
        perfstat.read("f.csv", "perf-stat-csv", text)


def test_prefixes_perf_prints_are_still_read() -> None:
    text = (
        "1.001234567,S0,4,1000,,cycles,2000,100.00,,\n"
        "1.001234567,CPU1,0.41,msec,task-clock,410000,100.00,0.987,CPUs utilized\n"
        "S0-D0-C0,2,1983532,,cycles,2000,100.00,,\n"
    )
    got = {s.labels["metric"]: list(s.runs[0]) for s in perfstat.read("f.csv", "perf-stat-csv", text)}
    assert got == {"cycles.S0.4": [1000.0], "task-clock.CPU1": [0.41], "cycles.S0-D0-C0.2": [1983532.0]}
