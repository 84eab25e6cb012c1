"""Test boxes on this machine: QEMU guests booting a real Debian kernel, reached over ssh.

``abstat testbox up NAME`` builds (once, cached by the Debian packages' versions) an image with
python3, sshd, kexec-tools, bpftrace and BusyBox, and boots it under QEMU (TCG unless told
otherwise), forwarding ``127.0.0.1:PORT`` to its ssh; ``--host NAME`` then reaches it in every
command of the lab (:func:`abstat.lab.testbox.paths.ssh_options`).  Its reboots are real: ``kexec``
inside it, or ``reboot`` after choosing the next boot's command line (``testbox-next-boot``),
which QEMU boots (:mod:`abstat.lab.testbox.supervisor`).  docs/lab.md describes it.
"""
