"""The ``slow`` files of tests/history/ (history --confirm measuring a real git history): ``-m "not slow"`` leaves
them out."""

from support.marks import slow_files

pytest_collection_modifyitems = slow_files(
    __file__,
    "test_history_confirm.py",
)
