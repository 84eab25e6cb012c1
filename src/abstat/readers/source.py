"""A result file's text: read as abstat reads every input (``-`` is standard input, gzip transparently).

The readers of peer tools' files (:mod:`abstat.readers.peers`,
:mod:`abstat.readers.gobench`) share it.  Every read is bounded (issue 36):
a peer's result file, and what its gzip expands to, at most
:data:`MAX_RESULT_BYTES`; a file found by name in a results directory
(criterion's ``sample.json``, asv's ``benchmarks.json``) must be a regular
file -- a FIFO is refused, never waited on -- and JSON nested too deeply is
one line, not an internal error.
"""

from __future__ import annotations

import json
import os
import stat
import zlib
from typing import Any

from abstat.errors import InputError

MAX_RESULT_BYTES = 256 << 20  # a peer tool's result file, read or decompressed


def read_text(path: str) -> str:
    """The file's text (``-``: standard input; gzip transparently).

    Reading and decoding are abstat's shared ones
    (:func:`abstat.readers.text.read_bytes`, :func:`~abstat.readers.text.decode_text`):
    InputError naming the file and line for binary, UTF-16 or non-UTF-8 data.
    """
    from abstat.readers.text import STDIN_NAME, decode_text, read_bytes

    name = STDIN_NAME if path == "-" else path
    raw = read_bytes(path, limit=MAX_RESULT_BYTES)
    if raw[:2] == b"\x1f\x8b":
        raw = gunzip(raw, name)
    return decode_text(raw, name).lstrip("\ufeff")


def gunzip(raw: bytes, name: str, limit: int = MAX_RESULT_BYTES) -> bytes:
    """The data of every gzip member in ``raw``, at most ``limit`` bytes (a gzip bomb is one line)."""
    out, left = bytearray(), raw
    try:
        while left:
            inflater = zlib.decompressobj(wbits=31)
            pending = left
            while pending and not inflater.eof:  # a megabyte at a time: no copy of the whole
                out += inflater.decompress(pending, 1 << 20)
                pending = inflater.unconsumed_tail
                if len(out) > limit:
                    raise InputError(f"gzip data that expands to more than {limit >> 20} MiB: not read", path=name)
            if not inflater.eof:
                raise InputError("bad gzip data: the stream ends early", path=name)
            left = inflater.unused_data.lstrip(b"\0")  # members may be padded
    except zlib.error as err:
        raise InputError(f"bad gzip data: {err}", path=name) from None
    return bytes(out)


def read_named(path: str, limit: int = MAX_RESULT_BYTES) -> bytes:
    """A file found by name in a results directory: a regular file (a FIFO or a device is refused at
    once), at most ``limit`` bytes; InputError naming it."""
    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as err:
        raise InputError(f"cannot read: {err.strerror or err}", path=path) from None
    with open(descriptor, "rb") as handle:
        if not stat.S_ISREG(os.fstat(descriptor).st_mode):
            raise InputError("not a regular file (a FIFO or a device?): not read", path=path)
        try:
            data = handle.read(limit + 1)
        except OSError as err:
            raise InputError(f"cannot read: {err.strerror or err}", path=path) from None
    if len(data) > limit:
        raise InputError(f"larger than {limit >> 20} MiB: not read", path=path)
    return data


def loads_json(data: bytes | str, path: str) -> Any:
    """JSON from ``data``: ValueError for bad JSON (nested too deeply and an integer beyond a double's
    range included, as a ValueError)."""
    from abstat.readers.values import decode_json

    if isinstance(data, bytes):  # as json.loads decodes bytes
        data = data.decode(json.detect_encoding(data), "surrogatepass")
    return decode_json(data)
