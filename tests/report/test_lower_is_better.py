"""``--lower-is-better METRIC[,METRIC]``: a metric in a unit ending in /s that is worse higher (an error or miss
rate) was judged "higher (better)" by every command with no way to say otherwise, and a stored
``--higher-is-better`` could not be taken back from ``show`` or ``report``.  The flag names metrics better lower
whatever their unit; ``run`` stores it with the experiment's analysis as it stores ``--higher-is-better``, and
show, report --store, compare EXP:VAR and publish judge by it, a flag given overriding the stored direction."""

from __future__ import annotations

import json
import random
import sys

import pytest
from abstat.engine.parts import Analysis, SpecError
from abstat.engine.spec import decode, dumps, loads
from abstat.errors import UsageError
from abstat.render.site.site import publish
from abstat.report.analysis import Judging, higher_is_better, stored_judging
from abstat.store import open_store
from support.store_runs import add_ok_run


def _store(path, analysis):
    """Experiment ``e``: ``rate`` in errors/s, variant new (~110) against old (~100), ten runs each."""
    rng = random.Random(4)
    settings = {"spec": {"abstat_spec": 1, "analysis": analysis}} if analysis is not None else {}
    with open_store(str(path)) as store:
        invocation = store.start_invocation("e", {"hostname": "h"}, settings=settings, variants=["new", "old"])
        for i in range(10):
            for variant, centre in (("new", 110.0), ("old", 100.0)):
                add_ok_run(store, invocation, variant, i, {"rate": [centre + rng.gauss(0, 1)]}, {"rate": "errors/s"})
        store.finish_invocation(invocation, "complete")
    return str(path)


def test_the_rule():
    assert higher_is_better("rate", "errors/s", ())  # a unit ending in /s
    assert not higher_is_better("rate", "errors/s", (), ("rate",))
    assert not higher_is_better("rate", "errors/s", ("all",), ("x,rate",))  # lower wins over higher
    assert not higher_is_better("score", None, True, ("all",))
    assert higher_is_better("other", "MB/s", (), ("rate",))


def test_files_in_a_rate_unit_judged_lower_is_better(abstat_cli, tmp_path):
    (tmp_path / "a.txt").write_text("".join(f"{100 + (i % 5) * 0.5}\n" for i in range(20)))
    (tmp_path / "b.txt").write_text("".join(f"{110 + (i % 5) * 0.5}\n" for i in range(20)))
    plain = abstat_cli("compare", "a.txt", "b.txt", "--unit", "errors/s", "--fail-on", "slower")
    assert plain.returncode == 0 and "higher (better)" in plain.stdout, plain.stdout + plain.stderr
    told = abstat_cli(
        "compare", "--lower-is-better", "all", "a.txt", "b.txt", "--unit", "errors/s", "--fail-on", "slower"
    )
    assert told.returncode == 1, told.stdout + told.stderr
    assert "higher (worse)" in told.stdout


def test_a_metric_named_both_ways_is_refused(abstat_cli, tmp_path):
    (tmp_path / "a.txt").write_text("1\n2\n3\n")
    (tmp_path / "b.txt").write_text("1\n2\n3\n")
    for command in ("compare", "report"):
        done = abstat_cli(command, "--higher-is-better", "x,y", "--lower-is-better", "y", "a.txt", "b.txt")
        assert done.returncode == 2
        assert done.stderr.strip().splitlines() == [
            f"abstat {command}: --higher-is-better and --lower-is-better both name 'y'"
        ]
    with pytest.raises(SpecError, match="analysis.lower_is_better"):
        Analysis(higher_is_better=("x",), lower_is_better=("x",))
    with pytest.raises(UsageError):
        Judging().over(higher_is_better=["all"], lower_is_better=["all"])


def test_the_specification_keeps_it(tmp_path):
    doc = {"abstat_spec": 1, "variants": [{"name": "a", "command": "true"}, {"name": "b", "command": "true"}]}
    spec = decode({**doc, "abstat_spec": 3, "analysis": {"lower_is_better": ["rate"]}})
    assert spec.analysis.lower_is_better == ("rate",)
    assert loads(dumps(spec)).analysis.lower_is_better == ("rate",)
    assert "lower_is_better" not in json.loads(dumps(decode(doc)))["analysis"]  # as before when not given
    with pytest.raises(SpecError, match="analysis.lower_is_better"):
        decode({**doc, "abstat_spec": 3, "analysis": {"lower_is_better": "rate"}})
    with pytest.raises(SpecError, match="analysis.lower_is_better: is a field of version 3"):
        decode({**doc, "analysis": {"lower_is_better": ["rate"]}})


def test_show_report_compare_and_publish_judge_as_the_run_did(abstat_cli, tmp_path):
    db = _store(tmp_path / "s.db", {"baseline": "old", "confidence": 95.0, "lower_is_better": ["rate"]})
    shown = abstat_cli("show", "--store", db, "e", "--metric", "rate")
    assert shown.returncode == 0, shown.stderr
    assert "higher (worse)" in shown.stdout and "better" not in shown.stdout.replace("lower is better", ""), (
        shown.stdout
    )
    compared = abstat_cli("compare", "--store", db, "e:old", "e:new", "--metric", "rate", "--fail-on", "slower")
    assert compared.returncode == 1 and "higher (worse)" in compared.stdout, compared.stdout + compared.stderr
    reported = abstat_cli("report", "--store", db, "--metric", "rate", "--fail-on", "slower", "--format", "csv")
    assert reported.returncode == 1 and ",slower," in reported.stdout, reported.stdout + reported.stderr
    publish(db, str(tmp_path / "site"))
    (page,) = (tmp_path / "site" / "experiments").iterdir()
    assert "higher (worse)" in page.read_text() and "higher (better)" not in page.read_text()
    # a flag given takes the stored direction back
    shown = abstat_cli("show", "--store", db, "e", "--metric", "rate", "--higher-is-better", "rate")
    assert "higher (better)" in shown.stdout, shown.stdout


def test_a_stored_higher_is_better_taken_back(abstat_cli, tmp_path):
    db = _store(tmp_path / "s.db", {"baseline": "old", "confidence": 95.0, "higher_is_better": ["rate", "x"]})
    shown = abstat_cli("show", "--store", db, "e", "--metric", "rate")
    assert "higher (better)" in shown.stdout, shown.stdout
    shown = abstat_cli("show", "--store", db, "e", "--metric", "rate", "--lower-is-better", "rate")
    assert "higher (worse)" in shown.stdout, shown.stdout
    with open_store(db, create=False) as store:
        judging = stored_judging(store, ["e"]).over(lower_is_better=["rate"])
    assert judging.higher_is_better == ("x",) and judging.lower_is_better == ("rate",)


def test_a_damaged_stored_list_is_left_out(tmp_path):
    db = _store(tmp_path / "s.db", {"lower_is_better": "rate", "higher_is_better": ["a"]})
    with open_store(db, create=False) as store:
        assert stored_judging(store, ["e"]) == Judging(None, None, ("a",), ())
    db = _store(tmp_path / "t.db", {"lower_is_better": ["rate", 3, ""]})
    with open_store(db, create=False) as store:
        assert stored_judging(store, ["e"]).lower_is_better == ("rate",)


def test_run_stores_it(abstat_cli, tmp_path):
    script = tmp_path / "rate.py"
    script.write_text("import random, sys\nprint('errors: %d errors/s' % (int(sys.argv[1]) + random.randrange(5)))\n")
    done = abstat_cli(
        "run", "--store", "s.db", "--experiment", "r", "-n", "6", "--no-json-lines", "--lower-is-better", "errors",
        "--metric", "errors=errors: ([0-9]+):errors/s",
        "-v", f"a={sys.executable} {script} 100", "-v", f"b={sys.executable} {script} 120",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "higher (worse)" in done.stdout, done.stdout
    shown = abstat_cli("show", "--store", "s.db", "r", "--metric", "errors")
    assert "higher (worse)" in shown.stdout, shown.stdout


def test_report_of_a_store_without_by_keeps_the_stored_baseline(abstat_cli, tmp_path):
    """attack22 A1: without --by the stored baseline was dropped (it was kept only for --by variant), so the
    layout compared against the first variant and the gate passed what run, show and compare called slower."""
    rng = random.Random(7)
    settings = {"spec": {"abstat_spec": 1, "analysis": {"baseline": "B", "confidence": 90.0}}}
    with open_store(str(tmp_path / "s.db")) as store:
        invocation = store.start_invocation("e2", {"hostname": "h"}, settings=settings, variants=["A", "B"])
        for i in range(8):
            for variant, centre in (("A", 104.0), ("B", 100.0)):
                add_ok_run(store, invocation, variant, i, {"t": [centre + rng.gauss(0, 1)]}, {"t": "ns"})
        store.finish_invocation(invocation, "complete")
    done = abstat_cli("report", "--store", "s.db", "--metric", "t", "--fail-on", "slower", "--format", "csv")
    assert done.returncode == 1, done.stdout + done.stderr
    assert ",A,B," in done.stdout.replace('"', "") or ",slower," in done.stdout, done.stdout
    assert ",slower," in done.stdout and ",faster," not in done.stdout
