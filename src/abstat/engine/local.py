"""A specification run on this machine: preflight, one invocation in the store (one per grid point of a
parameter scan, :mod:`abstat.engine.grid`), every run committed.

The order of what happens is the contract ``abstat run`` has always kept:
everything that can be checked is checked before the store is created
(commands, names, the baseline); the machine record and the doctor's
preflight are read; then the invocation starts, each run is committed with
signals held back (stored whole or not at all) as soon as it completes, and
the invocation is finished whatever happens (``complete``, ``interrupted``,
``failed``), never left ``running``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from abstat.engine.events import EventSink, ExperimentDone, ExperimentStarted, Note, RunDone
from abstat.engine.buffer import RunBuffer
from abstat.engine.grid import grid_points, schedule_entries
from abstat.engine.record import ExperimentResult, default_name, run_notes, settings_of
from abstat.engine.session import LocalSession, check_commands, probe_perf
from abstat.engine.spec import ExperimentSpec
from abstat.errors import UsageError
from abstat.box.runner import signals


def run_local(
    spec: ExperimentSpec,
    store_path: str,
    *,
    argv: Sequence[str],
    on_event: EventSink,
    caller: dict[str, Any] | None = None,
    before_close: Callable[[Any, Any], None] | None = None,
) -> ExperimentResult:
    """Run ``spec`` (its seed fixed, ``lab`` None) here; see :meth:`abstat.engine.Engine.run`."""
    from abstat.store import open_store

    perf, notes, record, doctor_warnings = _preflight(spec)
    baseline = spec.analysis.baseline
    store = open_store(store_path)
    invocations: list[Any] = []
    finished = False
    store.spool_on_disconnect(lambda line: on_event(Note(line)))  # PostgreSQL only
    try:
        notes.extend(journals_left(store))
        experiment = spec.experiment or default_name(store)
        _check_baseline(baseline, spec, store, experiment)  # before any run, not after all of them
        spec = spec.replace(experiment=experiment)
        points = grid_points(spec)  # [{}] without parameters: one invocation, as always
        entries = {entry.name: entry for entry in schedule_entries(spec)}
        start_all(
            store,
            invocations,
            spec,
            points,
            record,
            argv=list(argv),
            settings=lambda point: settings_of(spec, perf.supported if perf else [], caller, point=point),
        )
        result = ExperimentResult(spec, experiment, store.display)
        on_event(
            ExperimentStarted(
                experiment,
                spec,
                store.display,
                tuple(notes),
                tuple(doctor_warnings),
                perf_in_times=perf is not None and perf.usable,
            )
        )
        session = LocalSession(spec, on_event=on_event, perf=perf)
        buffers = point_buffers(store, invocations, list(entries.values()), session.executor.containment)

        def persist(outcome: Any) -> None:
            m, entry = outcome.measurement, entries[outcome.variant]
            run = RunDone(
                entry.variant,
                outcome.iteration,
                outcome.position,
                m.status,
                m.wall_s,
                m.exit_code,
                outcome.started_at,
                m.values,
                m.units,
                tuple(run_notes(m.notes, m.stderr_tail)),
                point=points[entry.point],
            )
            with signals.deferred():  # Ctrl-C lands after the journal line or the commit, never inside
                buffers[entry.point].add(run)
                result.runs.append(run)  # counted once kept, before a held signal is delivered
            on_event(run)

        _run_session(session, persist, buffers, store, invocations, result, notes)
        finished = True
        cut_off = store.db.stopped()
        on_event(
            ExperimentDone(
                experiment,
                result.status,
                len(result.runs),
                len(entries) * spec.runs,
                len(result.failed_runs),
                result.error,
                tuple(result.notes),
                report=not cut_off,
            )
        )
        _report(before_close, store, result, cut_off)
    except BaseException as err:
        if not finished:  # never leave one "running"
            with signals.deferred(deliver=False):
                finish_all(
                    store,
                    invocations,
                    "interrupted" if isinstance(err, KeyboardInterrupt) else "failed",
                    [*notes, f"abstat stopped: {err!r}"],
                    quietly=True,
                )
        raise
    finally:
        store.close()
    return result


def _preflight(spec: ExperimentSpec) -> tuple[Any, list[str], dict[str, Any], list[str]]:
    """What is checked and read before the store is opened: the commands, the baseline among the
    variants, perf, the machine record and the doctor's preflight; (perf, notes, record, doctor warnings)."""
    from abstat.box.doctor.base import Context

    # The doctor's rates (CPU busy, swapping) need two snapshots 50 ms apart: the first is taken
    # now, so the preparations below (imports, checks, the machine record) fill that time.
    sample = Context(cpus=list(spec.cpus) or None, interval=0.05)  # the checks look at the --cpus
    sample.start_sampling()
    from abstat.box import machine
    from abstat.box.doctor import run_preflight
    from abstat.box.runner.leftovers import leftover_notes

    check_commands(spec)
    baseline = spec.analysis.baseline
    if baseline is not None and spec.experiment is None and baseline not in spec.names:
        raise UsageError(f"{{baseline}} {baseline!r} is not one of the variants", fields=["baseline"])
    perf = probe_perf(spec)
    notes: list[str] = [perf.note] if perf is not None and perf.note else []
    notes.extend(leftover_notes())  # what a run killed together with its supervisor left behind
    record = machine.collect()
    record["doctor"], doctor_warnings = run_preflight(perf, sample)
    return perf, notes, record, doctor_warnings


def _check_baseline(baseline: str | None, spec: ExperimentSpec, store: Any, experiment: str) -> None:
    if baseline is not None and baseline not in set(spec.names) | set(store.variant_names(experiment)):
        raise UsageError(
            f"{{baseline}} {baseline!r} is neither one of the variants nor stored in experiment {experiment!r}",
            fields=["baseline"],
        )


def _run_session(
    session: LocalSession,
    persist: Callable[[Any], None],
    buffers: list[RunBuffer],
    store: Any,
    invocations: list[Any],
    result: ExperimentResult,
    notes: list[str],
) -> None:
    """Run the schedule, then close the buffers and the session and finish the invocations, whatever
    happens (a teardown no signal abandons); the result's status, error and notes set."""
    previous = signals.interrupt_on_termination()
    try:
        outcome = session.run(persist)
    except BaseException:  # e.g. the store failed: end the processes first (the invocation: below)
        with signals.deferred(deliver=False):
            try:
                close_all(buffers)  # what completed is kept (a failed commit names its journal)
            finally:
                session.close()
                signals.restore_handlers(previous)
        raise
    with signals.deferred(deliver=False) as held:  # a teardown no signal abandons
        close_all(buffers)
        session.close()
        signals.restore_handlers(previous)
        interrupted = outcome.interrupted or bool(held.received)
        result.status = (
            "complete" if outcome.error is None and not interrupted else ("interrupted" if interrupted else "failed")
        )
        result.error = outcome.error
        result.notes = list(outcome.notes) + session.notes
        finish_all(store, invocations, result.status, notes + result.notes + ([outcome.error] if outcome.error else []))


def _report(before_close: Callable[[Any, Any], None] | None, store: Any, result: Any, cut_off: bool) -> None:
    if before_close is not None and not cut_off:  # Ctrl-C cut a wait on the server: it is not read back
        before_close(store, result)


def journals_left(store: Any) -> list[str]:
    """Run journals left when an earlier abstat and its supervisor were both killed, each with the
    command that adds its runs (issue 36: ``run`` names them, as ``list`` and ``show`` do)."""
    from abstat.store.journal import left_behind_notes

    try:
        return [line.removeprefix("note: ") for line in left_behind_notes(store)]
    except store.db.errors:  # a store that cannot be read fails the run with its own error, later
        return []


def close_all(buffers: list[RunBuffer]) -> None:
    """Close every buffer, even when one fails (the first error is raised)."""
    failure: BaseException | None = None
    for buffer in buffers:
        try:
            buffer.close()
        except BaseException as err:
            failure = failure or err
    if failure is not None:
        raise failure


def finish_all(store: Any, invocations: list[Any], status: str, notes: list[str], *, quietly: bool = False) -> None:
    """Finish every invocation (``quietly``: after an error, which says more than a failure here)."""
    for invocation in invocations:
        try:
            store.finish_invocation(invocation, status, notes)
        except Exception:
            if not quietly:
                raise


def start_all(
    store: Any,
    invocations: list[Any],
    spec: ExperimentSpec,
    points: list[dict[str, str]],
    record: Any,
    *,
    argv: list[str],
    settings: Callable[[dict[str, str]], dict[str, Any]],
) -> None:
    """Start an invocation per grid point (labelled with its values, as a lab's hosts are), each
    appended to ``invocations`` as it starts (whatever fails next, those are finished)."""
    for point in points:
        invocations.append(
            store.start_invocation(
                spec.experiment,
                record,
                argv=argv,
                variants=spec.names,
                labels={**spec.labels, **point},
                settings=settings(point),
            )
        )


def point_buffers(store: Any, invocations: list[Any], entries: list[Any], guard: Any) -> list[RunBuffer]:
    """A :class:`RunBuffer` per grid point's invocation.  Short runs are journaled and committed in
    batches (:mod:`abstat.engine.buffer`; the supervisor replays the journal should abstat be killed
    outright); a grid's runs go to several invocations, each run committed as it completes (the
    journal holds one invocation's)."""
    guard = guard if len(invocations) == 1 else None
    return [
        RunBuffer(store, invocation, {e.variant: e.command for e in entries if e.point == index}, guard=guard)
        for index, invocation in enumerate(invocations)
    ]
