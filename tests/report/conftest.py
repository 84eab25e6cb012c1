"""The ``slow`` files of tests/report/ (the CI gate's runs on both store back ends): ``-m "not slow"`` leaves them
out."""

from support.marks import slow_files

pytest_collection_modifyitems = slow_files(
    __file__,
    "test_ci_gate.py",
)
