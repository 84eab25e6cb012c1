"""Read commands on a PostgreSQL store against the same commands on SQLite.

Records the same 20,000 runs into each back end (4 hosts x 2 variants x
2,500 runs, each with a wall time and a heavily quantized integer metric like
seed 000's TSC cycles), then times ``show``, ``compare EXP:VARIANT``,
``report`` and ``export`` in-process on each, and prints the
PostgreSQL/SQLite ratio of every one (target: at most 2x).  The SQLite
timings are the anchor, measured in the same run.

Writes: the SQLite store is filled through the Store API (one transaction
per run, as ``abstat run`` does); the PostgreSQL store by ``abstat import``
of that file, and a further 1,000 runs through the Store API give the
per-run commit cost on each back end.

    python benchmarks/store_backends.py [--runs 20000] [--reps 3] [--url postgresql://...]

Without --url (or $ABSTAT_TEST_POSTGRES_URL) a throwaway cluster is started
as in the tests (initdb as an unprivileged user, 127.0.0.1, free port).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import random
import statistics
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "src"))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "support"))

HOSTS = ("milan", "naples", "coffeelake", "skylake")
VARIANTS = ("before", "after")


def fill(store, runs: int, seed: int = 1) -> None:
    """``runs`` runs spread over HOSTS x VARIANTS, one invocation per host."""
    rng = random.Random(seed)
    per_invocation = runs // len(HOSTS)
    for host in HOSTS:
        invocation = store.start_invocation(
            "hcall", {"hostname": host, "boot_id": f"{host}-boot"}, labels={"host": host}, variants=list(VARIANTS)
        )
        for i in range(per_invocation):
            variant = VARIANTS[i % 2]
            cycles = float(round(rng.gauss(440 if variant == "before" else 436, 4)))  # quantized, many ties
            store.add_run(
                invocation,
                variant=variant,
                command=f"./bench-{variant}",
                iteration=i // 2,
                position=i,
                status="ok",
                exit_code=0,
                started_at=time.time(),
                wall=cycles / 1e6,
                values={"wall": [cycles / 1e6], "cycles": [cycles]},
                units={"cycles": "cycles"},
            )
        store.finish_invocation(invocation, "complete")


def timed(argv: list[str], reps: int) -> float:
    from abstat.cli import main

    samples = []
    for _ in range(reps + 1):  # the first warms caches and lazy imports
        out = io.StringIO()
        start = time.perf_counter()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
            status = main(argv)
        samples.append(time.perf_counter() - start)
        if status != 0:
            raise SystemExit(f"{' '.join(argv[:2])} failed with status {status}")
    return statistics.median(samples[1:])


def commit_cost(name: str, runs: int) -> float:
    from abstat.store import open_store

    with open_store(name) as store:
        invocation = store.start_invocation("writes", {"hostname": "w"}, variants=["a"])
        start = time.perf_counter()
        for i in range(runs):
            store.add_run(
                invocation,
                variant="a",
                command="true",
                iteration=i,
                position=i,
                status="ok",
                exit_code=0,
                started_at=0.0,
                wall=1.0,
                values={"wall": [1.0]},
            )
        return (time.perf_counter() - start) / runs


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20_000)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument(
        "--url",
        default=os.environ.get("ABSTAT_TEST_POSTGRES_URL"),
        help="admin URL of a server whose user may create databases",
    )
    args = parser.parse_args(argv)
    import psycopg
    from psycopg.conninfo import conninfo_to_dict

    from abstat.store import display_name, open_store

    stop = None
    admin = args.url
    if not admin:
        from store_pg import start_cluster

        admin, stop = start_cluster()
    database = f"abstat_bench_{os.getpid()}"
    with psycopg.connect(admin, autocommit=True) as connection:
        connection.execute(f'CREATE DATABASE "{database}"')
    params = conninfo_to_dict(admin)
    auth = params.get("user", "") + (f":{params['password']}" if params.get("password") else "")
    url = f"postgresql://{auth}@{params.get('host', '127.0.0.1')}:{params.get('port', 5432)}/{database}"
    try:
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "bench.db")
            start = time.perf_counter()
            with open_store(path) as store:
                fill(store, args.runs)
            sqlite_fill = time.perf_counter() - start
            start = time.perf_counter()
            with open_store(url) as target, open_store(path, create=False, read_only=True) as source:
                result = target.import_from(source)
            pg_import = time.perf_counter() - start
            print(
                f"{args.runs} runs ({len(HOSTS)} hosts x {len(VARIANTS)} variants, 2 metrics):"
                f" SQLite via the Store API {sqlite_fill:.1f} s; PostgreSQL via abstat import {pg_import:.1f} s"
                f" ({result.runs_added} runs)"
            )
            commands = {
                "show": ["show", "hcall", "--metric", "cycles"],
                "compare": [
                    "compare",
                    "--metric",
                    "cycles",
                    "--where",
                    "host=milan",
                    "a=hcall:before",
                    "b=hcall:after",
                ],
                "report": ["report", "--metric", "cycles", "--by", "variant", "--rows", "host"],
                "export": ["export", "--format", "csv"],
            }
            print(f"{'command':<10}{'SQLite s':>10}{'PostgreSQL s':>14}{'ratio':>8}")
            worst = 0.0
            for name, command in commands.items():
                on_sqlite = timed([command[0], "--store", path, *command[1:]], args.reps)
                on_pg = timed([command[0], "--store", url, *command[1:]], args.reps)
                worst = max(worst, on_pg / on_sqlite)
                print(f"{name:<10}{on_sqlite:>10.3f}{on_pg:>14.3f}{on_pg / on_sqlite:>7.2f}x")
            writes_sqlite = commit_cost(path, 1000)
            writes_pg = commit_cost(url, 1000)
            print(
                f"{'add_run':<10}{writes_sqlite * 1e3:>9.2f}m{writes_pg * 1e3:>13.2f}m{writes_pg / writes_sqlite:>7.2f}x"
                "  (ms per committed run)"
            )
            print(
                f"worst read ratio {worst:.2f}x (target <= 2x): {'met' if worst <= 2 else 'NOT met'}"
                f"  [server {display_name(url)}]"
            )
    finally:
        with psycopg.connect(admin, autocommit=True) as connection:
            connection.execute(f'DROP DATABASE IF EXISTS "{database}"')
        if stop is not None:
            stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
