"""The ``slow`` files of tests/workflows/ (the seed workflows end to end, measured for real): ``-m "not slow"``
leaves them out."""

from support.marks import slow_files

pytest_collection_modifyitems = slow_files(
    __file__,
    "test_workflows_build.py",
    "test_workflows_hcall.py",
    "test_workflows_ipi.py",
)
