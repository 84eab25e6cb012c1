"""perf stat ``--per-thread`` with a command name holding a space, and ``--per-cluster`` (attack20 A3); a one-line
JSON document is not perf stat ``-x,`` (attack20 A9).

The lines are printed with perf's own formats (tools/perf/util/stat-display.c): ``print_aggr_id_std`` prints
``%*s-%-*d `` (COMM_LEN 16, PID_LEN 7) for a thread and ``%-*s %*d `` (aggr_header_lens[AGGR_CLUSTER] 20, 4)
for ``S%d-D%d-CLS%d``, then ``print_counter_value_std`` the count ``%'*.0f `` (COUNTS_LEN 18) and the event
``%-*s`` (EVNAME_LEN 32); ``print_aggr_id_csv`` prints ``%s-%d,`` and ``S%d-D%d-CLS%d,%d,``, then ``%.0f,``, the
unit, the event, ``,%lu,%.2f`` and the two metric fields.  The reference is the same data in ``-x,`` form, and
the values themselves.  Before the fix the text lines were skipped without a word (a +20% change gone) and the
``-x,`` cluster rows were refused as "a decimal comma?".
"""

from __future__ import annotations

import json

import pytest

from abstat.errors import InputError
from abstat.readers import peers, perfstat

THREADS = [("Web Content", 1234), ("kworker/0:1", 99), ("GC Thread#0", 4321), ("Isolated Web Co", 77)]
CLUSTERS = [(0, 0, 0, 4), (0, 0, 1, 4)]


def _std_thread(comm: str, pid: int, count: float, event: str = "cycles") -> str:
    return f"{comm:>16}-{pid:<7} {count:>18,.0f} {event:<32}"  # "%*s-%-*d " "%'*.0f " "%-*s"


def _std_cluster(socket: int, die: int, cluster: int, nr: int, count: float) -> str:
    name = f"S{socket}-D{die}-CLS{cluster}"
    return f"{name:<20} {nr:>4} {count:>18,.0f} cycles"  # "%-*s %*d " "%'*.0f " "%-*s"


def _text(blocks: list[list[str]]) -> str:
    return "".join(
        "\n Performance counter stats for 'system wide':\n\n"
        + "\n".join(lines)
        + "\n\n       1.001571234 seconds time elapsed\n\n"
        for lines in blocks
    )


def _values(text: str, fmt: str) -> dict[str, list[float]]:
    return {s.labels["metric"]: list(s.runs[0]) for s in perfstat.read("f", fmt, text)}


def _counts(run: int, k: int) -> float:
    return 1_000_000.0 + 1000 * run + 17 * k


def test_per_thread_text_with_spaces_in_the_command_is_read_as_the_csv_form():
    runs = range(3)
    text = _text([[_std_thread(c, p, _counts(r, k)) for k, (c, p) in enumerate(THREADS)] for r in runs])
    csv = "".join(
        f"{c}-{p},{_counts(r, k):.0f},,cycles,1000,100.00,,\n" for r in runs for k, (c, p) in enumerate(THREADS)
    )
    assert perfstat.detect(text) == "perf-stat" and perfstat.detect(csv) == "perf-stat-csv"
    got = _values(text, "perf-stat")
    reference = _values(csv, "perf-stat-csv")
    assert {k: v for k, v in got.items() if k != "seconds-time-elapsed"} == reference
    assert got["cycles.Web Content-1234"] == [_counts(r, 0) for r in runs]
    assert got["cycles.Isolated Web Co-77"] == [_counts(r, 3) for r in runs]


def test_per_cluster_text_and_csv_are_read_alike():
    runs = range(3)
    text = _text([[_std_cluster(*ids, _counts(r, k)) for k, ids in enumerate(CLUSTERS)] for r in runs])
    csv = "".join(
        f"S{s}-D{d}-CLS{c},{nr},{_counts(r, k):.0f},,cycles,1000,100.00,,\n"
        for r in runs
        for k, (s, d, c, nr) in enumerate(CLUSTERS)
    )
    assert perfstat.detect(csv) == "perf-stat-csv"
    got = _values(text, "perf-stat")
    reference = _values(csv, "perf-stat-csv")
    assert {k: v for k, v in got.items() if k != "seconds-time-elapsed"} == reference
    assert reference == {f"cycles.S0-D0-CLS{k}.4": [_counts(r, k) for r in runs] for k in range(2)}


def test_a_csv_prefix_of_an_unknown_layout_is_refused_naming_it():
    row = "S0-D0-XYZ0,4,994720,,cycles,1000,100.00,,\n"
    with pytest.raises(InputError, match="S0-D0-XYZ0,4,994720.*a perf layout abstat does not know"):
        perfstat.read("f.csv", "perf-stat-csv", row * 2)


@pytest.mark.parametrize(
    "doc",
    [
        {"results": [{"command": "a", "times": [1, 2, 3], "exit_codes": [0, 0, 0]}]},
        [1, 2, "ns", 3],
    ],
)
def test_a_one_line_json_document_is_never_perf_csv(doc):
    """hyperfine's JSON trimmed to one line (jq -c): detected as JSON (hyperfine for the object), not as
    perf stat -x, rows named by JSON fragments."""
    text = json.dumps(doc, separators=(",", ":")) + "\n"
    assert perfstat.detect(text) is None
    assert peers.detect_format("x.json", text) == ("hyperfine" if isinstance(doc, dict) else None)
