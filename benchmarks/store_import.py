"""``abstat import`` speed: SQLite to SQLite and SQLite to PostgreSQL, in runs per second.

The source is a store shaped as ``abstat run`` writes it (``store_shape.py``:
invocations of 100 runs, five metrics per run, a ~4.2 KB machine record per
invocation).  In the same run the script times, in fresh interpreters:

    abstat import SRC --store NEW.db                 # SQLite -> SQLite
    abstat import SRC --store postgresql://.../NEW   # SQLite -> PostgreSQL (a fresh database)
    abstat import SRC --store ...                    # again: everything present, nothing added

and, for scale, ``sqlite3 SRC .backup COPY`` (a page copy, no merging) and the
same source read by ``store_anchor.py``.  Then two imports of the source into
one fresh store start at once, on each back end: both must succeed and the
store must hold every run once.

Targets (issue 26): PostgreSQL >= 10,000 runs/s, SQLite to SQLite >= 30,000 runs/s.

    python benchmarks/store_import.py [--runs 100000] [--url postgresql://...] [--keep DIR]

Without --url (or $ABSTAT_TEST_POSTGRES_URL) a throwaway cluster is started
as in the tests (initdb as an unprivileged user, 127.0.0.1, free port).
"""

from __future__ import annotations

import argparse
import os
import shutil
import sqlite3
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "tests", "support"))

from store_shape import cached, verdict, workspace  # noqa: E402

TARGETS = {"sqlite": 30_000, "postgresql": 10_000}


def wall(argv: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    done = subprocess.run(argv, env=env, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv)}: {done.stderr[-400:]}")
    return time.perf_counter() - start


def count_runs(name: str) -> tuple[int, int, int]:
    """(runs, distinct run uids, invocations) in the store ``name``."""
    query = (
        "SELECT (SELECT COUNT(*) FROM runs), (SELECT COUNT(DISTINCT uid) FROM runs), (SELECT COUNT(*) FROM invocations)"
    )
    if name.startswith("postgresql://"):
        import psycopg

        with psycopg.connect(name) as db:
            return tuple(db.execute(query).fetchone())
    db = sqlite3.connect(name)
    try:
        return tuple(db.execute(query).fetchone())
    finally:
        db.close()


def concurrent(abstat: list[str], source: str, target: str, env: dict[str, str]) -> str:
    """Two imports of ``source`` into ``target`` at once: 'ok' or what went wrong."""
    processes = [
        subprocess.Popen(
            [*abstat, "import", source, "--store", target],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(2)
    ]
    outcomes = [process.communicate() + (process.returncode,) for process in processes]
    failed = [err.strip()[-300:] for _, err, status in outcomes if status != 0]
    runs, uids, _ = count_runs(target)
    expected = count_runs(source)[0]
    if failed:
        return "FAILED: " + " | ".join(failed)
    added = sum(int(out.split(" run(s) added")[0].rsplit(" ", 1)[1]) for out, _, _ in outcomes)
    if runs != expected or uids != expected or added != expected:
        return f"WRONG: {runs} runs ({uids} distinct) stored, {added} reported added, of {expected}"
    return f"ok ({added} runs added once between them)"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=100_000, help="runs in the source store (default 100000)")
    parser.add_argument(
        "--url",
        default=os.environ.get("ABSTAT_TEST_POSTGRES_URL"),
        help="admin URL of a server whose user may create databases",
    )
    parser.add_argument("--keep", help="directory to keep (and reuse) the source store in")
    args = parser.parse_args()
    import psycopg
    from psycopg.conninfo import conninfo_to_dict

    work, keep, env = workspace("abstat-import-", args.keep)
    abstat = [sys.executable, "-m", "abstat"]
    stop = None
    admin = args.url
    if not admin:
        from store_pg import start_cluster

        admin, stop = start_cluster()
    params = conninfo_to_dict(admin)
    auth = params.get("user", "") + (f":{params['password']}" if params.get("password") else "")
    base = f"postgresql://{auth}@{params.get('host', '127.0.0.1')}:{params.get('port', 5432)}"
    databases: list[str] = []

    def database() -> str:
        name = f"abstat_import_{os.getpid()}_{len(databases)}"
        with psycopg.connect(admin, autocommit=True) as connection:
            connection.execute(f'CREATE DATABASE "{name}"')
        databases.append(name)
        return f"{base}/{name}"

    failed = []
    try:
        source = cached(keep, args.runs)
        runs = count_runs(source)[0]
        wall([sys.executable, os.path.join(HERE, "store_anchor.py"), source], env)  # page cache, bytecode
        anchor = wall([sys.executable, os.path.join(HERE, "store_anchor.py"), source], env)
        backup = os.path.join(work, "backup.db")
        started = time.perf_counter()
        subprocess.run(["sqlite3", source, f".backup {backup}"], check=True)
        page_copy = time.perf_counter() - started
        print(f"source: {runs:,} runs; sqlite3 .backup {page_copy:.2f} s; read by store_anchor.py {anchor:.2f} s")
        print("| import | wall | runs/s | target |")
        print("|---|---|---|---|")
        for kind in ("sqlite", "postgresql"):
            target = os.path.join(work, "target.db") if kind == "sqlite" else database()
            seconds = wall([*abstat, "import", source, "--store", target], env)
            rate = runs / seconds
            print(
                f"| SQLite -> {kind} | {seconds:.2f} s | {rate:,.0f} | >= {TARGETS[kind]:,} "
                f"{'ok' if rate >= TARGETS[kind] else 'MISSED'} |",
                flush=True,
            )
            if rate < TARGETS[kind]:
                failed.append(f"{kind}: {rate:,.0f} runs/s")
            stored = count_runs(target)
            if stored[0] != runs or stored[1] != runs:
                failed.append(f"{kind}: {stored[0]} runs stored of {runs}")
            again = wall([*abstat, "import", source, "--store", target], env)
            print(f"| again into {kind} (all present) | {again:.2f} s | {runs / again:,.0f} | |", flush=True)
        for kind in ("sqlite", "postgresql"):
            target = os.path.join(work, "both.db") if kind == "sqlite" else database()
            outcome = concurrent(abstat, source, target, env)
            print(f"two imports at once into {kind}: {outcome}")
            if not outcome.startswith("ok"):
                failed.append(f"concurrent {kind}: {outcome}")
    finally:
        with psycopg.connect(admin, autocommit=True) as connection:
            for name in databases:
                connection.execute(f'DROP DATABASE IF EXISTS "{name}"')
        if stop is not None:
            stop()
        shutil.rmtree(work, ignore_errors=True)
    return verdict(failed)


if __name__ == "__main__":
    sys.exit(main())
