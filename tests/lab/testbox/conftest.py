"""The ``slow`` files of tests/lab/testbox/ (a QEMU guest booting Debian's kernel, rebooted for real): ``-m "not
slow"`` leaves them out.  ``guests``: the two boxes test_testbox.py and test_testbox_more.py share (one xdist
group), booted at once for the session: a cold boot and the benchmark's copy per box, not per file."""

import pytest
from support.marks import slow_files
from support.testbox import GUESTS, boxes_up

pytest_collection_modifyitems = slow_files(
    __file__,
    "test_testbox.py",
    "test_testbox_more.py",
    "test_testbox_killed.py",
)


@pytest.fixture(scope="session")
def guests():
    with boxes_up(pytest, GUESTS) as env:
        yield env
