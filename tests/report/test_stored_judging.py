"""One result, one story (attack21 B1, B2): every command judges a metric's direction by one rule (higher is
better for units ending in /s and the metrics named --higher-is-better), and a command that reads an
experiment from a store judges it by the analysis ``abstat run`` stored with it (baseline, confidence,
higher-is-better metrics), the flags given overriding it."""

from __future__ import annotations

import random
import sys

from abstat.render.site.site import publish
from abstat.report.analysis import Judging, stored_judging
from abstat.store import open_store
from support.store_runs import add_ok_run

RUN_ANALYSIS = {"baseline": "old", "confidence": 99.0, "higher_is_better": ["score"]}


def _store(path, *, analysis=None, unit=None, metric="score", experiment="e"):
    """``experiment``: variants new (~110) and old (~100), ten runs each; ``analysis`` stored as run stores it."""
    rng = random.Random(3)
    settings = {"spec": {"abstat_spec": 1, "analysis": analysis}} if analysis is not None else {}
    with open_store(str(path)) as store:
        invocation = store.start_invocation(experiment, {"hostname": "h"}, settings=settings, variants=["new", "old"])
        for i in range(10):
            for variant, centre in (("new", 110.0), ("old", 100.0)):
                units = {metric: unit} if unit else None
                add_ok_run(store, invocation, variant, i, {metric: [centre + rng.gauss(0, 1)]}, units)
        store.finish_invocation(invocation, "complete")
    return str(path)


def test_compare_of_a_stored_throughput_calls_a_gain_better(abstat_cli, tmp_path):
    db = _store(tmp_path / "s.db", unit="MB/s")
    done = abstat_cli("compare", "--store", db, "e:old", "e:new", "--metric", "score", "--fail-on", "slower")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "higher (better)" in done.stdout
    assert abstat_cli("baseline", "save", "--store", db, "rel1", "e").returncode == 0
    saved = ("baseline:rel1:old", "e:new", "--metric", "score", "--fail-on", "slower")
    done = abstat_cli("compare", "--store", db, *saved)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "higher (better)" in done.stdout


def test_compare_of_files_takes_the_direction_from_unit(abstat_cli, tmp_path):
    (tmp_path / "a.txt").write_text("".join(f"{100 + (i % 5) * 0.5}\n" for i in range(20)))
    (tmp_path / "b.txt").write_text("".join(f"{110 + (i % 5) * 0.5}\n" for i in range(20)))
    done = abstat_cli("compare", "a.txt", "b.txt", "--unit", "MiB/s", "--fail-on", "slower")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "higher (better)" in done.stdout
    assert abstat_cli("compare", "a.txt", "b.txt", "--fail-on", "slower").returncode == 1  # no unit: lower is better
    # two units that convert: new's values in old's MiB/s, a 99.9% drop of a throughput, which is worse
    done = abstat_cli(
        "compare", "old=a.txt", "new=b.txt", "--unit", "old=MiB/s", "--unit", "new=KiB/s", "--fail-on", "slower"
    )
    assert done.returncode == 1, done.stdout + done.stderr
    assert "lower (worse)" in done.stdout


def test_show_compare_and_report_judge_as_the_run_did(abstat_cli, tmp_path):
    db = _store(tmp_path / "s.db", analysis=RUN_ANALYSIS)
    shown = abstat_cli("show", "--store", db, "e", "--metric", "score")
    assert shown.returncode == 0, shown.stderr
    assert "new vs old" in shown.stdout and "99% confidence" in shown.stdout, shown.stdout
    assert "higher (better)" in shown.stdout and "worse" not in shown.stdout
    compared = abstat_cli("compare", "--store", db, "e:old", "e:new", "--metric", "score", "--fail-on", "slower")
    assert compared.returncode == 0, compared.stdout + compared.stderr
    assert "99% confidence" in compared.stdout and "higher (better)" in compared.stdout
    reported = abstat_cli("report", "--store", db, "--metric", "score", "--fail-on", "slower", "--format", "csv")
    assert reported.returncode == 0, reported.stdout + reported.stderr
    assert ",faster," in reported.stdout


def test_flags_given_override_the_stored_analysis(abstat_cli, tmp_path):
    db = _store(tmp_path / "s.db", analysis=RUN_ANALYSIS)
    shown = abstat_cli("show", "--store", db, "e", "--metric", "score", "--baseline", "new", "-c", "90")
    assert "old vs new" in shown.stdout and "90% confidence" in shown.stdout, shown.stdout
    assert "lower (worse)" in shown.stdout  # still higher is better: old is lower
    compared = abstat_cli("compare", "--store", db, "e:old", "e:new", "--metric", "score", "-c", "95")
    assert "95% confidence" in compared.stdout, compared.stdout


def test_an_experiment_stored_without_analysis_keeps_the_defaults(abstat_cli, tmp_path):
    db = _store(tmp_path / "s.db")
    shown = abstat_cli("show", "--store", db, "e", "--metric", "score")
    assert "old vs new" in shown.stdout and "95% confidence" in shown.stdout, shown.stdout


def test_a_damaged_stored_analysis_is_left_out(tmp_path):
    db = _store(tmp_path / "s.db", analysis={"baseline": 7, "confidence": 100.0, "higher_is_better": "score"})
    with open_store(db, create=False) as store:
        assert stored_judging(store, ["e"]) == Judging()
    db = _store(tmp_path / "t.db", analysis={"baseline": "old", "confidence": True, "higher_is_better": ["a", 3]})
    with open_store(db, create=False) as store:
        assert stored_judging(store, ["e"]) == Judging("old", None, ("a",))


def test_publish_judges_as_the_run_did(tmp_path):
    db = _store(tmp_path / "s.db", analysis=RUN_ANALYSIS)
    publish(db, str(tmp_path / "site"))
    (page,) = (tmp_path / "site" / "experiments").iterdir()
    text = page.read_text()
    assert "higher (better)" in text and "higher (worse)" not in text
    assert "99% confidence" in text


def _nightly(path, analysis):
    """A series of ``score`` (no unit) that rises 10% at r12."""
    rng = random.Random(5)
    settings = {"spec": {"abstat_spec": 1, "analysis": analysis}} if analysis is not None else {}
    with open_store(str(path)) as store:
        for r in range(24):
            invocation = store.start_invocation(
                "nightly", {"hostname": "ci"}, settings=settings, labels={"rev": f"r{r:02d}"}, variants=["build"]
            )
            for i in range(6):
                score = 10.0 * (1.10 if r >= 12 else 1.0) * (1 + rng.gauss(0, 0.005))
                add_ok_run(store, invocation, "build", i, {"score": [score]})
            store.finish_invocation(invocation, "complete")
    return str(path)


def test_the_regressions_page_takes_the_runs_direction(tmp_path):
    lower = _nightly(tmp_path / "lower.db", None)
    publish(lower, str(tmp_path / "lower"))
    assert "No change point made a series worse" not in (tmp_path / "lower" / "regressions.html").read_text()
    higher = _nightly(tmp_path / "higher.db", {"baseline": None, "confidence": 95.0, "higher_is_better": ["score"]})
    publish(higher, str(tmp_path / "higher"))
    assert "No change point made a series worse" in (tmp_path / "higher" / "regressions.html").read_text()


def test_until_decided_on_a_throughput_calls_a_gain_faster(abstat_cli, tmp_path):
    script = tmp_path / "tp.py"
    script.write_text("import random, sys\nprint('tput: %.3f' % (float(sys.argv[1]) + random.gauss(0, 1)))\n")
    done = abstat_cli(
        "run", "--store", "s.db", "--until-decided", "--max-runs", "40", "--threshold", "1", "--experiment", "sq",
        "--metric", "tput=tput: ([0-9.]+):MB/s", "--no-json-lines", "--decide-on", "tput",
        "-v", f"old={sys.executable} {script} 100", "-v", f"new={sys.executable} {script} 110",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "new faster" in done.stdout + done.stderr, done.stdout + done.stderr


def test_show_compare_and_report_take_the_stored_threshold(abstat_cli, tmp_path):
    """attack22 A6: ``run --until-decided --threshold`` stores its threshold; a +10% change inside +-20% is
    equivalent by it, as ``compare --threshold 20`` says, unless a flag says otherwise."""
    db = _store(tmp_path / "s.db", analysis={"baseline": "old", "confidence": 95.0, "threshold": 20.0})
    reference = abstat_cli("compare", "--store", db, "e:old", "e:new", "--metric", "score", "--threshold", "20")
    assert "equivalent" in reference.stdout, reference.stdout
    shown = abstat_cli("show", "--store", db, "e", "--metric", "score")
    assert "equivalent" in shown.stdout and "worse" not in shown.stdout, shown.stdout
    compared = abstat_cli("compare", "--store", db, "e:old", "e:new", "--metric", "score", "--fail-on", "slower")
    assert compared.returncode == 0 and "equivalent" in compared.stdout, compared.stdout + compared.stderr
    reported = abstat_cli("report", "--store", db, "--metric", "score", "--fail-on", "slower", "--format", "csv")
    assert reported.returncode == 0 and ",equivalent," in reported.stdout, reported.stdout
    shown = abstat_cli("show", "--store", db, "e", "--metric", "score", "--threshold", "5")
    assert "higher (worse)" in shown.stdout and "equivalent" not in shown.stdout, shown.stdout
    compared = abstat_cli("compare", "--store", db, "e:old", "e:new", "--metric", "score", "--threshold", "0")
    assert "higher (worse)" in compared.stdout, compared.stdout


def test_a_damaged_stored_threshold_is_left_out(tmp_path):
    for number, bad in enumerate((True, "2", -1, 100, [2], None)):
        db = _store(tmp_path / f"{number}.db", analysis={"baseline": "old", "threshold": bad})
        with open_store(db, create=False) as store:
            assert stored_judging(store, ["e"]) == Judging("old"), bad
    db = _store(tmp_path / "ok.db", analysis={"threshold": 0})
    with open_store(db, create=False) as store:
        assert stored_judging(store, ["e"]).threshold == 0.0
