"""A specification run on test boxes over ssh, across boots: the lab's controller.

One :class:`abstat.lab.host.HostWorker` thread per host boots it, checks
the boot and runs each block through the shipped runner, reporting its
events to a queue; this thread alone writes the store (one invocation per
boot, labelled ``host=LABEL``, with the machine record the host sent for
that boot) and turns the workers' events into the engine's
(:mod:`abstat.engine.events`).  A resume skips every boot already stored
as complete under the same seed.
"""

from __future__ import annotations

import queue
import shutil
import threading
import time
from collections.abc import Callable, Sequence
from types import SimpleNamespace
from typing import Any, Optional

from abstat.engine import events as ev
from abstat.engine.grid import grid_points, schedule_entries
from abstat.engine.record import ExperimentResult, add_run, default_name, run_notes, settings_of
from abstat.engine.spec import ExperimentSpec
from abstat.errors import named
from abstat.engine.session import UNTIL, experiment_plan
from abstat.lab.config import boot_schedule
from abstat.lab.host import HostEvent, HostHooks, HostWorker
from abstat.lab.lease import BoxLease
from abstat.lab.ssh import SshHost, control_directory
from abstat.box.runner import signals
from abstat.box.runner.schedule import SCHEDULE_VERSION
from abstat.box.runner.sources import Perf

JOIN_TIMEOUT_S = 30.0
TICK_S = 0.25

# A factory of the hooks around each host's part (None: no hooks); see HostHooks.
HostHooksFactory = Callable[[Any], Optional[HostHooks]]


class _Decider:
    """``--until-decided`` on one host: the design of a local run (:func:`abstat.engine.session.stop_when_decided`)
    over the runs this host sent, each host deciding for itself."""

    def __init__(self, should_stop: Callable[[list[Any]], str | None], variants: int) -> None:
        self.should_stop = should_stop
        self.variants = variants
        self.results: list[Any] = []
        self.counts: dict[str, int] = {}

    def add(self, result: dict[str, Any]) -> None:
        units = result.get("units")  # (the box's record: the decided metric's unit gives its direction)
        measurement = SimpleNamespace(
            ok=result["status"] == "ok", values=result["values"], units=units if isinstance(units, dict) else {}
        )
        self.results.append(SimpleNamespace(variant=result["variant"], measurement=measurement))
        self.counts[result["variant"]] = self.counts.get(result["variant"], 0) + 1

    def decide(self) -> str | None:
        """None until every variant has as many runs as the others (a runner that reconnected in the middle
        of a block looks where its own session's blocks end)."""
        if len(self.counts) < self.variants or len(set(self.counts.values())) > 1:
            return None
        return self.should_stop(self.results)


def host_decider(spec: ExperimentSpec) -> _Decider | None:
    from abstat.engine.session import stop_when_decided

    should_stop = stop_when_decided(spec)
    return None if should_stop is None else _Decider(should_stop, len(spec.variants))


def done_boots(store: Any, experiment: str, host: str, seed: int) -> set[int]:
    """Boot indexes of ``host`` stored complete in ``experiment`` by the schedule of ``seed``."""
    done: set[int] = set()
    for invocation in store.invocations(experiment):
        lab = invocation["settings"].get("lab") or {}
        if lab.get("host") == host and lab.get("seed") == seed and invocation["status"] == "complete":
            done.add(int(lab.get("boot", 0)))
    return done


def stored_schedule(store: Any, experiment: str, seed: int) -> int:
    """The schedule version ``experiment``'s boots were stored with under ``seed`` (1: stored before
    abstat recorded one; the current version when none is stored), so that a resume replays it."""
    for invocation in store.invocations(experiment):
        lab = invocation["settings"].get("lab") or {}
        if lab.get("seed") == seed:
            return int(lab.get("schedule", 1))
    return SCHEDULE_VERSION


def run_hosts(
    spec: ExperimentSpec,
    store_path: str,
    *,
    argv: Sequence[str],
    on_event: ev.EventSink,
    resuming: bool = False,
    host_hooks: HostHooksFactory | None = None,
    caller: dict[str, Any] | None = None,
    before_close: Callable[[Any, Any], None] | None = None,
) -> ExperimentResult:
    """Run ``spec`` (seed fixed, ``lab`` set) on its hosts; see :meth:`abstat.engine.Engine.run`."""
    from abstat.store import open_store

    store = open_store(store_path, create=not resuming)
    store.spool_on_disconnect(lambda line: on_event(ev.Note(line)))  # PostgreSQL: a server that goes away
    try:
        spec = spec.replace(experiment=spec.experiment or default_name(store))
        result = _Controller(spec, store, list(argv), on_event, host_hooks, caller).run(resuming)
        if before_close is not None:
            before_close(store, result)
        return result
    finally:
        store.close()


class _Controller:
    def __init__(
        self,
        spec: ExperimentSpec,
        store: Any,
        argv: list[str],
        on_event: ev.EventSink,
        host_hooks: HostHooksFactory | None,
        caller: dict[str, Any] | None,
    ) -> None:
        assert spec.lab is not None and spec.seed is not None and spec.experiment is not None
        self.spec, self.lab, self.experiment, self.seed = spec, spec.lab, spec.experiment, spec.seed
        self.plan = experiment_plan(spec)  # what every box's runner gets, as a local run runs it
        self.schedule_version = SCHEDULE_VERSION  # on a resume: the one the stored boots were planned with
        self.store = store
        self.argv = argv
        self.on_event = on_event
        self.host_hooks = host_hooks or (lambda host: BoxLease())  # by default, wait for a leased box
        self.events: queue.Queue[HostEvent] = queue.Queue()
        self.stopping = threading.Event()
        self.invocations: dict[tuple[str, int, int], Any] = {}  # (host, boot, grid point)
        self.points = grid_points(spec)  # [{}] without parameters: one invocation per boot
        self.doctor_warned: set[str] = set()
        self.result = ExperimentResult(spec, spec.experiment or "", store.display)
        perf = next((s.events for s in spec.metrics if isinstance(s, Perf)), ())
        self.entries = {entry.name: entry for entry in schedule_entries(spec)}
        self.settings = [settings_of(spec, list(perf), caller, point=point) for point in self.points]

    def boot_schedule(self, host: str) -> list[str]:
        """The variant of each boot on ``host`` (``[""]`` without boot commands)."""
        return boot_schedule(self.plan, self.lab, host, self.schedule_version)

    def _settings(self, host: Any, index: int, variant: str, boot_id: str, point: int) -> dict[str, Any]:
        return {
            **self.settings[point],
            "lab": {
                "seed": self.seed,
                "schedule": self.schedule_version,
                "host": host.label,
                "destination": host.destination,
                "boot": index,
                "boots": len(self.boot_schedule(host.label)),
                "boot_variant": variant or None,
                "boot_command": self.lab.boot.get(variant),
                "check": self.lab.check.get(variant),
                "boot_id": boot_id,
            },
        }

    def run(self, resuming: bool) -> ExperimentResult:
        """Run every host's boots (on a resume: those not stored complete)."""
        lab, result = self.lab, self.result
        control_dir = control_directory()
        todo = self._todo(resuming)
        self.on_event(
            ev.ExperimentStarted(
                self.experiment,
                self.spec,
                self.store.display,
                todo={
                    h.label: (len(todo[h.label]), len(self.boot_schedule(h.label)) - len(todo[h.label]))
                    for h in lab.hosts
                },
            )
        )
        workers = [
            HostWorker(
                self.plan,
                lab,
                host,
                SshHost(host.label, host.destination, control_dir),
                todo[host.label],
                self.events,
                self.stopping,
                self.host_hooks(host),
                decider=host_decider(self.spec),
                experiment=self.experiment,
                schedule_version=self.schedule_version,
            )
            for host in lab.hosts
        ]
        previous = signals.interrupt_on_termination()  # SIGTERM, SIGHUP (timeout, CI): as Ctrl-C
        try:
            self._serve(workers)
        except KeyboardInterrupt:
            result.status = "interrupted"
            with signals.deferred(deliver=False):  # a teardown no second signal abandons
                self._stop(workers)
        except BaseException:  # the store failed: stop every host before the error is told
            with signals.deferred(deliver=False):
                self._stop(workers, keep_events=False)
            raise
        finally:
            with signals.deferred(deliver=False):
                self._teardown(workers, control_dir, previous)
        if result.hosts_failed and result.status == "complete":
            result.status = "failed"
            result.error = f"{len(result.hosts_failed)} of {len(lab.hosts)} host(s) stopped"
        total = (
            sum(len(todo[h.label]) for h in lab.hosts)
            * self.plan.runs
            * (1 if lab.reboots else len(self.plan.variants))
        )
        self.on_event(
            ev.ExperimentDone(
                self.experiment,
                result.status,
                len(result.runs),
                total,
                len(result.failed_runs),
                result.error,
                tuple(result.notes),
            )
        )
        return result

    def _todo(self, resuming: bool) -> dict[str, list[int]]:
        """Each host's boots to run: all, or on a resume those not stored complete."""
        store = self.store
        if resuming:  # the boots and blocks still to run keep the order the stored ones were planned in
            self.schedule_version = stored_schedule(store, self.experiment, self.seed)
        return {
            h.label: [
                i
                for i in range(len(self.boot_schedule(h.label)))
                if not resuming or i not in done_boots(store, self.experiment, h.label, self.seed)
            ]
            for h in self.lab.hosts
        }

    def _serve(self, workers: list[HostWorker]) -> None:
        """Start the hosts and store what they send until every one has ended."""
        for worker in workers:
            worker.start()
        while any(w.is_alive() for w in workers) or not self.events.empty():
            try:
                event = self.events.get(timeout=TICK_S)
            except queue.Empty:
                self.on_event(ev.Tick())
                continue
            with signals.deferred():  # a run is stored whole or not at all
                self._handle(event)

    def _teardown(self, workers: list[HostWorker], control_dir: str, previous: Any) -> None:
        for worker in workers:
            worker.ssh.close()
        for invocation in self.invocations.values():
            try:
                self.store.finish_invocation(invocation, "interrupted", ["abstat run stopped before this boot's end"])
            except Exception:  # the store is what failed: its error is the one to tell
                break
        shutil.rmtree(control_dir, ignore_errors=True)
        signals.restore_handlers(previous)

    def _stop(self, workers: list[HostWorker], keep_events: bool = True) -> None:
        """Stop every host: sessions and masters killed, threads joined (at most JOIN_TIMEOUT_S);
        the runs they sent before are stored (``keep_events``)."""
        self.stopping.set()
        for worker in workers:
            worker.ssh.abort()
        deadline = time.monotonic() + JOIN_TIMEOUT_S
        for worker in workers:
            worker.join(max(0.0, deadline - time.monotonic()))
        while keep_events and not self.events.empty():
            self._handle(self.events.get_nowait())

    def _handle(self, event: HostEvent) -> None:
        sink, data = self.on_event, event.data
        host = next(h for h in self.lab.hosts if h.label == event.host)
        if event.kind == "boot":
            self._on_boot(event, host)
        elif event.kind == "run":
            self._on_run(event)
        elif event.kind == "end":
            self._on_end(event)
        elif event.kind == "state":
            sink(ev.HostState(data["state"], event.boot, data.get("variant"), host=event.host))
        elif event.kind == "refused":
            sink(ev.BootRefused(event.boot, data["variant"], data["reason"], data.get("attempt", 0), host=event.host))
        elif event.kind == "failed":
            self._on_failed(event)
        elif event.kind == "note":
            sink(ev.Note(data["text"], host=event.host))
        elif event.kind == "finished":
            sink(ev.HostDone(bool(data.get("interrupted")), host=event.host))

    def _on_boot(self, event: HostEvent, host: Any) -> None:
        data, sink = event.data, self.on_event
        variant = self.boot_schedule(host.label)[event.boot]
        machine = _with_clock(data["machine"], host.destination)
        for index, point in enumerate(self.points):  # one invocation per grid point, labelled as a local one
            self.invocations[(event.host, event.boot, index)] = self.store.start_invocation(
                self.experiment,
                machine,
                argv=self.argv,
                settings=self._settings(host, event.boot, variant, data["boot_id"], index),
                labels={**self.spec.labels, **point, "host": host.label},
                variants=list(self.spec.names),  # -v order: the baseline first
            )
        sink(ev.BootStarted(event.boot, variant or None, data["slots"], data["boot_id"], host=event.host))
        if event.host not in self.doctor_warned:  # as a local abstat run warns, once per host
            self.doctor_warned.add(event.host)
            for warning in data.get("doctor_warnings") or []:
                sink(ev.Note(f"note: abstat doctor warns: {warning}", host=event.host))
            if "testbox_clock" in machine:
                sink(ev.Note(CLOCK_NOTE, host=event.host))

    def _on_run(self, event: HostEvent) -> None:
        r = event.data["result"]
        entry = self.entries[r["variant"]]  # the runner sends only the plan's names
        run = ev.RunDone(
            entry.variant,
            r["iteration"],
            r["position"],
            r["status"],
            r["wall"],
            r["exit_code"],
            r["started_at"],
            r["values"],
            r["units"],
            tuple(run_notes(r.get("notes") or [], r.get("stderr_tail") or "")),
            boot=event.boot,
            host=event.host,
            point=self.points[entry.point],
        )
        add_run(self.store, self.invocations[(event.host, event.boot, entry.point)], run, entry.command)
        self.result.runs.append(run)
        self.on_event(run)

    def _on_end(self, event: HostEvent) -> None:
        data = event.data
        notes = list(data.get("notes") or []) + [n for n in (data.get("note"), data.get("error")) if n]
        for index in range(len(self.points)):
            invocation = self.invocations.pop((event.host, event.boot, index), None)
            if invocation is not None:
                self.store.finish_invocation(invocation, data["status"], notes)
        for note in notes:  # why the boot's runs stopped early: told as a local run tells it
            if isinstance(note, str) and note.startswith(named("{until_decided}", *UNTIL)):
                self.on_event(ev.Note(note, host=event.host))
        self.on_event(ev.BootDone(event.boot, data["status"], tuple(notes), host=event.host))

    def _on_failed(self, event: HostEvent) -> None:
        message = event.data["message"]
        self.result.hosts_failed[event.host] = message
        for other in [k for k in self.invocations if k[0] == event.host]:
            self.store.finish_invocation(self.invocations.pop(other), "failed", [message])
        self.on_event(ev.HostLost(message, host=event.host))


CLOCK_NOTE = (
    "note: this test box's clock counts instructions (testbox up --accel icount): its cycles and times are the "
    "instructions a path executes, not what they take on a machine"
)


def _with_clock(machine: Any, destination: str) -> Any:
    """The box's machine record, with ``testbox_clock`` when ``destination`` is a test box whose clock counts
    instructions (read on this side: the box cannot know)."""
    from abstat.lab.testbox.paths import clock_of

    clock = clock_of(destination)
    return {**machine, "testbox_clock": clock} if clock and isinstance(machine, dict) else machine
