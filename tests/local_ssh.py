#!/usr/bin/env python3
"""A stand-in for ``ssh`` whose every destination is this machine (``ABSTAT_SSH_COMMAND``).

``ssh [-o OPT]... [-M -N | -T] -- DESTINATION [COMMAND]``: a master connection
(``-M -N``) creates its ``ControlPath`` file and waits to be stopped; a command
runs here with ``sh -c``, standard input and output passed through, as sshd
would run it.  The lab then runs for real -- the runner shipped through
standard input, the protocol, the store -- without an sshd or root, which
the examples of docs/api.md need.  It cannot reboot anything.
"""
from __future__ import annotations

import os
import signal
import sys
import time


def main(argv: list[str]) -> int:
    options: list[str] = []
    while argv and argv[0] != "--":
        options.append(argv.pop(0))
    argv = argv[1:]  # the "--"
    if not argv:
        sys.stderr.write("local_ssh: no destination\n")
        return 255
    command = argv[1:]
    if "-M" in options:
        path = next(o.split("=", 1)[1] for o in options if o.startswith("ControlPath="))
        open(path, "w").close()
        signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
        while True:
            time.sleep(3600)
    if not command:
        return 0
    if "ABSTAT_LEASE" not in os.environ:  # one box per destination: its own lease (see abstat.lab.lease)
        import tempfile

        os.environ["ABSTAT_LEASE"] = os.path.join(tempfile.gettempdir(), f"abstat-local-ssh-{os.getuid()}-"
                                                  f"{os.getppid()}-{argv[0]}.lease")
    os.execvp("sh", ["sh", "-c", " ".join(command)])
    return 255


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
