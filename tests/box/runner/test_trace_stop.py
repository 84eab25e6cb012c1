"""How ``--trace`` stops its tracer: bpftrace's counts are read whole, or the run says the tracer failed.

bpftrace (0.17, Debian 12's; its src/main.cpp) sets one handler for SIGINT and SIGTERM that ends its
loop, and once out of the loop puts SIGINT back to the default action before it prints its maps.  In a
TCG guest that exit takes 1-2 s, and abstat, which sends its stop signal again until bpftrace ends
(0.17 can miss one that lands between two polls), killed it with a second SIGINT before it printed
anything: the run was stored as having made no calls (tests/lab/testbox/test_testbox.py's seed 003,
twice).  The stand-in below behaves as bpftrace's main does, with no root or kernel needed.
"""

from __future__ import annotations

import os
import sys
import textwrap

import pytest

from abstat.box.runner import trace as trace_mod

MAPS = '{"type": "map", "data": {"@c0": {"4242": 500}}}'


def _fake_bpftrace(tmp_path, *, exit_takes: float, sigterm_kills: bool = False) -> str:
    """A program that prints the ready line, loops until SIGINT or SIGTERM, then (as bpftrace's main) puts
    SIGINT back to its default action, takes ``exit_takes`` seconds (detaching, END, the drain) and prints
    its maps.  ``sigterm_kills``: SIGTERM has its default action too (a tracer killed mid-way)."""
    path = tmp_path / "bpftrace"
    path.write_text(
        textwrap.dedent(f"""\
        #!{sys.executable}
        import os, signal, sys, time
        stop = []
        def handler(signum, frame):
            stop.append(signum)
        signal.signal(signal.SIGINT, handler)
        signal.signal(signal.SIGTERM, signal.SIG_DFL if {sigterm_kills!r} else handler)
        print('{{"type": "printf", "data": "{trace_mod.READY}\\\\n"}}', flush=True)
        while not stop:
            time.sleep(0.01)
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        time.sleep({exit_takes!r})
        print({MAPS!r}, flush=True)
        os._exit(0)  # not Python's finalisation: it puts SIGTERM back to the default action, and a
                     # SIGTERM sent again meanwhile killed the stand-in (bpftrace's handler stays)
        """)
    )
    os.chmod(path, 0o755)
    return str(path)


def test_the_counts_are_read_after_a_slow_exit(tmp_path):
    """bpftrace takes longer to exit than abstat waits between two signals: its maps are still printed and read."""
    tracer = trace_mod.Tracer("program", os.getpid(), None)
    try:
        tracer.start(_fake_bpftrace(tmp_path, exit_takes=1.5))
        assert tracer.stop() == {"@c0": {"4242": 500}}
    finally:
        tracer.close()


def test_a_tracer_killed_before_it_printed_is_a_failure_not_zero_calls(tmp_path):
    tracer = trace_mod.Tracer("program", os.getpid(), None)
    try:
        tracer.start(_fake_bpftrace(tmp_path, exit_takes=0.0, sigterm_kills=True))
        with pytest.raises(RuntimeError, match="bpftrace ended by signal 15"):
            tracer.stop()
    finally:
        tracer.close()


def test_kfunc_is_tried_only_for_a_name_the_kernels_btf_holds(tmp_path):
    """A function BTF does not name cannot attach as kfunc: ``check_probe`` goes straight to kprobe (in a TCG
    guest a refused kfunc cost a full bpftrace compile, about 35 s).  The BTF files here are made up: their
    string tables are NUL-separated names, vmlinux's and a module's."""
    (tmp_path / "vmlinux").write_bytes(b"\x9f\xeb\x01\x00\0vfs_read\0x_y\0")
    (tmp_path / "virtio_net").write_bytes(b"\x9f\xeb\x01\x00\0virtnet_poll\0")
    assert trace_mod.btf_names("vfs_read", str(tmp_path)) and trace_mod.btf_names("virtnet_poll", str(tmp_path))
    assert not trace_mod.btf_names("vfs_rea", str(tmp_path))
    assert not trace_mod.btf_names("__x64_sys_getppid", str(tmp_path))
    assert trace_mod.btf_names("anything", str(tmp_path / "absent"))  # unreadable: kfunc tried, as before
    if os.path.exists("/sys/kernel/btf/vmlinux"):  # this kernel's own BTF
        assert trace_mod.btf_names("vfs_read") and not trace_mod.btf_names("abstat_no_such_function")
