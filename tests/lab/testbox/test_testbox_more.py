"""More of the seeds on the session's ``abstat testbox`` guests (tests/lab/testbox/conftest.py), after
test_testbox.py (one pytest-xdist group):

- seed 002: ``make -j 2`` of a small C project (tests/data/testbox/build) in the one-CPU guest (``SKY``),
  ``-O0`` against ``-O2``, ``--prepare`` cleaning between runs and ``--background`` load in the guest;
- ``testbox down`` of both boxes leaves nothing behind (last: the boxes are the session's).
"""

from __future__ import annotations

import json
import os
import sqlite3
from collections import Counter

import pytest
from support.testbox import (
    BOX,
    BUILD,
    GROUP,
    SKY,
    abstat,
    box_processes,
    box_ssh,
    copy_tree,
    missing,
)

REASON = missing()
pytestmark = [
    pytest.mark.skipif(REASON is not None, reason=f"test boxes need QEMU and Debian's tools: {REASON}"),
    pytest.mark.xdist_group(GROUP),
]
ONE = SKY  # one CPU: the build shares it with its load


@pytest.fixture
def box(guests):
    return guests


def test_seed_002_a_build_under_background_load(box, tmp_path):
    """``make -j 2`` in the guest, ``-O2`` against ``-O0``: the clean step ran before every build (5 objects
    compiled each time), the background load ran through every build and is gone afterwards, and each
    build's elapsed, user and system times are those of one CPU shared with the load."""
    copy_tree(box, ONE, BUILD, "/root/build")
    store = str(tmp_path / "build.db")
    make = "make -C /root/build -j 2 CFLAGS={} | grep -c '^CC '; test -d /proc/$(cat /tmp/load.pid) && echo load=1"
    run = abstat(
        "run",
        "--experiment",
        "build",
        "--host",
        ONE,
        "--store",
        store,
        "--no-progress",
        "--seed",
        "2",
        "--shell",
        "-v",
        f"O0={make.format('-O0')}",
        "-v",
        f"O2={make.format('-O2')}",
        "-n",
        "2",
        "--prepare",
        "make -C /root/build clean",
        "--background",
        "sh -c 'echo $$ > /tmp/load.pid; while :; do :; done'",
        "--metric",
        r"objects=^(\d+)$",
        "--metric",
        r"loaded=^load=(\d)$",
        env=box,
        timeout=3600,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    with sqlite3.connect(store) as db:
        values = db.execute("select run_id, variant, metric, value from abstat_samples").fetchall()
    by = Counter((variant, metric, value) for _, variant, metric, value in values if metric in ("objects", "loaded"))
    assert by == {("O0", "objects", 5): 2, ("O2", "objects", 5): 2, ("O0", "loaded", 1): 2, ("O2", "loaded", 1): 2}
    left = box_ssh(box, ONE, "test -d /proc/$(cat /tmp/load.pid) && echo running || echo gone").stdout
    assert left == b"gone\n"
    # elapsed, user and system of every build; one CPU: the build's CPU time is at most its elapsed time, and
    # the busy loop took its share of that CPU: the build's CPU time was 0.59 to 0.60 of its elapsed time in all 8
    # builds of one run (two compilers and the loop on one CPU: about two thirds), never near 0.9
    times: dict[int, dict[str, float]] = {}
    for run_id, _, metric, value in values:
        if metric in ("wall", "user", "sys"):
            times.setdefault(run_id, {})[metric] = value
    assert len(times) == 4 and all(len(run) == 3 for run in times.values()), times
    shares = sorted((run["user"] + run["sys"]) / run["wall"] for run in times.values())
    assert shares[-1] < 0.9, shares
    # -O2 against -O0 (user time): about 19 s against 11 s at a load average of 11 to 17, but under a
    # drifting host load even 4 builds against 4 were not enough to tell (+17%, [-46, +139] at a load of 16 to
    # 20); the comparison is made, not asserted: 2 builds a side (builds are this test's cost)
    compared = json.loads(
        abstat(
            "compare", "--store", store, "--metric", "user", "--format", "json", "build:O0", "build:O2", env=box
        ).stdout
    )["comparisons"][0]
    assert compared["n"] == [2, 2]


def test_down_leaves_nothing(box):
    for name in (BOX, SKY):
        directory = os.path.join(box["ABSTAT_TESTBOX_BOXES"], name)
        assert box_processes(box, name)
        done = abstat("testbox", "down", name, env=box, timeout=120)
        assert done.returncode == 0, done.stderr
        assert not os.path.exists(directory) and box_processes(box, name) == []
        again = abstat("testbox", "down", name, env=box)
        assert again.returncode == 2 and again.stderr.count("\n") == 1 and f"no test box '{name}'" in again.stderr
