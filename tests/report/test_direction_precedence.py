"""attack23 #10a: ``--lower-is-better all --higher-is-better t`` judged t lower-is-better (``all`` won silently)
while ``--higher-is-better all --lower-is-better t`` judged t lower too: the rule depended on which flag held
``all``.  Now a metric's own name beats ``all`` either way (every metric but t one way, t the other), for stored
metrics, plain files and a stored analysis' ``all`` a flag overrides; ``all`` both ways stays refused."""

from __future__ import annotations

from abstat.report.analysis import Judging, higher_is_better
from support.store_runs import old_new_store


def test_a_name_beats_all_whichever_flag_holds_it():
    assert higher_is_better("t", None, ("t",), ("all",))
    assert not higher_is_better("u", None, ("t",), ("all",))
    assert not higher_is_better("t", "op/s", ("all",), ("t",))
    assert higher_is_better("u", None, ("all",), ("t",))
    assert higher_is_better("t", None, True, ())  # (chosen=True: all)
    # a stored lower-is-better all, the flag naming t: t higher; a flag's all drops the stored names
    assert Judging(lower_is_better=("all",)).over(higher_is_better=["t"]).higher_is_better == ("t",)
    over = Judging(higher_is_better=("t",)).over(lower_is_better=["all"])
    assert over.higher_is_better == () and over.lower_is_better == ("all",)


def _store(path, analysis=None):
    settings = {"spec": {"abstat_spec": 1, "analysis": analysis}} if analysis is not None else None
    return old_new_store(str(path), 110.0, runs=12, seed=3, settings=settings)


def test_compare_takes_the_name_over_all(abstat_cli, tmp_path):
    db = _store(tmp_path / "s.db")
    for flags, word in (
        (("--lower-is-better", "all", "--higher-is-better", "t"), "higher (better)"),
        (("--higher-is-better", "all", "--lower-is-better", "t"), "higher (worse)"),
    ):
        done = abstat_cli("compare", "--store", db, "e:old", "e:new", "--metric", "t", *flags)
        assert done.returncode == 0 and word in done.stdout, (flags, done.stdout + done.stderr)
    stored = _store(tmp_path / "l.db", analysis={"lower_is_better": ["all"]})
    done = abstat_cli("compare", "--store", stored, "e:old", "e:new", "--metric", "t", "--higher-is-better", "t")
    assert "higher (better)" in done.stdout, done.stdout + done.stderr
    done = abstat_cli("report", "--store", stored, "--metric", "t", "--higher-is-better", "t", "--format", "csv")
    assert ",faster" in done.stdout, done.stdout + done.stderr


def test_files_take_the_name_over_all(abstat_cli, tmp_path):
    (tmp_path / "a.txt").write_text("".join(f"{100 + (i % 5) * 0.5}\n" for i in range(20)))
    (tmp_path / "b.txt").write_text("".join(f"{110 + (i % 5) * 0.5}\n" for i in range(20)))
    done = abstat_cli("compare", "--lower-is-better", "all", "--higher-is-better", "t", "a.txt", "b.txt")
    assert " faster " in done.stdout, done.stdout + done.stderr
    done = abstat_cli("compare", "--lower-is-better", "all", "--higher-is-better", "all", "a.txt", "b.txt")
    assert done.returncode == 2 and "both name 'all'" in done.stderr
