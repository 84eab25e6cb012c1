"""Demo benchmark: read a file with read(2) calls of a given size.

    python read_chunks.py FILE CHUNK_BYTES

Small chunks make the loop system-call bound; large chunks move the same
bytes with a few calls.  Prints one JSON line: the bytes read, the number
Prints the checksum, then one JSON line with the nanoseconds the read loop
took (``loop_ns``), which ``abstat run`` records as a metric next to
wall/user/sys time.
"""

from __future__ import annotations

import json
import os
import sys
import time
import zlib


def main(argv: list[str]) -> int:
    if len(argv) != 3:
        sys.stderr.write("usage: read_chunks.py FILE CHUNK_BYTES\n")
        return 2
    path, chunk = argv[1], int(argv[2])
    checksum = 0
    total = 0
    calls = 0
    fd = os.open(path, os.O_RDONLY)
    try:
        start = time.perf_counter_ns()
        while True:
            data = os.read(fd, chunk)
            calls += 1
            if not data:
                break
            total += len(data)
            checksum = zlib.adler32(data, checksum)
        loop_ns = time.perf_counter_ns() - start
    finally:
        os.close(fd)
    print(f"read {total} bytes in {calls} calls of {chunk} bytes, adler32 {checksum:#010x}")
    print(json.dumps({"loop_ns": loop_ns}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
