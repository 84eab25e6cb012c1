"""Drawing the engine's events on standard error: banner, notes, progress, the end.

:class:`RunDisplay` is the ``on_event`` of ``abstat run``, ``demo`` and
``noise``: the local progress display (:mod:`abstat.cli.progress.local`) for a
run here, one line per host (:mod:`abstat.cli.progress.lab`) for a lab
run.  Everything it prints from data is escaped for the terminal.  Use it as
a context manager, so that the live display stops whatever happens.
"""

from __future__ import annotations

import math
import shlex
from typing import Any, TextIO

from abstat.render import escape
from abstat.render.units import fits


# When the doctor warned about load: CPU time (user, sys) counts only this process's own work, so a change
# that wall-clock time hides under other work shows in it (issue 35's loaded-machine regression).
LOAD_ADVICE = "note: under load, wall time includes waiting for other work; user and sys CPU time resist it"


def load_advice(experiment: str, store: str | None) -> str:
    """:data:`LOAD_ADVICE` and the command that compares CPU time, as it can be run (the experiment and
    store shell-quoted; ``store`` None: a temporary store, gone when the command ends: no command)."""
    if store is None:
        return f"{LOAD_ADVICE} (the runs are in a temporary store: give --store PATH to keep them)"
    command = shlex.join(["abstat", "show", experiment, "--metric", "user,sys", "--store", store])
    return f"{LOAD_ADVICE}: compare them ({command})"


class RunDisplay:
    def __init__(self, stream: TextIO, *, progress: bool = True, store_kept: bool = True) -> None:
        """``store_kept`` False: the runs go to a temporary store (``abstat demo``), so no advice names it."""
        self.stream = stream
        self.store_kept = store_kept
        self.enabled = progress
        self.local: Any = None
        self.lab: Any = None

    def __enter__(self) -> RunDisplay:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def stop(self) -> None:
        for display in (self.local, self.lab):
            if display is not None:
                display.stop()

    def _line(self, text: str) -> None:
        self.stream.write(fits(self.stream, escape.terminal(text)) + "\n")

    def __call__(self, event: Any) -> None:
        handler = getattr(self, f"_{event.kind}", None)
        if handler is not None:
            handler(event)

    # -- both ------------------------------------------------------------

    def _experiment_started(self, event: Any) -> None:
        spec = event.spec
        if spec.lab is not None:
            return self._lab_started(event)
        from abstat.cli.progress.local import Progress

        points = math.prod(len(values) for values in spec.parameters.values())  # a parameter scan's grid
        grid = f" at {points} grid point(s)" if spec.parameters else ""
        self._line(
            f"abstat run: experiment {event.experiment!r}, {len(spec.variants)} variant(s){grid} x {spec.runs} "
            f"runs (+{spec.warmup} warm-up), order {spec.order}, seed {spec.seed}, store {event.store}"
        )
        for note in event.notes:
            self._line(f"note: {note}")
        for warning in event.doctor_warnings:
            self._line(f"note: abstat doctor warns: {warning}")
        if any(warning.split(":", 1)[0].strip() == "load" for warning in event.doctor_warnings):
            self._line(load_advice(event.experiment, event.store if self.store_kept else None))
        if event.perf_in_times:
            self.stream.write("note: with --perf, wall/user/sys time and peak RSS include perf stat itself\n")
        self.stream.flush()
        self.local = Progress(spec.names, len(spec.variants) * points * spec.runs, self.stream, enabled=self.enabled)

    def _note(self, event: Any) -> None:
        if event.host is not None and self.lab is not None:
            self.lab.message(event.host, event.text)
            return
        self.stream.write(escape.terminal(event.text) + "\n")
        self.stream.flush()

    def _run_started(self, event: Any) -> None:
        if self.local is not None:
            self.local.slot(event)

    def _run_done(self, event: Any) -> None:
        if event.host is not None and self.lab is not None:
            self.lab.run(event.host, event.variant, event.wall, event.ok)
        elif self.local is not None:
            self.local.result(event)

    def _experiment_done(self, event: Any) -> None:
        self.stop()
        if self.lab is not None:
            return
        for note in event.notes:
            self._line(f"note: {note}")
        if event.failed_runs:
            self.stream.write(
                f"note: {event.failed_runs} failed run(s) recorded as failed, not used in the comparison\n"
            )
        if event.status == "interrupted":
            then = (
                "partial report follows"
                if getattr(event, "report", True)
                else (
                    "no report: the store is not read back after the signal cut a wait on its server (the runs are"
                    " kept as said above)"
                )
            )
            self.stream.write(f"abstat run: interrupted: {event.runs} of {event.total} runs done; {then}\n")
        self.stream.flush()

    # -- the lab -----------------------------------------------------------

    def _lab_started(self, event: Any) -> None:
        from abstat.cli.progress.lab import LabProgress

        spec, lab = event.spec, event.spec.lab
        count = len(spec.variants)
        boots = (
            f"{count} variant(s) x {lab.boots} boot(s) x {spec.runs} runs per boot"
            if lab.reboots
            else f"{count} variant(s) x {spec.runs} runs"
        )
        self.stream.write(
            escape.terminal(
                f"abstat run: experiment {event.experiment!r} on {len(lab.hosts)} host(s), "
                f"{boots}, seed {spec.seed}, store {event.store}"
            )
            + "\n"
        )
        for host in lab.hosts:
            todo, stored = event.todo.get(host.label, (0, 0))
            if stored:
                self.stream.write(
                    escape.terminal(f"abstat run: {host.label}: {stored} boot(s) already stored, {todo} to go") + "\n"
                )
        self.stream.flush()
        per_boot = spec.runs * (1 if lab.reboots else count)
        self.lab = LabProgress(
            {h.label: (event.todo.get(h.label, (0, 0))[0], per_boot) for h in lab.hosts},
            spec.names,
            self.stream,
            enabled=self.enabled,
        )

    def _host_state(self, event: Any) -> None:
        self.lab.state(event.host, event.state, event.boot, event.variant)

    def _boot_started(self, event: Any) -> None:
        self.lab.boot(event.host, event.boot, event.variant or "", event.runs)

    def _boot_refused(self, event: Any) -> None:
        self.lab.message(
            event.host,
            f"boot {event.boot + 1} refused by --check for {event.variant!r} "
            f"({event.reason}); nothing from it is recorded",
        )

    def _host_lost(self, event: Any) -> None:
        self.lab.failed(event.host, event.message)

    def _host_done(self, event: Any) -> None:
        self.lab.finished(event.host, interrupted=event.interrupted)

    def _tick(self, event: Any) -> None:
        if self.lab is not None:
            self.lab.tick()
