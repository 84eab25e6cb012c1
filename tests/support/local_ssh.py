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


def parse(argv: list[str]) -> tuple[list[str], str | None, list[str]]:
    """``ssh`` arguments -> (options, destination, remote command); serves a master (``-M``) itself."""
    options: list[str] = []
    while argv and argv[0] != "--":
        options.append(argv.pop(0))
    argv = argv[1:]  # the "--"
    if argv and "-M" in options:
        path = next(o.split("=", 1)[1] for o in options if o.startswith("ControlPath="))
        open(path, "w").close()
        signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
        while True:
            time.sleep(3600)
    return options, (argv[0] if argv else None), argv[1:]


def main(argv: list[str]) -> int:
    _, destination, command = parse(argv)
    if destination is None:
        sys.stderr.write("local_ssh: no destination\n")
        return 255
    if not command:
        return 0
    if "ABSTAT_LEASE" not in os.environ:  # one box per destination: its own lease (see abstat.lab.lease)
        import tempfile

        os.environ["ABSTAT_LEASE"] = os.path.join(
            tempfile.gettempdir(), f"abstat-local-ssh-{os.getuid()}-{os.getppid()}-{destination}.lease"
        )
    os.execvp("sh", ["sh", "-c", " ".join(command)])
    return 255


def sweep() -> None:
    """Remove the leases of abstat processes that have ended (each run through this stand-in leaves one in
    the temporary directory, named by its abstat process): a lease nobody alive can hold is litter."""
    import contextlib
    import glob
    import tempfile

    for path in glob.glob(os.path.join(tempfile.gettempdir(), f"abstat-local-ssh-{os.getuid()}-*.lease")):
        pid = os.path.basename(path).split("-")[4]
        try:
            os.kill(int(pid), 0)
        except (ValueError, ProcessLookupError):
            with contextlib.suppress(OSError):
                os.unlink(path)
        except PermissionError:
            pass


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
