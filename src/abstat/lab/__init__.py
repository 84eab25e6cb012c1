"""The lab: one experiment on several machines and across reboots, over SSH.

``abstat run --host NAME ... [--boot VARIANT=COMMAND --check VARIANT=COMMAND
--boots K]`` runs the experiment on each host in parallel.  The transport
is the real OpenSSH client (:mod:`abstat.lab.ssh`); the runner is shipped to
each box through the connection (:mod:`abstat.lab.bundle`,
:mod:`abstat.runner.remote`), so a box needs only ``python3`` (3.8 or newer)
and a shell.  Every run goes to the controller's store as it completes.
"""
from __future__ import annotations

from abstat.lab.config import HostSpec, LabPlan, boot_order, lab_plan
from abstat.lab.controller import run_lab

__all__ = ["HostSpec", "LabPlan", "boot_order", "lab_plan", "run_lab"]
