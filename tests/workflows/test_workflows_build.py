"""Seed 002 end to end: a build timed under background load, three variants.

The "build" (``examples/workflows/build_standin.py``) compiles with worker
processes and, like make, does nothing when its objects exist, so the
``--prepare`` clean step is what makes every measured run a full build.
The background load (``examples/workflows/event_load.py``) is a process
with a busy child that sends it events; it must run during the runs and be
gone, children included, when ``abstat run`` returns.
"""

from __future__ import annotations

import json
import re
import sys
import time
from pathlib import Path

import pytest
from support import paths
from support.cli import run_abstat as abstat

ROOT = paths.ROOT
EXAMPLES = ROOT / "examples" / "workflows"
BUILD = EXAMPLES / "build_standin.py"
LOAD = EXAMPLES / "event_load.py"
SEED_002 = ROOT / "tests" / "data" / "seeds" / "002_a359c5e50bf6acc0.txt"
VARIANTS = ("Unpatched", "latched", "unlatched")
UNITS, RUNS = 2, 2


def build_command(out: Path, variant: str) -> str:
    return f"{sys.executable} {BUILD} --out {out} --variant {variant} --units {UNITS} --rounds 4000"


def alive(pid: int) -> bool:
    """True while ``pid`` exists and is not a zombie (a zombie is dead, only not reaped yet)."""
    try:
        with open(f"/proc/{pid}/stat") as handle:
            state = handle.read().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state not in ("Z", "X")


@pytest.fixture(scope="module")
def build_run(tmp_path_factory: pytest.TempPathFactory) -> dict:
    work = tmp_path_factory.mktemp("build")
    out = work / "build"
    store = work / "abstat.db"
    argv = [
        "run",
        "-n",
        str(RUNS),
        "--no-progress",
        "--store",
        str(store),
        "--experiment",
        "gdt",
        "--baseline",
        "Unpatched",
        "--format",
        "json",
        "--prepare",
        f"{sys.executable} {BUILD} --clean --out {out}",
        "--background",
        f"{sys.executable} {LOAD} --domains 1 --pids {work / 'load.pids'} --events {work / 'load.events'}",
        "--metric",
        r"objects=compiled (\d+) objects",
        "--metric",
        r"cpu_user=cpu user ([\d.]+) s:s",
        "--metric",
        r"cpu_system=system ([\d.]+) s:s",
    ]
    for variant in VARIANTS:
        argv += ["-v", f"{variant}={build_command(out, variant)}"]
    done = abstat(*argv)
    exported = abstat("export", "--store", str(store), "--format", "json")
    return {"work": work, "store": store, "done": done, "samples": json.loads(exported.stdout)}


def samples(build_run: dict, metric: str) -> dict[str, list[float]]:
    found: dict[str, list[float]] = {}
    for row in build_run["samples"]:
        if row["metric"] == metric:
            found.setdefault(row["variant"], []).append(row["value"])
    return found


def test_every_measured_run_is_a_full_build_because_prepare_cleans(build_run):
    assert build_run["done"].returncode == 0, build_run["done"].stderr
    assert samples(build_run, "objects") == {v: [UNITS] * RUNS for v in VARIANTS}


def test_without_the_clean_step_later_runs_build_nothing(tmp_path):
    """The control for the test above: the objects metric does see an incremental build."""
    done = abstat(
        "run",
        "-n",
        "2",
        "--no-progress",
        "--store",
        str(tmp_path / "s.db"),
        "--format",
        "json",
        "--metric",
        r"objects=compiled (\d+) objects",
        "-v",
        f"Unpatched={build_command(tmp_path / 'build', 'Unpatched')}",
    )
    assert done.returncode == 0, done.stderr
    rows = json.loads(abstat("export", "--store", str(tmp_path / "s.db"), "--format", "json").stdout)
    assert [r["value"] for r in rows if r["metric"] == "objects"] == [UNITS, 0]


def test_wall_user_and_system_time_are_compared_against_unpatched(build_run):
    result = json.loads(build_run["done"].stdout)
    assert result["baseline"] == "Unpatched"
    for metric in ("wall", "user", "sys"):
        comparisons = result["metrics"][metric]["comparisons"]["comparisons"]
        assert result["metrics"][metric]["unit"] == "s"
        assert [(c["baseline"], c["candidate"]) for c in comparisons] == [
            ("Unpatched", "latched"),
            ("Unpatched", "unlatched"),
        ]
        assert all(c["n"] == [RUNS, RUNS] for c in comparisons)
    # user and system time include the build's worker processes: they match what the
    # build itself reads from getrusage(RUSAGE_SELF) + getrusage(RUSAGE_CHILDREN) at its end.
    for metric, own in (("user", "cpu_user"), ("sys", "cpu_system")):
        measured, reported = samples(build_run, metric), samples(build_run, own)
        for variant in VARIANTS:
            for outside, inside in zip(measured[variant], reported[variant]):
                assert inside - 0.002 <= outside <= inside + 0.05, (metric, variant, outside, inside)
    walls = samples(build_run, "wall")
    assert all(w > u / 2 for v in VARIANTS for w, u in zip(walls[v], samples(build_run, "user")[v]))


def test_background_load_ran_during_the_runs_and_its_process_group_is_gone(build_run):
    work = build_run["work"]
    pids = [int(line) for line in (work / "load.pids").read_text().split()]
    assert len(pids) == 2  # dom0 and one busy "domain"
    assert int((work / "load.events").read_text()) > 0
    deadline = time.monotonic() + 5
    while any(alive(pid) for pid in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert [pid for pid in pids if alive(pid)] == []


def test_report_table_over_the_three_variants(build_run):
    done = abstat(
        "report",
        "--store",
        str(build_run["store"]),
        "--by",
        "variant",
        "--baseline",
        "Unpatched",
        "--rows",
        "metric",
        "--metric",
        "wall,user,sys",
        "--format",
        "json",
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["columns"] == list(VARIANTS)
    assert sorted(r["labels"]["metric"] for r in report["rows"]) == ["sys", "user", "wall"]
    for row in report["rows"]:
        assert set(row["cells"]) == set(VARIANTS)
        assert all(cell["n"] == RUNS for cell in row["cells"].values())
        assert "comparison" not in row["cells"]["Unpatched"]
        assert all("ci_pct" in row["cells"][v]["comparison"] for v in ("latched", "unlatched"))


def test_audit_says_the_seed_averages_cannot_be_judged():
    done = abstat("audit", "--format", "json", str(SEED_002))
    assert done.returncode == 0, done.stderr
    audit = json.loads(done.stdout)
    assert audit["counts"]["ministat_reports"] == 0 and audit["counts"]["averages_claims"] == 1
    block = audit["blocks"][0]
    assert block["kind"] == "averages"
    assert {d["name"]: d["avg"] for d in block["datasets"] if d["metric"] == "elapsed"} == {
        "Unpatched elapsed": 66.51,
        "latched elapsed": 64.82,
        "unlatched elapsed": 63.39,
    }
    assert all(d["n"] == 5 and d["stddev"] is None for d in block["datasets"])
    assert "no_significance" in [f["code"] for f in block["findings"]]
    assert len(block["comparisons"]) == 6  # two candidates x three metrics
    for comparison in block["comparisons"]:
        assert comparison["judgement"] is None
        assert "no_spread" in [f["code"] for f in comparison["findings"]]
    text = abstat("audit", str(SEED_002)).stdout
    assert re.search(r"whether the differences are real or noise\s+cannot be judged", text)
