"""The ``slow`` files of tests/lab/testbox/ (a QEMU guest booting Debian's kernel, rebooted for real): ``-m "not
slow"`` leaves them out.  ``guests``: the two boxes test_testbox.py and test_testbox_more.py share (one xdist
group), booted at once for the session: a cold boot and the benchmark's copy per box, not per file.
test_testbox_bisect.py boots a box of its own (a pytest-xdist unit of its own: the suite's other worker runs it
beside them).

The group is put where pytest reads it: pytest 9 keeps a test's id in ``item._id`` (a NodeId), and pytest-xdist
(3.8) still writes its ``@group`` suffix to ``item._nodeid``, which nothing reads any longer: every test was a unit
of its own, the two workers each took tests of both files and each booted the two boxes (four QEMUs, and the
bisection's fifth, on two cores).  tests/conftest.py puts it there for the whole suite
(tests/support/xdist.py)."""

import pytest
from support.marks import slow_files
from support.testbox import GUESTS, boxes_up

pytest_collection_modifyitems = slow_files(
    __file__,
    "test_testbox.py",
    "test_testbox_more.py",
    "test_testbox_bisect.py",
    "test_testbox_killed.py",
)


@pytest.fixture(scope="session")
def guests():
    with boxes_up(pytest, GUESTS) as env:
        yield env
