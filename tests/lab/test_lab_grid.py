"""``run -L NAME VALUES --host``: a parameter scan on a test box (tests/support/lab_sim.py, real sshd).  The box
runs the whole grid interleaved in one block, ``{NAME}`` replaced in the commands and the hooks; the controller
stores one invocation per grid point, labelled with the point's values and the host, as a local scan does.
The reference is the grid itself: every stored run's output names the point it ran at, and every block of the
stored order holds every variant at every point once."""

from __future__ import annotations

import json
import sqlite3

import pytest
from support import lab_sim
from support.cli import run_abstat
from support.lab_sim import abstat

REASON = lab_sim.missing_requirements()
pytestmark = pytest.mark.skipif(REASON is not None, reason=f"lab tests need real sshd boxes: {REASON}")


@pytest.fixture
def lab():
    yield from lab_sim.one_box()


def test_a_3_x_2_grid_on_a_host_runs_interleaved_and_is_stored_per_point(lab, tmp_path):
    store, hooks = str(tmp_path / "s.db"), tmp_path / "prepared"
    result = abstat(
        lab,
        "run",
        "--host",
        "alpha",
        "--store",
        store,
        "--no-progress",
        "-n",
        "3",
        "--seed",
        "4",
        "--shell",
        "-L",
        "size",
        "1,2,4",
        "-L",
        "t",
        "1,8",
        "--metric",
        "got=got=(\\d+)",
        "--prepare",
        f"echo {{size}}-{{t}} >> {hooks}",
        "-v",
        "a=echo got={size}{t}",
        "-v",
        "b=echo got={size}{t}",
    )
    assert result.returncode == 0, result.stderr
    db = sqlite3.connect(store)
    try:
        invocations = db.execute("SELECT id, status, settings FROM invocations ORDER BY id").fetchall()
        assert len(invocations) == 6 and {status for _, status, _ in invocations} == {"complete"}
        points = []
        for inv_id, _, stored in invocations:
            labels = dict(db.execute("SELECT key, value FROM labels WHERE invocation_id = ?", (inv_id,)).fetchall())
            settings = json.loads(stored)
            assert labels["host"] == "alpha" and settings["parameters"] == {"size": ["1", "2", "4"], "t": ["1", "8"]}
            points.append((labels["size"], labels["t"]))
            runs = db.execute(
                "SELECT v.name, s.value FROM runs r JOIN variants v ON v.id = r.variant_id"
                " JOIN samples s ON s.run_id = r.id WHERE s.metric = 'got' AND r.invocation_id = ?",
                (inv_id,),
            ).fetchall()
            assert sorted(runs) == sorted((v, float(labels["size"] + labels["t"])) for v in "ab" for _ in range(3))
        assert sorted(points) == sorted((s, t) for s in ("1", "2", "4") for t in ("1", "8"))
        order = [
            (inv_id, variant)
            for inv_id, variant in db.execute(
                "SELECT r.invocation_id, v.name FROM runs r JOIN variants v ON v.id = r.variant_id ORDER BY r.position"
            )
        ]
    finally:
        db.close()
    assert len(order) == 36
    for block in range(3):  # interleaved: each block of 12 runs holds every variant at every point once
        assert len(set(order[12 * block : 12 * (block + 1)])) == 12
    prepared = hooks.read_text().split()
    assert sorted(set(prepared)) == sorted(f"{s}-{t}" for s in ("1", "2", "4") for t in ("1", "8"))
    assert len(prepared) == 36  # a prepare hook before each run, with its point's values
    shown = run_abstat(
        "report",
        "--store",
        store,
        "--by",
        "variant",
        "--rows",
        "size,t",
        "--metric",
        "got",
        "--format",
        "json",
        timeout=300,
    )
    assert shown.returncode == 0, shown.stderr
    document = json.loads(shown.stdout)
    assert document["row_keys"] == ["size", "t"] and document["common_labels"]["host"] == "alpha"
