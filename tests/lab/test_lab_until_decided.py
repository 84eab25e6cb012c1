"""``run --until-decided --host``: on a test box (tests/support/lab_sim.py, real sshd), the box's runner asks
the controller at the end of every block of runs, the controller judges that host's runs with the design a
local run uses (abstat.engine.session.stop_when_decided), and the box stops at the first look that decides.
The reference is the design itself: replayed here over the stored runs, in their order, it must stop at the
same look, with the same reason."""

from __future__ import annotations

import sqlite3

import pytest
from support import lab_sim
from support.lab_sim import abstat

from abstat.engine.parts import Host
from abstat.engine.session import stop_when_decided
from abstat.engine.spec import ExperimentSpec, Lab, Sequential, SpecError, Variant

REASON = lab_sim.missing_requirements()
pytestmark = pytest.mark.skipif(REASON is not None, reason=f"lab tests need real sshd boxes: {REASON}")


@pytest.fixture
def lab():
    yield from lab_sim.one_box()


def _runs(store: str) -> list[tuple[str, float]]:
    db = sqlite3.connect(store)
    try:
        return [
            (variant, wall)
            for variant, wall in db.execute(
                "SELECT v.name, s.value FROM runs r JOIN variants v ON v.id = r.variant_id"
                " JOIN samples s ON s.run_id = r.id WHERE s.metric = 'wall' ORDER BY r.position"
            )
        ]
    finally:
        db.close()


def test_a_10x_difference_on_a_host_stops_early_where_the_design_says(lab, tmp_path):
    store = str(tmp_path / "s.db")
    result = abstat(
        lab,
        "run",
        "--until-decided",
        "-n",
        "60",
        "--store",
        store,
        "--no-progress",
        "--host",
        "alpha",
        "--seed",
        "3",
        "-v",
        "a=sleep 0.02",
        "-v",
        "b=sleep 0.2",
    )
    assert result.returncode == 0, result.stderr
    line = next(line for line in result.stderr.splitlines() if "--until-decided on wall" in line)
    runs = int(line.split("stopped early at ")[1].split()[0])
    assert runs <= 20 and "b slower" in line and line.startswith("abstat run: alpha: --until-decided")
    db = sqlite3.connect(store)
    reason = line[len("abstat run: alpha: ") :]
    assert db.execute("SELECT status, notes FROM invocations").fetchall() == [("complete", f'["{reason}"]')]
    db.close()
    stored = _runs(store)
    assert len(stored) == 2 * runs  # nothing run after the look that decided
    spec = ExperimentSpec(
        (Variant("a", "sleep 0.02"), Variant("b", "sleep 0.2")), runs=60, sequential=Sequential(5, 2.0)
    )
    should_stop = stop_when_decided(spec)
    assert should_stop is not None
    replayed, reason = [], None
    for variant, wall in stored:
        replayed.append(_Run(variant, wall))
        counts = {name: sum(r.variant == name for r in replayed) for name in ("a", "b")}
        if counts["a"] == counts["b"]:
            reason = should_stop(replayed)
            if reason is not None:
                break
    assert len(replayed) == len(stored) and reason is not None and reason in line


class _Run:
    def __init__(self, variant: str, wall: float) -> None:
        self.variant = variant
        self.measurement = type("M", (), {"ok": True, "values": {"wall": [wall]}})()


def test_on_hosts_it_needs_every_variant_in_each_boot():
    lab = Lab((Host("alpha", "alpha"),), boot={"a": "reboot a", "b": "reboot b"})
    with pytest.raises(SpecError, match="every variant in each boot"):
        ExperimentSpec((Variant("a", "true"), Variant("b", "true")), runs=10, sequential=Sequential(5), lab=lab)
    ExperimentSpec(
        (Variant("a", "true"), Variant("b", "true")),
        runs=10,
        sequential=Sequential(5),
        lab=Lab((Host("alpha", "alpha"),)),
    )


def test_the_controller_judges_only_balanced_runs():
    """A runner that reconnected in the middle of a block asks where its own session's blocks end: the
    controller answers go until every variant has as many runs as the others."""
    from abstat.engine.hosts import host_decider

    spec = ExperimentSpec(
        (Variant("a", "sleep 0.01"), Variant("b", "sleep 0.03")),
        runs=60,
        sequential=Sequential(5, 2.0),
        lab=Lab((Host("alpha", "alpha"),)),
    )
    decider = host_decider(spec)
    assert decider is not None
    for index in range(8):
        decider.add({"variant": "a", "status": "ok", "values": {"wall": [0.010 + index * 1e-5]}})
    for index in range(7):
        decider.add({"variant": "b", "status": "ok", "values": {"wall": [0.030 + index * 1e-5]}})
    assert decider.decide() is None  # 8 against 7: no look
    decider.add({"variant": "b", "status": "ok", "values": {"wall": [0.0301]}})
    assert decider.decide().startswith("--until-decided on wall: stopped early at 8 of at most 60")
