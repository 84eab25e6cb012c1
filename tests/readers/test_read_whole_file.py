"""``readers.text.read_bytes``: a regular file above one chunk is read again in one read (no join of its
chunks, issue 42); what comes back, the size limit and the NUL-only refusal are as chunk by chunk."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from abstat.errors import InputError
from abstat.readers import bulk, text

CHUNK = text._CHUNK


def _chunked(path, limit: int) -> bytes:
    """The reference: the file read in chunks and joined, as before."""
    with open(path, "rb") as handle:
        data = handle.read(limit + 1)
    if len(data) > limit:
        raise InputError(f"larger than {limit >> 20} MiB: not read", path=str(path))
    return data


@pytest.mark.parametrize("size", [0, 1, CHUNK - 1, CHUNK, CHUNK + 1, 3 * CHUNK + 5])
@pytest.mark.parametrize("limit", [CHUNK // 2, CHUNK, 2 * CHUNK, text.MAX_INPUT_BYTES])
def test_read_bytes_equals_the_file(tmp_path, size: int, limit: int, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "f.txt"
    path.write_bytes(bytes(b"0123456789\n"[i % 11] for i in range(size)))
    calls: list[bytes] = []
    original = bulk.whole_file

    def recorded(*args):
        calls.append(original(*args))
        return calls[-1]

    monkeypatch.setattr(bulk, "whole_file", recorded)
    try:
        expected = _chunked(path, limit)
    except InputError as err:
        with pytest.raises(InputError, match="not read") as raised:
            text.read_bytes(str(path), limit=limit)
        assert str(raised.value) == str(err)
        return
    assert text.read_bytes(str(path), limit=limit) == expected
    assert any(calls) == (size > CHUNK and limit >= CHUNK)  # (the one read is taken above a chunk)


def test_a_file_of_nul_bytes_is_refused_at_once(tmp_path) -> None:
    path = tmp_path / "zeros"
    path.write_bytes(b"\0" * (3 * CHUNK))
    with pytest.raises(InputError, match="NUL bytes only"):
        text.read_bytes(str(path))


def test_whole_file_declines_what_is_not_a_regular_file_read_from_its_start(tmp_path) -> None:
    path = tmp_path / "f"
    path.write_bytes(b"1\n" * CHUNK)
    with open(path, "rb") as handle:
        assert bulk.whole_file(handle, 10**9, CHUNK) == b""  # nothing read yet: not at the chunk's end
        handle.read(CHUNK)
        assert bulk.whole_file(handle, 10**9, CHUNK) == b"1\n" * CHUNK
    read, write = os.pipe()
    with os.fdopen(read, "rb") as pipe:
        os.close(write)
        assert bulk.whole_file(pipe, 10**9, 0) == b""


def test_standard_input_above_a_chunk(tmp_path) -> None:
    """A pipe (no size): read chunk by chunk as before; a redirected file: the one read."""
    data = b"12.5\n" * (CHUNK // 2)
    path = tmp_path / "f"
    path.write_bytes(data)
    code = "import sys; from abstat.readers.text import read_bytes; sys.stdout.write(str(len(read_bytes('-'))))"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    piped = subprocess.run([sys.executable, "-c", code], input=data, capture_output=True, env=env, check=True)
    with open(path, "rb") as handle:
        redirected = subprocess.run(
            [sys.executable, "-c", code], stdin=handle, capture_output=True, env=env, check=True
        )
    assert piped.stdout == redirected.stdout == str(len(data)).encode()
