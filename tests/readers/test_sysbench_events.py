"""attack23 #4: sysbench's ``total number of events`` in a time-limited run (its default ``--time=10
--events=0``) is a throughput; read as a unitless count it was judged lower-is-better, so one +10% gain was
``faster`` in events-per-second and ``slower`` in events, and ``--fail-on slower`` failed.  Runs built from
``sysbench cpu --time=2 run``'s real output (tests/data/kernel/sysbench_cpu.txt): events never judged opposite
to events-per-second; an event-limited run's events (the limit) is still read."""

from __future__ import annotations

import csv
import io
import random
import re

from abstat.readers.kbench import read_sysbench
from support import paths

CPU = (paths.DATA / "kernel" / "sysbench_cpu.txt").read_text()


def _run(eps: float, total: float = 2.0020, events: int | None = None, speed_line: bool = True) -> str:
    """sysbench_cpu.txt with its rate, total time and events replaced (events: eps x total unless given)."""
    text = CPU.replace("3070.84", f"{eps:.2f}").replace("2.0020s", f"{total:.4f}s")
    text = text.replace("6151\n", f"{events if events is not None else round(eps * total)}\n", 1)
    if not speed_line:  # `sysbench threads` / `mutex`: no 'events per second' line
        text = re.sub(r"CPU speed:\n.*\n", "", text)
    return text


def _write(tmp_path, **kwargs) -> None:
    rng = random.Random(4)
    for name, eps in (("old", 3070.0), ("new", 3377.0)):  # +10% throughput
        (tmp_path / f"{name}.txt").write_text("".join(_run(eps * rng.gauss(1, 0.005), **kwargs) for _ in range(10)))


def _verdicts(abstat_cli) -> dict[str, str]:
    done = abstat_cli("report", "old.txt", "new.txt", "--format", "csv")
    assert done.returncode == 0, done.stderr
    return {row["metric"]: row["verdict"] for row in csv.DictReader(io.StringIO(done.stdout)) if row["verdict"]}


def test_a_time_limited_runs_events_are_never_slower_when_its_rate_is_faster(tmp_path, abstat_cli):
    _write(tmp_path)
    verdicts = _verdicts(abstat_cli)
    assert verdicts["events-per-second"] == "faster"
    assert verdicts.get("events", "faster") == "faster"
    gate = abstat_cli("report", "old.txt", "new.txt", "--fail-on", "slower")
    assert gate.returncode == 0, gate.stdout + gate.stderr
    assert "'total number of events' left out: the run was time-limited" in gate.stdout


def test_without_an_events_per_second_line_the_rate_is_derived_from_the_events(tmp_path, abstat_cli):
    _write(tmp_path, speed_line=False)  # sysbench threads: total time, events, latency
    sets = {s.labels["metric"]: s for s in read_sysbench("old.txt", (tmp_path / "old.txt").read_text())}
    assert "events" not in sets and sets["events-per-second"].unit == "events/s"
    ((first, *_),) = sets["events-per-second"].runs
    assert first == round(first * 2.002) / 2.002  # events / total time, as sysbench computes its rate
    assert _verdicts(abstat_cli)["events-per-second"] == "faster"


def test_an_event_limited_runs_events_are_the_limit_and_kept(tmp_path):
    text = "".join(_run(3000.0 + k, total=3.3333 + k / 1000, events=10000) for k in range(5))
    sets = {s.labels["metric"]: s for s in read_sysbench("e.txt", text)}
    assert sets["events"].runs == [[10000.0] * 5] and sets["events"].unit is None
    assert not sets["events-per-second"].notes
    assert sets["events-per-second"].runs == [[3000.0 + k for k in range(5)]]
