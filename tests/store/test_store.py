"""The SQLite store: schema, grouping, labels, durability, concurrent writers."""

from __future__ import annotations

import csv
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time

import pytest

from abstat.errors import InputError
from abstat.store import SCHEMA_VERSION, iter_sample_sets, open_store, resolve_variant
from support.cli import run_abstat as abstat

MACHINE = {"hostname": "milan", "boot_id": "boot-1", "microcode": "0xa0011d1"}


def add(store, invocation, variant, values, status="ok", iteration=0, unit="s"):
    return store.add_run(
        invocation,
        variant=variant,
        command=f"./bench-{variant}",
        iteration=iteration,
        position=iteration,
        status=status,
        exit_code=0 if status == "ok" else 1,
        started_at=time.time(),
        wall=values.get("wall", [0])[0],
        values=values,
        units={k: unit for k in values},
    )


def test_new_store_is_versioned_and_in_wal_mode(tmp_path):
    path = str(tmp_path / "s.db")
    open_store(path).close()
    db = sqlite3.connect(path)
    assert db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    db.close()
    open_store(path).close()  # reopening does not migrate twice


def test_foreign_files_are_refused_with_their_path(tmp_path):
    garbage = tmp_path / "garbage.db"
    garbage.write_bytes(b"\x00\xffnot sqlite at all" * 100)
    with pytest.raises(InputError, match="garbage.db: not an abstat store"):
        open_store(str(garbage))
    other = tmp_path / "other.db"
    db = sqlite3.connect(other)
    db.execute("CREATE TABLE t (x)")
    db.commit()
    db.close()
    with pytest.raises(InputError, match="no abstat schema version"):
        open_store(str(other))
    newer = tmp_path / "newer.db"
    db = sqlite3.connect(newer)
    db.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    db.close()
    with pytest.raises(InputError, match="newer than this abstat"):
        open_store(str(newer))
    with pytest.raises(InputError, match="no such store"):
        open_store(str(tmp_path / "missing.db"), create=False)
    assert not (tmp_path / "missing.db").exists()


def test_resolve_variant_groups_runs_by_invocation_and_skips_failures(tmp_path):
    path = str(tmp_path / "s.db")
    with open_store(path) as store:
        first = store.start_invocation("hcall", MACHINE, variants=["before", "after"])
        for i, v in enumerate([440.0, 436.0, 452.0]):
            add(store, first, "before", {"wall": [v], "cycles": [v * 2]}, iteration=i)
        add(store, first, "before", {"wall": [9999.0]}, status="failed", iteration=3)
        add(store, first, "after", {"wall": [380.0]})
        second = store.start_invocation("hcall", dict(MACHINE, boot_id="boot-2"))
        add(store, second, "before", {"wall": [441.0]})
        add(store, second, "before", {"wall": [439.0]}, iteration=1)
    assert resolve_variant("hcall:before", path) == [[440.0, 436.0, 452.0], [441.0, 439.0]]
    assert resolve_variant("hcall:before", path, metric="cycles") == [[880.0, 872.0, 904.0]]
    assert resolve_variant("hcall:after", path) == [[380.0]]
    assert resolve_variant("hcall:nope", path) is None
    assert resolve_variant("other:before", path) is None
    assert resolve_variant("before.txt", path) is None
    assert resolve_variant("hcall:before", str(tmp_path / "absent.db")) is None
    with pytest.raises(InputError, match="has no metric 'instructions' \\(it has: wall, cycles\\)"):
        resolve_variant("hcall:before", path, metric="instructions")


def test_sample_sets_carry_labels_and_filter_on_them(tmp_path):
    path = str(tmp_path / "s.db")
    with open_store(path) as store:
        for mode in ("pv64", "pv32"):
            inv = store.start_invocation("hcall", MACHINE, labels={"mode": mode})
            add(store, inv, "before", {"wall": [1.0], "cycles": [440.0]}, unit="cycles")
            add(store, inv, "after", {"wall": [0.9], "cycles": [380.0]}, unit="cycles")
    sets = list(iter_sample_sets(path))
    assert len(sets) == 8
    one = [
        s
        for s in sets
        if s.labels == {"experiment": "hcall", "variant": "after", "metric": "cycles", "host": "milan", "mode": "pv32"}
    ]
    assert len(one) == 1 and one[0].runs == [[380.0]] and one[0].machine["microcode"] == "0xa0011d1"
    assert one[0].unit == "cycles"
    chosen = list(iter_sample_sets(path, {"metric": "cycles", "mode": "pv64"}))
    assert sorted(s.labels["variant"] for s in chosen) == ["after", "before"]
    assert list(iter_sample_sets(path, {"mode": ["pv32", "hvm"], "variant": "before", "metric": "wall"}))[0].runs == [
        [1.0]
    ]
    assert list(iter_sample_sets(path, {"nokey": "x"})) == []


def test_resolve_variant_keeps_labelled_configurations_apart(tmp_path):
    path = str(tmp_path / "s.db")
    with open_store(path) as store:
        for mode, base in (("pv64", 440.0), ("pv32", 1980.0)):
            inv = store.start_invocation("hcall", MACHINE, labels={"mode": mode})
            add(store, inv, "before", {"cycles": [base, base + 20]})
    # pv64 and pv32 are different configurations, not two runs of one.
    with pytest.raises(InputError, match=r"mixes runs with different labels \(mode=pv32\|pv64\)"):
        resolve_variant("hcall:before", path, metric="cycles")
    assert resolve_variant("hcall:before", path, metric="cycles", where={"mode": "pv32"}) == [[1980.0, 2000.0]]
    assert resolve_variant("hcall:before", path, metric="cycles", where={"mode": {"pv64"}}) == [[440.0, 460.0]]
    with pytest.raises(InputError, match="has no runs with mode=hvm"):
        resolve_variant("hcall:before", path, metric="cycles", where={"mode": "hvm"})
    chosen = abstat(
        "compare",
        "--store",
        path,
        "--metric",
        "cycles",
        "--where",
        "mode=pv64",
        "--format",
        "json",
        "a=hcall:before",
        "b=hcall:before",
    )
    assert chosen.returncode == 0, chosen.stderr
    assert json.loads(chosen.stdout)["comparisons"][0]["summaries"][0]["median"] == 450.0
    mixed = abstat("compare", "--store", path, "--metric", "cycles", "a=hcall:before", "b=hcall:before")
    assert mixed.returncode == 2 and "--where" in mixed.stderr and len(mixed.stderr.splitlines()) == 1


def test_runs_accumulate_across_invocations_of_the_cli(tmp_path):
    path = str(tmp_path / "s.db")
    for _ in range(2):
        done = abstat("run", "-n", "3", "-v", "a=true", "--experiment", "acc", "--store", path, "--no-progress")
        assert done.returncode == 0, done.stderr
    groups = resolve_variant("acc:a", path)
    assert [len(g) for g in groups] == [3, 3]


def _count_runs(path: str) -> int:
    try:
        db = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=5)
        try:
            return db.execute("SELECT COUNT(*) FROM runs").fetchone()[0]
        finally:
            db.close()
    except sqlite3.Error:
        return 0


def test_sigkill_mid_experiment_loses_at_most_the_run_in_progress(tmp_path):
    path = str(tmp_path / "s.db")
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
            path,
            "--no-progress",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 20
    while _count_runs(path) < 30 and time.monotonic() < deadline:
        time.sleep(0.05)
    seen = _count_runs(path)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert seen >= 30
    db = sqlite3.connect(path)
    assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    runs = db.execute("SELECT COUNT(*) FROM runs").fetchone()[0]
    samples = db.execute("SELECT COUNT(DISTINCT run_id) FROM samples").fetchone()[0]
    status = db.execute("SELECT status FROM invocations").fetchone()[0]
    db.close()
    assert runs >= seen and samples == runs  # every committed run is complete
    assert status == "running"  # never finished: the store says so
    assert len(resolve_variant("k:a", path)[0]) + len(resolve_variant("k:b", path)[0]) == runs


def test_two_writers_at_once(tmp_path):
    path = str(tmp_path / "s.db")
    command = [
        sys.executable,
        "-m",
        "abstat",
        "run",
        "-n",
        "60",
        "-v",
        "a=true",
        "--experiment",
        "both",
        "--store",
        path,
        "--no-progress",
    ]
    procs = [subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(2)]
    outputs = [p.communicate(timeout=60) for p in procs]
    for proc, (_, err) in zip(procs, outputs):
        assert proc.returncode == 0, err
    groups = resolve_variant("both:a", path)
    assert sorted(len(g) for g in groups) == [60, 60]
    db = sqlite3.connect(path)
    assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    assert db.execute("SELECT COUNT(*) FROM experiments").fetchone()[0] == 1
    db.close()


def test_list_show_and_export(tmp_path):
    path = str(tmp_path / "s.db")
    with open_store(path) as store:
        inv = store.start_invocation("hcall", MACHINE, labels={"mode": "pv64"})
        add(store, inv, "before", {"wall": [1.5], "cycles": [440.0, 436.0]})
        add(store, inv, "after", {"wall": [1.25]}, iteration=0)
        add(store, inv, "after", {"wall": [7.0]}, status="failed", iteration=1)
        store.finish_invocation(inv, "complete")
    listed = abstat("list", "--store", path)
    assert listed.returncode == 0
    assert listed.stdout.splitlines()[1].split()[:5] == ["hcall", "before,after", "2", "1", "1"]
    shown = abstat("show", "hcall", "--store", path)
    assert shown.returncode == 0, shown.stderr
    assert "microcode:    0xa0011d1" in shown.stdout and "[mode=pv64]" in shown.stdout
    assert "failed runs (not used):" in shown.stdout
    missing = abstat("show", "nope", "--store", path)
    assert missing.returncode == 2 and "no experiment 'nope' (experiments: hcall)" in missing.stderr
    exported = abstat("export", "--format", "json", "--store", path)
    rows = json.loads(exported.stdout)
    assert [(r["variant"], r["metric"], r["value"]) for r in rows] == [
        ("before", "cycles", 440.0),
        ("before", "cycles", 436.0),
        ("before", "wall", 1.5),
        ("after", "wall", 1.25),
    ]
    assert "machine" not in rows[0] and rows[0]["labels"] == {"mode": "pv64"}
    assert rows[0]["run"] == rows[1]["run"] != rows[3]["run"]
    csv_text = abstat("export", "--store", path).stdout.splitlines()
    header = csv_text[0].split(",")
    assert header[:6] == ["experiment", "variant", "metric", "value", "unit", "run"]
    assert not any(column.startswith("machine") for column in header) and len(csv_text) == 5
    # the machine records go out once per invocation, beside the samples
    machines = tmp_path / "machines.csv"
    assert (
        abstat("export", "--store", path, "-o", str(tmp_path / "samples.csv"), "--machines", str(machines)).returncode
        == 0
    )
    table = list(csv.reader(machines.open()))
    assert table[0][:5] == ["experiment", "invocation", "host", "boot_id", "started_at"] and len(table) == 2
    assert dict(zip(table[0], table[1]))["machine.microcode"] == MACHINE["microcode"]
    as_json = tmp_path / "machines.json"
    assert abstat("export", "--format", "json", "--store", path, "--machines", str(as_json)).returncode == 0
    assert [(m["invocation"], m["machine"]) for m in json.loads(as_json.read_text())] == [
        (rows[0]["invocation"], MACHINE)
    ]
    refused = abstat("export", "--format", "hyperfine", "--store", path, "--machines", str(as_json))
    assert refused.returncode == 2 and len(refused.stderr.splitlines()) == 1
    assert abstat("list", "--store", str(tmp_path / "none.db")).returncode == 2
