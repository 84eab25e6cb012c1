"""The ``slow`` files of tests/history/bisect/ (bisections of real git repositories, on real sshd boxes for some):
``-m "not slow"`` leaves them out."""

from support.marks import slow_files

pytest_collection_modifyitems = slow_files(
    __file__,
    "test_bisect.py",
    "test_bisect_failing_ends.py",
    "test_bisect_host.py",
    "test_bisect_merges.py",
    "test_bisect_replay.py",
    "test_bisect_store.py",
    "test_bisect_worktrees.py",
)
