"""Byte-exact conformance of ``abstat ministat`` with the reference programs.

Every case of the recorded corpus (``tests/data/ministat-conformance.tar.xz``:
``classic/`` = the ministat Linux distributions ship, ``freebsd/`` = today's
FreeBSD ministat) must give the same standard output and exit status.
The whole corpus runs in-process (fast); a handful of cases also run
through the real ``python -m abstat ministat`` in a subprocess.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from abstat.ministat import cli
from support import paths

CORPUS = paths.DATA / "ministat-conformance.tar.xz"
DIALECTS = ("classic", "freebsd")


def _load_cases() -> list[dict]:
    cases = []
    with tarfile.open(CORPUS) as archive:
        for dialect in DIALECTS:
            member = archive.extractfile(f"{dialect}/cases.json")
            assert member is not None
            for case in json.load(member):
                case["folder"] = dialect
                cases.append(case)
    return cases


CASES = _load_cases()


@pytest.fixture(scope="session")
def corpus_dir(tmp_path_factory) -> Path:
    target = tmp_path_factory.mktemp("ministat-corpus")
    with tarfile.open(CORPUS) as archive:
        if sys.version_info >= (3, 12):
            archive.extractall(target, filter="data")
        else:
            archive.extractall(target)
    return target


def run_in_process(args: list[str], stdin: bytes = b"", cwd: Path | None = None) -> tuple[bytes, str, int]:
    """Run ``abstat ministat ARGS`` in this process; (stdout, stderr, status)."""
    out = io.BytesIO()
    stdout = io.TextIOWrapper(out, encoding="utf-8", errors="surrogateescape")
    stdin_wrapper = io.TextIOWrapper(io.BytesIO(stdin), encoding="utf-8")
    stderr = io.StringIO()
    saved = sys.stdout, sys.stdin, sys.stderr
    old_cwd = os.getcwd()
    sys.stdout, sys.stdin, sys.stderr = stdout, stdin_wrapper, stderr
    try:
        if cwd is not None:
            os.chdir(cwd)
        status = cli.main(args)
    finally:
        os.chdir(old_cwd)
        stdout.flush()
        sys.stdout, sys.stdin, sys.stderr = saved
    return out.getvalue(), stderr.getvalue(), status


def test_corpus_is_complete():
    counts = {dialect: sum(1 for case in CASES if case["folder"] == dialect) for dialect in DIALECTS}
    assert counts["classic"] >= 200 and counts["freebsd"] >= 200
    assert {case["dialect"] for case in CASES} == set(DIALECTS)


@pytest.mark.parametrize("case", CASES, ids=[f"{case['folder']}-{case['name']}" for case in CASES])
def test_case_in_process(case, corpus_dir, monkeypatch):
    monkeypatch.delenv("ABSTAT_MINISTAT_DIALECT", raising=False)
    monkeypatch.delenv("POSIXLY_CORRECT", raising=False)
    folder = corpus_dir / case["folder"]
    stdin = (folder / case["stdin"]).read_bytes() if case["stdin"] else b""
    stdout, stderr, status = run_in_process(["--dialect", case["dialect"], *case["args"]], stdin, folder)
    assert stdout.decode("utf-8", "surrogateescape") == case["stdout"]
    assert status == case["rc"]
    if status != 0:
        assert stderr.strip(), "a failure must say why on standard error"
        assert "Traceback" not in stderr


def _subprocess_cases() -> list[dict]:
    wanted = {
        "random_1_0",
        "random_1_1",
        "one_dataset_stdin",
        "dash_is_stdin",
        "edge_hex_float",
        "edge_crlf",
        "edge_invalid_word",
        "missing_file",
        "unknown_option",
        "too_many",
        "df_101",
    }
    return [case for case in CASES if case["name"] in wanted]


SUBPROCESS_CASES = _subprocess_cases()


@pytest.mark.parametrize(
    "case", SUBPROCESS_CASES, ids=[f"{case['folder']}-{case['name']}" for case in SUBPROCESS_CASES]
)
def test_case_subprocess(case, corpus_dir):
    folder = corpus_dir / case["folder"]
    env = dict(os.environ)
    env.pop("POSIXLY_CORRECT", None)
    command = [sys.executable, "-m", "abstat", "ministat"]
    if case["dialect"] == "freebsd" and case["name"].startswith("random"):
        env["ABSTAT_MINISTAT_DIALECT"] = "freebsd"  # the environment variable way
    else:
        env.pop("ABSTAT_MINISTAT_DIALECT", None)
        command += ["--dialect", case["dialect"]]
    stdin = (folder / case["stdin"]).read_bytes() if case["stdin"] else b""
    result = subprocess.run(command + case["args"], input=stdin, capture_output=True, cwd=folder, env=env)
    assert result.stdout.decode("utf-8", "surrogateescape") == case["stdout"]
    assert result.returncode == case["rc"]
    assert b"Traceback" not in result.stderr
    if result.returncode != 0:
        assert result.stderr.strip()
