"""The controller: host workers in parallel, every run into the store at once.

Host threads (:class:`abstat.lab.host.HostWorker`) report events; this
thread alone writes the store (one invocation per boot, labelled
``host=LABEL``, carrying the machine record the host sent for that boot),
updates the progress display and, at the end, prints one comparison per
host.  ``--resume EXPERIMENT`` reads the stored plan back and skips every
boot already stored as complete.
"""
from __future__ import annotations

import argparse
import queue
import random
import shutil
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from typing import Any

from abstat.errors import InputError, UsageError
from abstat.lab.config import LabPlan, lab_plan
from abstat.lab.host import Event, HostWorker
from abstat.lab.ssh import SshHost

JOIN_TIMEOUT_S = 30.0
_RESUME_OVERRIDES = ("no_progress", "boot_timeout", "format")


def _done_boots(store: Any, experiment: str, host: str, seed: int) -> set[int]:
    """Boot indexes of ``host`` stored complete in ``experiment`` by the schedule of ``seed``."""
    done: set[int] = set()
    for invocation in store.invocations(experiment):
        lab = invocation["settings"].get("lab") or {}
        if lab.get("host") == host and lab.get("seed") == seed and invocation["status"] == "complete":
            done.add(int(lab.get("boot", 0)))
    return done


def _resumed_args(store: Any, experiment: str, given: argparse.Namespace) -> tuple[argparse.Namespace, list[str]]:
    """The options of the stored lab experiment, with the few a resume may change."""
    from abstat.commands.run import build_parser

    if not store.has_experiment(experiment):
        raise InputError(f"--resume {experiment!r}: no such experiment", path=store.path)
    stored = [i["settings"]["lab"] for i in store.invocations(experiment) if i["settings"].get("lab")]
    if not stored:
        raise InputError(f"--resume {experiment!r}: not run with --host, nothing to resume", path=store.path)
    original = list(stored[-1]["argv"])
    args = build_parser().parse_args(original)
    args.experiment = experiment
    args.seed = stored[-1]["seed"]
    defaults = build_parser().parse_args([])
    for name in _RESUME_OVERRIDES:
        if getattr(given, name) != getattr(defaults, name):
            setattr(args, name, getattr(given, name))
    return args, original


def _check_resume_options(args: argparse.Namespace) -> None:
    from abstat.commands.run import build_parser

    defaults = vars(build_parser().parse_args([]))
    extra = [name for name, value in vars(args).items()
             if name not in (*_RESUME_OVERRIDES, "resume", "store") and value != defaults.get(name)]
    if extra:
        raise UsageError("--resume takes the experiment's stored options; besides it only --store, "
                         f"--boot-timeout, --format and --no-progress (got --{extra[0].replace('_', '-')})")


def run_lab(args: argparse.Namespace, argv: Sequence[str], *, store_path: str) -> int:
    """``abstat run --host ...`` or ``abstat run --resume EXPERIMENT``."""
    from abstat.store import check_experiment_name, open_store

    resuming = args.resume is not None
    if resuming:
        _check_resume_options(args)
        check_experiment_name(args.resume)
    elif args.experiment is not None:
        check_experiment_name(args.experiment)
    original = list(argv[2:]) if list(argv[:2]) == ["abstat", "run"] else list(argv)
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(2**31)
    if not resuming:
        lab_plan(args, args.experiment or "", seed)  # every option checked before the store is created
    store = open_store(store_path, create=not resuming)
    try:
        if resuming:
            args, original = _resumed_args(store, args.resume, args)
            seed = args.seed
        experiment = args.experiment
        if experiment is None:
            from abstat.commands.run import _default_experiment

            experiment = _default_experiment(store)
        plan = lab_plan(args, experiment, seed)
        return Controller(plan, args, original, store).run(resuming=resuming)
    finally:
        store.close()


class Controller:
    def __init__(self, plan: LabPlan, args: argparse.Namespace, original: list[str], store: Any) -> None:
        self.plan = plan
        self.args = args
        self.original = original
        self.store = store
        self.events: queue.Queue[Event] = queue.Queue()
        self.stopping = threading.Event()
        self.invocations: dict[tuple[str, int], Any] = {}
        self.failures: dict[str, str] = {}
        self.doctor_warned: set[str] = set()

    def _settings(self, host: Any, index: int, variant: str, boot_id: str) -> dict[str, Any]:
        from abstat import __version__

        plan = self.plan
        return {
            "runs": plan.runs, "warmup": plan.warmup, "order": plan.order, "seed": plan.seed,
            "timeout": plan.remote["timeout"], "shell": plan.remote["shell"],
            "ignore_failure": plan.remote["ignore_failure"], "hooks": plan.remote["hooks"],
            "background": plan.remote["background"], "metrics": plan.remote["metrics"],
            "json_lines": plan.remote["json_lines"], "perf_events": plan.remote["perf_events"],
            "variants": dict(plan.variants), "abstat": __version__,
            "lab": {
                "argv": self.original, "seed": plan.seed, "host": host.label, "destination": host.destination,
                "boot": index, "boots": len(plan.boot_schedule(host.label)), "boot_variant": variant or None,
                "boot_command": plan.boot.get(variant), "check": plan.check.get(variant), "boot_id": boot_id,
            },
        }

    def run(self, *, resuming: bool = False) -> int:
        """Run every host's boots (a resume: those not stored complete); the exit status."""
        from abstat.render.lab_progress import LabProgress

        plan, store, stderr = self.plan, self.store, sys.stderr
        control_dir = tempfile.mkdtemp(prefix="abstat-ssh-")
        todo = {h.label: [i for i in range(len(plan.boot_schedule(h.label)))
                          if not resuming or i not in _done_boots(store, plan.experiment, h.label, plan.seed)]
                for h in plan.hosts}
        boots_text = (f"{len(plan.variants)} variant(s) x {plan.boots} boot(s) x {plan.runs} runs per boot"
                      if plan.reboots else f"{len(plan.variants)} variant(s) x {plan.runs} runs")
        stderr.write(f"abstat run: experiment {plan.experiment!r} on {len(plan.hosts)} host(s), {boots_text},"
                     f" seed {plan.seed}, store {store.path}\n")
        for host in plan.hosts:
            skipped = len(plan.boot_schedule(host.label)) - len(todo[host.label])
            if skipped:
                stderr.write(f"abstat run: {host.label}: {skipped} boot(s) already stored, "
                             f"{len(todo[host.label])} to go\n")
        stderr.flush()
        progress = LabProgress(
            {h.label: (len(todo[h.label]), plan.runs * (1 if plan.reboots else len(plan.variants)))
             for h in plan.hosts},
            list(plan.variants), stderr, enabled=not self.args.no_progress,
        )
        workers = [HostWorker(plan, host, SshHost(host.label, host.destination, control_dir), todo[host.label],
                              self.events, self.stopping) for host in plan.hosts]
        interrupted = False
        try:
            for worker in workers:
                worker.start()
            while any(w.is_alive() for w in workers) or not self.events.empty():
                try:
                    event = self.events.get(timeout=0.25)
                except queue.Empty:
                    progress.tick()
                    continue
                self._handle(event, progress)
        except KeyboardInterrupt:
            interrupted = True
            self.stopping.set()
            for worker in workers:
                worker.ssh.abort()
            deadline = time.monotonic() + JOIN_TIMEOUT_S
            for worker in workers:
                worker.join(max(0.0, deadline - time.monotonic()))
            while not self.events.empty():
                self._handle(self.events.get_nowait(), progress)
        finally:
            progress.stop()
            for worker in workers:
                worker.ssh.close()
            for key, invocation in self.invocations.items():
                store.finish_invocation(invocation, "interrupted", ["abstat run stopped before this boot's end"])
            shutil.rmtree(control_dir, ignore_errors=True)
        self._report()
        if self.failures:
            hosts = ", ".join(self.failures)
            raise InputError(f"{len(self.failures)} of {len(plan.hosts)} host(s) stopped ({hosts}); every "
                             f"completed run is stored; continue with: abstat run --resume {plan.experiment}"
                             f" --store {store.path}")
        if interrupted:
            stderr.write(f"abstat run: interrupted; continue with: abstat run --resume {plan.experiment}\n")
            return 130
        return 0

    def _handle(self, event: Event, progress: Any) -> None:
        plan, store = self.plan, self.store
        key = (event.host, event.boot)
        data = event.data
        host = next(h for h in plan.hosts if h.label == event.host)
        if event.kind == "boot":
            variant = plan.boot_schedule(host.label)[event.boot]
            self.invocations[key] = store.start_invocation(
                plan.experiment, data["machine"], argv=["abstat", "run", *self.original],
                settings=self._settings(host, event.boot, variant, data["boot_id"]),
                labels={**plan.labels, "host": host.label},
                variants=[variant] if variant else list(plan.variants),
            )
            progress.boot(event.host, event.boot, variant, data["slots"])
            if event.host not in self.doctor_warned:  # as a local abstat run warns, once per host
                self.doctor_warned.add(event.host)
                for warning in data.get("doctor_warnings") or []:
                    progress.message(event.host, f"note: abstat doctor warns: {warning}")
        elif event.kind == "run":
            result = data["result"]
            notes = list(result.get("notes") or [])
            if result.get("stderr_tail"):
                notes.append(f"stderr: {result['stderr_tail']}")
            store.add_run(
                self.invocations[key], variant=result["variant"], command=plan.variants[result["variant"]],
                iteration=result["iteration"], position=result["position"], status=result["status"],
                exit_code=result["exit_code"], started_at=result["started_at"], wall=result["wall"],
                values=result["values"], units=result["units"], notes=notes,
            )
            progress.run(event.host, result["variant"], result["wall"], result["status"] == "ok")
        elif event.kind == "end":
            invocation = self.invocations.pop(key, None)
            if invocation is not None:
                notes = list(data.get("notes") or []) + [n for n in (data.get("note"), data.get("error")) if n]
                store.finish_invocation(invocation, data["status"], notes)
        elif event.kind == "state":
            progress.state(event.host, data["state"], event.boot, data.get("variant"))
        elif event.kind == "refused":
            progress.message(event.host, f"boot {event.boot + 1} refused by --check for {data['variant']!r} "
                             f"({data['reason']}); nothing from it is recorded")
        elif event.kind == "failed":
            self.failures[event.host] = data["message"]
            invocation = self.invocations.pop(key, None)
            if invocation is not None:
                store.finish_invocation(invocation, "failed", [data["message"]])
            for other in [k for k in self.invocations if k[0] == event.host]:
                store.finish_invocation(self.invocations.pop(other), "failed", [data["message"]])
            progress.failed(event.host, data["message"])
        elif event.kind == "finished":
            progress.finished(event.host, interrupted=bool(data.get("interrupted")))

    def _report(self) -> None:
        """One comparison per host (each boot a run group): JSON keyed by host, CSV with a host column."""
        import json

        from abstat.render import escape, terminal
        from abstat.render.run_report import comparison_report

        args, plan = self.args, self.plan
        documents: dict[str, Any] = {}
        csv_header = False
        for host in plan.hosts:
            report = comparison_report(
                self.store, plan.experiment, baseline=args.baseline, fmt=args.format,
                confidence=args.confidence, higher_is_better=args.higher_is_better, seed=plan.seed,
                color=terminal.color_wanted(sys.stdout), labels={**plan.labels, "host": host.label},
                verbose=args.verbose,
            )
            if args.format == "json":
                documents[host.label] = json.loads(report) if report.strip() else None
            elif args.format == "csv":
                lines = report.splitlines()
                if lines and not csv_header:
                    sys.stdout.write("host," + lines[0] + "\n")
                    csv_header = True
                sys.stdout.writelines(f"{_csv_field(host.label)},{line}\n" for line in lines[1:])
            else:
                heading = "# " if args.format == "markdown" else "== "
                shown = escape.markdown(host.label) if args.format == "markdown" else escape.terminal(host.label)
                sys.stdout.write(f"{heading}host {shown}{'' if heading == '# ' else ' =='}\n")
                sys.stdout.write(report)
        if args.format == "json":
            sys.stdout.write(json.dumps({"experiment": plan.experiment, "hosts": documents}, indent=2) + "\n")
        sys.stdout.flush()


def _csv_field(text: str) -> str:
    from abstat.render import escape

    text = str(escape.csv_cell(text))  # formula cells neutralised (OWASP)
    return '"' + text.replace('"', '""') + '"' if any(c in text for c in ',"\n\r') else text
