"""Issue 36, item 16: a damaged change-point record (``history``'s record of the change points it
reported, ``--state`` / ``STORE.changepoints.json``) ended in "internal error" (AttributeError,
TypeError, RecursionError).  Every scribbled or forged record tried here is one line naming the
file, exit status 2, and the record is left as it was; a FIFO or a device is never read."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from support import paths

SRC = paths.SRC
KEY = "metric=ns"

DAMAGED = {
    "series-is-text": {"version": 1, "series": {KEY: "r030"}},
    "series-is-a-number": {"version": 1, "series": {KEY: 5}},
    "series-is-a-mapping": {"version": 1, "series": {KEY: {"rev": "r030"}}},
    "entry-is-text": {"version": 1, "series": {KEY: ["r030"]}},
    "entry-is-null": {"version": 1, "series": {KEY: [None]}},
    "rev-is-a-list": {"version": 1, "series": {KEY: [{"rev": ["r030"]}]}},
    "rev-is-a-mapping": {"version": 1, "series": {KEY: [{"rev": {"r": 1}}]}},
    "rev-is-a-number": {"version": 1, "series": {KEY: [{"rev": 30}]}},
    "rev-missing": {"version": 1, "series": {KEY: [{"shift": 4.9}]}},
    "provisional-is-text": {"version": 1, "series": {KEY: [{"rev": "r030", "provisional": "no"}]}},
    "version-true": {"version": True, "series": {}},
    "nested": "[" * 100_000,
    "huge-integer": '{"version": 1, "series": {"metric=ns": [{"rev": ' + "9" * 5000 + "}]}}",
    "rev-nan": '{"version": 1, "series": {"metric=ns": [{"rev": NaN}]}}',
    "not-utf8": b'{"version": 1, "series": {"\xff": []}}',
}


def _abstat(*args: str, cwd) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "ABSTAT_STORE"}
    return subprocess.run(
        [sys.executable, "-m", "abstat", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        env=dict(env, PYTHONPATH=SRC),
        stdin=subprocess.DEVNULL,
    )


@pytest.fixture
def history_csv(tmp_path):
    rows = "rev,ns\n" + "".join(f"r{i:03d},{100 + (i >= 30) * 5 + (i % 3) * 0.1}\n" for i in range(60))
    (tmp_path / "h.csv").write_text(rows)
    return tmp_path


@pytest.mark.parametrize("name", sorted(DAMAGED))
def test_a_damaged_change_point_record_is_one_line_and_left_alone(history_csv, name):
    document = DAMAGED[name]
    content = (
        document
        if isinstance(document, bytes)
        else (document if isinstance(document, str) else json.dumps(document)).encode()
    )
    record = history_csv / "record.json"
    record.write_bytes(content)
    done = _abstat("history", "--input", "h.csv", "--state", "record.json", cwd=history_csv)
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stderr.count("\n") == 1 and done.stderr.startswith("abstat history: record.json: "), done.stderr
    assert "internal error" not in done.stderr and "Traceback" not in done.stderr
    assert "change-point record" in done.stderr
    assert record.read_bytes() == content  # nothing recorded is overwritten


def test_a_sound_record_is_still_read_and_kept(history_csv):
    first = _abstat("history", "--input", "h.csv", "--state", "record.json", "--format", "json", cwd=history_csv)
    assert first.returncode == 0, first.stderr
    recorded = json.loads((history_csv / "record.json").read_text())
    assert [entry["rev"] for entry in recorded["series"][KEY]] == ["r030"]
    again = _abstat("history", "--input", "h.csv", "--state", "record.json", "--format", "json", cwd=history_csv)
    assert again.returncode == 0, again.stderr
    (series,) = json.loads(again.stdout)["series"]
    assert [c["status"] for c in series["change_points"]] == ["kept"]


@pytest.mark.parametrize("kind", ["fifo", "device", "directory"])
def test_a_record_that_is_no_regular_file_is_never_read(history_csv, kind):
    path = history_csv / "record.json"
    if kind == "fifo":
        os.mkfifo(path)  # a reader would wait forever for a writer
    elif kind == "directory":
        path.mkdir()
    else:
        path = "/dev/zero"  # an endless file
    done = _abstat("history", "--input", "h.csv", "--state", str(path), cwd=history_csv)
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
    assert done.stderr.endswith(": not a regular file, so not a change-point record\n"), done.stderr
