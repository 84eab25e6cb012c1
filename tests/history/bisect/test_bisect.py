"""abstat bisect: the search in simulation, and end to end on real git repositories with a C benchmark.

The end-to-end tests build and run a real C benchmark in real worktrees, but (except the one on
real timing, whose change is tenfold) it prints a measurement made of the commit's work and seeded
noise (bisect_repos.noise_env): the shared VM's clock rate changes twofold from run to run."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest

from support.bisect_repos import BUILD, METRIC, RUN, make_repo, noise_env  # noqa: E402

from abstat.history.bisect.search import Outcome, Search, simulate  # noqa: E402
from support import paths
from support.cli import run_abstat

SRC = paths.SRC


def abstat(
    *args: str, cwd: str, timeout: float = 240, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return run_abstat(*args, cwd=cwd, timeout=timeout, extra_env=env)


def noisy(tmp_path, seed: int = 1, sd: float = 1.0) -> dict[str, str]:
    return noise_env(str(tmp_path / "runs-counter"), seed, sd)


def test_search_finds_a_two_sd_change_in_simulation():
    found = 0
    for trial in range(20):
        rng = np.random.default_rng([3, trial])
        culprit = int(rng.integers(1, 101))
        outcome = simulate(Search(100), lambda c: rng.normal(2.0 if c >= culprit else 0.0, 1.0))
        found += outcome.culprit == culprit
    assert found >= 18


def test_search_without_a_change_names_no_culprit():
    for trial in range(5):
        rng = np.random.default_rng([4, trial])
        outcome = simulate(Search(50, budget=200), lambda c: rng.normal(0.0, 1.0))
        assert outcome.culprit is None
        assert outcome.status in ("no-change", "inconclusive")


def test_skipped_neighbours_leave_the_candidates_untestable():
    search = Search(4)
    for commit in (1, 2, 3):
        search.skip(commit)
    rng = np.random.default_rng(5)
    outcome = simulate(search, lambda c: rng.normal(3.0 if c >= 2 else 0.0, 1.0))
    assert isinstance(outcome, Outcome) and outcome.culprit is None
    assert outcome.status == "untestable" and len(outcome.candidates) >= 3


def test_bisect_names_the_commit_with_a_real_slowdown(tmp_path):
    shas = make_repo(str(tmp_path / "repo"), slow_at=37)
    done = abstat(
        "bisect",
        "--good",
        shas[0],
        "--bad",
        shas[-1],
        "--build",
        BUILD,
        "--run",
        RUN,
        "--metric",
        METRIC,
        "--store",
        str(tmp_path / "a.db"),
        "--artifact",
        "bench",
        "--confidence",
        "99",
        "--format",
        "json",
        "--no-progress",
        cwd=str(tmp_path / "repo"),
        env=noisy(tmp_path),
    )
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["status"] == "found" and result["culprit"] == shas[36]
    assert result["probability"] >= 0.99
    assert 2 < result["change"]["delta_pct"] < 9
    assert not result["warnings"]  # the culprit's binary differs from its parent's
    assert result["graph"]["merges"] == 0 and result["graph"]["commits"] == 63
    listing = subprocess.run(["git", "worktree", "list"], cwd=tmp_path / "repo", capture_output=True, text=True)
    assert len(listing.stdout.splitlines()) == 1  # its worktrees are gone
    history = abstat(
        "history",
        result["experiment"],
        "--store",
        str(tmp_path / "a.db"),
        "--metric",
        "ns",
        "--min-segment",
        "2",
        "--format",
        "json",
        cwd=str(tmp_path / "repo"),
    )
    assert history.returncode == 0, history.stderr
    points = json.loads(history.stdout)["series"][0]["points"]
    revs = [p["rev"] for p in points]
    assert revs == sorted(revs, key=shas.index)  # git order


def test_bisect_on_real_timing_names_a_tenfold_slowdown(tmp_path):
    # no controlled noise: the benchmark's own clock, with a change no clock-rate change can hide
    shas = make_repo(str(tmp_path / "repo"), commits=24, slow_at=9, work=400_000, slowdown=9.0)
    done = abstat(
        "bisect",
        "--good",
        shas[0],
        "--bad",
        shas[-1],
        "--build",
        BUILD,
        "--run",
        RUN,
        "--metric",
        METRIC,
        "--store",
        str(tmp_path / "a.db"),
        "--confidence",
        "99",
        "--format",
        "json",
        "--no-progress",
        cwd=str(tmp_path / "repo"),
    )
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["status"] == "found" and result["culprit"] == shas[8], done.stdout
    assert result["change"]["delta_pct"] > 300


def test_bisect_warns_when_the_culprits_binary_is_its_parents(tmp_path):
    shas = make_repo(str(tmp_path / "repo"), commits=24, slow_at=15, runtime_input=True)
    done = abstat(
        "bisect",
        "--good",
        shas[0],
        "--bad",
        shas[-1],
        "--build",
        BUILD,
        "--run",
        RUN,
        "--metric",
        METRIC,
        "--store",
        str(tmp_path / "a.db"),
        "--artifact",
        "bench",
        "--confidence",
        "99",
        cwd=str(tmp_path / "repo"),
        env=noisy(tmp_path),
    )
    assert done.returncode == 0, done.stderr
    assert f"culprit: {shas[14]}" in done.stdout
    assert "warning: the culprit's bench is identical to its parent's (build-id:" in done.stdout


def test_bisect_skips_a_commit_that_does_not_build(tmp_path):
    # the middle two commits do not build: the first commit tested is one of them
    shas = make_repo(str(tmp_path / "repo"), slow_at=45, broken_at=(31, 32))
    done = abstat(
        "bisect",
        "--good",
        shas[0],
        "--bad",
        shas[-1],
        "--build",
        BUILD,
        "--run",
        RUN,
        "--metric",
        METRIC,
        "--store",
        str(tmp_path / "a.db"),
        "--confidence",
        "99",
        cwd=str(tmp_path / "repo"),
        env=noisy(tmp_path),
    )
    assert done.returncode == 0, done.stderr
    assert "skipped (did not build, or every run failed): " in done.stdout
    skipped = done.stdout.split("skipped (did not build, or every run failed): ")[1].split()[0].split(",")
    assert skipped[0] in (shas[30][:12], shas[31][:12]), done.stdout
    assert f"culprit: {shas[44]}" in done.stdout
    assert "build failed" in done.stderr  # the progress says why it skipped
    lines = done.stderr.splitlines()
    assert lines[1] == f"abstat bisect: measured good {shas[0][:12]} x5, bad {shas[-1][:12]} x5; 10 runs"
    assert all(": ;" not in line and ", ;" not in line for line in lines)  # no empty field
    tested = [line for line in lines if "most likely culprit" in line]
    assert tested and all(line.startswith("abstat bisect: measured ") for line in tested)


def test_bisect_without_a_change_names_no_culprit(tmp_path):
    shas = make_repo(str(tmp_path / "repo"), slowdown=0.0)
    done = abstat(
        "bisect",
        "--good",
        shas[0],
        "--bad",
        shas[-1],
        "--build",
        BUILD,
        "--run",
        RUN,
        "--metric",
        METRIC,
        "--store",
        str(tmp_path / "a.db"),
        "--budget",
        "80",
        cwd=str(tmp_path / "repo"),
        env=noisy(tmp_path),
    )
    assert "culprit:" not in done.stdout
    # the exit status a script branches on: 1 no change found, 3 inconclusive (the budget ran out first)
    assert (done.returncode, done.stdout.split(":")[0]) in ((1, "no change found"), (3, "inconclusive")), done.stderr


def test_bisect_step_inside_git_bisect_run(tmp_path):
    repo = str(tmp_path / "repo")
    # git's own loop trusts every step: this checks that `step` works inside it (a 5% change in 1% noise)
    shas = make_repo(repo, commits=16, slow_at=11)
    subprocess.run(["git", "bisect", "start", shas[-1], shas[0]], cwd=repo, check=True, capture_output=True)
    env = {**os.environ, "PYTHONPATH": SRC, **noisy(tmp_path)}
    done = subprocess.run(
        [
            "git",
            "bisect",
            "run",
            sys.executable,
            "-m",
            "abstat",
            "bisect",
            "step",
            "--build",
            BUILD,
            "--run",
            RUN,
            "--metric",
            METRIC,
            "--store",
            str(tmp_path / "a.db"),
        ],
        cwd=repo,
        capture_output=True,
        text=True,
        env=env,
        timeout=240,
    )
    assert f"{shas[10]} is the first bad commit" in done.stdout, done.stdout + done.stderr


def test_bisect_step_outside_a_bisection_stops_git(tmp_path):
    repo = str(tmp_path / "repo")
    make_repo(repo, commits=2)
    done = abstat("bisect", "step", "--run", RUN, "--metric", METRIC, "--store", str(tmp_path / "a.db"), cwd=repo)
    assert done.returncode == 128 and "no git bisect in progress" in done.stderr


@pytest.mark.parametrize(
    "args, message",
    [
        (["--good", "nosuchrev", "--bad", "HEAD"], "unknown revision 'nosuchrev'"),
        (["--good", "HEAD~1", "--bad", "HEAD", "--metric", "ns=nogroup"], "no capture group"),
    ],
)
def test_bisect_bad_input_is_one_line(tmp_path, args, message):
    repo = str(tmp_path / "repo")
    make_repo(repo, commits=2)
    base = ["bisect", "--run", RUN, "--store", str(tmp_path / "a.db")]
    if "--metric" not in args:
        base += ["--metric", METRIC]
    done = abstat(*base, *args, cwd=repo)
    assert done.returncode == 2 and message in done.stderr and "Traceback" not in done.stderr


def test_artifact_digest_is_the_build_id_readelf_shows(tmp_path):
    import shutil

    from abstat.history.bisect.workspace import artifact_digest

    if shutil.which("readelf") is None:
        pytest.skip("readelf (binutils) is not installed")
    source = tmp_path / "x.c"
    source.write_text("int main(void) { return 0; }\n")
    subprocess.run(["cc", "-Wl,--build-id", "-o", str(tmp_path / "x"), str(source)], check=True)
    notes = subprocess.run(["readelf", "-n", str(tmp_path / "x")], capture_output=True, text=True).stdout
    build_id = notes.split("Build ID:")[1].split()[0]
    assert artifact_digest(str(tmp_path / "x")) == f"build-id:{build_id}"
    assert artifact_digest(str(source)).startswith("sha256:")


def test_bisect_terminated_removes_its_worktrees_and_keeps_the_runs(tmp_path):
    """SIGTERM while a run is in progress (the benchmark says so, and waits): exit 130, "interrupted",
    its worktrees gone, the runs so far stored and their invocations marked interrupted."""
    import signal
    import time

    from abstat.store import open_store

    repo = str(tmp_path / "repo")
    shas = make_repo(repo, commits=16, slow_at=9)
    go, inside = tmp_path / "go", tmp_path / "inside"
    # once `go` exists, the next run of the benchmark says it is running, then runs for a minute
    run = f"{RUN} && if [ -e {go} ]; then touch {inside}; sleep 60; fi"
    env = {**os.environ, "PYTHONPATH": SRC, **noisy(tmp_path)}
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "abstat",
            "bisect",
            "--good",
            shas[0],
            "--bad",
            shas[-1],
            "--build",
            BUILD,
            "--run",
            run,
            "--metric",
            METRIC,
            "--no-progress",
            "--store",
            str(tmp_path / "a.db"),
            "--experiment",
            "t",
        ],
        cwd=repo,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and process.poll() is None:  # 12 runs first: a test batch began
            counter = tmp_path / "runs-counter"
            if counter.exists() and counter.read_text().strip() and int(counter.read_text()) >= 12:
                break
            time.sleep(0.05)
        go.touch()
        while time.monotonic() < deadline and process.poll() is None and not inside.exists():
            time.sleep(0.05)
        assert inside.exists() and process.poll() is None, "the benchmark never ran after `go`"
        started = time.monotonic()
        process.send_signal(signal.SIGTERM)
        _, err = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
    assert time.monotonic() - started < 45  # the benchmark (a 60 s sleep) was stopped, not waited for
    assert process.returncode == 130 and "interrupted" in err, err
    listing = subprocess.run(["git", "worktree", "list"], cwd=repo, capture_output=True, text=True).stdout
    assert len(listing.splitlines()) == 1
    assert not [
        p
        for p in os.listdir(tempfile_dir())
        if p.startswith("abstat-bisect-")
        and os.path.exists(os.path.join(tempfile_dir(), p, "abstat-bisect.lock"))
        and str(process.pid) in open(os.path.join(tempfile_dir(), p, "abstat-bisect.lock")).read()
    ]
    with open_store(str(tmp_path / "a.db"), create=False) as store:
        # >= 11, not 12: the run that made the counter 12 may itself be the one that finds `go` (the check
        # follows the benchmark in the same command) and sleeps until SIGTERM: a race the load decided
        assert store.experiments()[0].runs_ok >= 11
        assert {i["status"] for i in store.invocations("t")} == {"interrupted"}


def tempfile_dir() -> str:
    import tempfile

    return tempfile.gettempdir()


def test_a_commit_whose_runs_all_fail_is_skipped_and_the_search_ends():
    rng = np.random.default_rng(6)
    search = Search(40, budget=400)
    outcome = simulate(search, lambda c: None if c == 20 else rng.normal(2.0 if c >= 30 else 0.0, 1.0))
    assert 20 in search.skipped
    assert outcome.status == "found" and outcome.culprit == 30
    assert outcome.runs > len(search.samples)  # failed runs count as spent


def test_artifact_outside_the_tree_is_refused_in_one_line(tmp_path):
    for artifact in ("/etc/passwd", "../../x", "build/../../x"):
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "abstat",
                "bisect",
                "--good",
                "a",
                "--bad",
                "b",
                "--build",
                "true",
                "--run",
                "true",
                "--metric",
                "x=x: (\\d+)",
                "--artifact",
                artifact,
                "--store",
                str(tmp_path / "s.db"),
            ],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            env={**os.environ, "PYTHONPATH": SRC},
            timeout=60,
        )
        assert done.returncode == 2 and "--artifact" in done.stderr and "inside the repository" in done.stderr
        assert len(done.stderr.strip().splitlines()) == 1 and "Traceback" not in done.stderr


def test_shell_completion_offers_steps_own_options_after_bisect_step(tmp_path):
    import shutil

    bash = shutil.which("bash")
    if bash is None:
        pytest.skip("bash is not installed")
    script = tmp_path / "abstat.bash"
    script.write_text(abstat("completion", "bash", cwd=str(tmp_path)).stdout)

    def complete(*words: str) -> set[str]:
        line = " ".join(words)
        code = (
            f"source {script}; COMP_WORDS=({line}); COMP_CWORD={len(words) - 1}; COMP_LINE='{line}'; "
            f"COMP_POINT=${{#COMP_LINE}}; _shtab_abstat abstat '{words[-1]}' '{words[-2]}'; "
            "printf '%s\\n' \"${COMPREPLY[@]}\""
        )
        return set(subprocess.run([bash, "-c", code], capture_output=True, text=True, timeout=60).stdout.split())

    assert complete("abstat", "bisect", "st") == {"step"}
    step = complete("abstat", "bisect", "step", "--")
    assert "--max-runs" in step and {"--run", "--metric", "--build", "--store"} <= step
    assert not step & {"--good", "--bad", "--budget", "--confidence", "--artifact", "--format"}
    bisect = complete("abstat", "bisect", "--")
    assert {"--good", "--bad", "--budget", "--confidence"} <= bisect and "--max-runs" not in bisect
    # and every option offered after `bisect step` is one that `bisect step` accepts
    from abstat.cli.commands.bisect import step_parser as _parser  # the step's grammar is the command layer's

    accepted = {o for action in _parser()._actions for o in action.option_strings}
    assert step <= accepted
