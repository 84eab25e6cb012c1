"""Where the next features plug in: a metric source's collector, hooks around a host's session."""

from __future__ import annotations

import queue
import threading

from abstat.box.runner import Command, RunContext
from abstat.box.runner.executor import ProcessExecutor


class Counting:
    """A collector as a new metric source would bring one (a kernel tracer, the kernel log)."""

    def __init__(self) -> None:
        self.calls: list[tuple] = []

    def wrap(self, argv: list[str], context: RunContext) -> list[str]:
        self.calls.append(("wrap", context.variant, tuple(argv)))
        return ["sh", "-c", 'echo wrapped >&2; exec "$@"', "sh", *argv]

    def collect(self, measurement, context: RunContext) -> None:
        self.calls.append(("collect", measurement.status))
        if measurement.ok:
            measurement.values["events"] = [3.0, 4.0]
            measurement.units["events"] = "count"
        else:
            measurement.notes.append("collector: nothing to read after a failed run")

    def close(self) -> list[str]:
        self.calls.append(("close",))
        return ["collector closed"]


def test_a_collector_wraps_reads_and_closes_around_every_measured_run():
    collector = Counting()
    executor = ProcessExecutor(collectors=[collector], subreaper=False, cgroups=False)
    try:
        good = executor.measure(Command("true"), RunContext("a", 0), timeout=10)
        bad = executor.measure(Command("false"), RunContext("a", 1), timeout=10)
        hook = executor.run_hook("setup", Command("true"), RunContext("a"), timeout=10)
    finally:
        executor.close()
    assert good.ok and good.values["events"] == [3.0, 4.0] and good.units["events"] == "count"
    assert good.values["wall"] and "wall" in good.units  # the built-in metrics as before
    assert not bad.ok and bad.notes[-1] == "collector: nothing to read after a failed run"
    assert hook.ok and "events" not in hook.values  # hooks are not measured
    assert collector.calls == [
        ("wrap", "a", ("true",)),
        ("collect", "ok"),
        ("wrap", "a", ("false",)),
        ("collect", "failed"),
        ("close",),
    ]
    assert executor.notes == ["collector closed"]


def test_the_shipped_runner_reads_metric_sources_from_the_plan():
    from abstat.box.runner.plan import _sources
    from abstat.box.runner.sources import JsonLines, Perf, RegexMetric

    plan = {
        "sources": [
            {"source": "regex", "name": "x", "pattern": "x=(\\d+)", "unit": "ms"},
            {"source": "perf", "events": ["cycles"]},
        ]
    }
    assert _sources(plan) == [RegexMetric("x", "x=(\\d+)", "ms"), Perf(("cycles",))]
    assert _sources({"sources": []}) == []  # no JSON lines unless asked for
    old = {"metrics": ["x=x=(\\d+):ms"], "perf_events": ["cycles"]}  # the first protocol: JSON lines by default
    assert _sources(old) == [RegexMetric("x", "x=(\\d+)", "ms"), JsonLines(), Perf(("cycles",))]


class _Ssh:
    def __init__(self) -> None:
        self.closed = False

    def close(self) -> None:
        self.closed = True


def test_host_hooks_run_around_a_host_s_part_and_can_stop_it_alone():
    from abstat.engine import ExperimentSpec, Host, Lab, Variant
    from abstat.engine.session import experiment_plan
    from abstat.lab.host import HostFailed, HostHooks, HostWorker

    calls: list[str] = []

    class Lease(HostHooks):
        def acquire(self, worker: HostWorker) -> None:
            calls.append(f"acquire {worker.host.label}")
            raise HostFailed("the box is leased by someone else until 12:00")

        def release(self, worker: HostWorker) -> None:
            calls.append(f"release {worker.host.label}")

    spec = ExperimentSpec((Variant("a", "true"),), seed=1, experiment="e", lab=Lab((Host("milan", "milan"),)))
    assert spec.lab is not None
    events: queue.Queue = queue.Queue()
    ssh = _Ssh()
    worker = HostWorker(
        experiment_plan(spec), spec.lab, spec.lab.hosts[0], ssh, [0], events, threading.Event(), Lease()
    )
    worker.run()  # in this thread
    (event,) = [events.get_nowait() for _ in range(events.qsize())]
    assert (event.kind, event.host, event.data) == (
        "failed",
        "milan",
        {"message": "the box is leased by someone else until 12:00"},
    )
    assert calls == ["acquire milan", "release milan"] and ssh.closed
