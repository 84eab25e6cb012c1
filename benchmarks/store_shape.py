"""Build a SQLite store shaped as ``abstat run`` writes it, at any size.

One real ``abstat run -n 2 -v a=true -v b=true`` gives the template: its
machine record (~4.2 KB with the doctor's findings), command line,
settings, run notes, metrics and units.  The store then gets
``runs / 100`` invocations of one experiment (``nightly``), each with
100 runs (``a`` and ``b`` interleaved) and the template's five metrics per
run, every invocation with its own machine record: the collection time,
load average and the doctor's load evidence change every invocation, the
boot id every 10 invocations, as on a box that runs a nightly job.  The
rows go in with ``executemany`` in one transaction, so 10^6 runs take about
a minute instead of the hours one commit per run would take.

    python benchmarks/store_shape.py OUT.db --runs 100000

``build_history`` shapes a history experiment instead: one invocation per revision
(``--label rev=...`` and ``commit_time``), each of ``runs_per_revision`` runs of one
variant, the same five metrics and a machine record of its own, as a nightly
``abstat run --rev HEAD`` job writes it (``--history`` on the command line).

Used by ``store_scale.py``, ``run_append.py``, ``store_import.py`` and ``publish_speed.py``.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sqlite3
import subprocess
import sys
import tempfile
import time
import uuid

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.join(HERE, "..", "src")
EXPERIMENT = "nightly"
RUNS_PER_INVOCATION = 100
VARIANTS = ("a", "b")


def child_env(tmp: str | None = None) -> dict[str, str]:
    env = dict(os.environ, PYTHONPATH=SRC)
    if tmp is not None:
        env["PYTHONPYCACHEPREFIX"] = os.path.join(tmp, "pycache")
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def workspace(prefix: str, keep: str | None) -> tuple[str, str, dict[str, str]]:
    """(a temporary directory, the directory to keep built stores in, the children's environment)."""
    work = tempfile.mkdtemp(prefix=prefix)
    keep = keep or work
    os.makedirs(keep, exist_ok=True)
    return work, keep, child_env(work)


def verdict(failed: list[str]) -> int:
    """Print what missed its target; the exit status."""
    for what in failed:
        print(f"MISSED TARGET: {what}")
    return 1 if failed else 0


def template() -> dict:
    """The rows one real ``abstat run`` writes: invocation, runs and samples."""
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "t.db")
        subprocess.run(
            [
                sys.executable,
                "-m",
                "abstat",
                "run",
                "--store",
                path,
                "--experiment",
                EXPERIMENT,
                "-n",
                "2",
                "-v",
                "a=true",
                "-v",
                "b=true",
            ],
            env=child_env(),
            check=True,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        db = sqlite3.connect(path)
        machine, argv, settings = db.execute("SELECT machine, argv, settings FROM invocations").fetchone()
        note = db.execute("SELECT notes FROM runs WHERE notes IS NOT NULL").fetchone()
        metrics = db.execute("SELECT DISTINCT metric, unit FROM samples ORDER BY metric").fetchall()
        db.close()
    return {
        "machine": json.loads(machine),
        "argv": argv,
        "settings": settings,
        "note": json.loads(note[0])[0] if note else None,
        "metrics": metrics,
    }


def _machine(base: dict, index: int, rng: random.Random) -> str:
    record = json.loads(json.dumps(base))
    load = [round(rng.uniform(0.2, 9.0), 2) for _ in range(3)]
    record["collected_at"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(1.7e9 + 86400 * index))
    record["loadavg"] = load
    record["boot_id"] = str(uuid.UUID(int=index // 10 + 1))
    doctor = record.get("doctor")
    if isinstance(doctor, dict) and isinstance(doctor.get("load"), dict):
        doctor["load"]["evidence"] = f"load average {load[0]} {load[1]} {load[2]} on 2 CPUs"
    return json.dumps(record, sort_keys=True)


def build(path: str, runs: int, shape: dict | None = None, *, experiment: str = EXPERIMENT, seed: int = 1) -> None:
    """Write ``runs`` runs (a multiple of 100) into a new store at ``path``."""
    sys.path.insert(0, SRC)
    from abstat.store import open_store

    shape = shape or template()
    open_store(path).close()  # the schema, by abstat itself
    rng = random.Random(seed)
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("PRAGMA synchronous = OFF")
    db.execute("BEGIN")
    db.execute("INSERT INTO experiments (name, created_at) VALUES (?, ?)", (experiment, "2024-01-01T00:00:00Z"))
    experiment_id = db.execute("SELECT id FROM experiments WHERE name = ?", (experiment,)).fetchone()[0]
    variant_ids = {}
    for name in VARIANTS:
        variant_ids[name] = db.execute(
            "INSERT INTO variants (experiment_id, name) VALUES (?, ?) RETURNING id", (experiment_id, name)
        ).fetchone()[0]
    run_id = db.execute("SELECT COALESCE(MAX(id), 0) FROM runs").fetchone()[0]  # another experiment may be there
    for index in range(max(1, runs // RUNS_PER_INVOCATION)):
        started = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(1.7e9 + 86400 * index))
        invocation_id = db.execute(
            "INSERT INTO invocations (uid, experiment_id, started_at, ended_at, status, hostname, boot_id, machine,"
            " argv, settings, notes) VALUES (?, ?, ?, ?, 'complete', ?, ?, ?, ?, ?, NULL) RETURNING id",
            (
                str(uuid.UUID(int=rng.getrandbits(128))),
                experiment_id,
                started,
                started,
                shape["machine"].get("hostname"),
                str(uuid.UUID(int=index // 10 + 1)),
                _machine(shape["machine"], index, rng),
                shape["argv"],
                shape["settings"],
            ),
        ).fetchone()[0]
        run_rows, sample_rows = [], []
        for position in range(RUNS_PER_INVOCATION):
            run_id += 1
            variant = VARIANTS[position % 2]
            wall = rng.lognormvariate(-6.9 + (0.01 if variant == "b" else 0.0), 0.1)
            note = None
            if shape["note"]:
                note = json.dumps([shape["note"].replace("25044", str(25000 + rng.randrange(64)))])
            run_rows.append(
                (
                    run_id,
                    str(uuid.UUID(int=rng.getrandbits(128))),
                    invocation_id,
                    variant_ids[variant],
                    f"./bench-{variant}",
                    position // 2,
                    position,
                    1.7e9 + run_id,
                    wall,
                    note,
                )
            )
            for metric, unit in shape["metrics"]:
                value = {"wall": wall, "user": wall * 0.8, "sys": wall * 0.1}.get(metric, float(rng.randrange(1, 4)))
                sample_rows.append((run_id, metric, 0, value, unit))
        db.executemany(
            "INSERT INTO runs (id, uid, invocation_id, variant_id, command, iteration, position, status,"
            " exit_code, started_at, wall, notes) VALUES (?, ?, ?, ?, ?, ?, ?, 'ok', 0, ?, ?, ?)",
            run_rows,
        )
        db.executemany("INSERT INTO samples (run_id, metric, idx, value, unit) VALUES (?, ?, ?, ?, ?)", sample_rows)
    db.execute("COMMIT")
    db.close()


HISTORY_RUNS = 5  # runs per revision of a history experiment


def build_history(
    path: str,
    revisions: int,
    shape: dict | None = None,
    *,
    experiment: str = EXPERIMENT,
    runs_per_revision: int = HISTORY_RUNS,
    seed: int = 1,
) -> None:
    """Write a history experiment of ``revisions`` invocations (one per revision, labelled
    ``rev`` and ``commit_time``) of ``runs_per_revision`` runs of one variant into ``path``;
    the metric steps up by 2% at a third of the history and back at two thirds."""
    sys.path.insert(0, SRC)
    from abstat.store import open_store

    shape = shape or template()
    open_store(path).close()
    rng = random.Random(seed)
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("PRAGMA synchronous = OFF")
    db.execute("BEGIN")
    db.execute("INSERT INTO experiments (name, created_at) VALUES (?, ?)", (experiment, "2024-01-01T00:00:00Z"))
    experiment_id = db.execute("SELECT id FROM experiments WHERE name = ?", (experiment,)).fetchone()[0]
    variant_id = db.execute(
        "INSERT INTO variants (experiment_id, name) VALUES (?, 'a') RETURNING id", (experiment_id,)
    ).fetchone()[0]
    run_id = db.execute("SELECT COALESCE(MAX(id), 0) FROM runs").fetchone()[0]
    invocation_id = db.execute("SELECT COALESCE(MAX(id), 0) FROM invocations").fetchone()[0]
    invocation_rows, label_rows, run_rows, sample_rows = [], [], [], []
    for index in range(revisions):
        invocation_id += 1
        started = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(1.7e9 + 3600 * index))
        invocation_rows.append(
            (
                invocation_id,
                str(uuid.UUID(int=rng.getrandbits(128))),
                experiment_id,
                started,
                started,
                shape["machine"].get("hostname"),
                str(uuid.UUID(int=index // 10 + 1)),
                _machine(shape["machine"], index, rng),
                shape["argv"],
                shape["settings"],
            )
        )
        label_rows.append((invocation_id, "rev", f"{rng.getrandbits(160):040x}"))
        label_rows.append((invocation_id, "commit_time", str(1.7e9 + 3600 * index)))
        step = 1.02 if revisions // 3 <= index < 2 * revisions // 3 else 1.0
        for position in range(runs_per_revision):
            run_id += 1
            wall = rng.lognormvariate(-6.9, 0.05) * step
            run_rows.append(
                (
                    run_id,
                    str(uuid.UUID(int=rng.getrandbits(128))),
                    invocation_id,
                    variant_id,
                    "./bench",
                    position,
                    position,
                    1.7e9 + run_id,
                    wall,
                    None,
                )
            )
            for metric, unit in shape["metrics"]:
                value = {"wall": wall, "user": wall * 0.8, "sys": wall * 0.1}.get(metric, float(rng.randrange(1, 4)))
                sample_rows.append((run_id, metric, 0, value, unit))
        if len(sample_rows) > 100_000 or index == revisions - 1:
            db.executemany(
                "INSERT INTO invocations (id, uid, experiment_id, started_at, ended_at, status, hostname,"
                " boot_id, machine, argv, settings, notes) VALUES (?, ?, ?, ?, ?, 'complete', ?, ?, ?, ?,"
                " ?, NULL)",
                invocation_rows,
            )
            db.executemany("INSERT INTO labels (invocation_id, key, value) VALUES (?, ?, ?)", label_rows)
            db.executemany(
                "INSERT INTO runs (id, uid, invocation_id, variant_id, command, iteration, position,"
                " status, exit_code, started_at, wall, notes) VALUES (?, ?, ?, ?, ?, ?, ?, 'ok', 0, ?, ?,"
                " ?)",
                run_rows,
            )
            db.executemany("INSERT INTO samples (run_id, metric, idx, value, unit) VALUES (?, ?, ?, ?, ?)", sample_rows)
            invocation_rows, label_rows, run_rows, sample_rows = [], [], [], []
    db.execute("COMMIT")
    db.close()


def cached(directory: str, runs: int, shape: dict | None = None, *, history: bool = False) -> str:
    """A store of ``runs`` runs in ``directory`` (with ``history``, of ``runs`` revisions shaped
    by :func:`build_history`), built once and reused."""
    path = os.path.join(directory, f"{'history' if history else 'store'}-{runs}.db")
    if not os.path.exists(path):
        partial = path + ".partial"
        for leftover in (partial, partial + "-wal", partial + "-shm"):
            if os.path.exists(leftover):
                os.unlink(leftover)
        if history:
            build_history(partial, runs, shape)
        else:
            build(partial, runs, shape)
        os.replace(partial, path)
    return path


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("path")
    parser.add_argument("--runs", type=int, default=10_000)
    parser.add_argument("--history", action="store_true", help="--runs revisions of a history experiment")
    args = parser.parse_args()
    start = time.perf_counter()
    (build_history if args.history else build)(args.path, args.runs)
    what = "revisions" if args.history else "runs"
    print(f"{args.runs} {what} in {time.perf_counter() - start:.1f} s: {os.path.getsize(args.path) / 2**20:.0f} MiB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
