"""One flag, one meaning (attack22 A6): ``run --until-decided --threshold PCT`` judges as ``compare --threshold
PCT`` does.  A look settles a difference only when compare at the look's level says faster or slower (significant
and the estimate beyond +-PCT), the stop note and the end table word it as compare does, and the threshold is
stored with the experiment's analysis, so that ``show`` and ``compare EXP:VAR`` judge as the run did (a flag given
overriding it)."""

from __future__ import annotations

import sys

import pytest

from abstat.comparison.core import compare
from abstat.comparison.sequential import SequentialDesign
from abstat.engine.spec import Analysis, ExperimentSpec, Sequential, SpecError, Variant, decode

# a deterministic benchmark: the k-th run of a variant prints CENTRE * (1 + 0.0004 * ((37 k) mod 100 - 49.5)),
# 100 distinct values within +-2% in an order without trend; its runs are counted in the file it is given
SCRIPT = """import os, sys
path = sys.argv[2]
k = int(open(path).read()) if os.path.exists(path) else 0
open(path, "w").write(str(k + 1))
print("v: %.4f" % (float(sys.argv[1]) * (1 + 0.0004 * ((k * 37) % 100 - 49.5))))
"""


def _values(centre: float, n: int) -> list[float]:
    return [round(centre * (1 + 0.0004 * ((k * 37) % 100 - 49.5)), 4) for k in range(n)]


def test_a_proven_change_within_the_threshold_settles_no_difference():
    """+1.5%, its interval excluding 0 at the look's level: compare --threshold 2 says no difference proven,
    so the look settles nothing (it once settled 'slower'); beyond the threshold it still settles."""
    design = SequentialDesign(5, 30, 2.0)
    base, cand = _values(100.0, 18), _values(101.5, 18)
    level = design.level(18)
    plain = compare(base, cand, confidence=1 - level)
    assert plain.ci_pct[0] > 0 and plain.verdict == "slower"  # the change is proven at the look's level
    assert compare(base, cand, confidence=1 - level, threshold=2.0).verdict == "no difference proven"
    state = design.decide({"a": base, "b": cand}, "a", 18)
    assert "b" not in state.settled and state.stop_reason is None
    far = design.decide({"a": base, "b": _values(106.0, 18)}, "a", 18)
    assert far.settled["b"].verdict == "slower"  # +6% is beyond 2%
    assert compare(base, _values(106.0, 18), confidence=1 - level, threshold=2.0).verdict == "slower"


def test_the_spec_stores_the_threshold_in_its_analysis():
    variants = (Variant("a", "true"), Variant("b", "true"))
    spec = ExperimentSpec(variants, runs=30, sequential=Sequential(5, 1.5))
    assert spec.analysis.threshold == 1.5  # the end judges by the threshold the looks did
    document = spec.to_json()
    assert document["abstat_spec"] == 3 and document["analysis"]["threshold"] == 1.5
    assert decode(document) == spec
    plain = ExperimentSpec(variants, analysis=Analysis(threshold=1.0))
    assert plain.to_json()["abstat_spec"] == 3 and decode(plain.to_json()).analysis.threshold == 1.0
    assert "threshold" not in ExperimentSpec(variants).to_json()["analysis"]
    with pytest.raises(SpecError, match="analysis.threshold.*not sequential.threshold"):
        ExperimentSpec(variants, runs=30, analysis=Analysis(threshold=1.0), sequential=Sequential(5, 2.0))
    for bad in (-1, 100, True, "2", float("nan")):
        with pytest.raises(SpecError, match="analysis.threshold"):
            Analysis(threshold=bad)
    old = {"abstat_spec": 2, "variants": [{"name": "a", "command": "true"}], "analysis": {"threshold": 2}}
    with pytest.raises(SpecError, match="analysis.threshold.*version 3"):
        decode(old)


def _verdict(output: str, metric: str = "v") -> str:
    """The verdict of ``metric``'s row of a text table."""
    row = next(line for line in output.splitlines() if line.startswith(f"{metric} "))
    for words in ("no difference proven", "equivalent", "slower", "faster"):
        if words in row:
            return words
    raise AssertionError(row)


def test_run_show_and_compare_say_what_compare_threshold_says(abstat_cli, tmp_path):
    (tmp_path / "v.py").write_text(SCRIPT)
    done = abstat_cli(
        "run", "--store", "s.db", "--until-decided", "--max-runs", "30", "--threshold", "2", "--experiment", "sq",
        "--metric", "v=v: ([0-9.]+):ns", "--no-json-lines", "--decide-on", "v", "--no-progress",
        "-v", f"old={sys.executable} v.py 100 old.n", "-v", f"new={sys.executable} v.py 101.5 new.n",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    stop = next(line for line in done.stderr.splitlines() if "--until-decided on v" in line)
    assert "slower" not in stop and "undecided at the maximum of 30" in stop, stop
    reference = abstat_cli("compare", "--store", "s.db", "sq:old", "sq:new", "--metric", "v", "--threshold", "2")
    assert reference.returncode == 0 and _verdict(reference.stdout) == "no difference proven", reference.stdout
    assert "+1.5% [+" in reference.stdout  # the change is proven, within the threshold
    assert _verdict(done.stdout) == "no difference proven", done.stdout  # the run's end table
    shown = abstat_cli("show", "--store", "s.db", "sq", "--metric", "v")
    assert _verdict(shown.stdout) == "no difference proven", shown.stdout
    compared = abstat_cli("compare", "--store", "s.db", "sq:old", "sq:new", "--metric", "v", "--fail-on", "slower")
    assert compared.returncode == 0 and _verdict(compared.stdout) == "no difference proven", compared.stdout
    reported = abstat_cli("report", "--store", "s.db", "--metric", "v", "--format", "csv", "--fail-on", "slower")
    assert reported.returncode == 0 and ",no difference proven," in reported.stdout, reported.stdout
    # a flag given overrides the stored threshold
    shown = abstat_cli("show", "--store", "s.db", "sq", "--metric", "v", "--threshold", "0.5")
    assert _verdict(shown.stdout) == "slower", shown.stdout
    compared = abstat_cli(
        "compare", "--store", "s.db", "sq:old", "sq:new", "--metric", "v", "--threshold", "0", "--fail-on", "slower"
    )
    assert compared.returncode == 1 and _verdict(compared.stdout) == "slower", compared.stdout
