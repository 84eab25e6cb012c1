"""The far end of ``abstat run --host``: runs on the test box, over ssh.

The controller sends this package (``abstat/runner`` and ``abstat/box/machine.py``
as a zip, see :mod:`abstat.lab.bundle`) through the ssh connection to a
``python3 -c`` bootstrap; nothing is installed on the box.  Standard
library only; on Python 3.8 with the shims of the shipped
``abstat/__init__.py`` (:data:`abstat.lab.bundle.PACKAGE_INIT`).

Protocol: one JSON object per line.  This side first writes
``{"hello": {...}}`` (the machine record of this boot, the boot id), then
reads one request: ``{"run": PLAN}`` (``PLAN``: the JSON form of the
experiment's :class:`~abstat.box.runner.plan.ExperimentPlan`, as the engine
runs it locally, and ``slots``: the runs of the block left to run), ``{"doctor": OPTIONS}`` (answered with
``{"doctor": FINDINGS}``) or ``{"exit": true}``.  For a plan it
writes ``{"result": RUN}`` as each run completes and ``{"done": OUTCOME}``
at the end, or ``{"error": TEXT}`` when the plan cannot start (with
``"fields": [FIELD, ...]`` when TEXT names options as ``{FIELD}``: the
controller's command line names their flags).  When the
controller goes away (standard input closes), the run in progress is killed
with its process group and cleanup hooks run, as on Ctrl-C.
"""

from __future__ import annotations

import json
import os
import queue
import signal
import sys
import threading

from abstat.box import doctor, machine  # imported now: the shipped zip is deleted once the runner is loaded
from abstat.box.runner import perf as perf_mod
from abstat.box.runner.build import build_executor
from abstat.box.runner.experiment import ExperimentPlan, run_experiment
from abstat.box.runner.model import RunResult, command_problems
from abstat.box.isolate import IsolationError, isolation_problem
from abstat.box.runner.process import cpus_problem
from abstat.box.runner.schedule import Slot

TYPE_CHECKING = False  # not typing's: its import is a tenth of the runner's start in a TCG guest (issue 38)
if TYPE_CHECKING:
    from typing import Any, BinaryIO, TextIO

BOOT_ID_PATH = "/proc/sys/kernel/random/boot_id"


def boot_id() -> str | None:
    try:
        with open(BOOT_ID_PATH) as handle:
            return handle.read().strip()
    except OSError:
        return None


class Channel:
    """JSON lines to the controller; a lost controller stops the experiment."""

    def __init__(self, out: TextIO) -> None:
        self.out = out
        self.lock = threading.Lock()
        self.lost = False
        self.finished = threading.Event()  # set before "done": a closing controller is then no interruption
        self.answers: queue.Queue[dict[str, Any]] = queue.Queue()  # the controller's answers to looks

    def look(self, results: list[Any]) -> str | None:
        """``--until-decided``: at a block's end, ask the controller whether to stop (its reason) or go on."""
        self.send({"look": len(results)})
        answer = self.answers.get()  # a lost controller interrupts this wait (SIGINT, _watch_controller)
        reason = answer.get("stop")
        return reason if isinstance(reason, str) and reason else None

    def send(self, message: dict[str, Any]) -> None:
        text = json.dumps(message, separators=(",", ":")) + "\n"
        with self.lock:
            try:
                self.out.write(text)
                self.out.flush()
            except (BrokenPipeError, OSError):
                self.lost = True
                raise KeyboardInterrupt from None


def _missing_commands(plan: ExperimentPlan) -> list[str]:
    """Commands of the plan that cannot be executed on this box."""
    texts = [(f"variant {v.name!r}", v.command.text) for v in plan.variants]
    texts += [(f"--{kind}", command.text) for kind, command in plan.hooks().items()]
    texts += [("--background", command.text) for command in plan.background]
    return command_problems(texts, plan.shell)


def _result_message(result: RunResult, positions: list[int]) -> dict[str, Any]:
    measurement = result.measurement
    return {
        "result": {
            "variant": result.variant,
            "iteration": result.iteration,
            "position": positions[result.position],
            "started_at": result.started_at,
            "status": measurement.status,
            "exit_code": measurement.exit_code,
            "wall": measurement.wall_s,
            "values": measurement.values,
            "units": measurement.units,
            "notes": measurement.notes,
            "stderr_tail": measurement.stderr_tail,
        }
    }


def error_message(err: Exception) -> dict[str, Any]:
    """``{"error": TEXT}`` of an error; one that names fields (FieldError, IsolationError) sends its message
    with each field still ``{FIELD}``, and ``"fields"``."""
    fields = [field for field in getattr(err, "fields", ()) if isinstance(field, str)]
    if not fields:
        return {"error": str(err)}
    return {"error": str(getattr(err, "message", err)), "fields": fields}


def _cpus_problem(plan: ExperimentPlan) -> str | None:
    """Why the plan's ``cpus`` (and ``isolate``) cannot work on this box (None: they can)."""
    problem = cpus_problem(plan.cpus)
    if problem is None and plan.isolate:
        problem = isolation_problem(plan.cpus)
    return problem


def run_plan(request: dict[str, Any], channel: Channel) -> None:
    """Run a request: the plan's JSON form (:meth:`ExperimentPlan.from_json`) and the block's ``slots``
    (``[variant, iteration, warmup, position]``: the runs left, each sent back with its position)."""
    try:
        plan = ExperimentPlan.from_json(request)
    except ValueError as err:
        channel.send(error_message(err))
        return
    problems = _missing_commands(plan)
    if problems:
        channel.send({"error": "; ".join(problems)})
        return
    problem = _cpus_problem(plan)
    if problem is not None:
        channel.send({"error": problem})
        return
    plan.slots = [Slot(name, iteration, bool(warmup)) for name, iteration, warmup, _ in request["slots"]]
    positions = [position for *_, position in request["slots"]]
    try:
        executor, perf_support = build_executor(plan)  # as a local run builds it (abstat.engine.session)
    except (ValueError, IsolationError) as err:
        channel.send(error_message(err))
        return
    notes = [perf_support.note] if perf_support is not None and perf_support.note else []
    try:
        outcome = run_experiment(
            plan,
            executor,
            on_result=lambda result: channel.send(_result_message(result, positions)),
            should_stop=channel.look if plan.decide else None,
        )
    finally:
        executor.close()
        notes.extend(executor.notes)
    channel.finished.set()
    if not channel.lost:
        channel.send(
            {"done": {"error": outcome.error, "interrupted": outcome.interrupted, "notes": notes + outcome.notes}}
        )


def _watch_controller(source: BinaryIO, channel: Channel) -> None:
    """Standard input closes when the controller or the connection goes away: stop like Ctrl-C."""
    try:
        for line in iter(source.readline, b""):
            try:
                answer = json.loads(line)
            except ValueError:
                continue
            if isinstance(answer, dict) and ("stop" in answer or "go" in answer):
                channel.answers.put(answer)
    except (OSError, ValueError):
        pass
    if not channel.finished.is_set():
        os.kill(os.getpid(), signal.SIGINT)


def main(source: BinaryIO | None = None, out: TextIO | None = None) -> int:
    source = source if source is not None else sys.stdin.buffer
    out = out if out is not None else sys.stdout
    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, signal.default_int_handler)
    channel = Channel(out)
    try:
        record = machine.collect()
        warnings = doctor.preflight_into(record)
        channel.send(
            {
                "hello": {
                    "machine": record,
                    "boot_id": boot_id(),
                    "doctor_warnings": warnings,
                    "python": ".".join(map(str, sys.version_info[:3])),
                }
            }
        )
        line = source.readline()
        if not line:
            return 0
        request = json.loads(line)
        if "doctor" in request:  # abstat doctor --host
            channel.send({"doctor": doctor.on_host(request["doctor"], perf_mod.counters_probe)})
            return 0
        if "run" not in request:
            return 0
        threading.Thread(target=_watch_controller, args=(source, channel), daemon=True).start()
        run_plan(request["run"], channel)
    except KeyboardInterrupt:
        return 130
    return 0
