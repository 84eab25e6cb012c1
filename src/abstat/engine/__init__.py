"""The experiment engine: one way to run an :class:`ExperimentSpec`, here or on test boxes.

    from abstat.engine import Engine, ExperimentSpec, Variant

    spec = ExperimentSpec((Variant("before", "./bench-old"), Variant("after", "./bench-new")), runs=30)
    result = Engine(on_event=print).run(spec)

:meth:`Engine.run` fixes what the specification leaves open (the seed, the
revision labels, the experiment's name), runs it on this machine
(:mod:`abstat.engine.local`) or on its hosts across boots
(:mod:`abstat.engine.hosts`), writes every run to the store as it completes,
reports progress as events (:mod:`abstat.engine.events`) and returns an
:class:`~abstat.engine.record.ExperimentResult`.  It never prints.
:meth:`Engine.resume` continues a lab experiment from the specification
stored with it; :meth:`Engine.session` gives a caller that chooses each run
itself (``abstat bisect``) the engine's process control.

``abstat run``, ``abstat demo``, ``abstat noise``, ``abstat bisect`` and the
public API (``abstat.run``) all run experiments through this class.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from typing import Any

from abstat.engine.events import Event, EventSink, ignore
from abstat.engine.record import ExperimentResult
from abstat.engine.session import LocalSession
from abstat.engine.spec import Analysis, ExperimentSpec, Hooks, Host, Lab, SpecError, Variant
from abstat.engine.stored import StoredExperiment, stored_experiment
from abstat.errors import UsageError

__all__ = [
    "Analysis",
    "Engine",
    "Event",
    "EventSink",
    "ExperimentResult",
    "ExperimentSpec",
    "Hooks",
    "Host",
    "Lab",
    "LocalSession",
    "SpecError",
    "StoredExperiment",
    "Variant",
    "resolve",
    "stored_experiment",
]


def resolve(spec: ExperimentSpec) -> ExperimentSpec:
    """``spec`` with what is left open fixed: a seed drawn, ``rev`` turned into labels (``rev``,
    ``commit_time`` of that directory's HEAD; an explicit label wins).  This is the form stored."""
    changes: dict[str, Any] = {}
    if spec.seed is None:
        changes["seed"] = random.SystemRandom().randrange(2**31)
    if spec.rev is not None:
        from abstat.history.revision import head_labels

        changes["labels"] = {**head_labels(spec.rev), **spec.labels}
        changes["rev"] = None
    return spec.replace(**changes) if changes else spec


class Engine:
    """Runs specifications; ``on_event`` receives every :class:`~abstat.engine.events.Event`.

    ``argv`` is recorded with each invocation (what the user typed; the
    specification, not this, is what a resume reads), and ``caller`` (JSON
    data) in its settings, for the caller to read back on a resume (how
    ``abstat run`` rendered the comparison).  ``host_hooks(host)`` may return
    an :class:`abstat.lab.host.HostHooks` for each host of a lab run (leases
    on the boxes).
    """

    def __init__(
        self,
        *,
        on_event: EventSink = ignore,
        argv: Sequence[str] = ("abstat.run",),
        caller: dict[str, Any] | None = None,
        host_hooks: Any = None,
    ) -> None:
        self.on_event = on_event
        self.argv = list(argv)
        self.caller = dict(caller or {})
        self.host_hooks = host_hooks

    def run(
        self,
        spec: ExperimentSpec,
        *,
        resuming: bool = False,
        before_close: Callable[[Any, ExperimentResult], None] | None = None,
    ) -> ExperimentResult:
        """Run ``spec`` to its end (or Ctrl-C, SIGTERM, SIGHUP: status ``interrupted``).

        Bad input (a command that does not exist, a bad baseline) raises
        :class:`~abstat.errors.UsageError` before anything runs or the store is
        created; a failing hook or run ends the experiment with status
        ``failed`` and ``error``; a host that stops is in ``hosts_failed``.
        ``before_close(store, result)`` is called at the end with the store
        still open (``abstat run`` renders its comparison there: a store that
        lost its server then still names the local spool of the runs)."""
        from abstat.store import resolve_store_path

        if not isinstance(spec, ExperimentSpec):
            raise TypeError(f"Engine.run takes an ExperimentSpec, not {type(spec).__name__}")
        spec = resolve(spec)
        store_path = resolve_store_path(spec.store)
        spec = spec.replace(store=store_path)
        if spec.lab is not None:
            from abstat.engine.hosts import run_hosts

            if spec.analysis.baseline is not None and spec.analysis.baseline not in spec.names:
                raise UsageError(
                    f"{{baseline}} {spec.analysis.baseline!r} is not one of the variants", fields=["baseline"]
                )
            return run_hosts(
                spec,
                store_path,
                argv=self.argv,
                on_event=self.on_event,
                resuming=resuming,
                host_hooks=self.host_hooks,
                caller=self.caller,
                before_close=before_close,
            )
        if resuming:
            raise SpecError("lab", "only a lab experiment (run on hosts) can be resumed")
        from abstat.engine.local import run_local

        return run_local(
            spec, store_path, argv=self.argv, on_event=self.on_event, caller=self.caller, before_close=before_close
        )

    def resume(
        self, experiment: str, *, store: str | None = None, boot_timeout: float | None = None, approved: Any = None
    ) -> ExperimentResult:
        """Continue the lab experiment ``experiment`` from the specification stored with it,
        without repeating the boots stored complete (``boot_timeout`` may change); ``approved``: the
        stored commands as checked (:func:`abstat.engine.stored.stored_commands`), else nothing runs."""
        from abstat.store import resolve_store_path

        path = resolve_store_path(store)
        spec = stored_experiment(path, experiment).resumable(path, boot_timeout=boot_timeout, approved=approved)
        return self.run(spec, resuming=True)

    def session(self, spec: ExperimentSpec, **options: Any) -> LocalSession:
        """This machine's process control for ``spec``'s metric sources and timeout, for callers that
        choose each run (``with engine.session(spec) as s: s.measure(command, context, timeout=...)``)."""
        return LocalSession(spec, on_event=self.on_event, **options)
