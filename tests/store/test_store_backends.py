"""The store on both back ends (SQLite file, real PostgreSQL server): every
test here runs once per back end through the ``store_name`` fixture."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest
from support.store_pg import backend, password_of, store_name  # noqa: F401  (fixtures)

from abstat.errors import InputError
from abstat.store import SCHEMA_VERSION, iter_sample_sets, open_store, resolve_variant
from abstat.store.connect import connect
from abstat.store.schema import MIGRATIONS
from support import paths
from support.cli import run_abstat

MACHINE = {"hostname": "milan", "boot_id": "boot-1", "microcode": "0xa0011d1"}


def abstat(*args, env=None):
    return run_abstat(*args, extra_env=env)


def add(store, invocation, variant, values, status="ok", iteration=0):
    return store.add_run(
        invocation,
        variant=variant,
        command=f"./bench-{variant}",
        iteration=iteration,
        position=iteration,
        status=status,
        exit_code=0 if status == "ok" else 1,
        started_at=1000.0 + iteration,
        wall=1.0,
        values=values,
        units={k: "cycles" for k in values},
    )


def count(name, sql):
    with open_store(name, create=False) as store:
        return store.db.execute(sql).fetchone()[0]


def assert_no_secret(name, *texts):
    secret = password_of(name) if name.startswith("postgresql://") else None
    for text in texts:
        assert "Traceback" not in text and "internal error" not in text, text
        if secret:
            assert secret not in text, text


def test_schema_version_is_recorded_and_reopening_changes_nothing(store_name):
    with open_store(store_name) as store:
        assert store.version == SCHEMA_VERSION
        inv = store.start_invocation("hcall", MACHINE, labels={"mode": "pv64"}, variants=["before", "after"])
        add(store, inv, "before", {"cycles": [440.0, 436.0]})
        store.finish_invocation(inv, "complete")
    with open_store(store_name, create=False) as store:
        assert store.version == SCHEMA_VERSION
        assert store.variant_names("hcall") == ["before", "after"]
        assert store.invocations("hcall")[0]["labels"] == {"mode": "pv64"}
    assert resolve_variant("hcall:before", store_name, metric="cycles") == [[440.0, 436.0]]


def _set_version(name, version):
    db = connect(name, create=False)
    try:
        with db.transaction():
            db.set_version(version)
    finally:
        db.close()


def test_a_store_from_a_newer_abstat_is_refused_and_left_untouched(store_name):
    with open_store(store_name) as store:
        add(store, store.start_invocation("e", MACHINE), "a", {"wall": [1.0]})
    _set_version(store_name, SCHEMA_VERSION + 1)
    for create in (True, False):
        with pytest.raises(InputError, match="newer than this abstat understands"):
            open_store(store_name, create=create)
    done = abstat("list", "--store", store_name)
    assert done.returncode == 2 and "newer than this abstat" in done.stderr
    assert len(done.stderr.splitlines()) == 1
    assert_no_secret(store_name, done.stderr)
    db = connect(store_name, create=False)
    assert db.schema_state() == (SCHEMA_VERSION + 1, True)
    assert db.execute("SELECT COUNT(*) FROM runs").fetchone()[0] == 1
    db.close()


def _version_one_store(name):
    """A store as abstat wrote it before runs had identities (schema version 1)."""
    db = connect(name, create=True)
    with db.transaction():
        for statement in db.ddl(MIGRATIONS[0]):
            db.execute(statement)
        db.set_version(1)
        experiment = db.insert("INSERT INTO experiments (name, created_at) VALUES (?, ?)", ("old", "2024-01-01"))
        variant = db.insert("INSERT INTO variants (experiment_id, name) VALUES (?, ?)", (experiment, "a"))
        for boot in ("b1", "b2"):
            invocation = db.insert(
                "INSERT INTO invocations (experiment_id, started_at, status, hostname, boot_id, machine)"
                " VALUES (?, ?, 'complete', 'milan', ?, ?)",
                (experiment, "2024-01-01T00:00:00Z", boot, json.dumps({**MACHINE, "boot_id": boot})),
            )
            db.execute("INSERT INTO labels (invocation_id, key, value) VALUES (?, 'mode', 'pv64')", (invocation,))
            for i in range(3):
                run = db.insert(
                    "INSERT INTO runs (invocation_id, variant_id, command, iteration, position, status, started_at,"
                    " wall) VALUES (?, ?, './a', ?, ?, 'ok', ?, 1.0)",
                    (invocation, variant, i, i, 100.0 + i),
                )
                db.execute(
                    "INSERT INTO samples (run_id, metric, idx, value) VALUES (?, 'wall', 0, ?)",
                    (run, float(i + (10 if boot == "b2" else 0))),
                )
    db.close()


def _uids(name):
    with open_store(name, create=False) as store:
        return (
            sorted(r[0] for r in store.db.execute("SELECT uid FROM invocations")),
            sorted(r[0] for r in store.db.execute("SELECT uid FROM runs")),
        )


def test_migration_backfills_the_same_identities_for_every_copy(store_name, tmp_path):
    _version_one_store(store_name)
    copy = str(tmp_path / "copy.db")
    _version_one_store(copy)
    assert resolve_variant("old:a", store_name) == [[0.0, 1.0, 2.0], [10.0, 11.0, 12.0]]  # migrates
    db = connect(store_name, create=False)
    assert db.schema_state()[0] == SCHEMA_VERSION
    db.close()
    invocations, runs = _uids(store_name)
    assert len(set(invocations)) == 2 and len(set(runs)) == 6 and None not in runs
    assert _uids(copy) == (invocations, runs)  # deterministic: the other back end agrees
    # A copy taken before migrating, imported afterwards, adds nothing.
    done = abstat("import", copy, "--store", store_name)
    assert done.returncode == 0, done.stderr
    assert "0 invocation(s) and 0 run(s) added, 6 run(s) already present" in done.stdout


SIGINT_IN_A_WRITE = """
import os, signal, sys, time
from abstat.store import open_store
signal.signal(signal.SIGINT, signal.default_int_handler)
with open_store(sys.argv[1]) as store:
    try:
        with store.db.transaction():
            os.kill(os.getpid(), signal.SIGINT)
            store.db.execute("UPDATE invocations SET status = 'x'")
        time.sleep(1)
        print("no KeyboardInterrupt")
    except KeyboardInterrupt:
        print("KeyboardInterrupt after the commit")
"""


def test_sigint_right_after_begin_leaves_no_transaction_open(store_name):
    with open_store(store_name) as store:
        inv = store.start_invocation("e", MACHINE)
        # What a Ctrl-C between BEGIN and the statements used to leave behind:
        store.db.raw.execute("BEGIN")
        add(store, inv, "a", {"wall": [1.0]})  # no "cannot start a transaction within a transaction"
        # A Ctrl-C during a SQLite write waits for the commit; the run is kept.  In a fresh interpreter:
        # the signal sections are process-wide state, which the tests run before this one in the same
        # worker may have changed.
        if store.kind == "sqlite":
            done = subprocess.run(
                [sys.executable, "-c", SIGINT_IN_A_WRITE, store_name],
                capture_output=True,
                text=True,
                timeout=120,
                env={**os.environ, "PYTHONPATH": paths.SRC},
            )
            assert done.returncode == 0 and done.stdout == "KeyboardInterrupt after the commit\n", done.stderr
            assert store.db.execute("SELECT status FROM invocations").fetchone()[0] == "x"
        store.finish_invocation(inv, "complete")
    assert resolve_variant("e:a", store_name) == [[1.0]]


def test_sigkill_mid_experiment_loses_at_most_the_run_in_progress(store_name):
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "abstat",
            "run",
            "-n",
            "100000",
            "-v",
            "a=true",
            "-v",
            "b=true",
            "--experiment",
            "k",
            "--store",
            store_name,
            "--no-progress",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 60
    seen = 0
    try:
        while seen < 30 and time.monotonic() < deadline:
            time.sleep(0.1)
            try:
                seen = count(store_name, "SELECT COUNT(*) FROM runs")
            except InputError:  # not created yet
                seen = 0
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
    assert seen >= 30
    with open_store(store_name, create=False) as store:
        runs = store.db.execute("SELECT COUNT(*) FROM runs").fetchone()[0]
        with_samples = store.db.execute("SELECT COUNT(DISTINCT run_id) FROM samples").fetchone()[0]
        status = store.db.execute("SELECT status FROM invocations").fetchone()[0]
        assert store.check_damage() == []
    assert runs >= seen and with_samples == runs  # every committed run is whole
    assert status == "running"  # never finished: the store says so
    assert len(resolve_variant("k:a", store_name)[0]) + len(resolve_variant("k:b", store_name)[0]) == runs


def test_four_writers_on_four_hosts_lose_nothing_and_duplicate_nothing(store_name):
    procs = [
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "abstat",
                "run",
                "-n",
                "25",
                "-v",
                "a=true",
                "-v",
                "b=true",
                "--experiment",
                "shared",
                "--label",
                f"host=h{k}",
                "--store",
                store_name,
                "--no-progress",
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for k in range(4)
    ]
    partial_views = []
    try:
        while any(p.poll() is None for p in procs):
            try:  # a reader meanwhile sees whole runs only
                with open_store(store_name, create=False) as store:
                    partial_views.append(
                        store.db.execute(
                            "SELECT COUNT(*), (SELECT COUNT(DISTINCT s.run_id) FROM samples s) FROM runs"
                        ).fetchone()
                    )
            except InputError:
                pass
            time.sleep(0.2)
        outputs = [p.communicate(timeout=120) for p in procs]
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
    for proc, (_, err) in zip(procs, outputs):
        assert proc.returncode == 0, err
        assert_no_secret(store_name, err)
    assert all(runs == sampled for runs, sampled in partial_views)
    with open_store(store_name, create=False) as store:
        assert store.experiment_names() == ["shared"]
        assert store.variant_names("shared") == ["a", "b"]
        assert store.db.execute("SELECT COUNT(*), COUNT(DISTINCT uid) FROM runs").fetchone() == (200, 200)
        hosts = sorted(i["labels"]["host"] for i in store.invocations("shared"))
        assert hosts == ["h0", "h1", "h2", "h3"]
        assert all(i["status"] == "complete" for i in store.invocations("shared"))
    for k in range(4):
        assert [len(g) for g in resolve_variant("shared:a", store_name, where={"host": f"h{k}"})] == [25]


def _fill(name):
    with open_store(name) as store:
        for boot, mode in (("b1", "pv64"), ("b2", "pv32")):
            inv = store.start_invocation(
                "hcall",
                dict(MACHINE, boot_id=boot),
                labels={"mode": mode},
                variants=["before", "after"],
                argv=["abstat", "run"],
            )
            for i in range(3):
                add(store, inv, "before", {"cycles": [440.0 + i, 441.0 + i]}, iteration=i)
                add(store, inv, "after", {"cycles": [380.0 + i]}, iteration=i)
            add(store, inv, "after", {"cycles": [1.0]}, status="failed", iteration=3)
            store.finish_invocation(inv, "complete", ["note"])


def _content(name):
    with open_store(name, create=False) as store:
        invocations = [{k: v for k, v in i.items() if k != "id"} for i in store.invocations("hcall")]
        sets = sorted((sorted(s.labels.items()), s.runs, s.machine, s.unit) for s in store.sample_sets())
        return invocations, sets, store.failed_runs("hcall")[0]["status"], sorted(_uids(name)[1])


@pytest.mark.parametrize("other", ["sqlite", "postgresql"])
def test_import_in_both_directions_is_idempotent_and_keeps_everything(store_name, other, tmp_path):
    from support.store_pg import new_store, server_url

    if other == "postgresql":
        server_url()
    source = new_store(other, tmp_path)
    _fill(source)
    for attempt in range(2):
        done = abstat("import", source, "--store", store_name)
        assert done.returncode == 0, done.stderr
        assert_no_secret(source, done.stdout, done.stderr)
        assert_no_secret(store_name, done.stdout, done.stderr)
        expected = (
            "2 invocation(s) and 14 run(s) added, 0" if attempt == 0 else "0 invocation(s) and 0 run(s) added, 14"
        )
        assert expected in done.stdout
    assert _content(store_name) == _content(source)
    # and back again: nothing new either way
    back = abstat("import", store_name, "--store", source)
    assert back.returncode == 0 and "0 invocation(s) and 0 run(s) added, 14 run(s) already present" in back.stdout


def test_import_merges_the_stores_of_two_machines(store_name, tmp_path):
    stores = []
    for host in ("milan", "naples"):
        path = str(tmp_path / f"{host}.db")
        done = abstat(
            "run",
            "-n",
            "3",
            "-v",
            "a=true",
            "-v",
            "b=true",
            "--experiment",
            "m",
            "--label",
            f"host={host}",
            "--store",
            path,
            "--no-progress",
            "--seed",
            "1",
        )
        assert done.returncode == 0, done.stderr
        stores.append(path)
    done = abstat("import", *stores, "--store", store_name)
    assert done.returncode == 0, done.stderr
    assert abstat("import", *stores, "--store", store_name).stdout.count("0 invocation(s) and 0 run(s) added") == 2
    sets = list(iter_sample_sets(store_name, {"metric": "wall", "variant": "a"}))
    assert sorted(s.labels["host"] for s in sets) == ["milan", "naples"]
    assert all(len(s.runs) == 1 and len(s.runs[0]) == 3 and s.machine.get("boot_id") for s in sets)
    report = abstat("report", "--store", store_name, "--by", "variant", "--rows", "host")
    assert report.returncode == 0, report.stderr
    assert "milan" in report.stdout and "naples" in report.stdout


def test_every_read_command_takes_the_store_from_option_or_environment(store_name):
    _fill(store_name)
    for how in ("option", "env"):
        opts = ["--store", store_name] if how == "option" else []
        env = {"ABSTAT_STORE": store_name} if how == "env" else {"ABSTAT_STORE": ""}
        results = {
            "list": abstat("list", *opts, env=env),
            "show": abstat("show", "hcall", "--metric", "cycles", *opts, env=env),
            "export": abstat("export", "--format", "json", *opts, env=env),
            "compare": abstat(
                "compare",
                "--metric",
                "cycles",
                "--where",
                "mode=pv64",
                "--format",
                "json",
                "x=hcall:before",
                "y=hcall:after",
                *opts,
                env=env,
            ),
            "report": abstat("report", "--metric", "cycles", "--by", "variant", "--rows", "mode", *opts, env=env),
        }
        for name, done in results.items():
            assert done.returncode == 0, (name, done.stderr)
            assert_no_secret(store_name, done.stdout, done.stderr)
        assert results["list"].stdout.splitlines()[1].split()[:4] == ["hcall", "before,after", "12", "2"]
        assert len(json.loads(results["export"].stdout)) == 18
        summary = json.loads(results["compare"].stdout)["comparisons"][0]["summaries"][0]
        assert summary["median"] == 441.5
        assert "pv32" in results["report"].stdout and "pv64" in results["report"].stdout
        assert "microcode" in results["show"].stdout


def test_run_writes_to_the_store_and_never_prints_its_password(store_name):
    done = abstat("run", "-n", "2", "-v", "a=true", "--experiment", "pw", "--store", store_name, "--no-progress")
    assert done.returncode == 0, done.stderr
    assert_no_secret(store_name, done.stdout, done.stderr)
    with open_store(store_name, create=False) as store:
        stored = json.dumps(store.invocations("pw"))
    assert_no_secret(store_name, stored)
    if store_name.startswith("postgresql://"):
        assert "***@" in done.stderr
