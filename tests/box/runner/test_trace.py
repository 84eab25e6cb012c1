"""``abstat run --trace``: a kernel function's or a tracepoint pair's calls and time per call (issue 28).

The references are independent of abstat: ``strace -c`` counts the same
program's read(2) calls, the program itself (the demo's read_chunks.py)
prints how many reads its loop made, and the kernel's own ``kprobe_events``
file says whether kprobes can attach here.  Tests that trace need root,
bpftrace and tracefs; elsewhere they are skipped with the reason.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from abstat.engine.spec import decode, encode
from abstat.box.runner import trace as trace_mod
from abstat.box.runner.sources import Trace, decode_source
from support import paths
from support.cli import run_abstat

ROOT = paths.ROOT
READ_PAIR = "tracepoint:syscalls:sys_enter_read,sys_exit_read"
READ_CHUNKS = ROOT / "src" / "abstat" / "cli" / "examples" / "read_chunks.py"


def _why_not_traceable() -> str | None:
    if os.geteuid() != 0:
        return "tracing needs root"
    if shutil.which("bpftrace") is None:
        return "bpftrace is not installed"
    if not os.path.exists("/sys/kernel/tracing/events/syscalls"):
        return "tracefs is not mounted at /sys/kernel/tracing (mount -t tracefs nodev /sys/kernel/tracing)"
    return None


needs_tracing = pytest.mark.skipif(_why_not_traceable() is not None, reason=_why_not_traceable() or "")


def abstat(*args: str, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return run_abstat(*args, cwd=cwd, extra_env={"NO_COLOR": "1", **(env or {})}, timeout=300)


def samples(cwd: Path, experiment: str) -> dict[tuple[str, str], list[float]]:
    """(variant, metric) -> values, in run order, from ``abstat export`` (what the store holds)."""
    done = abstat("export", "--experiment", experiment, "--format", "json", cwd=cwd)
    assert done.returncode == 0, done.stderr
    found: dict[tuple[str, str], list[tuple[int, float]]] = {}
    for row in json.loads(done.stdout):
        found.setdefault((row["variant"], row["metric"]), []).append((row["run"], row["value"]))
    return {key: [value for _, value in sorted(rows)] for key, rows in found.items()}


def strace_reads(command: list[str]) -> int:
    """read(2) calls of ``command`` and its children, counted by strace."""
    done = subprocess.run(
        ["strace", "-f", "-qq", "-c", "-e", "trace=read", "-o", "/dev/stderr", *command],
        capture_output=True,
        text=True,
        timeout=60,
    )
    match = re.search(r"^\s*[\d.]+\s+[\d.]+\s+\d+\s+(\d+)(?:\s+\d+)?\s+read$", done.stderr, re.MULTILINE)
    assert match, done.stderr
    return int(match.group(1))


# -- the grammar, no root needed ------------------------------------------------


@pytest.mark.parametrize(
    "text, name, probe",
    [
        ("hyperv_flush_tlb_others", "hyperv_flush_tlb_others", "hyperv_flush_tlb_others"),
        (READ_PAIR, "read", READ_PAIR),
        ("tracepoint:irq:softirq_entry,softirq_exit", "softirq_entry", "tracepoint:irq:softirq_entry,softirq_exit"),
        ("flush=hyperv_flush_tlb_others", "flush", "hyperv_flush_tlb_others"),
    ],
)
def test_probe_grammar_and_metric_names(text, name, probe):
    assert trace_mod.parse_probe(text) == (name, probe)
    assert trace_mod.metric_names(name) == (f"{name}.calls", f"{name}.ns")


@pytest.mark.parametrize(
    "text",
    [
        'vfs_read; system("touch /tmp/x")',
        "kprobe:vfs_read",
        "tracepoint:syscalls:sys_enter_read",
        "tracepoint:a:b,c}",
        "",
        "1abc",
        "x y",
    ],
)
def test_a_probe_that_is_not_a_function_or_a_pair_is_refused(text):
    with pytest.raises(ValueError, match="expected FUNC"):
        trace_mod.parse_probe(text)


def test_the_source_is_data_and_a_forged_one_is_refused():
    source = Trace.parse([READ_PAIR, "vfs_read"], all_cpus=True)
    assert decode_source(source.to_json()) == source
    from abstat.engine.spec import ExperimentSpec, Variant

    spec = ExperimentSpec((Variant("a", "true"),), metrics=(source,))
    assert decode(json.loads(json.dumps(encode(spec)))).metrics == (source,)
    for forged in (
        {"source": "trace", "probes": [{"name": "x", "probe": 'f } END { system("id") '}]},
        {"source": "trace", "probes": [{"name": "x", "probe": "f", "extra": 1}]},
        {"source": "trace", "probes": []},
        {"source": "trace", "probes": [{"name": "a", "probe": "f"}, {"name": "a", "probe": "g"}]},
        {"source": "trace", "probes": [{"name": "x", "probe": "f"}], "all_cpus": "yes"},
    ):
        with pytest.raises(ValueError):
            decode_source(forged)
    with pytest.raises(Exception, match="expected FUNC"):  # built directly, checked by the spec
        ExperimentSpec((Variant("a", "true"),), metrics=(Trace((("x", "f;"),)),))


def test_the_program_traces_the_tree_of_one_pid_unless_all_cpus():
    program = trace_mod.script([(READ_PAIR, "tracepoint"), ("vfs_read", "kfunc")], all_cpus=False)
    assert "tracepoint:sched:sched_process_fork /pid == $1/" in program
    assert "tracepoint:syscalls:sys_enter_read /@root[tid]/" in program
    assert "kfunc:vfs_read /@root[tid]/" in program and "kretfunc:vfs_read /@s1[tid]/" in program
    everywhere = trace_mod.script([("vfs_read", "kprobe")], all_cpus=True)
    assert "@root" not in everywhere and "kprobe:vfs_read {" in everywhere


def test_without_bpftrace_the_run_is_one_line_and_nothing_is_stored(tmp_path):
    empty = tmp_path / "bin"
    empty.mkdir()
    (empty / "true").symlink_to(shutil.which("true"))
    done = abstat("run", "-n", "1", "-v", "a=true", "--trace", "vfs_read", cwd=tmp_path, env={"PATH": str(empty)})
    assert done.returncode == 2, done.stderr
    assert done.stderr.splitlines() == [
        "abstat run: --trace: bpftrace is not installed on this machine "
        "(e.g. apt-get install bpftrace); abstat has no other tracer"
    ]
    assert not (tmp_path / "abstat.db").exists()


# -- tracing for real -------------------------------------------------------------


@needs_tracing
def test_call_counts_are_exact_and_the_time_per_call_is_plausible(tmp_path):
    if shutil.which("strace") is None:
        pytest.skip("strace (the reference count) is not installed")
    dd = "dd if=/dev/zero of=/dev/null bs=1 count={}"
    # A background load reading all the time: outside the measured tree, never counted.
    done = abstat(
        "run",
        "-n",
        "2",
        "--experiment",
        "x",
        "--no-json-lines",
        "--trace",
        READ_PAIR,
        "-v",
        "small=" + dd.format(200),
        "-v",
        "big=" + dd.format(20000),
        "--background",
        "sh -c 'while :; do head -c 100 /dev/zero >/dev/null; done'",
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    values = samples(tmp_path, "x")
    reference = {n: strace_reads(dd.format(n).split()) for n in (200, 20000)}
    assert values["small", "read.calls"] == [reference[200]] * 2
    assert values["big", "read.calls"] == [reference[20000]] * 2
    assert reference[20000] - reference[200] == 19800  # strace agrees with dd itself
    for per_call, calls, sys_s, wall in zip(
        values["big", "read.ns"], values["big", "read.calls"], values["big", "sys"], values["big", "wall"]
    ):
        # the time of one call is below the run's system time; the kernel's tick-sampled CPU time can put a
        # 20,000-read dd's system time at 0 on a loaded VM (ci48, load 5), so then only its sign
        assert 0 < per_call * 1e-9 < sys_s or (sys_s == 0.0 and per_call > 0)
        assert per_call * calls * 1e-9 < wall  # and all calls together below its wall time


@needs_tracing
def test_the_demo_pair_per_call_time_has_the_right_sign_and_equal_counts_stay_equal(tmp_path):
    data = tmp_path / "data.bin"
    data.write_bytes(os.urandom(1024 * 1024))
    python = f"{sys.executable} -I -S {READ_CHUNKS} {data}"
    done = abstat(
        "run",
        "-n",
        "2",
        "--experiment",
        "demo",
        "--trace",
        READ_PAIR,
        "--baseline",
        "before",
        "--no-json-lines",
        "-v",
        f"before={python} 128",
        "-v",
        f"after={python} 262144",
        "-v",
        "dd128=dd if=/dev/zero of=/dev/null bs=128 count=2000",
        "-v",
        "dd256k=dd if=/dev/zero of=/dev/null bs=256k count=2000",
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    values = samples(tmp_path, "demo")
    # read_chunks' loop reads the file in chunks, then once more to see its end; Python's start-up adds a few
    for variant, chunk in (("before", 128), ("after", 262144)):
        loop = 1024 * 1024 // chunk + 1
        for traced in values[variant, "read.calls"]:
            assert loop <= traced <= loop + 200
    # 256 KiB per call take longer than 128 B (about 10x; a preemption on this shared machine can inflate one run)
    assert min(values["after", "read.ns"]) > min(values["before", "read.ns"])
    assert sum(values["after", "read.ns"]) > sum(values["before", "read.ns"])
    # the comparison shows the increase in its centres (two runs a side are too few for an interval)
    line = re.search(r"^read\.ns\s+after vs before\s+([\d.,]+) (\S+) → ([\d.,]+) (\S+)", done.stdout, re.MULTILINE)
    assert line and line.group(2) == line.group(4), done.stdout
    assert float(line.group(3).replace(",", "")) > float(line.group(1).replace(",", ""))
    assert values["dd128", "read.calls"] == values["dd256k", "read.calls"]
    assert len(set(values["dd128", "read.calls"])) == 1
    assert min(values["dd256k", "read.ns"]) > min(values["dd128", "read.ns"])
    assert sum(values["dd256k", "read.ns"]) > sum(values["dd128", "read.ns"])


@needs_tracing
def test_a_kernel_function_attaches_or_the_run_says_why_in_one_line(tmp_path):
    stored = abstat("run", "-n", "1", "--experiment", "kept", "-v", "a=true", cwd=tmp_path)
    assert stored.returncode == 0, stored.stderr
    done = abstat(
        "run",
        "-n",
        "2",
        "--experiment",
        "kept",
        "--trace",
        "vfs_read",
        "-v",
        "a=dd if=/dev/zero of=/dev/null bs=1 count=100",
        cwd=tmp_path,
    )
    kprobes = os.path.exists("/sys/kernel/tracing/kprobe_events")
    btf = os.path.exists("/sys/kernel/btf/vmlinux")
    if done.returncode == 2:
        assert not kprobes or btf, done.stderr  # a kernel with kprobe_events attaches kprobes
        [line] = done.stderr.splitlines()
        assert line.startswith("abstat run: --trace vfs_read: cannot attach: ")
        if not kprobes:
            assert "kprobe_events" in line
        assert len(samples(tmp_path, "kept")[("a", "wall")]) == 1  # what was stored is still there
    else:
        assert done.returncode == 0, done.stderr
        calls = samples(tmp_path, "kept")[("a", "vfs_read.calls")]
        assert len(calls) == 2 and all(c >= 100 for c in calls)


@needs_tracing
def test_the_box_s_tracer_and_kernel_log_on_a_lab_run(tmp_path):
    """The lab runs for real through tests/support/local_ssh.py: the runner shipped, bpftrace and /dev/kmsg."""
    shim = f"{sys.executable} {ROOT / 'tests' / 'support' / 'local_ssh.py'}"
    line = "abstat-box-test value=%d\\n"
    done = abstat(
        "run",
        "-n",
        "3",
        "--experiment",
        "lab",
        "--host",
        "box=box1",
        "--shell",
        "--no-json-lines",
        "--trace",
        READ_PAIR,
        "--metric-source",
        "kmsg",
        "--metric",
        r"value=abstat-box-test value=(\d+)",
        "-v",
        f"a=dd if=/dev/zero of=/dev/null bs=1 count=300 2>/dev/null; "
        f"printf '{line}' $((ABSTAT_ITERATION + 40)) > /dev/kmsg",
        cwd=tmp_path,
        env={"ABSTAT_SSH_COMMAND": shim, "ABSTAT_KMSG_USER_LINES": "1"},
    )
    assert done.returncode == 0, done.stderr
    values = samples(tmp_path, "lab")
    assert values["a", "value"] == [40.0, 41.0, 42.0]
    if shutil.which("strace") is None:
        assert all(calls >= 300 for calls in values["a", "read.calls"])
    else:
        reference = strace_reads(["sh", "-c", "dd if=/dev/zero of=/dev/null bs=1 count=300 2>/dev/null; true"])
        assert values["a", "read.calls"] == [reference] * 3


@pytest.mark.skipif(shutil.which("perf") is None, reason="perf is not installed")
def test_perf_records_the_software_events_and_compares_them(tmp_path):
    command = "dd if=/dev/zero of=/dev/null bs=64k count=200"
    direct = subprocess.run(
        ["perf", "stat", "-x,", "-e", "page-faults,task-clock", "--", *command.split()],
        capture_output=True,
        text=True,
        timeout=60,
    )
    if direct.returncode != 0:
        pytest.skip(f"perf stat does not run here: {direct.stderr.strip().splitlines()[-1:]}")
    reference = {
        line.split(",")[2]: float(line.split(",")[0])
        for line in direct.stderr.splitlines()
        if line.count(",") >= 2 and line.split(",")[0].replace(".", "").isdigit()
    }
    done = abstat(
        "run",
        "-n",
        "3",
        "--experiment",
        "p",
        "--perf",
        "--no-json-lines",
        "-v",
        f"a={command}",
        "-v",
        f"b={command.replace('200', '2000')}",
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    exported = json.loads(abstat("export", "--experiment", "p", "--format", "json", cwd=tmp_path).stdout)
    units = {row["metric"]: row["unit"] for row in exported}
    assert units["page-faults"] == "count" and units["task-clock"] == "msec"
    assert {"context-switches", "cpu-migrations"} <= set(units)
    faults = [row["value"] for row in exported if row["metric"] == "page-faults" and row["variant"] == "a"]
    assert all(0.5 * reference["page-faults"] <= value <= 2 * reference["page-faults"] for value in faults)
    assert re.search(r"^task-clock\s+.*→", done.stdout, re.MULTILINE), done.stdout  # compared like the others
