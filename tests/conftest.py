"""What every test shares: the ``abstat_cli`` fixture (tests/support/cli.py), the ``slow`` marker (each
folder's conftest.py names its slow files: sshd boxes, reboots, bisections, Chromium, bpftrace, QEMU or
timed benchmarks; ``python -m pytest -m "not slow"`` is the README's fast first try).

tests/ mirrors src/abstat by area (tests/stats/, tests/readers/, tests/box/runner/, ...); tests/support/
holds the shared helpers, imported as ``from support import lab_sim``; tests/data/ the data.

``xdist_group`` (pytest-xdist's ``--dist loadgroup``, e.g. ``python -m pytest -n 2 --dist loadgroup``):
files whose assertions look at the whole machine run in one worker, one after the other, so that one
of them never sees what another has running (``ps`` for ``local_ssh.py``, ``pgrep`` for a command run
on a box, the ssh control files of a host).  Without xdist the marker does nothing.

Before each test, what earlier tests left is collected and the survivors (modules, fixtures, caches)
are frozen out of the garbage collector (``gc.freeze``): a full collection then walks only what the
test itself made.  statsmodels' ``multipletests`` runs ``gc.collect()`` on every call; with the
session's half a million or more objects walked each time, the 400 calls of one property test in
test_report_labels.py took 413 s of a 2-core run instead of well under a second."""
from __future__ import annotations

import gc
import os
import signal

import pytest
from support.cli import abstat_cli  # noqa: F401  (the fixture)

# group -> files that must not run at the same time as one another (see the docstring)
XDIST_GROUPS = {
    # ps/pgrep for helpers and commands (local_ssh.py, hostile_box.py, "sleep 31.337"), and the ssh
    # control files of host "alpha" in /tmp/abstat-ssh-* that a lab test checks are gone: every file
    # that drives the lab's ssh (simulated sshd boxes or local_ssh.py)
    "machine-wide": frozenset({"test_api_docs.py", "test_bisect_host.py", "test_engine_lab.py",
                               "test_lab_doctor.py", "test_lab_hostile.py", "test_lab_ssh.py",
                               "test_lab_store_loss.py", "test_trace.py"}),
}


def pytest_configure(config: pytest.Config) -> None:
    # Started as a background job (`&`, `nohup`), the suite inherits SIGINT ignored, and an ignored
    # signal stays ignored across exec: the tests that interrupt an abstat child would see it go on.
    # A handler (unlike SIG_IGN) is reset to the default at exec, so every child starts as from a
    # terminal.
    if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    config.addinivalue_line("markers", "slow: real boxes, reboots, bisections, browsers or tracers (minutes)")
    config.addinivalue_line("markers", "xdist_group(name): run in one pytest-xdist worker with the group's others")


def pytest_runtest_setup(item: pytest.Item) -> None:
    if os.environ.get("ABSTAT_TEST_NO_GC_FREEZE"):  # to measure what the freeze saves
        return
    gc.collect()
    gc.freeze()


@pytest.hookimpl(tryfirst=True)  # before xdist's own, which reads the xdist_group markers
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        name = os.path.basename(str(item.fspath))
        for group, files in XDIST_GROUPS.items():
            if name in files:
                item.add_marker(pytest.mark.xdist_group(group))
