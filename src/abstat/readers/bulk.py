"""Two helpers of bulk reads (the store's sample sets, a history's revisions): no imports of abstat's.

- :func:`gc_paused`: the cyclic garbage collector off while a bulk read makes millions of objects,
  none in a cycle (each of the collector's passes over the growing heap found nothing: half of a
  history's loading time);
- :func:`drained`: a list's items in order, each let go of once handed out (when what is made of
  each copies what it needs, a bulk read holds one of the two at a time).
"""

from __future__ import annotations

import gc
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
