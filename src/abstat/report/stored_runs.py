"""What the store knows of a stored set's runs beyond its samples, for the exports.

- ``extra["command"]``: the command the variant ran, when it ran one (the
  same in every invocation).
- ``notes``: the ``command-differs`` warning when the set's runs ran
  different commands (:mod:`abstat.comparison.commands`).
- ``extra["exit_codes"]``, with ``extra["all_values"]`` beside it: one exit
  code per exported value, in the order the runs ran, as hyperfine's
  ``exit_codes`` (a process killed by signal N is ``128 + N``, as hyperfine
  writes it; a successful run's is 0).  For the ``wall`` metric the runs that failed with an exit
  status are there too, with the wall time the store kept for them, as
  ``hyperfine -i`` includes failing runs; their samples of other metrics
  were never stored, so other metrics hold the successful runs only.  A run
  with no exit status (timed out, or could not start) has no counterpart in
  hyperfine and is left out.  Written only when every successful run gave
  exactly one value of the set's metric, so codes and values line up.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from abstat.report.notes import KINDS
from abstat.readers.sampleset import SampleSet

_SET_KEYS = ("experiment", "variant", "metric")


def hyperfine_exit_code(code: int) -> int:
    """A stored exit status as hyperfine writes it: ``-N`` (killed by signal N) -> ``128 + N``."""
    return 128 - code if code < 0 else code


def _configuration(labels: dict[str, Any]) -> dict[str, str]:
    """The labels that tell an experiment's configurations apart (as ``Store.sample_sets`` makes them)."""
    return {str(k): str(v) for k, v in labels.items() if k not in _SET_KEYS}


def add_run_details(store_path: str, pairs: Sequence[tuple[Any, SampleSet]], *, exit_codes: bool = False) -> None:
    """Fill ``extra`` (see the module) of each ``(stored set, set)`` pair;
    the exit codes only when asked (they read every run).  Each experiment's
    runs are read once for all its sets (not once per set)."""
    from abstat.comparison.commands import command_warnings
    from abstat.store import open_store
    from abstat.store.read_runs import CommandRows

    experiments = list(dict.fromkeys(stored.labels.get("experiment") for stored, _ in pairs))
    with open_store(store_path, create=False) as store:
        for experiment in experiments:
            if not experiment:
                continue
            rows = store.command_rows(experiment)
            commands: dict[str, set[str]] = {}
            ran: dict[str, set[str]] = {}  # every command, none and "" too: a set of one cannot differ
            for _invocation, _variant_id, variant, command, _first in rows:
                ran.setdefault(variant, set()).add(command)
                if command:
                    commands.setdefault(variant, set()).add(command)
            answers = CommandRows(rows)
            shared: dict[str, dict[str, Any]] = {}  # command -> the ``extra`` the sets that ran it share
            configurations = store.invocation_labels(experiment) if exit_codes else {}
            outcomes = _by_configuration(store.run_outcomes(experiment), configurations) if exit_codes else None
            for stored, sample_set in pairs:
                if stored.labels.get("experiment") != experiment:
                    continue
                found = commands.get(stored.labels.get("variant", ""))
                if found and len(found) == 1:
                    _add_command(sample_set, next(iter(found)), shared)
                if len(ran.get(stored.labels.get("variant", ""), ())) < 2:
                    mixed = {}
                else:
                    mixed = command_warnings(answers, experiment, stored.invocations, name=f"{experiment}:{{variant}}")
                if stored.labels.get("variant") in mixed:
                    sample_set.notes.append(f"{mixed[stored.labels['variant']].message}; {KINDS['command-differs'][1]}")
                if outcomes is not None:
                    key = (stored.labels.get("variant"), _key(_configuration(stored.labels)))
                    _add_exit_codes(stored, sample_set, outcomes.get(key, []))


def _key(configuration: dict[str, str] | None) -> tuple[tuple[str, str], ...] | None:
    return None if configuration is None else tuple(sorted(configuration.items()))


def _by_configuration(
    outcomes: Sequence[dict[str, Any]], configurations: dict[int, dict[str, str]]
) -> dict[tuple[Any, Any], list[dict[str, Any]]]:
    """The runs of each (variant, configuration), in the store's order: grouped once for all the sets
    (a scan per set made ``--format hyperfine`` quadratic on history experiments)."""
    keys: dict[int, Any] = {}
    grouped: dict[tuple[Any, Any], list[dict[str, Any]]] = {}
    for outcome in outcomes:
        invocation = outcome["invocation"]
        if invocation not in keys:
            keys[invocation] = _key(configurations.get(invocation))
        grouped.setdefault((outcome["variant"], keys[invocation]), []).append(outcome)
    return grouped


def _add_exit_codes(stored: Any, sample_set: SampleSet, runs: Sequence[dict[str, Any]]) -> None:
    groups = dict(zip(stored.invocations, stored.runs))
    ok_counts: dict[int, int] = {}
    for outcome in runs:
        if outcome["status"] == "ok":
            ok_counts[outcome["invocation"]] = ok_counts.get(outcome["invocation"], 0) + 1
    if ok_counts != {invocation: len(values) for invocation, values in groups.items()}:
        return  # not one value per successful run: codes and values would not line up
    with_failed = stored.labels.get("metric") == "wall" and stored.unit in (None, "s")  # the runs' wall column
    unread = {invocation: iter(values) for invocation, values in groups.items()}
    values: list[float] = []
    codes: list[int] = []
    for outcome in runs:
        code, wall = outcome["exit_code"], outcome["wall"]
        if outcome["status"] == "ok":
            values.append(next(unread[outcome["invocation"]]))
            codes.append(0 if code is None else hyperfine_exit_code(code))
        elif with_failed and code is not None and wall is not None:
            values.append(wall)
            codes.append(hyperfine_exit_code(code))
    sample_set.extra = {**sample_set.extra, "exit_codes": codes, "all_values": values}  # its own (see _add_command)


def _add_command(sample_set: SampleSet, command: str, shared: dict[str, dict[str, Any]]) -> None:
    """``extra["command"]`` of a set; a set whose ``extra`` is empty (every stored set) is given the dict
    ``shared`` holds for ``command``, one object for the sets that ran it (a history experiment's 10^5
    revisions x metrics sets each held their own: 184 bytes a set).  Nothing changes a stored set's
    ``extra`` in place: the exit codes are added to a copy (:func:`_add_exit_codes`)."""
    if sample_set.extra:
        sample_set.extra = {**sample_set.extra, "command": command}
    else:
        sample_set.extra = shared.setdefault(command, {"command": command})


def add_machines(
    store_path: str, sets: Sequence[SampleSet], where: dict[str, set[str]] | None, metrics: Sequence[str] | None
) -> None:
    """Read with ``machines=False`` (:func:`abstat.report.inputs.load_store`), ``sets`` get the machine
    records a report of them shows: each host's on the first set the report chooses (``where``,
    ``metrics``: :func:`abstat.report.layout.filter_sets`) that has one, the record the report's
    machines table takes (:func:`abstat.report.matrix.build_report`); a set without a ``host`` label
    (named by its record) gets its own.  The other sets keep ``{}``: a history experiment's 10^5
    revisions' records were a third of its report's memory."""
    from abstat.report.layout import filter_sets
    from abstat.store import open_store

    unread = [s for s in filter_sets(sets, where, metrics) if s.invocations and not s.machine]
    done: set[str] = set()
    with open_store(store_path, create=False) as store:
        while unread:
            asked, wanted = _next_asked(unread, done)
            records = store.machine_records([s.invocations[-1] for s in asked])
            for sample_set in asked:
                sample_set.machine = records.get(sample_set.invocations[-1], {})
            done.update(host for host, sample_set in wanted.items() if sample_set.machine)
            seen = {id(s) for s in asked}
            unread = [s for s in unread if id(s) not in seen and s.labels.get("host") not in done]


def _next_asked(unread: list[SampleSet], done: set[str]) -> tuple[list[SampleSet], dict[str, SampleSet]]:
    """(the sets whose records to read next: those without a host label, and each host's first set
    while its record is not found; host -> that set)."""
    wanted: dict[str, SampleSet] = {}
    nameless = []
    for sample_set in unread:
        host = sample_set.labels.get("host")
        if not host:
            nameless.append(sample_set)
        elif host not in done:
            wanted.setdefault(host, sample_set)
    return nameless + list(wanted.values()), wanted
