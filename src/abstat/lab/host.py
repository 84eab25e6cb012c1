"""One host's part of a lab experiment, in its own thread.

For each scheduled boot: run the variant's ``--boot`` command, wait (at most
``--boot-timeout``) until the host answers with a new boot id, run
``--check``, then run the block through the shipped runner.  The worker
never touches the store: it reports :class:`HostEvent`s to the controller's
queue, which writes each run as soon as it arrives.

Failures: a host that does not come back, or fails in a way that repeating
will not fix, raises :class:`HostFailed` (one line, the host stops; other
hosts go on).  A connection lost in the middle of a block is reconnected;
if the boot is the same, the block continues with the runs not yet
received, else the host rebooted without being asked: the block's runs so
far are kept, the boot is made again, and a second unasked reboot stops
the host (boot-loop guard).
"""

from __future__ import annotations

import queue
import threading
import time
from dataclasses import dataclass, field
from typing import Any

from abstat.box.runner.plan import ExperimentPlan
from abstat.box.runner.schedule import SCHEDULE_VERSION
from abstat.lab.config import Decider, HostSpec, LabSpec, boot_schedule, boot_slots
from abstat.lab.conversation import Conversation, HostFailed
from abstat.lab.protocol import boot_id_from
from abstat.lab.ssh import SshError, SshHost
from abstat.errors import named

BOOT_ID_COMMAND = "cat /proc/sys/kernel/random/boot_id"
POLL_INTERVAL_S = 0.5
ANNOUNCE_POLL_S = 0.1  # a test box's control port is a local file: read it often
ANNOUNCED_CONNECT_S = 30.0
BOOT_COMMAND_TIMEOUT_S = 120.0
CHECK_TIMEOUT_S = 120.0
BOOT_ATTEMPTS = 2  # a boot refused by --check is tried once more (not a test box's that fell back: see _checked)
UNASKED_REBOOTS = 1  # more than this many reboots nobody asked for: boot loop
RECONNECTS_PER_BLOCK = 3
PERMANENT_SSH_ERRORS = (
    "Could not resolve hostname",
    "Host key verification failed",
    "Permission denied",
    "Bad configuration option",
    "Bad owner or permissions",
    "Too many authentication failures",
    "command-line line",
    "Unsupported option",
)  # errors waiting cannot mend
FIRST_CONTACT_S = 30.0  # a host abstat did not reboot: a wrong name should not wait --boot-timeout


def _last(text: str, limit: int = 500) -> str:
    """The last non-empty line of what a command on the box printed (at most ``limit`` characters)."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[-1][:limit] if lines else ""


def _raise_if_gone(destination: str, failure: str) -> None:
    """A local test box whose QEMU is gone will not come back: say so now, not after --boot-timeout."""
    from abstat.lab.testbox.paths import gone

    why = gone(destination)
    if why:
        raise HostFailed(f"{failure}: {why}")


def _announced(destination: str, unlike: str | None) -> bool | None:
    """False: a local test box that has not yet said its sshd listens in a boot other than ``unlike`` (no ssh
    attempt yet: one into a booting box hangs in QEMU's user network until its connect timeout); True: it
    said so; None: any other host (only ssh can tell)."""
    from abstat.lab.testbox.paths import announced

    return announced(destination, unlike)


def _announced_boot(destination: str) -> str | None:
    """The boot a local test box last said its sshd listens in (None: any other host, or not said)."""
    from abstat.lab.testbox.paths import announced_boot

    return announced_boot(destination) or None


def _fell_back(destination: str) -> str | None:
    """A local test box whose boot of the entry it was asked for ended in a reset (a panic) and that fell back to
    its default entry: that entry's command line (the boot is not made again); None for any other host."""
    from abstat.lab.testbox.paths import fell_back

    return fell_back(destination)


def _patience() -> float:
    from abstat.lab.testbox.paths import ANNOUNCE_PATIENCE_S

    return time.monotonic() + ANNOUNCE_PATIENCE_S


@dataclass
class HostEvent:
    kind: str  # state | boot | run | end | refused | failed | finished
    host: str
    boot: int = 0  # index in the host's boot schedule
    data: dict[str, Any] = field(default_factory=dict)


class HostHooks:
    """What happens around one host's part of an experiment, in its worker thread.

    ``acquire`` runs before the first boot (connected or not), ``release``
    after the last, whatever happened (an error, an interrupt).  The base
    class does nothing; raising :class:`HostFailed` in ``acquire`` stops this
    host alone with that line.  This is where a lease on the box (a lock held
    for the whole session) goes: docs/architecture.md.
    """

    def acquire(self, worker: HostWorker) -> None:
        """Before the host's first boot."""

    def start(self, worker: HostWorker) -> None:
        """Once the host answers in the boot a block will run in, before its ``--check``: a lease may
        begin to be taken here, and :meth:`hold` then waits for it (the lease's start overlaps the check's)."""

    def hold(self, worker: HostWorker) -> None:
        """Before the host is booted and before each block's runs (connected): a lease lost with a
        reboot is taken again."""

    def release(self, worker: HostWorker) -> None:
        """After its last, always (exceptions here are reported as the host's failure)."""


class HostWorker(Conversation, threading.Thread):
    def __init__(
        self,
        plan: ExperimentPlan,
        lab: LabSpec,
        host: HostSpec,
        ssh: SshHost,
        boots: list[int],
        events: queue.Queue[HostEvent],
        stopping: threading.Event,
        hooks: HostHooks | None = None,
        decider: Decider | None = None,
        *,
        experiment: str = "",
        schedule_version: int = SCHEDULE_VERSION,
    ) -> None:
        """Run ``boots`` (indexes in the host's boot schedule) of ``plan`` (the runner's plan of the
        experiment named ``experiment``) on ``host`` of ``lab``, with the schedules of ``schedule_version``.
        ``decider``: ``--until-decided``, asked at each look the runner makes (the end of a block of runs)."""
        super().__init__(name=f"abstat-lab-{host.label}", daemon=True)
        self.decider = decider
        self.hooks = hooks or HostHooks()
        self.plan = plan
        self.lab = lab
        self.experiment = experiment
        self.schedule_version = schedule_version
        self.host = host
        self.ssh = ssh
        self.todo = boots
        self.events = events
        self.stopping = stopping
        self.schedule = boot_schedule(plan, lab, host.label, schedule_version)
        self.unasked_reboots = 0
        self.block_boot_id: str | None = None
        self.last_loss = ""  # the last line ssh or the runner wrote when a session ended early

    # -- reporting -----------------------------------------------------

    def emit(self, kind: str, boot: int = 0, **data: Any) -> None:
        self.events.put(HostEvent(kind, self.host.label, boot, data))

    def state(self, state: str, boot: int = 0, **data: Any) -> None:
        self.emit("state", boot, state=state, **data)

    def _check_stop(self) -> None:
        if self.stopping.is_set():
            raise InterruptedError

    # -- the thread ----------------------------------------------------

    def run(self) -> None:
        try:
            try:
                self.hooks.acquire(self)
                for index in self.todo:
                    self._boot(index)
            finally:
                self.hooks.release(self)
            self.emit("finished")
        except HostFailed as failure:
            self.emit("failed", message=str(failure))
        except InterruptedError:
            self.emit("finished", interrupted=True)
        except Exception as err:  # a bug must still stop only this host, with its reason
            self.emit("failed", message=f"unexpected {type(err).__name__}: {err}")
        finally:
            self.ssh.close()

    def _boot(self, index: int) -> None:
        variant = self.schedule[index]
        where = f"boot {index + 1} of {len(self.schedule)} ({variant}): " if variant else ""  # starts messages
        attempts = 0
        while True:
            self._check_stop()
            if not self.lab.reboots:
                self.state("connecting", index)
                self._reach(min(self.lab.boot_timeout, FIRST_CONTACT_S), f"{where}cannot reach the host")
                boot_id = None  # this boot, whichever it is: the runner's hello tells
                self._prestart()
            else:
                attempts += 1
                boot_id = self._reboot(index, variant, where)
                self._prestart()
                if not self._checked(index, variant, where, attempts):
                    continue
            self.hooks.hold(self)
            if self._block(index, boot_id, where):
                return
            attempts = 0  # the host rebooted by itself: boot this variant again

    # -- booting -------------------------------------------------------

    def _reach(self, timeout: float, failure: str) -> None:
        """Connect, retrying for up to ``timeout`` seconds (at once failing on errors that waiting
        cannot mend: a name that does not resolve, a changed host key)."""
        deadline = time.monotonic() + timeout
        while True:
            self._check_stop()
            left = deadline - time.monotonic()
            try:
                self.ssh.connect(max(1.0, min(left, 10)))
                return
            except SshError as err:
                if any(marker in str(err) for marker in PERMANENT_SSH_ERRORS):
                    raise HostFailed(f"{failure}: {err}") from None  # waiting cannot mend it
                if deadline - time.monotonic() <= 0:
                    raise HostFailed(f"{failure} within {timeout:g} s (last: {err})") from None
            time.sleep(min(POLL_INTERVAL_S, max(0.0, deadline - time.monotonic())))

    def _boot_id(self, timeout: float, failure: str, *, unlike: str | None = None) -> str:
        """The host's boot id, waiting up to ``timeout`` for it to answer (and differ from ``unlike``)."""
        deadline = time.monotonic() + timeout
        patience = _patience()
        reason = "no answer"
        while True:
            self._check_stop()
            left = deadline - time.monotonic()
            if left <= 0:
                raise HostFailed(f"{failure} within {timeout:g} s (last: {reason})")
            up = _announced(self.ssh.destination, unlike)
            if up is False and time.monotonic() < patience:
                _raise_if_gone(self.ssh.destination, failure)
                reason = "still booting (no new boot announced on the test box's control port)"
                time.sleep(min(ANNOUNCE_POLL_S, left))
                continue
            try:  # a box whose sshd listens: its first handshake may be slow, not hanging (a loaded TCG guest)
                self.ssh.connect(min(left, ANNOUNCED_CONNECT_S if up else 10))
                # a boot a test box announced (its sshd listens: the master just reached it) needs no ssh session
                # to name it, the one before a boot nor a new one; the runner's hello names the boot it measures in
                # (Conversation._converse)
                announced = _announced_boot(self.ssh.destination) if up else None
                if announced and announced != unlike:
                    return announced
                code, out, err = self.ssh.run(BOOT_ID_COMMAND, timeout=min(max(left, 1), 30))
                boot_id = boot_id_from(out) if code == 0 else None
                if boot_id and boot_id != unlike:
                    return boot_id
                reason = (
                    "still the old boot"
                    if boot_id
                    else "no boot id in its answer"
                    if code == 0
                    else _last(err) or f"exit status {code}"
                )
            except SshError as err:
                reason = str(err)
                _raise_if_gone(self.ssh.destination, failure)
            time.sleep(min(POLL_INTERVAL_S, max(0.0, deadline - time.monotonic())))

    def _prestart(self) -> None:
        """The lease's and the runner's Python start at once, and while ``--check`` runs: the runner's
        session waits for the bundle, sent only once the lease is held (:meth:`Conversation._hello`)."""
        self.hooks.start(self)
        self._open_early()

    def _reboot(self, index: int, variant: str, where: str) -> str:
        self._drop_early()  # a session of the boot --check refused
        self.state("booting", index, variant=variant)
        old = self._boot_id(min(self.lab.boot_timeout, FIRST_CONTACT_S), f"{where}cannot reach the host before booting")
        self.hooks.hold(self)  # never reboot a box another experiment measures on
        code, _, err = self.ssh.run(self.lab.boot[variant], timeout=BOOT_COMMAND_TIMEOUT_S)
        if code not in (0, 255, -1):  # 255: the connection dropped (kexec -e); -1: it hung up, no answer
            raise HostFailed(
                named(f"{where}{{boot}} command for {variant!r} failed with exit status {code}", "boot")
                + (f": {_last(err)}" if _last(err) else "")
            )
        self.ssh.disconnect()  # the old connection cannot survive the reboot; do not wait for keep-alives
        return self._boot_id(
            self.lab.boot_timeout, f"{where}the host did not come back after booting {variant!r}", unlike=old
        )

    def _checked(self, index: int, variant: str, where: str, attempts: int) -> bool:
        command = self.lab.check.get(variant)
        if command is None:
            return True
        self.state("checking", index, variant=variant)
        try:
            code, out, err = self.ssh.run(command, timeout=CHECK_TIMEOUT_S)
        except SshError as failure:
            raise HostFailed(named(f"{where}cannot run {{check}}: {failure}", "check")) from None
        if code == 0:
            return True
        detail = _last(err) or _last(out)
        reason = f"exit status {code}" + (f": {detail}" if detail else "")
        self.emit("refused", index, variant=variant, reason=reason, attempt=attempts)
        fell_back = _fell_back(self.ssh.destination)
        if fell_back:  # the kernel it was asked to boot did not come up: booting it again gives the same
            reason += f"; the entry it was asked to boot ({fell_back!r}) did not come up: it fell back to its default"
        if attempts >= BOOT_ATTEMPTS or fell_back:
            raise HostFailed(
                named(
                    f"{where}booted {'once' if attempts == 1 else f'{attempts} times'}, and {{check}} for "
                    f"{variant!r} refused every boot ({reason}); nothing from these boots is recorded",
                    "check",
                )
            )
        return False

    # -- one block -----------------------------------------------------

    def _block(self, index: int, boot_id: str | None, where: str) -> bool:
        """Run the boot's block; False when the host rebooted on its own (the boot must be made again).

        ``boot_id`` None: the boot the host is in (known from the runner's hello)."""
        self.block_boot_id = boot_id
        pending = {
            slot[3]: slot for slot in boot_slots(self.plan, self.lab, self.host.label, index, self.schedule_version)
        }
        started = False
        reconnects = 0
        while True:
            self._check_stop()
            outcome = self._session(index, pending, started)
            boot_id = self.block_boot_id
            if outcome is None:
                return True
            started = started or outcome == "lost-started"
            self.state("reconnecting", index)
            reconnects += 1
            current = self._boot_id(
                self.lab.boot_timeout, f"{where}the connection dropped and the host did not answer again"
            )
            if boot_id is not None and current != boot_id:
                self.unasked_reboots += 1
                if started:
                    self.emit(
                        "end",
                        index,
                        status="interrupted",
                        note="the host rebooted in the middle of the block (runs before it kept)",
                    )
                if self.unasked_reboots > UNASKED_REBOOTS or not self.lab.reboots:
                    raise HostFailed(
                        f"{where}the host rebooted {self.unasked_reboots} time(s) without being "
                        "asked (boot loop?); stopping this host"
                    )
                return False
            if reconnects > RECONNECTS_PER_BLOCK:
                raise HostFailed(
                    f"{where}the connection dropped {reconnects} times in one block; stopping"
                    + (f" (last: {self.last_loss})" if self.last_loss else "")
                )
