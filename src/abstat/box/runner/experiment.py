"""The experiment loop: hooks, background load, warm-ups, measured runs.

Library code: it never prints.  Progress and persistence go through the
``on_result`` callback, called after each run completes (the run goes to the
store, or to its journal, there: a crash loses at most the run in progress).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

from abstat.box.runner import signals
from abstat.box.runner.model import BackgroundHandle, Command, Executor, Measurement, RunContext, RunResult
from abstat.box.runner.plan import ExperimentPlan
from abstat.box.runner.schedule import Slot

__all__ = ["ExperimentOutcome", "ExperimentPlan", "run_experiment"]


@dataclass
class ExperimentOutcome:
    """What happened: every measured run, and why it stopped early if it did."""

    results: list[RunResult] = field(default_factory=list)
    error: str | None = None  # why the experiment stopped (hook or run failure)
    interrupted: bool = False  # Ctrl-C
    notes: list[str] = field(default_factory=list)

    @property
    def completed(self) -> bool:
        return self.error is None and not self.interrupted


BACKGROUND_SETTLE_S = 0.05


#: The advice a failed run's message ends with (a command without --ignore-failure replaces it: ``noise``).
IGNORE_FAILURE_ADVICE = " (use --ignore-failure to go on)"


class _Stop(Exception):
    pass


def _failure_text(measurement: Measurement) -> str:
    """Why the run failed, then what else was noted (a note about peak RSS is not a reason)."""
    notes = sorted(measurement.notes, key=lambda note: note.startswith(INFORMATION))
    text = "; ".join(notes) or measurement.status
    if measurement.stderr_tail:
        text += f" (stderr: {measurement.stderr_tail})"
    return text


INFORMATION = ("peak RSS not recorded",)  # notes of a run that worked as well as of one that failed


def _block_done(results: list[RunResult], variants: int) -> bool:
    """Every variant has as many measured runs as the others (asked only by ``--until-decided``)."""
    if len(results) % variants:
        return False
    counts: dict[str, int] = {}
    for result in results:
        counts[result.variant] = counts.get(result.variant, 0) + 1
    return len(counts) == variants and len(set(counts.values())) == 1


def run_experiment(
    plan: ExperimentPlan,
    executor: Executor,
    *,
    on_result: Callable[[RunResult], None] | None = None,
    on_slot: Callable[[Slot, int, int], None] | None = None,
    should_stop: Callable[[list[RunResult]], str | None] | None = None,
) -> ExperimentOutcome:
    """Run ``plan`` with ``executor``.

    ``on_result`` receives each measured run (failed ones too) as soon as it
    completes; ``on_slot(slot, position, total)`` is called before every run.
    Warm-up runs are not reported to ``on_result``.  A failing hook, or a
    failing run without ``ignore_failure``, stops the experiment and sets
    ``error``; Ctrl-C sets ``interrupted``.  ``should_stop(results)`` is asked
    whenever every variant has completed as many measured runs as the others
    (a block's end): a reason (a note of the outcome) ends the runs there.  Cleanup hooks and background
    processes are always dealt with before returning.
    """
    run = _Run(plan, executor, on_result, on_slot, should_stop)
    try:
        try:
            run.start()
            run.slots()
        except _Stop as stop:
            run.outcome.error = str(stop)
        except KeyboardInterrupt:
            run.outcome.interrupted = True
        finally:
            run.stop_backgrounds()
        run.clean_up()
    except KeyboardInterrupt:
        run.outcome.interrupted = True
    return run.outcome


class _Run:
    """One experiment's steps: start (set-up hooks, background loads), the slots, stop the loads, clean up."""

    def __init__(
        self,
        plan: ExperimentPlan,
        executor: Executor,
        on_result: Callable[[RunResult], None] | None,
        on_slot: Callable[[Slot, int, int], None] | None,
        should_stop: Callable[[list[RunResult]], str | None] | None,
    ) -> None:
        self.plan, self.executor = plan, executor
        self.on_result, self.on_slot, self.should_stop = on_result, on_slot, should_stop
        self.outcome = ExperimentOutcome()
        self.variants = {v.name: v for v in plan.variants}
        self.per_variant_setup = plan.order == "sequential"
        self.set_up: list[str] = []
        self.backgrounds: list[BackgroundHandle] = []
        self.reported_background: set[int] = set()

    def hook(self, kind: str, command: Command | None, context: RunContext) -> None:
        command = self.plan.variant_hooks.get(context.variant, {}).get(kind, command)
        if command is None:
            return
        measurement = self.executor.run_hook(kind, command, context, timeout=self.plan.timeout)
        if not measurement.ok:
            where = f"variant {context.variant!r}"
            if context.iteration >= 0:
                where += f", {'warm-up ' if context.warmup else ''}run {context.iteration + 1}"
            raise _Stop(f"--{kind} hook {command.text!r} failed for {where}: {_failure_text(measurement)}")

    def setup(self, name: str) -> None:
        self.set_up.append(name)  # cleanup runs even if setup half-failed
        self.hook("setup", self.plan.setup, RunContext(name))

    def cleanup(self, name: str) -> None:
        self.set_up.remove(name)
        self.hook("cleanup", self.plan.cleanup, RunContext(name))

    def check_background(self, done: int) -> None:
        """A background load that failed or ended stops the experiment: the
        runs after it would be measured without the load that was asked for."""
        for handle in self.backgrounds:
            failure = handle.failure()
            if failure is not None and id(handle) not in self.reported_background:
                self.reported_background.add(id(handle))
                raise _Stop(
                    f"background command {handle.command.text!r} ended ({failure}) "
                    + (f"after {done} measured run(s)" if done else "before the first measured run")
                    + "; a background load must last until abstat stops it"
                )

    def start(self) -> None:
        if not self.per_variant_setup:
            for variant in self.plan.variants:
                self.setup(variant.name)
        for command in self.plan.background:
            self.backgrounds.append(self.executor.start_background(command))
        if self.backgrounds:
            time.sleep(BACKGROUND_SETTLE_S)  # a load that fails at once fails here
            self.check_background(0)

    def slots(self) -> None:
        slots = self.plan.schedule()
        current: str | None = None
        for position, slot in enumerate(slots):
            if self.per_variant_setup and slot.variant != current:
                if current is not None:
                    self.cleanup(current)
                current = slot.variant
                self.setup(current)
            if self.on_slot is not None:
                self.on_slot(slot, position, len(slots))
            if self.one(slot, position):
                break

    def one(self, slot: Slot, position: int) -> bool:
        """One run with its prepare and conclude hooks; True when ``should_stop`` ends the runs here."""
        signals.raise_if_stopped()  # a stop signal that something swallowed (an import's ImportError) ends the runs
        context = RunContext(slot.variant, slot.iteration, slot.warmup)
        self.hook("prepare", self.plan.prepare, context)
        started = time.time()
        measurement = self.executor.measure(self.variants[slot.variant].command, context, timeout=self.plan.timeout)
        result = RunResult(slot.variant, slot.iteration, position, slot.warmup, measurement, started)
        if not slot.warmup:
            self.outcome.results.append(result)
            if self.on_result is not None:
                self.on_result(result)
        if not measurement.ok and not self.plan.ignore_failure:
            kind = "warm-up run" if slot.warmup else "run"
            raise _Stop(
                f"{kind} {slot.iteration + 1} of variant {slot.variant!r} "
                f"{'timed out' if measurement.status == 'timeout' else 'failed'}: "
                f"{_failure_text(measurement)}{IGNORE_FAILURE_ADVICE}"
            )
        self.hook("conclude", self.plan.conclude, context)
        self.check_background(len(self.outcome.results))
        if self.should_stop is None or slot.warmup or not _block_done(self.outcome.results, len(self.variants)):
            return False
        reason = self.should_stop(self.outcome.results)
        if reason is not None:
            self.outcome.notes.append(reason)
        return reason is not None

    def stop_backgrounds(self) -> None:
        # A Ctrl-C or SIGTERM now waits (or makes the stop use SIGKILL at once): every load is stopped.
        with signals.deferred(deliver=False) as held:
            for handle in self.backgrounds:
                notes = handle.stop()
                if id(handle) in self.reported_background:  # its end is the error already
                    notes = [note for note in notes if "had already ended" not in note]
                self.outcome.notes.extend(notes)
            self.backgrounds.clear()
        if held.received:
            self.outcome.interrupted = True

    def clean_up(self) -> None:
        for name in list(self.set_up):
            try:
                self.cleanup(name)
            except _Stop as stop:
                if self.outcome.error is None:
                    self.outcome.error = str(stop)
                else:
                    self.outcome.notes.append(str(stop))
