"""``abstat compare`` compares one metric: a comma list (what ``report`` and ``show`` take) is refused in
one line saying so, exit 2 (newcomer22's item 9: it was looked up as one metric named
``'wall,user,sys'`` and refused by a store's list of metrics that holds all three)."""

from __future__ import annotations


def test_a_list_of_metrics_is_refused_saying_compare_takes_one(abstat_cli, tmp_path):
    store = tmp_path / "s.db"
    made = abstat_cli(
        "run", "-n", "3", "--store", store, "--no-progress", "--experiment", "s", "-v", "a=true", "-v", "b=true"
    )
    assert made.returncode == 0, made.stderr
    for inputs in (["s:a", "s:b"], ["s:a", "s:b", "s:a"]):
        refused = abstat_cli("compare", "--store", store, *inputs, "--metric", "wall,user,sys")
        assert refused.returncode == 2, refused.stderr
        (line,) = refused.stderr.splitlines()
        assert "compare takes one metric" in line and "abstat report" in line and "abstat show" in line, line
        assert "has no metric" not in line
    one = abstat_cli("compare", "--store", store, "s:a", "s:b", "--metric", "user")
    assert one.returncode == 0, one.stderr
