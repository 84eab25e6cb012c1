"""The lab: one experiment on several machines and across reboots, over SSH.

The transport is the real OpenSSH client (:mod:`abstat.lab.ssh`); the
runner is shipped to each box through the connection (:mod:`abstat.lab.bundle`,
:mod:`abstat.box.runner.remote`), so a box needs only ``python3`` (3.8 or newer)
and a shell.  :mod:`abstat.lab.host` runs one host's boots in a thread and
reports events (:mod:`abstat.lab.conversation`: a block's runner session);
:mod:`abstat.lab.boxsession` reads a session's pipes and
:mod:`abstat.lab.protocol` checks what a box sends;
:mod:`abstat.lab.query` asks every host one question (``abstat doctor
--host``).  The engine (:mod:`abstat.engine.hosts`) drives all of it from an
experiment's specification and writes every run to the store.
"""

from __future__ import annotations

from abstat.lab.config import HostSpec, LabSpec, block_slots, boot_order, boot_schedule, boot_slots

__all__ = ["HostSpec", "LabSpec", "block_slots", "boot_order", "boot_schedule", "boot_slots"]
