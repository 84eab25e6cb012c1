#!/usr/bin/env python3
"""Background load for seed 002: "domains" busy-looping and sending events.

    event_load.py --domains 2 --pids load.pids --events load.events

Starts ``--domains`` child processes ("mini-os domains").  Each busy-loops
and sends an event (one byte down a pipe) to this process ("dom0") every
``--period`` seconds of busy work; dom0 counts them and rewrites
``--events`` with the total.  It runs until killed; ``abstat run
--background`` stops it together with its children (the whole process
group).  ``--pids`` receives the ids of every process it started, one per
line, so a test can check that none survives.
"""
from __future__ import annotations

import argparse
import os
import sys
import time


def domain(write_fd: int, period: float) -> None:
    counter = 0
    while True:
        deadline = time.perf_counter() + period
        while time.perf_counter() < deadline:
            counter += 1  # busy loop
        os.write(write_fd, b"e")


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--domains", type=int, default=2)
    parser.add_argument("--period", type=float, default=0.002, help="seconds of busy work per event")
    parser.add_argument("--pids", required=True, help="file to write the process ids to")
    parser.add_argument("--events", required=True, help="file holding the number of events received")
    args = parser.parse_args(argv)
    read_fd, write_fd = os.pipe()
    children = []
    for _ in range(args.domains):
        pid = os.fork()
        if pid == 0:
            os.close(read_fd)
            try:
                domain(write_fd, args.period)
            finally:
                os._exit(0)
        children.append(pid)
    os.close(write_fd)
    with open(args.pids, "w") as handle:
        handle.write("".join(f"{pid}\n" for pid in [os.getpid(), *children]))
    received = 0
    while True:
        chunk = os.read(read_fd, 4096)
        if not chunk:
            return 0
        received += len(chunk)
        temporary = args.events + ".tmp"
        with open(temporary, "w") as handle:
            handle.write(f"{received}\n")
        os.replace(temporary, args.events)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
