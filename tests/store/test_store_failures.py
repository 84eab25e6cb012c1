"""The store when things go wrong: a server that goes away, no driver, bad
credentials, stores that are not regular files, read-only stores, damaged rows."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys

import pytest
from support.store_pg import backend, cut_the_server, fresh_database, password_of, server_url, store_name  # noqa: F401

from abstat.store import open_store
from support.cli import run_abstat

MACHINE = {"hostname": "milan", "boot_id": "boot-1"}


def abstat(*args, env=None):
    return run_abstat(*args, extra_env=env)


def clean(done, *secrets):
    for text in (done.stdout, done.stderr):
        assert "Traceback" not in text and "internal error" not in text and "JSONDecodeError" not in text, text
        for secret in secrets:
            assert secret not in text, text


@pytest.mark.parametrize("comes_back", [True, False], ids=["server-back", "server-still-away"])
def test_a_server_that_goes_away_keeps_committed_runs_and_spools_the_rest(tmp_path, comes_back):
    import psycopg

    url = fresh_database()
    proc = subprocess.Popen(
        # 300 runs of 5 ms: the server goes away while they run (runs of `true` could all be done by then)
        [
            sys.executable,
            "-m",
            "abstat",
            "run",
            "-n",
            "150",
            "-v",
            "a=sleep 0.005",
            "-v",
            "b=sleep 0.005",
            "--experiment",
            "gone",
            "--label",
            "host=h1",
            "--store",
            url,
            "--no-progress",
            "--verbose",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=tmp_path,
    )
    committed, out, err = cut_the_server(url, proc, after_runs=20, comes_back=comes_back)
    assert committed >= 20
    assert password_of(url) not in err + out and "Traceback" not in err and "internal error" not in err
    lines = [line for line in err.splitlines() if "went away" in line]
    assert "already committed there are kept" in lines[0] and "abstat import" in lines[0], err
    spools = list(tmp_path.glob("abstat-spool-*.db"))
    assert len(spools) == 1 and str(spools[0].name) in lines[0]
    with psycopg.connect(url) as db:
        kept = db.execute("SELECT COUNT(*) FROM runs").fetchone()[0]
    assert kept >= committed
    spooled = sqlite3.connect(spools[0]).execute("SELECT COUNT(*) FROM runs").fetchone()[0]
    if comes_back:  # the spool went home at the end of the run, and the report saw every run
        assert proc.returncode == 0 and len(lines) == 1, err
        assert "spooled run(s) imported" in err and kept == 300
        assert "n=150" in out or "150" in out
    else:  # the report cannot be made: one line says where the runs are
        assert proc.returncode == 2 and kept + spooled >= 300, err
        assert err.splitlines()[-1].endswith(f"--store {url.replace(password_of(url), '***')})")
        done = abstat("import", str(spools[0]), "--store", url)
        assert done.returncode == 0, done.stderr
        assert "1 invocation(s) completed" in done.stdout
    with open_store(url, create=False) as store:
        assert store.db.execute("SELECT COUNT(*), COUNT(DISTINCT uid) FROM runs").fetchone() == (300, 300)
        (invocation,) = store.invocations("gone")
        assert invocation["status"] == "complete" and invocation["labels"] == {"host": "h1"}
    again = abstat("import", str(spools[0]), "--store", url)
    assert "0 invocation(s) and 0 run(s) added" in again.stdout


def test_a_missing_driver_says_how_to_install_it():
    code = (
        "import sys; sys.modules['psycopg'] = None; from abstat.cli import main; "
        "sys.exit(main(['list', '--store', 'postgresql://u:pw@127.0.0.1:1/db']))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert done.stderr == (
        "abstat list: postgresql://u:***@127.0.0.1:1/db: the PostgreSQL store needs psycopg 3:"
        " pip install 'abstat[postgres]'\n"
    )


def test_bad_credentials_and_unreachable_servers_are_one_masked_line(tmp_path):
    url = fresh_database()
    wrong = url.replace(password_of(url), "wrong-pw-123") if password_of(url) else url.replace("@", ":wrong-pw-123@")
    for bad in (wrong, "postgresql://abstat:hunter2@127.0.0.1:1/db"):
        done = abstat("show", "x", "--store", bad, env={"PGCONNECT_TIMEOUT": "5"})
        assert done.returncode == 2 and len(done.stderr.splitlines()) == 1, done.stderr
        assert "cannot connect to the store" in done.stderr and ":***@" in done.stderr
        clean(done, "wrong-pw-123", "hunter2")
    # PGPASSFILE supplies the password the URL leaves out, as for psql.
    secret = password_of(url)
    if secret:
        passfile = tmp_path / "pgpass"
        passfile.write_text(f"*:*:*:*:{secret}\n")
        passfile.chmod(0o600)
        bare = url.replace(f":{secret}@", "@")
        done = abstat(
            "run", "-n", "1", "-v", "a=true", "--store", bare, "--no-progress", env={"PGPASSFILE": str(passfile)}
        )
        assert done.returncode == 0, done.stderr
        clean(done, secret)


def test_a_store_that_is_not_a_regular_file_is_refused_untouched(tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    for target in ("/dev/null", str(fifo), str(tmp_path)):
        for command in (["list"], ["show", "x"], ["export"], ["run", "-n", "1", "-v", "a=true", "--no-progress"]):
            done = abstat(*command, "--store", target)
            assert done.returncode == 2, (command, target, done.stderr)
            assert "not a regular file" in done.stderr and len(done.stderr.splitlines()) == 1
    assert not os.path.exists("/dev/null-journal") and not os.path.exists("/dev/null-wal")
    assert sorted(os.listdir(tmp_path)) == ["fifo"]


def test_a_store_in_a_read_only_directory_can_be_read(tmp_path):
    if shutil.which("unshare") is None:
        pytest.skip("unshare is missing (util-linux)")
    directory = tmp_path / "ro"
    directory.mkdir()
    path = str(directory / "s.db")
    done = abstat(
        "run", "-n", "3", "-v", "a=true", "-v", "b=true", "--experiment", "e", "--store", path, "--no-progress"
    )
    assert done.returncode == 0, done.stderr
    script = (
        f'mount --bind "{directory}" "{directory}" && mount -o remount,bind,ro "{directory}" && '
        f'for c in "list" "show e" "export" "report --by variant" "compare e:a e:b"; do '
        f'  {sys.executable} -m abstat $c --store "{path}" >/dev/null 2>"{tmp_path}/err" || '
        f'  {{ echo "$c: $(cat "{tmp_path}/err")"; exit 1; }}; done; '
        f'{sys.executable} -m abstat run -n 1 -v a=true --experiment e --store "{path}" --no-progress '
        f'>/dev/null 2>"{tmp_path}/err"; echo "run: $? $(cat "{tmp_path}/err")"'
    )
    done = subprocess.run(
        ["unshare", "--mount", "sh", "-c", script], capture_output=True, text=True, timeout=120, env=os.environ
    )
    if "mount" in done.stderr and done.returncode != 0 and "abstat" not in done.stdout:
        pytest.skip(f"cannot make a read-only mount here: {done.stderr.strip()}")
    assert done.returncode == 0, done.stdout + done.stderr
    # writing is refused in one line, and nothing is lost
    assert done.stdout.startswith("run: 2 ") and "internal error" not in done.stdout, done.stdout
    assert sorted(os.listdir(directory)) == ["s.db"]


def _damage(name):
    with open_store(name) as store:
        inv = store.start_invocation("dmg", MACHINE, variants=["a", "b"], labels={"mode": "x"})
        for i in range(3):
            for variant, value in (("a", 1.0 + i), ("b", 2.0 + i)):
                store.add_run(
                    inv,
                    variant=variant,
                    command="true",
                    iteration=i,
                    position=i,
                    status="ok",
                    exit_code=0,
                    started_at=1.0,
                    wall=value,
                    values={"wall": [value]},
                )
        store.add_run(
            inv,
            variant="a",
            command="true",
            iteration=3,
            position=3,
            status="failed",
            exit_code=1,
            started_at=1.0,
            wall=1.0,
            values={},
            notes=["boom"],
        )
        store.finish_invocation(inv, "complete", ["fine"])
        with store.db.transaction():
            store.db.execute("UPDATE invocations SET machine = '{not json', argv = '[', settings = 'x', notes = '{'")
            store.db.execute("UPDATE runs SET notes = '{oops' WHERE status = 'failed'")


def test_rows_with_invalid_json_are_named_and_the_rest_is_used(store_name, tmp_path):
    _damage(store_name)
    for command in (
        ["show", "dmg"],
        ["compare", "dmg:a", "dmg:b"],
        ["report", "--by", "variant"],
        ["plan", "dmg:a"],
        ["list"],
    ):
        done = abstat(*command, "--store", store_name)
        clean(done)
        assert done.returncode == 0, (command, done.stderr)
    samples_only = abstat("export", "--format", "json", "--store", store_name)
    clean(samples_only)  # the damaged records are not among the samples' columns: the samples are whole
    assert samples_only.returncode == 0 and len(json.loads(samples_only.stdout)) == 6
    machines = tmp_path / "machines.json"
    exported = abstat("export", "--format", "json", "--store", store_name, "--machines", str(machines))
    clean(exported)
    assert exported.returncode == 2
    assert len(json.loads(exported.stdout)) == 6  # every readable sample
    assert json.loads(machines.read_text())[0]["machine"] == {}  # the one that is not JSON
    assert "damaged store, exported only the readable samples" in exported.stderr
    assert "machine record of invocation 1 is not valid JSON" in exported.stderr
    again = abstat(
        "run",
        "-n",
        "1",
        "-v",
        "a=true",
        "-v",
        "b=true",
        "--experiment",
        "dmg",
        "--store",
        store_name,
        "--no-progress",
        "--label",
        "mode=x",
    )
    clean(again)
    assert again.returncode == 0, again.stderr


def test_a_store_whose_samples_are_all_unreadable_says_so(tmp_path):
    path = str(tmp_path / "s.db")
    _damage(path)
    db = sqlite3.connect(path)
    db.execute("UPDATE samples SET value = 'garbage'")
    db.commit()
    db.close()
    report = abstat("report", "--store", path)
    clean(report)
    assert report.returncode == 2 and "damaged store" in report.stderr and "is not a number" in report.stderr
    assert "no matching samples" not in report.stderr
    (tmp_path / "out.csv").write_text("an older export\n")
    exported = abstat("export", "--store", path, "-o", str(tmp_path / "out.csv"))
    assert exported.returncode == 2 and "damaged store, no sample is readable" in exported.stderr
    assert (tmp_path / "out.csv").read_text() == "an older export\n"  # nothing readable replaces nothing


def test_export_of_a_store_with_damaged_pages_exports_what_is_readable(tmp_path):
    path = str(tmp_path / "s.db")
    done = abstat(
        "run",
        "-n",
        "300",
        "-v",
        "a=true",
        "-v",
        "b=true",
        "--experiment",
        "d",
        "--store",
        path,
        "--no-progress",
        "--no-json-lines",
    )
    assert done.returncode == 0, done.stderr
    whole = abstat("export", "--store", path).stdout.count("\n")
    db = sqlite3.connect(path)  # scribble over a leaf page of the samples table, two thirds in
    leaves = [
        page
        for (page,) in db.execute(
            "SELECT pageno FROM dbstat WHERE name = 'samples' AND pagetype = 'leaf' ORDER BY pageno"
        )
    ]
    page_size = db.execute("PRAGMA page_size").fetchone()[0]
    db.close()
    with open(path, "r+b") as handle:
        handle.seek(page_size * (leaves[len(leaves) * 2 // 3] - 1) + 100)
        handle.write(b"\xde\xad" * 200)
    exported = abstat("export", "--store", path)
    clean(exported)
    assert exported.returncode == 2 and len(exported.stderr.splitlines()) == 1
    assert "damaged store, exported only the readable samples" in exported.stderr
    assert "integrity check" in exported.stderr
    rows = exported.stdout.count("\n")
    assert whole // 2 < rows < whole  # most of it, not all of it, and not just the header
    saved = abstat("export", "--store", path, "-o", str(tmp_path / "out.csv"))
    assert saved.returncode == 2 and (tmp_path / "out.csv").read_text().count("\n") == rows
    for command in (["report"], ["show", "d"], ["list"]):
        done = abstat(*command, "--store", path)
        clean(done)
        assert done.returncode in (0, 2) and (done.returncode == 0 or "damaged store" in done.stderr)


def test_a_sample_whose_metric_the_store_cannot_read_is_a_damaged_store_not_an_internal_error(tmp_path):
    """A damaged page can hand out a metric of another type (a blob); sorting the sets' keys met it as
    ``TypeError: '<' not supported`` (an internal error from report and show)."""
    path = str(tmp_path / "s.db")
    done = abstat("run", "-n", "3", "-v", "a=true", "-v", "b=true", "--experiment", "d", "--store", path)
    assert done.returncode == 0, done.stderr
    with sqlite3.connect(path) as db:
        db.execute("UPDATE samples SET metric = X'DEAD' WHERE metric = 'wall' AND run_id = (SELECT min(id) FROM runs)")
    for command in (["report"], ["show", "d"]):
        refused = abstat(*command, "--store", path)
        clean(refused)
        assert refused.returncode == 2 and len(refused.stderr.splitlines()) == 1, refused.stderr
        assert "damaged store (unreadable run, variant or metric in 1 of " in refused.stderr


@pytest.mark.parametrize(
    "url",
    [
        "postgresql://u:pa55word@[bad/x",
        "postgres://u@127.0.0.1:1/db?password=pa55word",
        "postgresql://u:pa55word@127.0.0.1:99999999/x",
    ],
)
def test_malformed_or_unreachable_urls_are_one_masked_line(url):
    pytest.importorskip("psycopg")
    for command in (["list"], ["report"], ["import", "x.db"], ["compare", "e:a", "e:b"]):
        done = abstat(*command, "--store", url, env={"PGCONNECT_TIMEOUT": "3"})
        assert done.returncode == 2 and len(done.stderr.splitlines()) == 1, done.stderr
        clean(done, "pa55word")


def test_every_public_method_of_the_store_turns_driver_errors_into_one_line():
    """A server that went away while the end-of-run report read the runs (RunReader.run_notes) was an
    internal error: the read mixins' methods were not guarded."""
    import inspect

    from abstat.store.db import Store

    public = {
        name
        for cls in Store.__mro__[1:-1]
        for name, member in vars(cls).items()
        if not name.startswith("_") and inspect.isfunction(member)
    }
    assert {"run_notes", "add_checked_runs", "add_run", "invocations"} <= public
    unguarded = sorted(name for name in public if not hasattr(getattr(Store, name), "__wrapped__"))
    assert unguarded == [], unguarded
