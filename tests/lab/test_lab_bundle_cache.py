"""The runner's cache on a test box (lab/bundle.py): a session after the first loads the runner, compiled,
from ``~/.cache/abstat/runner/DIGEST``; a cache someone else could change is never executed, and a
payload that is not the one its digest names is never cached.

Each session is the real command line (``bundle.remote_command``) run by ``sh -c`` with this machine's
Python, with ``HOME`` in a temporary directory.  Whether a session loaded the runner from the cache is
seen by planting a line in the cached ``remote.py`` that leaves a file behind when it is executed."""

from __future__ import annotations

import glob
import hashlib
import json
import os
import subprocess
import sys
import threading

import pytest

from abstat.lab import bundle

PLAN = {"variants": {"a": "true"}, "slots": [["a", 0, False, 0]]}
PLANTED = "\nopen(os.path.join(os.path.expanduser('~'), 'planted-ran'), 'w').close()\n"


def _python_3_8() -> str | None:
    found = sorted(glob.glob(os.path.expanduser("~/.pyenv/versions/3.8.*/bin/python3")))
    return found[0] if found else None


def _session(
    home, python: str = sys.executable, command: str | None = None, errors: list[str] | None = None
) -> tuple[dict, list[dict]]:
    """One runner session with ``PLAN``: its hello and its later messages (it must end well); its standard
    error appended to ``errors``."""
    command = command or bundle.remote_command(python)
    process = subprocess.Popen(
        ["sh", "-c", command],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd="/",
        env={"HOME": str(home), "PATH": "/usr/bin:/bin"},
    )
    try:
        process.stdin.write(bundle.payload() + (json.dumps({"run": PLAN}) + "\n").encode())
        process.stdin.flush()
        lines = []
        for line in process.stdout:  # standard input stays open until the block is done, as over ssh
            lines.append(json.loads(line))
            if "done" in lines[-1]:
                break
    finally:
        process.stdin.close()
        process.wait(timeout=120)
    everything = process.stderr.read().decode()
    if errors is not None:
        errors.append(everything)
    stderr = everything[-2000:]
    assert process.returncode == 0, stderr
    hello, *messages = lines
    assert [m["result"]["status"] for m in messages if "result" in m] == ["ok"], stderr
    assert messages[-1]["done"]["error"] is None
    return hello["hello"], messages


def _cache(home) -> str:
    return os.path.join(str(home), ".cache", "abstat", "runner")


def _plant(home, python: str = sys.executable) -> str:
    """The cached ``remote.py``'s compiled bytecode replaced by that of a changed source, with the header
    of the shipped source (its mtime and size), as someone able to write the cache could: the sources
    still hold the zip's bytes, so only the checks of who may change the cache keep it from running."""
    remote = os.path.join(_cache(home), bundle.digest(), "abstat", "box", "runner", "remote.py")
    script = (
        "import importlib._bootstrap_external as b, importlib.util, os, sys\n"
        "source, planted = sys.argv[1], sys.argv[2]\n"
        "text = open(source).read() + planted\n"
        "info = os.stat(source)\n"
        "code = compile(text, source, 'exec')\n"
        "data = b._code_to_timestamp_pyc(code, int(info.st_mtime), info.st_size)\n"
        "open(importlib.util.cache_from_source(source), 'wb').write(data)\n"
    )
    subprocess.run([python, "-I", "-c", script, remote, PLANTED], check=True)
    return os.path.join(str(home), "planted-ran")


def test_the_zip_and_so_the_key_are_the_same_for_the_same_sources():
    first = bundle.runner_zip()
    bundle.runner_zip.cache_clear()
    bundle.digest.cache_clear()
    assert bundle.runner_zip() == first and bundle.digest() == hashlib.sha256(first).hexdigest()
    command = bundle.remote_command()
    assert command.startswith("python3 -I -S -c ") and command.endswith(" " + bundle.digest())


def test_a_second_session_runs_the_cached_runner(tmp_path):
    _session(tmp_path)
    entry = os.path.join(_cache(tmp_path), bundle.digest())
    assert os.listdir(_cache(tmp_path)) == [bundle.digest()]  # unpacked whole, nothing left beside it
    assert os.stat(entry).st_mode & 0o777 == 0o700 and os.stat(_cache(tmp_path)).st_mode & 0o777 == 0o700
    tag = sys.implementation.cache_tag
    assert os.path.exists(os.path.join(entry, "abstat", "box", "runner", "__pycache__", f"remote.{tag}.pyc"))
    planted = _plant(tmp_path)
    _session(tmp_path)
    assert os.path.exists(planted)  # the cache's remote.py ran, not the shipped zip's


@pytest.mark.parametrize(
    "change", ["cache writable by its group", "home writable by all", "entry readable by all", "entry is a link"]
)
def test_a_cache_others_may_change_is_never_executed(tmp_path, change):
    home = tmp_path / "home"
    home.mkdir()
    _session(home)
    planted = _plant(home)
    entry = os.path.join(_cache(home), bundle.digest())
    if change == "cache writable by its group":
        os.chmod(_cache(home), 0o770)
    elif change == "home writable by all":
        os.chmod(home, 0o777)  # not sticky: anyone could replace .cache
    elif change == "entry readable by all":
        os.chmod(entry, 0o755)
    else:
        os.rename(entry, str(tmp_path / "elsewhere"))
        os.symlink(str(tmp_path / "elsewhere"), entry)
    hello, _ = _session(home)  # the runner still runs, from the zip it was sent
    assert hello["boot_id"] and not os.path.exists(planted)


@pytest.mark.skipif(os.geteuid() != 0, reason="giving a directory to another user needs root")
def test_a_cache_entry_of_another_user_is_never_executed(tmp_path):
    _session(tmp_path)
    planted = _plant(tmp_path)
    os.chown(os.path.join(_cache(tmp_path), bundle.digest()), 65534, 65534)
    _session(tmp_path)
    assert not os.path.exists(planted)


def test_a_payload_that_is_not_the_one_its_digest_names_is_not_cached(tmp_path):
    other = hashlib.sha256(b"another runner").hexdigest()
    command = bundle.remote_command().replace(bundle.digest(), other).replace("python3", sys.executable, 1)
    _session(tmp_path, command=command)
    assert not os.path.exists(_cache(tmp_path)) or os.listdir(_cache(tmp_path)) == []


@pytest.mark.parametrize("damage", ["files emptied", "a file missing", "a file cut short"])
def test_an_entry_damaged_by_a_lost_box_is_unpacked_again(tmp_path, damage):
    """A box whose QEMU was killed kept the renamed entry but not its files' contents (seen in CI: the
    resumed run's runner had a ``remote.py`` without ``main``); the next session notices and unpacks it
    again, and the runner runs."""
    _session(tmp_path)
    entry = os.path.join(_cache(tmp_path), bundle.digest())
    remote = os.path.join(entry, "abstat", "box", "runner", "remote.py")
    if damage == "files emptied":
        for top, _, names in os.walk(entry):
            for name in names:
                open(os.path.join(top, name), "w").close()
    elif damage == "a file missing":
        os.unlink(remote)
    else:
        with open(remote, "r+b") as target:
            target.truncate(os.path.getsize(remote) // 2)
    hello, _ = _session(tmp_path)
    assert hello["boot_id"]
    with open(remote, "rb") as repaired:
        assert b"def main(" in repaired.read()
    assert os.listdir(_cache(tmp_path)) == [bundle.digest()]


def test_sessions_starting_together_share_one_entry(tmp_path):
    errors: list[BaseException] = []

    def one() -> None:
        try:
            _session(tmp_path)
        except BaseException as error:  # reported by the main thread
            errors.append(error)

    threads = [threading.Thread(target=one) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors, errors
    assert os.listdir(_cache(tmp_path)) == [bundle.digest()]  # the others' copies removed


@pytest.mark.skipif(_python_3_8() is None, reason="no Python 3.8 on this machine")
def test_the_cache_works_on_python_3_8(tmp_path):
    for _ in range(2):
        hello, _ = _session(tmp_path, _python_3_8())
        assert hello["python"].startswith("3.8.")
    cached = os.path.join(_cache(tmp_path), bundle.digest(), "abstat", "box", "runner", "__pycache__")
    assert glob.glob(os.path.join(cached, "remote.cpython-38.pyc"))


def test_the_cache_is_made_private_under_a_group_writable_umask(tmp_path):
    command = "umask 002; " + bundle.remote_command(sys.executable)
    _session(tmp_path, command=command)
    for path in (".cache", ".cache/abstat", ".cache/abstat/runner"):
        assert os.stat(os.path.join(str(tmp_path), path)).st_mode & 0o777 == 0o700
    planted = _plant(tmp_path)
    _session(tmp_path, command=command)
    assert os.path.exists(planted)


@pytest.mark.parametrize("python", [sys.executable, _python_3_8()])
def test_a_cached_session_neither_imports_zipfile_nor_loads_openssl(tmp_path, python):
    """Issue 38: a session that finds its runner in the cache checks the entry against the zip without zipfile
    (whose imports, pathlib, shutil, bz2, lzma..., were a tenth of a cached session's instructions) and the
    payload against its digest without hashlib (which loads OpenSSL's library); the first session, which
    unpacks, may use both.  What each session imported: ``python -X importtime``."""
    if python is None:
        pytest.skip("no Python 3.8 here")
    command = bundle.remote_command(f"{python} -X importtime")
    imported: list[set[str]] = []
    for _ in range(2):
        errors: list[str] = []
        hello, _ = _session(tmp_path, command=command, errors=errors)
        assert hello["boot_id"]
        imported.append({line.split("|")[-1].strip() for line in errors[0].splitlines() if "|" in line})
    first, cached = imported
    assert {"zipfile", "abstat.box.runner.remote"} <= first
    assert "abstat.box.runner.remote" in cached and not {"zipfile", "hashlib", "_hashlib"} & cached, sorted(cached)
    assert os.listdir(_cache(tmp_path)) == [bundle.digest()]


@pytest.mark.parametrize("python", [sys.executable, _python_3_8()])
def test_the_shipped_runner_starts_without_typing(tmp_path, python):
    """Issue 38: importing the runner is most of its start in a TCG guest, and ``typing`` was a tenth of that:
    the shipped runner, unpacked, imports neither ``typing`` nor what only it needs, on this Python and on 3.8;
    and its metric sources' ``kind`` is a class attribute, not a dataclass field (dataclasses tell a
    ``ClassVar`` only when typing is loaded)."""
    if python is None:
        pytest.skip("no Python 3.8 here")
    import io
    import zipfile

    zipfile.ZipFile(io.BytesIO(bundle.runner_zip())).extractall(tmp_path)
    code = (
        f"import sys, dataclasses; sys.path.insert(0, {str(tmp_path)!r}); from abstat.box.runner import remote;"
        "from abstat.box.runner import sources; import json;"
        "print(json.dumps(['typing' in sys.modules, sorted({f.name for c in sources.SOURCES.values()"
        " for f in dataclasses.fields(c)} & {'kind'}), sorted(sources.SOURCES)]))"
    )
    done = subprocess.run([python, "-I", "-S", "-c", code], capture_output=True, text=True, check=True)
    assert json.loads(done.stdout) == [False, [], ["json-lines", "kmsg", "monitor", "perf", "regex", "trace"]]


@pytest.mark.parametrize("python", [sys.executable, _python_3_8()])
def test_the_shipped_runner_starts_without_inspect_which_loads_when_first_used(tmp_path, python):
    """Issue 38: dataclasses imports inspect, with ast, dis and tokenize (a sixth of the runner's import in a TCG
    guest), only for the docstring of a class that has none.  Importing the shipped runner and its sources,
    doctor and trace leaves them unimported; a dataclass without a docstring then still gets the one dataclasses
    writes (through the stand-in, the real inspect), and ``from inspect import`` works."""
    if python is None:
        pytest.skip("no Python 3.8 here")
    import io
    import zipfile

    zipfile.ZipFile(io.BytesIO(bundle.runner_zip())).extractall(tmp_path)
    code = (
        f"import sys, json; sys.path.insert(0, {str(tmp_path)!r}); from abstat.box.runner import remote;"
        "import dataclasses, abstat.box.runner.sources, abstat.box.runner.trace, abstat.box.doctor.base;"
        "before = sorted(m for m in ('ast', 'dis', 'tokenize') if m in sys.modules);"
        "Point = dataclasses.make_dataclass('Point', [('x', int)]);"
        "from inspect import isclass;"
        "print(json.dumps([before, Point.__doc__, isclass(Point), sys.modules['inspect'].signature.__name__]))"
    )
    done = subprocess.run([python, "-I", "-S", "-c", code], capture_output=True, text=True, check=True)
    assert json.loads(done.stdout) == [[], "Point(x: int)", True, "signature"]
