"""The ``slow`` files of tests/render/ (reports rendered by Chromium): ``-m "not slow"`` leaves them out."""

from support.marks import slow_files

pytest_collection_modifyitems = slow_files(
    __file__,
    "test_html_figures.py",
    "test_html_report.py",
)
