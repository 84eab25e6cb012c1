"""The ``slow`` files of tests/lab/ (real sshd boxes that reboot, hostile boxes, a PostgreSQL server that goes
away): ``-m "not slow"`` leaves them out."""

from support.marks import slow_files

pytest_collection_modifyitems = slow_files(
    __file__,
    "test_engine_lab.py",
    "test_lab_bundle_supervisor.py",
    "test_lab_doctor.py",
    "test_lab_hostile.py",
    "test_lab_ssh.py",
    "test_lab_store_loss.py",
)
