"""The ``slow`` mark, given per folder: each folder's conftest.py names its slow files.

``pytest_collection_modifyitems = slow_files(__file__, "test_x.py", ...)`` in a folder's conftest.py
marks every test of those files (files directly in that folder) ``slow``; ``python -m pytest -m "not
slow"`` leaves them out.  pytest calls every conftest's hook with the whole session's items, so each
hook marks only the items of its own folder."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest


def slow_files(conftest: str, *names: str) -> Callable[[list[pytest.Item]], None]:
    folder = Path(conftest).resolve().parent
    wanted = frozenset(names)

    @pytest.hookimpl(tryfirst=True)  # before -m selects by marks
    def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
        for item in items:
            path = Path(str(item.fspath)).resolve()
            if path.parent == folder and path.name in wanted:
                item.add_marker(pytest.mark.slow)

    return pytest_collection_modifyitems
