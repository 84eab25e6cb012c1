"""Issue 15 §3: ``-o FILE`` never replaces what is not a regular file, and never hides a failed write."""

from __future__ import annotations

import os
import stat
import threading
from pathlib import Path

import pytest

from abstat.errors import InputError
from abstat.cli.outfile import write_output
from support import paths
from support.cli import run_abstat as abstat

SRC = paths.SRC
DATA = paths.DATA


@pytest.fixture
def store(tmp_path: Path) -> Path:
    result = abstat(
        "run",
        "-n",
        "2",
        "--no-progress",
        "--experiment",
        "e",
        "--store",
        "s.db",
        "-v",
        "a=true",
        "-v",
        "b=true",
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stderr
    return tmp_path / "s.db"


def test_a_regular_file_is_replaced_whole_and_keeps_its_mode(tmp_path):
    out = tmp_path / "out.txt"
    out.write_text("old\n")
    out.chmod(0o640)
    write_output(str(out), lambda handle: handle.write("new\n"))
    assert out.read_text() == "new\n" and stat.S_IMODE(out.stat().st_mode) == 0o640
    assert [p.name for p in tmp_path.iterdir()] == ["out.txt"]  # no temporary file left


def test_a_failure_half_way_leaves_the_old_file_and_no_temporary(tmp_path):
    out = tmp_path / "out.txt"
    out.write_text("old\n")

    def fail(handle):
        handle.write("half")
        raise OSError(28, "No space left on device")

    with pytest.raises(InputError, match="out.txt: cannot write: No space left on device"):
        write_output(str(out), fail)
    assert out.read_text() == "old\n" and [p.name for p in tmp_path.iterdir()] == ["out.txt"]


def test_a_symlink_stays_a_symlink_and_its_target_is_replaced(tmp_path):
    target = tmp_path / "real.txt"
    target.write_text("old\n")
    link = tmp_path / "link.txt"
    link.symlink_to(target)
    write_output(str(link), lambda handle: handle.write("new\n"))
    assert link.is_symlink() and target.read_text() == "new\n"


def test_a_fifo_is_written_through_not_replaced(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    received: list[bytes] = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_bytes()))
    reader.start()
    write_output(str(fifo), lambda handle: handle.write("through\n"))
    reader.join(10)
    assert received == [b"through\n"] and stat.S_ISFIFO(fifo.stat().st_mode)


def test_dev_null_is_written_through(tmp_path):
    write_output(os.devnull, lambda handle: handle.write("x" * 100_000))
    assert stat.S_ISCHR(os.stat(os.devnull).st_mode)


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
def test_a_full_device_is_an_error_not_a_success():
    with pytest.raises(InputError, match="/dev/full: cannot write: No space left on device"):
        write_output("/dev/full", lambda handle: handle.write("x\n"))


def test_a_directory_is_refused(tmp_path):
    with pytest.raises(InputError, match="is a directory"):
        write_output(str(tmp_path), lambda handle: handle.write("x"))


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
def test_export_and_report_to_a_full_device_exit_2(store, tmp_path):
    for args in (
        ["export", "--store", str(store), "-o", "/dev/full"],
        ["report", "--store", str(store), "-o", "/dev/full"],
    ):
        result = abstat(*args, cwd=tmp_path)
        assert result.returncode == 2, result.stderr
        assert result.stderr.count("\n") == 1 and "/dev/full: cannot write: No space left on device" in result.stderr


def test_export_through_a_symlink_and_a_fifo(store, tmp_path):
    real = tmp_path / "real.csv"
    real.write_text("old\n")
    link = tmp_path / "link.csv"
    link.symlink_to(real)
    assert abstat("export", "--store", str(store), "-o", str(link), cwd=tmp_path).returncode == 0
    assert link.is_symlink() and real.read_text().startswith("experiment,")
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    received: list[bytes] = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_bytes()))
    reader.start()
    assert abstat("report", "--store", str(store), "--format", "csv", "-o", str(fifo), cwd=tmp_path).returncode == 0
    reader.join(10)
    assert stat.S_ISFIFO(fifo.stat().st_mode) and received and received[0].count(b"\n") > 1


def test_an_output_naming_an_input_is_refused_and_the_input_kept(tmp_path):
    """attack22 A7: ``-o`` onto the command's own input (itself, a link to it, a file in an input directory,
    the state or the store) is refused in one line before any work, exit 2, and the input is left whole."""
    samples = "".join(f"{v}\n" for v in range(1, 21))
    (tmp_path / "a.txt").write_text(samples)
    (tmp_path / "b.txt").write_text("".join(f"{v}\n" for v in range(2, 22)))
    (tmp_path / "link.txt").symlink_to("a.txt")
    history = "rev,bench,value\n" + "".join(f"r{i:02d},b,{100 + i % 3}\n" for i in range(12))
    (tmp_path / "d").mkdir()
    for name in ("h.csv", "d/h.csv", "state.json"):
        (tmp_path / name).write_text(history)
    for args, victim in (
        (["report", "a.txt", "b.txt", "-o", "a.txt"], "a.txt"),
        (["report", "a.txt", "b.txt", "-o", "link.txt"], "a.txt"),
        (["report", "a.txt", "b.txt", "--format", "hyperfine", "-o", "b.txt"], "b.txt"),
        (["history", "--input", "h.csv", "--no-state", "-o", "h.csv"], "h.csv"),
        (["history", "--input", "d", "--no-state", "-o", "d/h.csv"], "d/h.csv"),
        (["history", "--input", "h.csv", "--state", "state.json", "-o", "state.json"], "state.json"),
    ):
        before = (tmp_path / victim).read_text()
        result = abstat(*args, cwd=tmp_path)
        assert result.returncode == 2, (args, result.stdout, result.stderr)
        assert result.stderr.count("\n") == 1 and "is an input of this command" in result.stderr, result.stderr
        assert (tmp_path / victim).read_text() == before
    assert abstat("report", "a.txt", "b.txt", "-o", "out.txt", cwd=tmp_path).returncode == 0
    assert (tmp_path / "out.txt").read_text().startswith("abstat report")


def test_export_refuses_one_file_for_samples_and_machines(store, tmp_path):
    result = abstat("export", "--store", str(store), "-o", "x.csv", "--machines", "./x.csv", cwd=tmp_path)
    assert result.returncode == 2 and "-o and --machines name the same file" in result.stderr
    assert not (tmp_path / "x.csv").exists()
