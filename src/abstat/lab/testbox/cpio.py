"""A ``newc`` cpio writer: the format the kernel unpacks an initramfs from (no compression)."""

from __future__ import annotations

import stat
from typing import BinaryIO


class CpioWriter:
    def __init__(self, out: BinaryIO) -> None:
        self.out = out
        self.inode = 1

    def _entry(self, name: str, mode: int, data: bytes = b"", rdev: tuple[int, int] = (0, 0)) -> None:
        encoded = name.encode() + b"\0"
        fields = (self.inode, mode, 0, 0, 1, 0, len(data), 0, 0, rdev[0], rdev[1], len(encoded), 0)
        header = b"070701" + b"".join(b"%08X" % value for value in fields)
        self.inode += 1
        self.out.write(header + encoded)
        self.out.write(b"\0" * (-(len(header) + len(encoded)) % 4))
        self.out.write(data)
        self.out.write(b"\0" * (-len(data) % 4))

    def directory(self, name: str) -> None:
        self._entry(name, stat.S_IFDIR | 0o755)

    def file(self, name: str, data: bytes, permissions: int) -> None:
        self._entry(name, stat.S_IFREG | permissions, data)

    def device(self, name: str, mode: int, major: int, minor: int) -> None:
        self._entry(name, mode, rdev=(major, minor))

    def close(self) -> None:
        self._entry("TRAILER!!!", 0)
