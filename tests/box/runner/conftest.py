"""The ``slow`` files of tests/box/runner/ (what a run leaves behind after signals and SIGKILLs; tracing with
bpftrace): ``-m "not slow"`` leaves them out."""

from support.marks import slow_files

pytest_collection_modifyitems = slow_files(
    __file__,
    "test_runner_containment.py",
    "test_trace.py",
)
