"""The ``slow`` files of tests/render/site/ (a published site navigated in Chromium): ``-m "not slow"`` leaves them
out."""

from support.marks import slow_files

pytest_collection_modifyitems = slow_files(
    __file__,
    "test_publish.py",
)
