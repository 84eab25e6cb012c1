"""``abstat run -L NAME VALUES``: a parameter scan's grid, run interleaved, stored per point, analysed.

The specification's checks and JSON form (version 2); end to end, a 3 x 2 grid whose stored run order
holds every point and variant in each block, hooks and commands with ``{NAME}`` replaced, and ``report``
showing the matrix and the analysis.  The analysis against independent references: Welch's heterogeneity
test against statsmodels' Welch ANOVA and Cochran's Q computed here with scipy's chi-square; the scaling
exponent against scipy.stats.linregress and statsmodels' OLS with HC3; A/A over a 3 x 2 grid calibrated
by simulation through the code the reports call (benchmarks/grid_calibration.py: more workflows).
"""

from __future__ import annotations

import functools
import json
import sqlite3

import numpy as np
import pytest
from scipy import stats

from abstat.comparison.grid import analyse, interaction, scaling, welch_heterogeneity
from abstat.engine.grid import grid_points, schedule_entries
from abstat.engine.spec import ExperimentSpec, Hooks, Lab, SpecError, Variant, decode, encode
from abstat.engine.parts import Host, Sequential
from support import paths
from support.cli import run_abstat

ROOT = str(paths.ROOT)


_abstat = functools.partial(run_abstat, timeout=600, extra_env={"NO_COLOR": "1"})


def _spec(**changes):
    base = dict(
        variants=(Variant("a", "sleep 0.{size}"), Variant("b", "sleep 0.0{size}")), parameters={"size": ("1", "2", "4")}
    )
    return ExperimentSpec(**{**base, **changes})


# -- the specification -----------------------------------------------------------------------------


def test_a_grid_expands_into_every_variant_at_every_point():
    spec = _spec(
        parameters={"size": ("1", "2", "4"), "t": ("1", "8")},
        variants=(Variant("a", "bench -s {size} -t {t}"), Variant("b", "bench2 -s {size}")),
        hooks=Hooks(prepare="drop {t}"),
    )
    points = grid_points(spec)
    assert points == [{"size": s, "t": t} for s in ("1", "2", "4") for t in ("1", "8")]
    entries = schedule_entries(spec)
    assert len(entries) == 12 and len({e.name for e in entries}) == 12
    first = entries[0]
    assert (first.variant, first.point, first.command, first.hooks) == (
        "a",
        0,
        "bench -s 1 -t 1",
        {"prepare": "drop 1"},
    )
    assert entries[-1].command == "bench2 -s 4" and entries[-1].hooks == {"prepare": "drop 8"}


@pytest.mark.parametrize(
    "changes, field, words",
    [
        ({"variants": (Variant("a", "x {size} {sise}"),)}, "variant 'a' command", "{sise} is not a parameter"),
        ({"parameters": {"size": ("1",), "n": ("2",)}}, "parameters['n']", "appears in no command"),
        ({"parameters": {"host": ("1",)}}, "parameters['host']", "a label abstat sets"),
        ({"parameters": {"size": ("1", "1")}}, "parameters['size']", "'1' given twice"),
        ({"parameters": {"size": ()}}, "parameters['size']", "list of 1 to"),
        ({"parameters": {"size": ("1",)}, "labels": {"size": "x"}}, "parameters['size']", "a label of the experiment"),
        (
            {"lab": Lab((Host("h", "h"),), boot={"a": "reboot a", "b": "reboot b"})},
            "parameters",
            "every point in each boot",
        ),
        ({"sequential": Sequential()}, "parameters", "cannot stop when decided"),
    ],
)
def test_bad_grids_are_refused_naming_the_field(changes, field, words):
    with pytest.raises(SpecError) as caught:
        _spec(**changes)
    assert caught.value.field == field and words in str(caught.value)
    assert "\n" not in str(caught.value)


def test_the_shells_own_braces_are_left_alone():
    spec = _spec(variants=(Variant("a", "sh -c 'echo ${HOME} {size}'"),), shell=True)
    assert schedule_entries(spec)[0].command == "sh -c 'echo ${HOME} 1'"


def test_the_json_form_is_version_2_with_parameters_and_1_without():
    spec = _spec(seed=3)
    document = encode(spec)
    assert document["abstat_spec"] == 2 and document["parameters"] == {"size": ["1", "2", "4"]}
    assert decode(json.loads(json.dumps(document))) == spec
    plain = encode(spec.replace(parameters={}, variants=(Variant("a", "sleep 1"),)))
    assert plain["abstat_spec"] == 1 and "parameters" not in plain
    with pytest.raises(SpecError, match="version 2"):
        decode(dict(document, abstat_spec=1))
    with pytest.raises(SpecError, match="parameters"):
        decode(dict(document, parameters={"size": "1,2"}))


# -- the command line, end to end ------------------------------------------------------------------


def test_a_3x2_grid_runs_interleaved_and_is_stored_per_point(tmp_path):
    store = tmp_path / "s.db"
    log = tmp_path / "hooks.log"
    done = _abstat(
        "run",
        "-n",
        "4",
        "--seed",
        "7",
        "--shell",
        "-L",
        "size",
        "1,2,4",
        "--no-progress",
        "-v",
        "a=sleep 0.00{size}",
        "-v",
        "b=sleep 0.001{size}",
        "--prepare",
        f"echo prepare {{size}} >> {log}",
        "--store",
        str(store),
        "--experiment",
        "g",
    )
    assert done.returncode == 0, done.stderr
    assert "== size=1 ==" in done.stdout and "== size=4 ==" in done.stdout
    assert "grid: does the change depend on size?" in done.stdout and "wall in size: a " in done.stdout
    with sqlite3.connect(store) as db:
        labels = dict(db.execute("SELECT invocation_id, value FROM labels WHERE key = 'size'").fetchall())
        assert sorted(labels.values()) == ["1", "2", "4"]
        runs = db.execute(
            "SELECT r.invocation_id, v.name, r.command, r.position FROM runs r JOIN variants v "
            "ON v.id = r.variant_id WHERE r.status = 'ok' ORDER BY r.position"
        ).fetchall()
        statuses = {row[0] for row in db.execute("SELECT status FROM invocations")}
    assert statuses == {"complete"} and len(runs) == 24
    for invocation, variant, command, _ in runs:  # each point's commands, under the variant's own name
        size = labels[invocation]
        assert command == {"a": f"sleep 0.00{size}", "b": f"sleep 0.001{size}"}[variant]
    positions = [row[3] for row in runs]
    assert positions == list(range(24))
    for block in range(4):  # every (point, variant) once in each block of 6
        cells = {(labels[row[0]], row[1]) for row in runs[block * 6 : (block + 1) * 6]}
        assert cells == {(s, v) for s in ("1", "2", "4") for v in ("a", "b")}
    firsts = {(labels[runs[b * 6][0]], runs[b * 6][1]) for b in range(4)}
    assert len(firsts) == 4  # counterbalanced: the blocks do not all start alike
    assert sorted(log.read_text().splitlines()) == sorted(f"prepare {s}" for s in "124" for _ in range(8))

    shown = _abstat(
        "report", "--store", str(store), "--by", "variant", "--rows", "size", "--metric", "wall", "--format", "text"
    )
    assert shown.returncode == 0, shown.stderr
    rows = [line.split()[0] for line in shown.stdout.splitlines() if line[:1].isdigit()]
    assert rows == ["1", "2", "4"]
    assert "grid: does the change depend on size?" in shown.stdout
    document = json.loads(
        _abstat(
            "report", "--store", str(store), "--by", "variant", "--rows", "size", "--metric", "wall", "--format", "json"
        ).stdout
    )
    test = document["grid"]["interactions"]["wall"][0]
    assert test["candidate"] == "b" and len(test["points"]) == 3 and 0 <= test["p_value"] <= 1
    page = tmp_path / "grid.html"
    drawn = _abstat(
        "report",
        "--store",
        str(store),
        "--by",
        "variant",
        "--rows",
        "size",
        "--metric",
        "wall",
        "--format",
        "html",
        "-o",
        str(page),
    )
    assert drawn.returncode == 0, drawn.stderr
    section = page.read_text().split('<section class="grid">', 1)[1]
    assert section.count("<svg") == 2 and "wall against size" in section and "change against size" in section


@pytest.mark.parametrize(
    "args, words",
    [
        (
            ["-L", "size", "1,2", "-v", "a=sleep {size}", "--host", "h", "--boot", "a=reboot a"],
            "every point in each boot",
        ),
        (["-L", "size", "1,,2", "-v", "a=sleep {size}"], "an empty value"),
        (["-L", "n", "1", "-L", "n", "2", "-v", "a=sleep {n}"], "given twice"),
        (["-L", "size", "1,2", "-v", "a=sleep {siz}"], "{siz} is not a parameter"),
        (["-L", "size", "1,2", "-v", "a=sleep 1"], "{size} appears in no command or hook"),
    ],
)
def test_bad_scans_are_one_line_errors(tmp_path, args, words):
    done = _abstat("run", "--store", str(tmp_path / "s.db"), *args)
    assert done.returncode == 2 and words in done.stderr, done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and "Traceback" not in done.stderr
    assert not (tmp_path / "s.db").exists()


# -- the analysis against independent references ---------------------------------------------------


def test_welch_heterogeneity_is_welchs_anova():
    from statsmodels.stats.oneway import anova_oneway

    rng = np.random.default_rng(5)
    groups = [rng.normal(m, s, n) for m, s, n in [(0, 1, 8), (0.6, 2, 12), (0.2, 0.5, 6), (1, 1, 10)]]
    d = [g.mean() for g in groups]
    v = [g.var(ddof=1) / g.size for g in groups]
    statistic, df, p, q = welch_heterogeneity(d, v, [g.size - 1 for g in groups])
    reference = anova_oneway(groups, use_var="unequal", welch_correction=True)
    assert statistic == pytest.approx(reference.statistic) and p == pytest.approx(reference.pvalue)
    assert df[1] == pytest.approx(reference.df[1])
    w = 1 / np.asarray(v)  # Cochran's Q by hand
    assert q == pytest.approx(float((w * (np.asarray(d) - (w * d).sum() / w.sum()) ** 2).sum()))


def test_with_many_runs_the_test_is_cochrans_q_against_chi_square():
    rng = np.random.default_rng(6)
    grid = [
        ({"size": s}, {"a": np.exp(rng.normal(0, 0.1, 4000)), "b": np.exp(rng.normal(e, 0.1, 4000))})
        for s, e in (("1", 0.0), ("2", 0.004), ("4", 0.008))
    ]
    test = interaction(grid, "a", "b")
    logs = [
        (
            np.log(c["b"]).mean() - np.log(c["a"]).mean(),
            np.log(c["b"]).var(ddof=1) / 4000 + np.log(c["a"]).var(ddof=1) / 4000,
        )
        for _, c in grid
    ]
    w = np.array([1 / v for _, v in logs])
    d = np.array([x for x, _ in logs])
    q = float((w * (d - (w * d).sum() / w.sum()) ** 2).sum())
    assert test.q == pytest.approx(q)
    assert test.p_value == pytest.approx(stats.chi2.sf(q, 2), rel=0.05)
    assert test.ratios == pytest.approx(np.exp(d).tolist())


def test_a_change_that_grows_with_the_parameter_is_called():
    rng = np.random.default_rng(7)
    grid = [
        ({"size": s}, {"a": np.exp(rng.normal(0, 0.02, 10)), "b": np.exp(rng.normal(e, 0.02, 10))})
        for s, e in (("1", 0.0), ("2", 0.1), ("4", 0.2))
    ]
    result = analyse({"wall": grid}, ["size"], ["a", "b"], "a")
    assert result.interactions["wall"][0].p_value < 1e-6 and result.adjusted[("wall", "b")] < 1e-6


def test_constant_values_are_not_tested_and_say_why():
    grid = [({"size": s}, {"a": [2.0, 2.0, 2.0], "b": [3.0, 3.0, 3.0]}) for s in ("1", "2")]
    assert "constant" in interaction(grid, "a", "b").note and interaction(grid, "a", "b").p_value is None


def test_the_scaling_exponent_is_the_log_log_least_squares_slope():
    import statsmodels.api as sm

    rng = np.random.default_rng(8)
    sizes = (1, 10, 100, 1000)
    grid = [
        ({"size": str(s)}, {"a": (s**1.5 * np.exp(rng.normal(0, 0.05 * (1 + i), 12))).tolist()})
        for i, s in enumerate(sizes)
    ]
    found = scaling(grid, "a", "size")
    x = np.repeat(np.log(sizes), 12)
    y = np.log(np.concatenate([c["a"] for _, c in grid]))
    assert found.exponent == pytest.approx(stats.linregress(x, y).slope)
    fit = sm.OLS(y, sm.add_constant(x)).fit(cov_type="HC3", use_t=True)
    lo, hi = fit.conf_int(0.05)[1]
    assert found.interval == pytest.approx((lo, hi))
    assert scaling([({"size": "big"}, {"a": [1.0, 2.0]}), ({"size": "2"}, {"a": [1.0]})], "a", "size") is None


def test_with_two_parameters_the_exponent_holds_the_other_fixed():
    import statsmodels.formula.api as smf

    rng = np.random.default_rng(9)
    rows = []
    grid = []
    for s in (2, 8, 32):
        for t in ("1", "4"):
            values = s**0.8 * (3.0 if t == "4" else 1.0) * np.exp(rng.normal(0, 0.1, 6))
            grid.append(({"size": str(s), "t": t}, {"a": values.tolist()}))
            rows += [{"y": np.log(v), "x": np.log(s), "t": t} for v in values]
    import pandas as pd

    fit = smf.ols("y ~ x + C(t)", pd.DataFrame(rows)).fit(cov_type="HC3", use_t=True)
    found = scaling(grid, "a", "size")
    assert found.exponent == pytest.approx(fit.params["x"])
    assert found.interval == pytest.approx(tuple(fit.conf_int(0.05).loc["x"]))


def test_a_a_over_a_3x2_grid_is_calibrated():
    """1000 A/A grids (3 points x 2 identical variants, 10 runs, lognormal noise whose spread differs by
    point) through analyse(): false calls at most 6% (binomial sd at 5%: 0.7%)."""
    rng = np.random.default_rng(10)
    calls = 0
    for _ in range(1000):
        grid = [
            ({"size": s}, {"a": np.exp(rng.normal(0, sd, 10)), "b": np.exp(rng.normal(0, sd, 10))})
            for s, sd in (("1", 0.01), ("2", 0.05), ("4", 0.2))
        ]
        calls += analyse({"wall": grid}, ["size"], ["a", "b"], "a").adjusted[("wall", "b")] < 0.05
    assert 0.02 <= calls / 1000 <= 0.06


def test_the_engine_keeps_each_runs_point_and_the_end_report_has_the_grid_in_json(tmp_path):
    from abstat.engine import Engine
    from abstat.render.grid import grid_report
    from abstat.store import open_store

    spec = ExperimentSpec(
        (Variant("a", """echo '{"n": {n}}'"""), Variant("b", """echo '{"n": 1{n}}'""")),
        runs=3,
        parameters={"n": ("2", "3")},
        store=str(tmp_path / "s.db"),
        experiment="e",
        seed=1,
    )
    result = Engine().run(spec)
    assert result.status == "complete" and len(result.runs) == 12
    assert result.values("a", "n", point={"n": "2"}) == [2.0] * 3
    assert result.values("b", "n", point={"n": "3"}) == [13.0] * 3
    assert sorted(result.values("a", "n")) == [2.0] * 3 + [3.0] * 3
    with open_store(str(tmp_path / "s.db"), create=False) as store:
        document = json.loads(grid_report(store, "e", labels={}, fmt="json"))
    assert [p["labels"] for p in document["points"]] == [{"n": "2"}, {"n": "3"}]
    assert document["points"][0]["report"]["baseline"] == "a"
    exponents = {s["variant"]: s["exponent"] for s in document["grid"]["scaling"]["n"]}
    assert exponents["a"] == pytest.approx(1.0)  # n itself: log n on log n
    assert exponents["b"] == pytest.approx(np.log(13 / 12) / np.log(3 / 2))


def test_the_figures_escape_the_data_and_place_the_values_on_a_log_axis():
    import re

    from abstat.render.svg_grid import change_figure, metric_figure

    drawn = metric_figure(
        "p<x>", ["1", "10", "100"], {"a<b>": [[1.0, 1.1], [10.0, 11.0], [100.0, 90.0]]}, unit="s", metric="wall"
    )
    assert "<x>" not in drawn.svg and "a<b>" not in drawn.svg and "a&lt;b&gt;" in drawn.svg
    line = re.search(r'class="data" d="([^"]+)"', drawn.svg).group(1)
    xs = [float(v) for v in re.findall(r"[ML]([\d.]+) ", line)]
    assert len(xs) == 3 and xs[1] - xs[0] == pytest.approx(xs[2] - xs[1], abs=0.2)  # 1, 10, 100 evenly: log
    grid = [({"n": n}, {"a": [1.0, 1.1, 0.9], "b": [2.0, 2.1, 1.9]}) for n in ("1", "2")]
    figure = change_figure("n", ["1", "2"], [interaction(grid, "a", "b")])
    assert figure.svg.count("<line") >= 4 and "b/a" in figure.svg
