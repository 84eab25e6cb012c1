"""The ``xdist_group`` of each test made part of its id where pytest reads it (found by boot38, session 13).

pytest 9 keeps a test's id in ``item._id`` (a ``NodeId``); pytest-xdist 3.8 still writes its ``@group``
suffix to ``item._nodeid``, which pytest 9 no longer reads.  Without this every test was a unit of work of
its own under ``--dist loadgroup``: a file's module fixtures were made on both workers, and tests/lab/testbox's
two session boxes were booted by each worker (four QEMUs on two cores).  A no-op before pytest 9 (no
``_pytest.nodeid``: pytest-xdist's own suffix works) and where the suffix is there already."""

from __future__ import annotations

from typing import Any


def groups_in_ids(items: list[Any]) -> None:
    try:
        from _pytest.nodeid import NodeId
    except ImportError:
        return
    for item in items:
        names = sorted(
            {
                str(mark.args[0] if mark.args else mark.kwargs.get("name", "default"))
                for mark in item.iter_markers("xdist_group")
            }
        )
        if names and "@" not in item.nodeid:
            item._id = NodeId.parse(f"{item.nodeid}@{'_'.join(names)}")
