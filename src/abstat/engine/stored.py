"""The specification a lab experiment was stored with: what ``--resume`` reloads.

Since the engine, every invocation's ``settings["spec"]`` holds the
specification as run (seed drawn, revision labels resolved), in its JSON
form.  It is read back as untrusted input: decoded and validated
(:func:`abstat.engine.spec.decode`); a forged or damaged one is one
line naming the experiment and the field, never an internal error.

A store written by an abstat from before the engine keeps a lab
experiment's options as a command line (``settings["lab"]["argv"]``) and its
seed.  That is returned as :attr:`StoredExperiment.legacy_argv`, checked to
be a short list of strings; only the command-line layer knows the grammar
to convert it into a specification (``abstat run --resume`` does, and
validates the result), so :meth:`StoredExperiment.resumable` refuses it
here in one line.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from abstat.engine.spec import MAX_COMMAND_CHARS, ExperimentSpec, SpecError, decode
from abstat.errors import InputError, UsageError

MAX_LEGACY_ARGS = 10_000
MAX_LISTED = 20  # stored commands named in the error of an approval that does not match


@dataclass(frozen=True)
class StoredExperiment:
    experiment: str
    store: str  # the store's display name
    invocation: int  # the invocation read
    spec: ExperimentSpec | None = None  # stored by this abstat
    legacy_argv: tuple[str, ...] = ()  # stored by an abstat from before the engine: `abstat run` arguments
    legacy_seed: int | None = None
    caller: dict[str, Any] = field(default_factory=dict)  # what the caller kept (untrusted: check each value)

    def resumable(
        self, store: str, *, boot_timeout: float | None = None, approved: Sequence[str] | None = None
    ) -> ExperimentSpec:
        """The specification to resume with, writing to ``store`` (the one it was read from, whatever
        the stored specification says), with ``boot_timeout`` when given.  A store may have been imported
        or shared, so nothing read from it runs unseen: ``approved`` must be the lines of
        :func:`stored_commands` the caller has shown and checked, else :class:`UsageError` names them."""
        if self.spec is None:
            raise InputError(
                f"{{resume}} {self.experiment!r}: stored by an older abstat, as a command line; "
                f"resume it once with `abstat run --resume {self.experiment}`, which converts it",
                path=self.store,
                fields=["resume"],
            )
        shown = stored_commands(self.spec)
        if approved is None or list(approved) != shown:
            listed = "; ".join(line.strip() for line in shown[:MAX_LISTED])
            listed += f"; ... {len(shown) - MAX_LISTED} more" if len(shown) > MAX_LISTED else ""
            raise UsageError(
                f"resume {self.experiment!r} runs the stored commands ({listed}); check them, then "
                "pass them as approved= (abstat.stored_commands lists them)"
            )
        return with_resume_options(self.spec, boot_timeout=boot_timeout, store=store)


def stored_commands(spec: ExperimentSpec) -> list[str]:
    """What a resume of ``spec`` would run and where, one line each (the caller escapes them).

    Every field that becomes a command, a program's argument, a path followed or a change to the box
    is listed: the hosts, the shell, the commands, hooks, background, boots and checks, a parameter
    scan's values and each command as it runs with them put in, the metric sources that start a program
    or read the kernel (perf events, trace probes...), the CPUs and their isolation, ``rev``'s directory.
    The rest (runs, order, seed, timeout, labels, the analysis) runs nothing; tests/engine/
    test_resume_shows_every_field.py fails when a new field of the specification is neither."""
    where = (
        ", ".join(f"{h.label} ({h.destination})" for h in spec.lab.hosts) if spec.lab is not None else "this machine"
    )
    lines = [f"on {where}{' (in a shell)' if spec.shell else ''}:"]
    lines += [f"  -v {v.name}={v.command}" for v in spec.variants]
    lines += [f"  --{kind} {command}" for kind, command in spec.hooks.items().items()]
    lines += [f"  --background {command}" for command in spec.background]
    if spec.lab is not None:
        lines += [f"  --boot {variant}={command}" for variant, command in spec.lab.boot.items()]
        lines += [f"  --check {variant}={command}" for variant, command in spec.lab.check.items()]
    return lines + _box_lines(spec) + _grid_lines(spec)


def _quoted(value: str) -> str:
    return json.dumps(value, ensure_ascii=False)


def _box_lines(spec: ExperimentSpec) -> list[str]:
    """The metric sources (a regex as typed: it decides what is recorded, and the box matches it; not the JSON
    lines, which has no setting), the CPUs, and a directory git reads."""
    from abstat.box.runner.sources import JsonLines, RegexMetric

    lines = [
        f"  --metric {source.text}"
        if isinstance(source, RegexMetric)
        else f"  --metric-source {_quoted(source.kind)} {json.dumps(source.to_json(), ensure_ascii=False)}"
        for source in spec.metrics
        if not isinstance(source, JsonLines)
    ]
    if spec.cpus:
        lines.append(f"  --cpus {','.join(map(str, spec.cpus))}{' --isolate' if spec.isolate else ''}")
    if spec.rev is not None:
        lines.append(f"  --rev {_quoted(spec.rev)} (git reads this directory here)")
    return lines


def _grid_lines(spec: ExperimentSpec) -> list[str]:
    """A parameter scan: each parameter's values, then every command and hook as it runs at each point."""
    if not spec.parameters:
        return []
    from abstat.engine.grid import grid_points, schedule_entries

    lines = [f"  -L {name} {' '.join(map(_quoted, values))}" for name, values in spec.parameters.items()]
    lines.append("  as run, the values put in:")
    points, templates, shown = grid_points(spec), spec.hooks.items(), set()
    for entry in schedule_entries(spec):
        at = ", ".join(f"{name}={_quoted(value)}" for name, value in points[entry.point].items())
        lines.append(f"    at {at}: -v {entry.variant}={entry.command}")
        if entry.point not in shown:  # the hooks are the same for every variant of a point
            shown.add(entry.point)
            lines += [f"    at {at}: --{k} {text}" for k, text in entry.hooks.items() if text != templates[k]]
    return lines


def with_resume_options(spec: ExperimentSpec, *, boot_timeout: float | None, store: str) -> ExperimentSpec:
    """What a resume may change: the boot timeout; and the store is the one resumed from."""
    assert spec.lab is not None
    lab = spec.lab if boot_timeout is None else replace(spec.lab, boot_timeout=boot_timeout)
    return spec.replace(lab=lab, store=store)


def stored_experiment(store_path: str, experiment: str) -> StoredExperiment:
    """The last lab invocation's specification of ``experiment`` (the store is not created)."""
    from abstat.store import open_store

    with open_store(store_path, create=False) as store:
        if not store.has_experiment(experiment):
            raise InputError(f"{{resume}} {experiment!r}: no such experiment", path=store.path, fields=["resume"])
        stored = [i for i in store.invocations(experiment) if isinstance(i["settings"].get("lab"), dict)]
        if not stored:
            raise InputError(
                f"{{resume}} {experiment!r}: not run with {{host}}, nothing to resume",
                path=store.path,
                fields=["resume", "host"],
            )
        last = stored[-1]
        settings, display = last["settings"], store.display
    where = f"{{resume}} {experiment!r}: the stored specification (invocation {last['id']})"
    if "spec" in settings:
        try:
            spec = decode(settings["spec"])
        except SpecError as err:
            raise InputError(f"{where} is not valid: {err}", path=display, fields=["resume"]) from None
        if spec.lab is None:
            raise InputError(f"{where} is not valid: lab: not a lab experiment", path=display, fields=["resume"])
        caller = settings.get("caller")
        return StoredExperiment(
            experiment,
            display,
            last["id"],
            spec=spec.replace(experiment=experiment),
            caller=caller if isinstance(caller, dict) else {},
        )
    return _legacy(experiment, display, last["id"], settings["lab"])


def _legacy(experiment: str, display: str, invocation: int, lab: dict[str, Any]) -> StoredExperiment:
    argv, seed = lab.get("argv"), lab.get("seed")
    where = f"{{resume}} {experiment!r}: the stored options (invocation {invocation})"
    if (
        not isinstance(argv, list)
        or len(argv) > MAX_LEGACY_ARGS
        or not all(isinstance(a, str) and len(a) <= MAX_COMMAND_CHARS for a in argv)
    ):
        raise InputError(f"{where} are not a list of arguments", path=display, fields=["resume"])
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2**63:
        raise InputError(f"{where}: the seed {seed!r} is not a seed", path=display, fields=["resume"])
    return StoredExperiment(experiment, display, invocation, legacy_argv=tuple(argv), legacy_seed=seed)
