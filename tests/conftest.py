"""What every test shares: the ``abstat_cli`` fixture (tests/support/cli.py), the ``slow`` marker (each
folder's conftest.py names its slow files: sshd boxes, reboots, bisections, Chromium, bpftrace, QEMU or
timed benchmarks; ``python -m pytest -m "not slow"`` is the README's fast first try).

tests/ mirrors src/abstat by area (tests/stats/, tests/readers/, tests/box/runner/, ...); tests/support/
holds the shared helpers, imported as ``from support import lab_sim``; tests/data/ the data.

Two pytest-xdist workers by default (``-n 2 --dist loadgroup`` in pyproject.toml; ``-n 0`` runs in
this one process, e.g. for one test or a debugger): the suite mostly waits on subprocesses, boxes and
reboots.  Each file is one unit of work (its own ``xdist_group`` unless a test names one: tests that
must not run beside each other share a group), so a module's fixtures are made once; the workers
take the files with an ``alone`` test first, then the slow files (so that no long file starts last) and
the rest as they come free.  No
test looks at what the whole machine runs: leftovers are found by an environment entry or a
marker of the test's own (tests/support/processes.py), cgroup leftovers in a cgroup of the test's
own, and a suite of another checkout can run at the same time.  A test that changes what the whole
machine does (``run --isolate`` moves every task off the measured CPUs) is marked ``alone``: it
runs while no other test runs, in this suite or another checkout's (an exclusive lock on
``$TMPDIR/abstat-tests-machine.lock``; every other test holds it shared, and waits at a turnstile
while an ``alone`` test waits for its turn, so that it is not starved).

Before each test, what earlier tests left is collected and the survivors (modules, fixtures, caches)
are frozen out of the garbage collector (``gc.freeze``): a full collection then walks only what the
test itself made.  statsmodels' ``multipletests`` runs ``gc.collect()`` on every call; with the
session's half a million or more objects walked each time, the 400 calls of one property test in
test_report_labels.py took 413 s of a 2-core run instead of well under a second."""

from __future__ import annotations

import fcntl
import gc
import os
import signal
import tempfile

import pytest
from support import reaper
from support.cli import abstat_cli  # noqa: F401  (the fixture)
from support.xdist import groups_in_ids


def pytest_configure(config: pytest.Config) -> None:
    # Started as a background job (`&`, `nohup`), the suite inherits SIGINT ignored, and an ignored
    # signal stays ignored across exec: the tests that interrupt an abstat child would see it go on.
    # A handler (unlike SIG_IGN) is reset to the default at exec, so every child starts as from a
    # terminal.
    if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    reaper.ensure()  # what this process's tests start ends with it, also when it is killed (tests/support/reaper.py)
    config.addinivalue_line("markers", "slow: real boxes, reboots, bisections, browsers or tracers (minutes)")
    config.addinivalue_line("markers", "xdist_group(name): run in one pytest-xdist worker with the group's others")
    config.addinivalue_line("markers", "alone: runs while no other test runs (it changes what the whole machine does)")
    if hasattr(config, "workerinput"):  # a pytest-xdist worker: its collection order is the work's order
        config.pluginmanager.register(_SlowFirst(), "abstat-slow-first")
    if hasattr(config.option, "loadscopereorder"):  # keep that order (not by the number of tests per file)
        config.option.loadscopereorder = False


def pytest_sessionfinish(session: pytest.Session) -> None:
    from support import local_ssh

    local_ssh.sweep()


def pytest_runtest_setup(item: pytest.Item) -> None:
    if os.environ.get("ABSTAT_TEST_NO_GC_FREEZE"):  # to measure what the freeze saves
        return
    gc.collect()
    gc.freeze()


@pytest.hookimpl(tryfirst=True)  # before xdist's own, which reads the xdist_group markers
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    root = str(config.rootpath)
    for item in items:
        if item.get_closest_marker("xdist_group") is None:  # one unit of work per file
            item.add_marker(pytest.mark.xdist_group(os.path.relpath(str(item.fspath), root)))
    if getattr(config.option, "loadgroup", False):  # a worker of --dist loadgroup: where pytest 9 reads the group
        groups_in_ids(items)


class _SlowFirst:
    """In a pytest-xdist worker: the files with an ``alone`` test first (an ``alone`` test that comes up
    while the other worker is in a long test, a reboot or a bisection, waits the whole of it: minutes
    of one worker lost), then the slow files, once every conftest has marked its slow files."""

    @pytest.hookimpl(hookwrapper=True)
    def pytest_collection_modifyitems(self, items: list[pytest.Item]):
        yield
        alone = {item.fspath for item in items if item.get_closest_marker("alone") is not None}
        # stable, and both keys are the file's: files stay whole
        items.sort(key=lambda item: (item.fspath not in alone, item.get_closest_marker("slow") is None))


def _locked(name: str, operation: int) -> int:
    fd = os.open(os.path.join(tempfile.gettempdir(), name), os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(fd, operation)
    return fd


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item):
    """An ``alone`` test holds the machine lock exclusively, every other test shared (see the docstring)."""
    alone = item.get_closest_marker("alone") is not None
    turnstile = _locked("abstat-tests-turnstile.lock", fcntl.LOCK_EX)
    try:
        machine = _locked("abstat-tests-machine.lock", fcntl.LOCK_EX if alone else fcntl.LOCK_SH)
    finally:
        if not alone:
            os.close(turnstile)
    try:
        yield
    finally:
        os.close(machine)
        if alone:
            os.close(turnstile)
