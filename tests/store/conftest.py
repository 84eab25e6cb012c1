"""The ``slow`` files of tests/store/ (the store at a team's nightly size): ``-m "not slow"`` leaves them out."""

from support.marks import slow_files

pytest_collection_modifyitems = slow_files(
    __file__,
    "test_store_scale.py",
)
