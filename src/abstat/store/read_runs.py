"""Reading the store run by run: what each run ended with (exit code, wall
time), the failed runs, the notes runs left; and the decoding every reader
shares: a value the store cannot decode is read as missing and named in
``damage``, never raised."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from sys import intern
from typing import Any

from abstat.readers.bulk import drained, gc_paused  # noqa: F401 -- the store's bulk reads use them


class RunReader:
    db: Any
    damage: list[str]

    def _load(self, text: Any, default: Any, what: str) -> Any:
        """A JSON column's value; ``default`` (and a damage note) when it is not
        JSON of the expected kind."""
        if text is None:
            return default
        try:
            value = json.loads(text)
        except (ValueError, TypeError, RecursionError):  # RecursionError: nested too deeply to decode
            self._damaged(f"{what} is not valid JSON")
            return default
        if not isinstance(value, type(default)):
            self._damaged(f"{what} is not a JSON {type(default).__name__}")
            return default
        return value

    def _damaged(self, note: str) -> None:
        if note not in self.damage:
            self.damage.append(note)

    def _runs_of(self, experiment: str, invocations: Sequence[int] | None, params: list[Any]) -> str:
        """``FROM ... WHERE ...`` over the runs ``r`` (and their variants ``v``) of ``experiment``,
        only those of ``invocations`` when given.  The invocations then drive the query (their
        index): joined through the experiment, SQLite would walk the variant index over every run
        of the experiment to keep the few of 20 invocations of 10^4."""
        if invocations is None:
            params.append(experiment)
            return (
                " FROM runs r JOIN variants v ON v.id = r.variant_id JOIN experiments e ON e.id = v.experiment_id"
                " WHERE e.name = ?"
            )
        return and_in(
            " FROM runs r JOIN variants v ON v.id = r.variant_id WHERE 1 = 1",
            params,
            "r.invocation_id",
            self._own_invocations(experiment, invocations),
            self.db,
        )

    def _own_invocations(self, experiment: str, invocations: Sequence[int]) -> list[int]:
        """Those of ``invocations`` that are ``experiment``'s, in their order."""
        params: list[Any] = [experiment]
        sql = and_in(
            "SELECT i.id FROM invocations i JOIN experiments e ON e.id = i.experiment_id WHERE e.name = ?",
            params,
            "i.id",
            list(invocations),
            self.db,
        )
        own = {row[0] for row in self.db.execute(sql, params)}
        return [invocation for invocation in invocations if invocation in own]

    def run_counts(self, invocations: Sequence[int]) -> dict[int, int]:
        """Invocation id -> how many runs it stored (failed ones too)."""
        params: list[Any] = []
        sql = and_in(
            "SELECT invocation_id, COUNT(*) FROM runs WHERE 1 = 1", params, "invocation_id", list(invocations), self.db
        )
        return dict(self.db.execute(sql + " GROUP BY invocation_id", params).fetchall())

    def failed_runs(self, experiment: str) -> list[dict[str, Any]]:
        rows = self.db.execute(
            "SELECT r.invocation_id, v.name, r.iteration, r.status, r.exit_code, r.notes, r.id FROM runs r"
            " JOIN variants v ON v.id = r.variant_id JOIN experiments e ON e.id = v.experiment_id"
            " WHERE e.name = ? AND r.status != 'ok' ORDER BY r.id",
            (experiment,),
        ).fetchall()
        return [
            {
                "invocation": r[0],
                "variant": r[1],
                "run": _plus_one(self._optional(r[2], int, f"iteration of run {r[6]}")),
                "status": r[3],
                "exit_code": self._optional(r[4], int, f"exit code of run {r[6]}"),
                "notes": self._load(r[5], [], f"notes of run {r[6]}"),
            }
            for r in rows
        ]

    def run_outcomes(self, experiment: str) -> list[dict[str, Any]]:
        """Every run of ``experiment``, failed ones too, in the order they ran
        (invocation, then position): ``{"run", "invocation", "variant",
        "iteration", "position", "status", "exit_code", "wall"}``.

        ``exit_code`` is the process's exit status, negative for a process
        killed by a signal (``-9``), None when it has none (a timeout, a
        command that could not start); ``wall`` is in seconds (None if not
        recorded).  A value that is not a number reads as None, with a
        damage note."""
        rows = self.db.execute(
            "SELECT r.id, r.invocation_id, v.name, r.iteration, r.position, r.status, r.exit_code, r.wall"
            " FROM runs r JOIN variants v ON v.id = r.variant_id JOIN experiments e ON e.id = v.experiment_id"
            " WHERE e.name = ? ORDER BY r.invocation_id, r.position, r.id",
            (experiment,),
        ).fetchall()
        return [
            {
                "run": r[0],
                "invocation": r[1],
                "variant": r[2],
                "iteration": _plus_one(self._optional(r[3], int, f"iteration of run {r[0]}")),
                "position": self._optional(r[4], int, f"position of run {r[0]}"),
                "status": r[5],
                "exit_code": self._optional(r[6], int, f"exit code of run {r[0]}"),
                "wall": self._optional(r[7], float, f"wall time of run {r[0]}"),
            }
            for r in rows
        ]

    def variant_commands(self, experiment: str, invocations: Sequence[int] | None = None) -> dict[str, list[str]]:
        """Variant (in the order they were declared) -> the distinct commands of its
        successful runs (first run first), only those of ``invocations`` when given."""
        params: list[Any] = []
        sql = "SELECT v.id, v.name, r.command, MIN(r.id)" + self._runs_of(experiment, invocations, params)
        return commands_of(
            self.db.execute(sql + " AND r.status = 'ok' GROUP BY v.id, v.name, r.command", params).fetchall()
        )

    def command_rows(self, experiment: str) -> list[tuple[int, int, str, str, int]]:
        """(invocation, variant id, variant, command, its first run) for the successful runs of
        ``experiment``: what :func:`commands_of` answers ``variant_commands`` from, for any
        set of invocations, without another query."""
        return self.db.execute(
            "SELECT r.invocation_id, v.id, v.name, r.command, MIN(r.id) FROM runs r JOIN variants v"
            " ON v.id = r.variant_id JOIN experiments e ON e.id = v.experiment_id WHERE e.name = ? AND r.status = 'ok'"
            " GROUP BY r.invocation_id, v.id, v.name, r.command",
            (experiment,),
        ).fetchall()

    def _optional(self, value: Any, kind: type, what: str) -> Any:
        """``value`` as ``kind`` (int or float); None (and a damage note) when it is none."""
        if value is None or (isinstance(value, kind) and not isinstance(value, bool)):
            return value
        try:
            number = float(value)
            if kind is int and not number.is_integer():
                raise ValueError
            return kind(number)
        except (TypeError, ValueError, OverflowError):
            self._damaged(f"{what} is not a number ({value!r:.40})")
            return None

    def run_notes(
        self, experiment: str, invocations: Sequence[int] | None = None, variants: Sequence[str] | None = None
    ) -> list[dict[str, Any]]:
        """Distinct notes of the experiment's successful runs (``{"note", "runs"}``, first seen first),
        only those of ``invocations`` and of ``variants`` when given.  Runs mostly leave the same
        notes: each distinct list of notes is read and decoded once, with its count."""
        if variants is not None and not variants:
            return []
        params: list[Any] = []
        sql = "SELECT r.notes, MIN(r.id), COUNT(*)" + self._runs_of(experiment, invocations, params)
        sql = and_in(sql + " AND r.status = 'ok' AND r.notes IS NOT NULL", params, "v.name", variants)
        counts: dict[str, int] = {}
        for notes, run_id, runs in self.db.execute(sql + " GROUP BY r.notes ORDER BY 2", params).fetchall():
            for note in self._load(notes, [], f"notes of run {run_id}"):
                counts[note] = counts.get(note, 0) + runs
        return [{"note": note, "runs": count} for note, count in counts.items()]


RUN_ORDER = " ORDER BY r.invocation_id, r.position, s.run_id, s.metric, s.idx"  # samples as measured
# Samples in run order (runs are stored as they end: run id order is the order they were measured)
# along the index that chose the runs, so that the database need not sort: by variant (runs_by_variant),
# by invocation (runs_by_invocation), or every run.  Readers gather each run group's values in Python.
BY_VARIANT = " ORDER BY r.variant_id, r.id, s.metric, s.idx"
BY_INVOCATION = " ORDER BY r.invocation_id, r.id, s.metric, s.idx"
BY_RUN = " ORDER BY r.id, s.metric, s.idx"


def commands_of(rows: Sequence[tuple[Any, ...]], invocations: Sequence[int] | None = None) -> dict[str, list[str]]:
    """``variant_commands`` from rows ``(variant id, variant, command, first run)``, or from
    :meth:`RunReader.command_rows` (with the invocation first) narrowed to ``invocations``."""
    if rows and len(rows[0]) == 5:
        return CommandRows(rows).variant_commands("", invocations)
    return _by_variant(rows)


class CommandRows:
    """``variant_commands`` of any set of one experiment's invocations, answered from the rows
    of :meth:`RunReader.command_rows` indexed once by invocation: each question reads only its
    invocations' rows (a history experiment asks once per revision and metric: scanning every
    row each time made a report of 10^4 revisions quadratic)."""

    def __init__(self, rows: Sequence[tuple[Any, ...]]) -> None:
        self.rows = rows
        self.by_invocation: dict[Any, list[tuple[Any, ...]]] = {}
        for row in rows:
            self.by_invocation.setdefault(row[0], []).append(row)

    def variant_commands(self, experiment: str, invocations: Sequence[int] | None = None) -> dict[str, list[str]]:
        if invocations is None:
            chosen: Iterable[tuple[Any, ...]] = self.rows
        else:
            chosen = (
                row for invocation in dict.fromkeys(invocations) for row in self.by_invocation.get(invocation, ())
            )
        first: dict[tuple[int, str, str], int] = {}
        for _invocation, variant_id, variant, command, run_id in chosen:
            key = (variant_id, variant, command)
            first[key] = min(first.get(key, run_id), run_id)
        return _by_variant([(*key, run_id) for key, run_id in first.items()])


def _by_variant(rows: Sequence[tuple[Any, ...]]) -> dict[str, list[str]]:
    """Rows ``(variant id, variant, command, first run)`` -> variant -> its commands, first run first."""
    commands: dict[str, list[str]] = {}
    for _, variant, command, _first in sorted(rows, key=lambda row: (row[0], row[3])):
        commands.setdefault(variant, []).append(command)
    return commands


def shared(new: Any, old: Any, depth: int = 3) -> Any:
    """``new``, with every part equal to ``old``'s counterpart replaced by that part (dicts and
    lists, ``depth`` levels down): consecutive machine records differ in a few fields (time,
    load), so 10^5 invocations' records cost little more than one."""
    if new == old and type(new) is type(old):
        return old
    if depth and type(new) is dict and type(old) is dict:  # keys interned: each decode makes its own
        return {
            intern(key) if type(key) is str else key: shared(value, old.get(key), depth - 1)
            for key, value in new.items()
        }
    return new


def and_in(sql: str, params: list[Any], column: str, values: Sequence[Any] | None, db: Any = None) -> str:
    """``sql`` narrowed to rows whose ``column`` is one of ``values`` (unchanged for None);
    with the connection ``db``, any number of values (one parameter for a long list)."""
    if values is None:
        return sql
    if not values:
        return sql + " AND 1 = 0"
    if db is not None and len(values) > 500:
        condition, extra = db.within(column, values)
        params.extend(extra)
        return sql + f" AND {condition}"
    params.extend(values)
    return sql + f" AND {column} IN ({','.join('?' * len(values))})"


def _plus_one(iteration: int | None) -> int | None:
    """A stored 0-based iteration as shown (1-based); None stays None (a damaged row, named)."""
    return None if iteration is None else iteration + 1
