"""The regression loop without boxes: bisect --host's options and --resume as bad input, the box loop's
replay (what --resume relies on) against a fresh search, and the exit statuses of doctor and noise."""

from __future__ import annotations

import json
import os
import sqlite3

import numpy as np
import pytest
from support import paths
from support.cli import run_abstat as abstat

SRC = paths.SRC
DATA = os.path.join(str(paths.DATA))


BASE = ["bisect", "--good", "HEAD~1", "--bad", "HEAD", "--run", "true", "--metric", "wall"]


@pytest.mark.parametrize(
    "extra, message",
    [
        (["--install", "x"], "--install needs --host"),
        (["--boot", "x", "--runs", "3"], "--boot needs --host"),
        (["--host", "box", "--build", "make"], "--build with --host needs --artifact"),
        (["--host", "box", "--check", "true"], "--check needs --boot"),
        (["--host", "box", "--build", "make", "--build-on-host", "make", "--artifact", "a"], "give one"),
        (["--host", "b=-oProxyCommand=x"], "expected an ssh destination"),
        (["--host", "box", "--boot-timeout", "nan"], "--boot-timeout must be a positive"),
        (["--host", "box", "--runs", "0"], "--runs must be between"),
    ],
)
def test_bad_host_options_are_one_line(tmp_path, extra, message):
    done = abstat(*BASE, *extra, "--store", str(tmp_path / "s.db"), cwd=str(tmp_path))
    assert done.returncode == 2 and message in done.stderr, done.stderr
    assert len(done.stderr.strip().splitlines()) <= 2 and "Traceback" not in done.stderr


def test_resume_of_nothing_and_of_a_forged_store_is_one_line(tmp_path):
    missing = abstat("bisect", "--resume", "bx", "--store", str(tmp_path / "none.db"))
    assert missing.returncode == 2 and "no store" in missing.stderr, missing.stderr
    store = str(tmp_path / "s.db")
    assert abstat("run", "--store", store, "--experiment", "bx", "-n", "2", "-v", "a=true").returncode == 0
    nothing = abstat("bisect", "--resume", "bx", "--store", store)
    assert nothing.returncode == 2 and "no bisection on a host is stored under that name" in nothing.stderr
    db = sqlite3.connect(store)
    with db:  # a stored bisection whose settings were tampered with
        settings = {
            "caller": {
                "bisect": {
                    "config": {
                        "repo": "/",
                        "good": "1" * 40,
                        "bad": "2" * 40,
                        "budget": 60,
                        "confidence": 0.95,
                        "setup": {"label": "b", "run": ["rm"]},
                    },
                    "batch": 0,
                    "slot": 0,
                }
            }
        }
        db.execute("UPDATE invocations SET settings = ?", (json.dumps(settings),))
    db.close()
    forged = abstat("bisect", "--resume", "bx", "--store", store)
    assert forged.returncode == 2 and "--resume 'bx': the stored box setting 'run' is not valid" in forged.stderr, (
        forged.stderr
    )
    assert "Traceback" not in forged.stderr and len(forged.stderr.strip().splitlines()) == 1
    settings["caller"]["bisect"]["config"]["setup"] = {
        "label": "b",
        "destination": "-oProxyCommand=x",
        "run": "x",
        "metric": "wall",
    }
    db = sqlite3.connect(store)
    with db:  # no ssh option from a store
        db.execute("UPDATE invocations SET settings = ?", (json.dumps(settings),))
    db.close()
    injected = abstat("bisect", "--resume", "bx", "--store", store)
    assert injected.returncode == 2 and "not an ssh destination" in injected.stderr, injected.stderr


class _Box:
    """A simulated box for the loop of abstat.history.bisect.boxes: 2% noise per boot, one commit that does not boot."""

    def __init__(self, costs, broken=None, seed=1, refuse=()):
        from abstat.history.bisect.onbox import BoxSetup

        self.costs, self.broken, self.refuse = costs, broken, set(refuse)
        self.rng = np.random.default_rng(seed)
        self.setup = BoxSetup("sim", "sim", "bench", "ns")
        self.experiment, self.argv, self.caller = "sim", [], {}
        self.boots: dict[tuple[int, int], tuple[str, object]] = {}

    def measure(self, sha, role, slot):
        from abstat.history.bisect.onbox import Failed

        key = (slot["batch"], slot["slot"])
        assert key not in self.refuse, f"boot {key} was stored: a resume must not make it again"
        index = int(sha, 16)
        value = (
            Failed("does not boot", booted=True)
            if index == self.broken
            else float(self.costs[index] * self.rng.normal(1, 0.02))
        )
        self.boots[key] = (sha, value)
        return value

    def recover(self, sha):
        self.recovered = [*getattr(self, "recovered", []), sha]


class _Store:
    display = "memory"

    def start_invocation(self, *args, **kwargs):
        return None

    def finish_invocation(self, *args, **kwargs):
        pass


def _search(box, commits, stored=None):
    from abstat.history.bisect.boxes import BATCH_MAX, _search as loop
    from abstat.history.bisect.driver import Report
    from abstat.history.bisect.search import Outcome, Search

    report = Report(Outcome("inconclusive", None, 0.0, [], 0), commits, {})
    report.boots = {"boots": 0, "replayed": 0}
    search = Search(len(commits) - 1, confidence=0.95, budget=150, batch_max=BATCH_MAX)
    return loop(search, commits, stored or {}, box, _Store(), report, lambda text: None), report


def test_the_box_loop_replays_stored_boots_exactly_and_goes_on():
    costs = [1000.0] * 12 + [1080.0] * 5
    commits = [f"{i:040x}" for i in range(len(costs))]
    whole, report = _search(_Box(costs, broken=8), commits)  # 8: the first commit the search tests
    assert whole.status == "found" and whole.culprit == 12 and report.skipped == [commits[8]]
    box = _Box(costs, broken=8)
    _search(box, commits)
    assert box.recovered == [commits[8]]  # --recover after the boot that failed, once
    first = _Box(costs, broken=8)
    everything = _search(first, commits)[0]
    assert (everything.culprit, everything.runs) == (whole.culprit, whole.runs)  # the same draws: the same search
    stored = dict(list(first.boots.items())[:20])  # the workstation stopped after 20 boots
    again = _Box(costs, broken=8, seed=2, refuse=stored)  # asserts that no stored boot is made again
    resumed, resumed_report = _search(again, commits, stored)
    assert resumed.status == "found" and resumed.culprit == 12
    assert resumed_report.boots["replayed"] == 20
    assert not set(again.boots) & set(stored)


def test_a_flat_history_on_a_box_ends_no_change_found():
    costs = [1000.0] * 17
    commits = [f"{i:040x}" for i in range(len(costs))]
    outcome, _ = _search(_Box(costs), commits)
    assert outcome.status == "no-change" and outcome.culprit is None


def test_a_stored_boot_of_another_commit_stops_the_replay():
    costs = [1000.0] * 5 + [1100.0] * 4
    commits = [f"{i:040x}" for i in range(len(costs))]
    from abstat.errors import InputError

    with pytest.raises(InputError, match="does not match this search"):
        _search(_Box(costs), commits, {(0, 0): (commits[3], 1000.0)})


def test_doctor_and_noise_exit_codes(tmp_path):
    vm = os.path.join(DATA, "doctor", "vm")
    warns = abstat("doctor", "--root", vm, "--no-perf", "--only", "hypervisor", "--exit-code")
    assert warns.returncode == 1 and "hypervisor" in warns.stdout, warns.stderr
    assert abstat("doctor", "--root", vm, "--no-perf", "--only", "hypervisor").returncode == 0
    assert abstat("doctor", "--root", vm, "--no-perf", "--only", "swap", "--exit-code").returncode == 0
    # a machine whose runs step up half-way: unstable
    counter = tmp_path / "n"
    counter.write_text("0")
    step = (
        f"n=$(cat {counter}); echo $((n + 1)) > {counter}; "
        f"if [ $n -lt 12 ]; then echo v $((100 + n % 3)); else echo v $((200 + n % 3)); fi"
    )
    store = str(tmp_path / "n.db")
    unstable = abstat(
        "noise",
        "-n",
        "12",
        "--shell",
        "--metric",
        "v=^v (\\d+)",
        "--report",
        "v",
        "--store",
        store,
        "--experiment",
        "aa",
        "--no-progress",
        "--exit-code",
        "--",
        step,
    )
    assert unstable.returncode == 1, unstable.stdout + unstable.stderr
    assert "unstable" in unstable.stdout or "drift" in unstable.stdout or "step" in unstable.stdout
    analysed = abstat("noise", "--experiment", "aa", "--store", store, "--report", "v")
    assert analysed.returncode == 0, analysed.stderr


def test_the_answer_of_a_box_bisection_counts_boots():
    from abstat.history.bisect.driver import Report
    from abstat.history.bisect.render import render
    from abstat.comparison.core import compare
    from abstat.history.bisect.search import Outcome

    change = compare([1000, 1010, 990, 1005], [1300, 1310, 1290, 1305])
    outcome = Outcome("found", 2, 0.99, [(2, 0.99)], 25, change=change, reference_p=1e-5)
    report = Report(
        outcome,
        ["a" * 40, "b" * 40, "c" * 40],
        {"c" * 40: "slower\x1b[2J"},
        skipped=["b" * 40],
        experiment="bx",
        graph={"merges": 0},
    )
    report.boots = {"host": "alpha", "runs_per_boot": 2, "boots": 25, "replayed": 5}
    text = render(report, "text")
    assert "25 boots of host alpha (2 run(s) each, the boot as the unit; 5 read back from the store)" in text
    assert "did not build, install or boot" in text and "\x1b" not in text
    assert json.loads(render(report, "json"))["boots"] == report.boots
