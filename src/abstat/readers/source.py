"""A result file's text: read as abstat reads every input (``-`` is standard input, gzip transparently).

The readers of peer tools' files (:mod:`abstat.readers.peers`,
:mod:`abstat.readers.gobench`) share it.
"""
from __future__ import annotations

import gzip

from abstat.errors import InputError


def read_text(path: str) -> str:
    """The file's text (``-``: standard input; gzip transparently).

    Reading and decoding are abstat's shared ones
    (:func:`abstat.readers.text.read_bytes`, :func:`~abstat.readers.text.decode_text`):
    InputError naming the file and line for binary, UTF-16 or non-UTF-8 data.
    """
    from abstat.readers.text import STDIN_NAME, decode_text, read_bytes

    name = STDIN_NAME if path == "-" else path
    raw = read_bytes(path)
    if raw[:2] == b"\x1f\x8b":
        try:
            raw = gzip.decompress(raw)
        except (OSError, EOFError) as err:
            raise InputError(f"bad gzip data: {err}", path=name) from None
    return decode_text(raw, name).lstrip("\ufeff")
