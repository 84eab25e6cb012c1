"""A side that is constant while the other varies, when the interval of the change has no width (all
zeros: tick-granular CPU time gives ``-100% [-100, -100]`` for any baseline), is ``cannot judge`` with
the reason, in compare, report and show alike; a constant side whose interval has width keeps it
(issue 35, item 7)."""

from __future__ import annotations

import json

from support.cli import run_abstat as abstat

from abstat.store import open_store
from support.store_runs import add_ok_run

VARYING = [10.0, 11.0, 12.0, 10.5, 11.5, 13.0, 9.5]


def _file(tmp_path, name, values):
    path = tmp_path / name
    path.write_text("".join(f"{v}\n" for v in values))
    return str(path)


def test_all_zeros_cannot_be_judged_in_every_command(tmp_path):
    a, z = _file(tmp_path, "a.txt", VARYING), _file(tmp_path, "z.txt", [0.0] * 7)
    text = abstat("compare", a, z)
    assert text.returncode == 0, text.stderr
    assert "cannot judge" in text.stdout and "faster" not in text.stdout and "[-100.0, -100.0]" not in text.stdout
    assert "the candidate is constant (all 7 values are 0)" in text.stdout
    one = json.loads(abstat("compare", a, z, "--format", "json").stdout)["comparisons"][0]
    assert (one["verdict"], one["ci_pct"], one["p_value"], one["significant"]) == ("cannot judge", None, None, False)
    reverse = json.loads(abstat("compare", z, a, "--format", "json").stdout)["comparisons"][0]
    assert reverse["verdict"] == "cannot judge" and reverse["ci_pct"] is None  # a zero baseline: no ratio
    report = abstat("report", a, z)
    assert "cannot judge" in report.stdout and "the candidate is constant" in report.stdout
    cell = json.loads(abstat("report", a, z, "--format", "json").stdout)["rows"][0]["cells"]["z"]["comparison"]
    assert (cell["verdict"], cell["ci_pct"]) == ("cannot judge", None)
    # stored: the run/show path (user time all zeros for b)
    store = str(tmp_path / "s.db")
    with open_store(store, create=True) as writer:
        invocation = writer.start_invocation("e", machine={"hostname": "h"}, variants=["a", "b"])
        for i, value in enumerate(VARYING):
            for variant, user in (("a", value), ("b", 0.0)):
                add_ok_run(writer, invocation, variant, i, {"user": [user]}, {"user": "ms"})
        writer.finish_invocation(invocation, "ok")
    shown = json.loads(abstat("show", "e", "--store", store, "--format", "json").stdout)
    stored = shown["metrics"]["user"]["comparisons"]["comparisons"][0]
    assert (stored["verdict"], stored["ci_pct"]) == ("cannot judge", None)
    assert "cannot judge" in abstat("show", "e", "--store", store).stdout


def test_a_constant_side_beside_a_varying_one_keeps_its_interval(tmp_path):
    a, c = _file(tmp_path, "a.txt", VARYING), _file(tmp_path, "c.txt", [5.0] * 7)
    one = json.loads(abstat("compare", a, c, "--format", "json").stdout)["comparisons"][0]
    low, high = one["ci_pct"]
    assert low < high < 0 and one["verdict"] == "faster"  # the baseline's noise bounds the change
