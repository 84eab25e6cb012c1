"""One result, one story: ``abstat.compare`` (and ``compare_many``) give the numbers ``abstat compare --format
json`` prints, centres and their warnings included (the centres every format prints are the library's:
:mod:`abstat.comparison.centres`)."""

from __future__ import annotations

import json
import statistics

import numpy as np
import pytest

import abstat
from abstat.cli import main


def _write(path, values):
    np.savetxt(path, np.asarray(values, dtype=float))
    return str(path)


def _cli(args, capsys):
    rc = main(["compare", "--format", "json", *args])
    out, err = capsys.readouterr()
    assert rc in (0, 1), err
    return json.loads(out)["comparisons"]


def _story(doc):
    """What must be one story: the numbers, the centres and the warnings (code and message)."""
    return {
        "centers": doc["centers"],
        "center_kind": doc["center_kind"],
        "delta_pct": doc["delta_pct"],
        "ci_pct": doc["ci_pct"],
        "estimand": doc["estimand"],
        "verdict": doc["verdict"],
        "warnings": sorted((w["code"], w["message"]) for w in doc["warnings"]),
    }


def _shapes():
    rng = np.random.default_rng(7)  # issue 35's case: the medians move against the Hodges-Lehmann ratio's interval
    skewed = np.round(rng.lognormal(12.9, 0.3, 40))
    two_modes = np.round(np.where(rng.random(40) < 0.5, rng.lognormal(12.9, 0.05, 40), rng.lognormal(13.3, 0.05, 40)))
    return {
        "normal": (np.random.default_rng(1).normal(100, 3, 20), np.random.default_rng(2).normal(100, 3, 20), []),
        "integer grid": (rng.poisson(1000, 40), rng.poisson(990, 40), []),
        "tied": (np.round(rng.normal(10, 1, 60) * 2) / 2, np.round(rng.normal(10.2, 1, 60) * 2) / 2, []),
        "outliers tukey": (
            np.append(rng.normal(50, 1, 30), [90.0, 95.0]),
            np.append(rng.normal(49, 1, 30), [5.0]),
            ["--outliers", "tukey"],
        ),
        "median centre": (rng.normal(100, 5, 25), rng.normal(97, 5, 25), ["--center", "median"]),
        "mean centre": (rng.normal(100, 5, 25), rng.normal(97, 5, 25), ["--center", "mean"]),
        "shapes differ": (skewed, two_modes, []),
    }


SHAPES = _shapes()


@pytest.mark.parametrize("shape", list(SHAPES))
def test_api_and_cli_tell_one_story(shape, tmp_path, capsys):
    a, b, flags = SHAPES[shape]
    options = {"outliers": flags[1]} if flags[:1] == ["--outliers"] else {}
    options.update({"center": flags[1]} if flags[:1] == ["--center"] else {})
    cli = _cli([*flags, f"a.txt={_write(tmp_path / 'a.txt', a)}", f"b.txt={_write(tmp_path / 'b.txt', b)}"], capsys)
    api = abstat.compare(a, b, names=("a.txt", "b.txt"), **options).to_dict()
    assert _story(api) == _story(cli[0])
    if options.get("center") != "mean":  # the centres printed are the medians of the values compared
        kept = [np.asarray(s, dtype=float) for s in (a, b)]
        if "outliers" in options:
            kept = [v[(v > 40) & (v < 60)] for v in kept]  # the spikes dropped by Tukey's fences
        integer = all(np.all(v == np.round(v)) for v in kept)
        expected = [statistics.median_low(v) if integer else statistics.median(v) for v in kept]
        assert api["center_kind"] == "median" and api["centers"] == pytest.approx(expected, rel=1e-12)


def test_shapes_differ_warns_in_both():
    a, b, _ = SHAPES["shapes differ"]
    found = abstat.compare(a, b).to_dict()
    assert "medians-disagree" in {w["code"] for w in found["warnings"]}


def test_runs_as_the_unit_one_story(tmp_path, capsys):
    rng = np.random.default_rng(3)
    runs_a = [rng.normal(1000 * (1 + rng.normal(0, 0.01)), 5, 20) for _ in range(5)]
    runs_b = [rng.normal(990 * (1 + rng.normal(0, 0.01)), 5, 20) for _ in range(5)]
    for side, runs in (("a", runs_a), ("b", runs_b)):
        for i, run in enumerate(runs):
            _write(tmp_path / f"{side}-{i}.txt", run)
    cli = _cli([f"a={tmp_path}/a-*.txt", f"b={tmp_path}/b-*.txt"], capsys)
    api = abstat.compare([list(r) for r in runs_a], [list(r) for r in runs_b], names=("a", "b")).to_dict()
    assert cli[0]["unit"] == "runs" == api["unit"]
    assert _story(api) == _story(cli[0])


def test_compare_many_gives_the_cli_centres(tmp_path, capsys):
    a, b, _ = SHAPES["normal"]
    c = np.random.default_rng(4).normal(101, 3, 20)
    paths = [_write(tmp_path / f"{name}.txt", values) for name, values in (("a", a), ("b", b), ("c", c))]
    cli = _cli([f"{name}={path}" for name, path in zip("abc", paths, strict=True)], capsys)
    found = abstat.compare_many({"a": a, "b": b, "c": c})
    assert [f.centers for f in found] == [doc["centers"] for doc in cli]
    assert [f.center_kind for f in found] == ["median", "median"]


@pytest.mark.parametrize("function", [abstat.compare_many, lambda v: abstat.plan(v, detect=5.0)])
def test_a_list_of_variants_is_a_type_error_naming_the_argument(function):
    a, b, _ = SHAPES["normal"]
    with pytest.raises(TypeError, match=r"variants=\.\.\.\) takes a mapping of name -> data, not a list"):
        function([a, b])
