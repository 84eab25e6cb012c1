"""The ``slow`` files of tests/lab/testbox/ (a QEMU guest booting Debian's kernel, rebooted for real): ``-m "not
slow"`` leaves them out."""

from support.marks import slow_files

pytest_collection_modifyitems = slow_files(
    __file__,
    "test_testbox.py",
    "test_testbox_more.py",
    "test_testbox_killed.py",
)
