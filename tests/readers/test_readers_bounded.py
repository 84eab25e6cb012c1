"""Issue 36, items 12, 15, 16 (and 10's journal lines, 18's criterion directory): every reader is bounded.
Each hostile file is read by abstat in a child process whose peak memory is measured (``wait4``): one
line naming the file, exit status 2, under 512 MiB, never a hang; a journal's damaged line loses no other
run."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zlib
from pathlib import Path

import pytest
from support import paths

SRC = paths.SRC
LIMIT_KIB = 512 * 1024


# Run through a small Python that sets the memory limit, forks, execs abstat and reports its child's peak: the
# child's ru_maxrss counts the memory of the process it was forked from (Linux keeps the old address space's
# high-water mark across exec), and a pytest worker may have grown to hundreds of MiB by the time it gets here
# (CI: every child "peaked" at the worker's 546 MiB).  Forked from this small process, abstat's peak is its own.
_SPAWN = (
    "import os, resource, sys\n"
    "resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))\n"  # a failing reader must not take the machine
    "pid = os.fork()\n"
    "if pid == 0:\n"
    "    os.dup2(os.open(os.devnull, os.O_WRONLY), 1)\n"
    "    os.execv(sys.executable, [sys.executable, '-m', 'abstat', *sys.argv[1:]])\n"
    "_, status, usage = os.wait4(pid, 0)\n"
    "print(os.waitstatus_to_exitcode(status), usage.ru_maxrss)\n"
)


def abstat_measured(*args: str, cwd: str) -> tuple[int, str, int]:
    """(exit status, standard error, peak RSS in KiB) of ``abstat ARGS``."""
    env = {k: v for k, v in os.environ.items() if k != "ABSTAT_STORE"}
    with open(os.path.join(cwd, "stderr"), "w+") as err:
        process = subprocess.Popen(
            [sys.executable, "-S", "-c", _SPAWN, *args],
            cwd=cwd,
            stdout=subprocess.PIPE,
            stderr=err,
            stdin=subprocess.DEVNULL,
            env=dict(env, PYTHONPATH=SRC),
            start_new_session=True,  # its abstat with it, if it hangs
        )
        try:
            out, _ = process.communicate(timeout=120)  # a reader that hangs fails the test instead of hanging it
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, 9)
            process.wait()
            raise AssertionError(f"abstat {' '.join(args)} hung") from None
        err.seek(0)
        status, peak = out.split()
        return int(status), err.read(), int(peak)


def _asv_bomb(root: Path) -> str:
    params = [[f"p{j}_{i}" for i in range(60)] for j in range(6)]  # 60**6 combinations, named in 5 KB
    document = {
        "commit_hash": "a" * 40,
        "env_name": "e",
        "params": {"machine": "m"},
        "date": 1,
        "results": {"bench": {"result": [1.0, 2.0], "params": params}},
    }
    (root / "r.json").write_text(json.dumps(document))
    return "r.json"


def _gzip_bomb(root: Path) -> str:
    compressor = zlib.compressobj(9, zlib.DEFLATED, 31)
    with open(root / "bomb.txt.gz", "wb") as handle:
        chunk = b"1\n" * (1 << 20)
        for _ in range(150):  # 300 MiB of "1\n" in a few hundred KB
            handle.write(compressor.compress(chunk))
        handle.write(compressor.flush())
    return "bomb.txt.gz"


def _criterion(root: Path, sample: str) -> str:
    directory = root / "criterion" / "bench" / "new"
    directory.mkdir(parents=True)
    (directory / "benchmark.json").write_text(json.dumps({"group_id": "g", "function_id": "f", "full_id": "g/f"}))
    if sample == "fifo":
        os.mkfifo(directory / "sample.json")
    elif sample == "deep":
        (directory / "sample.json").write_text("[" * 200_000 + "]" * 200_000)
    else:
        (directory / "sample.json").symlink_to("/dev/zero")
    return "criterion"


def _asv_with(root: Path, benchmarks: str) -> str:
    results = root / "results" / "machine"
    results.mkdir(parents=True)
    document = {
        "commit_hash": "a" * 40,
        "env_name": "e",
        "params": {"machine": "m"},
        "date": 1,
        "results": {"bench": 1.5},
    }
    (results / "aaaaaaaa-e.json").write_text(json.dumps(document))
    if benchmarks == "fifo":
        os.mkfifo(root / "results" / "benchmarks.json")
    else:
        (root / "results" / "benchmarks.json").symlink_to("/dev/zero")
    return "results"


def _deep_asv(root: Path) -> str:
    (root / "deep.json").write_text('{"commit_hash": "a", "results": ' + "[" * 200_000 + "]" * 200_000 + "}")
    return "deep.json"


HOSTILE = {
    "asv params bomb": (_asv_bomb, 0),
    "gzip bomb": (_gzip_bomb, 2),
    "criterion sample.json FIFO": (lambda root: _criterion(root, "fifo"), 2),
    "criterion sample.json /dev/zero": (lambda root: _criterion(root, "zero"), 2),
    "criterion deeply nested": (lambda root: _criterion(root, "deep"), 2),
    "asv benchmarks.json FIFO": (lambda root: _asv_with(root, "fifo"), 0),
    "asv benchmarks.json /dev/zero": (lambda root: _asv_with(root, "zero"), 0),
    "asv deeply nested": (_deep_asv, 2),
    "/dev/zero": (lambda root: "/dev/zero", 2),
}


@pytest.mark.parametrize("name", list(HOSTILE))
def test_a_hostile_file_is_read_bounded(tmp_path, name):
    make, expected = HOSTILE[name]
    target = make(tmp_path)
    status, err, peak = abstat_measured("report", target, cwd=str(tmp_path))
    assert status == expected, err
    assert "Traceback" not in err and "internal error" not in err, err
    if expected == 2:
        assert err.count("\n") == 1, err
    assert peak < LIMIT_KIB, f"{name}: {peak // 1024} MiB"


@pytest.mark.parametrize(
    "command",
    [
        ("run", "--spec", "/dev/zero"),
        ("history", "--input", "/dev/zero"),
        ("import", "FIFO"),
        ("run", "--spec", "DEEP"),
    ],
)
def test_named_inputs_are_refused_at_once(tmp_path, command):
    os.mkfifo(tmp_path / "FIFO")
    (tmp_path / "DEEP").write_text("[" * 200_000 + "]" * 200_000)
    status, err, peak = abstat_measured(*command, cwd=str(tmp_path))
    assert status == 2 and err.count("\n") == 1 and "Traceback" not in err and "internal error" not in err, err
    assert peak < LIMIT_KIB


def test_a_criterion_directory_without_samples_is_not_called_asv(tmp_path):
    directory = tmp_path / "criterion" / "bench" / "new"
    directory.mkdir(parents=True)
    (directory / "estimates.json").write_text("{}")
    status, err, _ = abstat_measured("report", "criterion", cwd=str(tmp_path))
    assert status == 2 and "criterion directory without sample.json" in err and "asv" not in err, err


def test_damaged_journal_lines_lose_no_other_run(tmp_path, monkeypatch):
    from abstat.engine.buffer import RunBuffer
    from abstat.engine.events import RunDone
    from abstat.store import open_store

    class Guard:
        def supervised(self) -> bool:
            return True

        def watch_journal(self, replay) -> bool:
            return True

    monkeypatch.setattr("tempfile.tempdir", str(tmp_path))
    path = str(tmp_path / "s.db")
    with open_store(path) as opened:
        invocation = opened.start_invocation("e", {"hostname": "h", "boot_id": "b"}, variants=["a"])
        buffer = RunBuffer(opened, invocation, {"a": "./bench"}, guard=Guard())
        for index in range(4):
            buffer.add(RunDone("a", index, index, "ok", 0.001, 0, 1.7e9 + index, {"wall": [0.001]}, {"wall": "s"}, ()))
        lines = Path(buffer.path).read_bytes().split(b"\n")
        shutil.copy(buffer.path, tmp_path / "kept.jsonl")
    head, runs = lines[0], lines[1:5]
    no_uid = json.loads(runs[3])
    del no_uid["uid"]
    forged = [
        head,
        runs[0],
        b"{not json",
        runs[1],
        b"[" * 100_000,
        b'{"uid": "x", "position": ' + b"9" * 5000 + b"}",
        json.dumps(no_uid).encode(),
        runs[2],
        b"",
    ]
    journal_path = tmp_path / "forged.jsonl"
    journal_path.write_bytes(b"\n".join(forged))
    for attempt in range(2):  # twice: nothing is added again
        status, err, _ = abstat_measured("import", str(journal_path), "--store", path, cwd=str(tmp_path))
        assert status == 2 and err.count("\n") == 1 and "damaged line(s) 3, 5, 6, 7" in err, err
        assert "Traceback" not in err and "internal error" not in err
        with open_store(path, create=False) as opened:
            assert opened.db.execute("SELECT COUNT(*) FROM runs").fetchone()[0] == 3, attempt
    assert journal_path.exists()
