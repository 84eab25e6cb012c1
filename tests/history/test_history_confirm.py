"""``abstat history --confirm`` and ``--bisect`` on a real git history, measured for real.

The repository's commits each hold a ``cost``; the benchmark prints it with
1% Gaussian noise drawn from the run's block (``$ABSTAT_ITERATION``): both
sides of a block see the same draw, so an A/A confirmation is exactly null and
the test cannot fail by a 2.5% chance (it did, in CI).  A nightly history (every third commit, as a CSV with
three samples per night) shows a 5% step and, on its last three nights, an 8%
rise that the code does not have (the machine's bad week: a provisional change
point).  ``--confirm`` re-measures the two
revisions around each change point interleaved: the step holds, the spike is
"not reproduced"; ``--bisect`` then names the commit of the step among the
nights' commits.
"""

from __future__ import annotations

import csv
import json
import os
import random
import subprocess
import sys
from support import paths

SRC = paths.SRC
STEP_AT = 32  # the commit that makes it 5% slower
COMMITS = 61
BENCH = (
    'python3 -c \'import os, random; noise = random.Random(os.environ.get("ABSTAT_ITERATION", "")); '
    'print("ns", float(open("cost").read()) * noise.gauss(1, 0.01))\''
)


def _repo(path: str) -> list[str]:
    os.makedirs(path)
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.org",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.org",
    }
    run = lambda *a: subprocess.run(
        ["git", *a], cwd=path, env=env, check=True, capture_output=True, text=True
    ).stdout.strip()
    run("init", "-q", "-b", "main")
    shas = []
    for i in range(COMMITS):
        with open(os.path.join(path, "cost"), "w") as handle:
            handle.write(f"{1050 if i >= STEP_AT else 1000}\n")
        with open(os.path.join(path, "number"), "w") as handle:
            handle.write(f"{i}\n")
        run("add", "cost", "number")
        run("commit", "-q", "-m", f"c{i}" + (" slower" if i == STEP_AT else ""))
        shas.append(run("rev-parse", "HEAD"))
    return shas


def _nightly(path: str, shas: list[str]) -> None:
    rng = random.Random(7)
    with open(path, "w", newline="") as handle:
        out = csv.writer(handle)
        out.writerow(["rev", "ns"])
        nights = list(range(0, COMMITS, 3))
        for night in nights:
            level = 1050 if night >= STEP_AT else 1000
            if night >= nights[-3]:
                level *= 1.08  # three bad nights: the machine, not the code
            for _ in range(3):
                out.writerow([shas[night], f"{level * rng.gauss(1, 0.005):.2f}"])


def test_confirm_holds_the_step_rejects_the_spike_and_bisect_names_the_commit(tmp_path):
    repo = str(tmp_path / "repo")
    shas = _repo(repo)
    nightly = str(tmp_path / "nightly.csv")
    _nightly(nightly, shas)
    env = {**os.environ, "PYTHONPATH": SRC + os.pathsep + os.environ.get("PYTHONPATH", "")}
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "abstat",
            "history",
            "--input",
            nightly,
            "--repo",
            repo,
            "--no-state",
            "--min-segment",
            "3",
            "--confirm",
            "--yes",
            "--bisect",
            "--run",
            BENCH,
            "--run-metric",
            "ns=^ns ([0-9.]+)",
            "--confirm-runs",
            "12",
            "--store",
            str(tmp_path / "c.db"),
            "--format",
            "json",
            "--exit-code",
        ],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 1, done.stderr  # a change holds
    confirmations = {(c["before"], c["after"]): c for c in json.loads(done.stdout)["confirmations"]}
    step = confirmations[(shas[30], shas[33])]
    assert step["holds"] and 0.03 < step["relative"] < 0.07, step
    assert step["interval"][0] > 0
    spike = confirmations[(shas[51], shas[54])]  # provisional: 3 nights
    # the +8% of three bad nights is not reproduced: the two revisions are identical and each block's
    # sides share their noise, so the shift is exactly 0.  (With a fresh draw per run the "holds" of this
    # A/A pair was a 2.5% coin: it failed a CI run.)
    assert not spike["holds"] and spike["relative"] == 0, spike
    assert spike["interval"] is None or spike["interval"][0] <= 0 <= spike["interval"][1], spike
    # the change is compare's own on the same runs: its estimand, interval and p-value
    assert step["estimand"].startswith("Hodges-Lehmann ratio") and step["verdict"] == "slower", step
    assert step["centers"][1] > step["centers"][0] and step["p_value"] < 0.05
    assert step["bisect"]["status"] == "found" and step["bisect"]["culprit"] == shas[STEP_AT]
    assert "bisect" not in spike


def test_the_mail_names_what_holds_and_how_to_reproduce_it_and_escapes_what_it_read():
    sys.path.insert(0, SRC)
    from abstat.history.bisect.confirm import Confirmation, render_email

    held = Confirmation(
        "nightly ns\nBcc: x@example.org",
        "a" * 40,
        "b" * 40,
        0.05,
        holds=True,
        relative=0.05,
        low=0.04,
        high=0.06,
        p_value=1e-6,
        estimand="Hodges-Lehmann ratio",
        runs=24,
        experiment="confirm-x",
    )
    spike = Confirmation(
        "nightly ns",
        "c" * 40,
        "d" * 40,
        0.08,
        holds=False,
        relative=0.001,
        low=-0.005,
        high=0.006,
        p_value=0.7,
        runs=24,
        experiment="confirm-y",
    )
    mail = render_email([held, spike], "the history\n", {("a" * 40, "b" * 40): ["abstat", "bisect", "--run", "./b x"]})
    headers, body = mail.split("\n\n", 1)
    assert headers.splitlines()[0] == "Subject: abstat: 1 change(s) confirmed"
    assert all(
        line.split(":")[0] in ("Subject", "MIME-Version", "Content-Type", "Content-Transfer-Encoding")
        for line in headers.splitlines()
    )
    assert "\nBcc:" not in mail and "nightly ns\\x0aBcc: x@example.org" in body
    assert "confirmed: +5.00% [+4.00%, +6.00%]" in body and "not reproduced: +0.10%" in body
    assert "    abstat bisect --run './b x'" in body


# What tells the two sides of a confirmation apart besides their revision: the size of the environment
# and command line the benchmark starts with (it moves the initial stack and the alignment of what is on
# it), and whether the side runs first in its block.  This benchmark's "cost" is exactly those bytes.
_SIZE_BENCH = "echo ns $(( $(env | wc -c) + $(wc -c < /proc/$$/cmdline) ))"


def test_an_a_a_confirmation_of_identical_revisions_is_balanced_and_finds_exactly_nothing(tmp_path, monkeypatch):
    sys.path.insert(0, SRC)
    from abstat.history.bisect import confirm as confirm_mod
    from abstat.engine import Engine
    from abstat.box.runner.schedule import build_schedule

    repo = str(tmp_path / "repo")
    shas = _repo(repo)
    seen = []
    original = Engine.run
    monkeypatch.setattr(Engine, "run", lambda self, spec, **kw: seen.append(original(self, spec, **kw)) or seen[-1])
    for attempt, runs in enumerate((6, 7, 10)):
        item = confirm_mod.confirm(
            "ns",
            shas[40],
            shas[45],
            0.05 if attempt else -0.05,
            repo=repo,
            run=_SIZE_BENCH,
            metric="ns",
            metric_spec="ns=^ns ([0-9]+)",
            build=None,
            runs=runs,
            store=str(tmp_path / "c.db"),
            experiment=f"aa{attempt}",
        )
        assert not item.why and item.runs == 2 * runs, item
        # the same bytes on both sides: before, $PWD and $ABSTAT_VARIANT ("before"/"after") made the
        # "before" side 2 bytes bigger in every run, a change of -0.13% that "held" every time.  (Only
        # $ABSTAT_RUN_TOKEN's counter gains a digit at the 10th and 100th run, in one block: 1 byte.)
        # (nearly) identical values on both sides: compare's interval holds 0, or it cannot judge; nothing holds
        assert abs(item.relative) < 1e-3 and not item.holds, item
        assert item.low is None or item.low <= 0 <= item.high, item
        done = seen[-1]
        measured = sorted(done.runs, key=lambda run: run.position)
        assert [run.position for run in measured] == list(range(2, 2 * runs + 2))  # a warm-up block first
        firsts: dict[int, str] = {}
        for run in measured:
            firsts.setdefault(run.iteration, run.variant)
        counts = sorted(list(firsts.values()).count(name) for name in {run.variant for run in measured})
        assert counts == [runs // 2, runs - runs // 2], counts  # each side first in half of the blocks
        # ... and the run recorded follows the seed stored with it
        slots = [
            slot
            for slot in build_schedule([v.name for v in done.spec.variants], runs, warmup=1, seed=done.spec.seed)
            if not slot.warmup
        ]
        assert [(s.variant, s.iteration) for s in slots] == [(r.variant, r.iteration) for r in measured]


def test_the_engine_schedule_balances_the_sides_of_every_confirmation():
    """Confirm takes the engine's schedule as it is: counterbalanced, each side first in half the
    measured blocks for every seed (the per-block shuffle of schedule version 1 left most unbalanced)."""
    sys.path.insert(0, SRC)
    from abstat.history.bisect.confirm import NAMES, WARMUP, leads
    from abstat.box.runner.schedule import build_schedule

    unbalanced = 0
    for runs in range(1, 60):
        for seed in range(0, 1000, 250):
            count = leads(build_schedule(list(NAMES), runs, warmup=WARMUP, seed=seed))
            assert abs(count["old"] - count["new"]) == runs % 2, (runs, seed, count)
            plain = leads(build_schedule(list(NAMES), runs, warmup=WARMUP, seed=seed, version=1))
            unbalanced += abs(plain["old"] - plain["new"]) > runs % 2
    assert unbalanced > 100  # the old per-block shuffle left most seeds unbalanced
    assert len(NAMES[0]) == len(NAMES[1])
