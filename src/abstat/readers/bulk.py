"""Helpers of bulk reads (the store's sample sets, a history's revisions, large files): no imports of abstat's.

- :func:`gc_paused`: the cyclic garbage collector off while a bulk read makes millions of objects,
  none in a cycle (each of the collector's passes over the growing heap found nothing: half of a
  history's loading time);
- :func:`drained`: a list's items in order, each let go of once handed out (when what is made of
  each copies what it needs, a bulk read holds one of the two at a time);
- :func:`whole_file`: a large regular file in one read, not in chunks joined (a copy of it less).
"""

from __future__ import annotations

import gc
import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any


@contextmanager
def gc_paused() -> Iterator[None]:
    """The cyclic collector off inside the block (back on after it, if it was on)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def drained(items: list[Any]) -> Iterator[Any]:
    """``items`` in order, emptying the list as they are handed out."""
    items.reverse()
    while items:
        yield items.pop()


def whole_file(stream: Any, limit: int, chunk: int) -> bytes:
    """The bytes of a regular file of more than ``chunk`` bytes, whose first ``chunk`` bytes were just read
    from its start, read again from its start in one read (at most ``limit + 1`` bytes: the caller checks
    the limit, and reads on if the file grew); b"" for anything else (a pipe, a device, a small file)."""
    try:
        status = os.fstat(stream.fileno())
        if not stat.S_ISREG(status.st_mode) or status.st_size <= chunk or stream.tell() != chunk:
            return b""
        stream.seek(0)
    except (AttributeError, OSError, ValueError):
        return b""
    return stream.read(min(status.st_size, limit) + 1)
