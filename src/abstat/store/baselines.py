"""Saved baselines: a frozen copy of an experiment, kept in the store under a name.

``save_baseline(store, NAME, EXPERIMENT)`` copies every invocation of EXPERIMENT (its
labels, machine record, runs and samples, with new identities) into the experiment
``baseline@NAME``, replacing what was saved under NAME before, in one transaction.
The copy is frozen: later runs added to EXPERIMENT do not change it, and a CI job that
appends to its experiment cannot move the baseline it is compared with.  Being an
experiment, a baseline is read, listed, exported and imported like any other; its
invocations keep their labels and machine records, so several CI jobs saved together stay
several invocations.  The schema is unchanged (one logical schema, one set of migrations).

``compare baseline:NAME[:VARIANT] EXPERIMENT:VARIANT`` reads it (:func:`baseline_ref`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from abstat.errors import InputError, UsageError
from abstat.store.schema import new_uid

PREFIX = "baseline@"
_NAME = re.compile(r"\A[A-Za-z0-9_.+-]+\Z")


def experiment_of(name: str) -> str:
    """The experiment that holds baseline ``name``."""
    if not _NAME.match(name):
        raise UsageError(f"baseline name {name!r}: use letters, digits and . _ + -")
    return PREFIX + name


@dataclass
class SavedBaseline:
    name: str
    experiment: str  # the experiment copied
    invocations: int
    runs: int
    variants: list[str]


def save_baseline(store_path: str, name: str, experiment: str) -> SavedBaseline:
    from abstat.store.db import open_store

    target = experiment_of(name)
    if experiment.startswith(PREFIX):
        raise UsageError(f"{experiment!r} is a saved baseline already; name the experiment to save")
    with open_store(store_path, create=False) as store:
        db = store.db
        with db.transaction():
            row = db.execute("SELECT id FROM experiments WHERE name = ?", (experiment,)).fetchone()
            if row is None:
                raise InputError(f"no experiment {experiment!r} in the store", path=store.display)
            source = int(row[0])
            _delete(db, target)
            target_id = store._ensure_experiment(target)
            invocations = db.execute(
                "SELECT id, started_at, ended_at, status, hostname, boot_id, machine, argv, settings, notes"
                " FROM invocations WHERE experiment_id = ? ORDER BY id",
                (source,),
            ).fetchall()
            runs = 0
            names: dict[str, int] = {}
            for inv in invocations:
                labels = dict(db.execute("SELECT key, value FROM labels WHERE invocation_id = ?", (inv[0],)).fetchall())
                new_inv = store._insert_invocation(
                    target_id,
                    {
                        "uid": new_uid(),
                        "started_at": inv[1],
                        "ended_at": inv[2],
                        "status": inv[3],
                        "hostname": inv[4],
                        "boot_id": inv[5],
                        "machine": inv[6],
                        "argv": inv[7],
                        "settings": inv[8],
                        "notes": inv[9],
                        "labels": labels,
                    },
                )
                for run in db.execute(
                    "SELECT r.id, v.name, r.command, r.iteration, r.position, r.status, r.exit_code, r.started_at,"
                    " r.wall, r.notes FROM runs r JOIN variants v ON v.id = r.variant_id"
                    " WHERE r.invocation_id = ? ORDER BY r.id",
                    (inv[0],),
                ).fetchall():
                    if run[1] not in names:
                        names[run[1]] = store._ensure_variant(target_id, run[1])
                    samples = db.execute(
                        "SELECT metric, idx, value, unit FROM samples WHERE run_id = ? ORDER BY metric, idx", (run[0],)
                    ).fetchall()
                    store._insert_run(
                        new_inv,
                        names[run[1]],
                        {
                            "uid": new_uid(),
                            "command": run[2],
                            "iteration": run[3],
                            "position": run[4],
                            "status": run[5],
                            "exit_code": run[6],
                            "started_at": run[7],
                            "wall": run[8],
                            "notes": run[9],
                        },
                        [tuple(s) for s in samples],
                    )
                    runs += 1
    if not runs:
        raise InputError(f"experiment {experiment!r} holds no runs to save", path=store_path)
    return SavedBaseline(name, experiment, len(invocations), runs, sorted(names))


def _delete(db: Any, experiment: str) -> None:
    row = db.execute("SELECT id FROM experiments WHERE name = ?", (experiment,)).fetchone()
    if row is None:
        return
    eid = int(row[0])
    invs = "SELECT id FROM invocations WHERE experiment_id = ?"
    db.execute(f"DELETE FROM samples WHERE run_id IN (SELECT id FROM runs WHERE invocation_id IN ({invs}))", (eid,))
    db.execute(f"DELETE FROM runs WHERE invocation_id IN ({invs})", (eid,))
    db.execute(f"DELETE FROM labels WHERE invocation_id IN ({invs})", (eid,))
    db.execute("DELETE FROM invocations WHERE experiment_id = ?", (eid,))
    db.execute("DELETE FROM variants WHERE experiment_id = ?", (eid,))
    db.execute("DELETE FROM experiments WHERE id = ?", (eid,))


def list_baselines(store_path: str) -> list[tuple[str, str, int]]:
    """(name, created_at, runs) of every saved baseline."""
    from abstat.store.db import open_store

    with open_store(store_path, create=False, read_only=True) as store:
        rows = store.db.execute(
            "SELECT e.name, e.created_at, COUNT(r.id) FROM experiments e JOIN invocations i ON i.experiment_id = e.id"
            " LEFT JOIN runs r ON r.invocation_id = i.id WHERE e.name LIKE ? GROUP BY e.name, e.created_at"
            " ORDER BY e.name",
            (PREFIX + "%",),
        ).fetchall()
    # LIKE ignores case: BASELINE@X is not a baseline compare can find
    return [(name[len(PREFIX) :], created, int(count)) for name, created, count in rows if name.startswith(PREFIX)]


def baseline_ref(spec: str, store_path: str) -> str | None:
    """``baseline:NAME[:VARIANT]`` -> ``baseline@NAME:VARIANT`` (the variant named, else the
    baseline's only one); None when ``spec`` is not such a reference."""
    if not spec.startswith("baseline:"):
        return None
    name, _, variant = spec[len("baseline:") :].partition(":")
    experiment = experiment_of(name)
    from abstat.store.db import open_store

    try:
        with open_store(store_path, create=False, read_only=True) as store:
            known = store.variant_names(experiment) if store.has_experiment(experiment) else None
    except InputError:
        known = None
    if known is None:
        raise InputError(f"no saved baseline {name!r} (save one: abstat baseline save {name} EXPERIMENT)", path=spec)
    if not variant:
        if len(known) != 1:
            raise UsageError(
                f"{spec}: baseline {name!r} holds variants {', '.join(known)}; name one: baseline:{name}:VARIANT"
            )
        variant = known[0]
    elif variant not in known:
        raise InputError(f"baseline {name!r} has no variant {variant!r} (has: {', '.join(known)})", path=spec)
    return f"{experiment}:{variant}"


def machine_note(store_path: str, baseline_ref_: str, other_refs: list[str]) -> str | None:
    """A note when the machine records of the baseline's runs and the candidates' differ
    (:func:`abstat.box.machine.differing_fields_between`), else None."""
    from abstat.box.machine import differing_fields_between
    from abstat.store.db import open_store

    def records(store: Any, ref: str) -> list[dict[str, Any]]:
        experiment, _, variant = ref.rpartition(":")
        return store.machine_records_by_variant(experiment).get(variant, [])

    with open_store(store_path, create=False, read_only=True) as store:
        base = records(store, baseline_ref_)
        others = [r for ref in other_refs for r in records(store, ref)]
    fields = differing_fields_between(base, others)
    if not fields:
        return None
    return (
        f"the baseline {baseline_ref_[len(PREFIX) :]} was measured on another machine configuration than "
        f"the candidate: {', '.join(fields)} differ"
    )
