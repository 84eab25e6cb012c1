"""Which kernel functions the kernel's BTF may describe (for ``--trace``'s kfunc probes; part of
:mod:`abstat.box.runner.trace`, which re-exports it).  Ships to the box: standard library only."""

from __future__ import annotations

import os

BTF_DIR = "/sys/kernel/btf"
MAX_BTF_BYTES = 64 << 20


def btf_names(function: str, directory: str = BTF_DIR) -> bool:
    """Whether the kernel's BTF (vmlinux's, then its modules') may describe ``function``: kfunc attaches
    only to functions it describes, and a refused try costs a full bpftrace compile (about 35 s in a TCG
    guest).  Every name is a NUL-terminated string of a BTF file's string table, so a name in no file is
    no BTF function (a name that is there may still be none: kfunc is then tried, as before).  True when
    a file cannot be read."""
    needle = b"\0" + function.encode() + b"\0"
    try:
        names = ["vmlinux"] + sorted(name for name in os.listdir(directory) if name != "vmlinux")
    except OSError:
        return True
    for name in names:
        try:
            with open(os.path.join(directory, name), "rb") as source:
                if needle in source.read(MAX_BTF_BYTES):
                    return True
        except OSError:
            return True
    return False
