"""``--metric-source kmsg``: ``--metric`` patterns read the kernel log lines written during each run (issue 28).

The measured command writes its results to ``/dev/kmsg`` as a kernel module
(the ipi_benchmark module of seed 003) prints them; lines written before the
run (by ``--prepare``) must not count.  Writing and reading the log needs
root; elsewhere those tests are skipped with the reason.
"""

from __future__ import annotations

import functools
import json
import os
import subprocess
import sys

import pytest

from abstat.box.runner import kmsg
from abstat.box.runner.sources import Kmsg, RegexMetric, decode_source
from support.cli import run_abstat

pytestmark = pytest.mark.alone  # the kernel log is the machine's: no other test writes to it meanwhile


def _why_not() -> str | None:
    if os.geteuid() != 0:
        return "writing and reading /dev/kmsg needs root"
    if not os.path.exists("/dev/kmsg"):
        return "this machine has no /dev/kmsg"
    return None


needs_kmsg = pytest.mark.skipif(_why_not() is not None, reason=_why_not() or "")

# the five results of the ipi_benchmark module, as its pr_err("%-15s %18llu, %18llu ns\n") prints them
IPI_LINES = [
    ("Dry-run", "dry_run"),
    ("Self-IPI", "self_ipi"),
    ("Normal IPI", "normal_ipi"),
    ("Broadcast IPI", "broadcast_ipi"),
    ("Broadcast lock", "broadcast_lock"),
]
IPI_SCRIPT = """#!/bin/sh
i=$ABSTAT_ITERATION
n=0
for test in 'Dry-run' 'Self-IPI' 'Normal IPI' 'Broadcast IPI' 'Broadcast lock'; do
    n=$((n + 1))
    printf '%-15s %18u, %18u ns\\n' "$test:" $((n * 1000)) $((n * 1000000 + i)) > /dev/kmsg
done
"""


# ABSTAT_KMSG_USER_LINES: the script below stands in for a kernel module: its lines are user space's
# (see abstat.box.runner.kmsg)
abstat = functools.partial(run_abstat, timeout=300, extra_env={"NO_COLOR": "1", "ABSTAT_KMSG_USER_LINES": "1"})


def ipi_metrics() -> list[str]:
    found = []
    for label, name in IPI_LINES:
        found += ["--metric", rf"{name}={label}:\s+\d+,\s+(\d+) ns:ns"]
    return found


def test_a_record_s_text_is_its_message_with_escapes_decoded():
    assert kmsg.record_text(b"6,1234,5678901,-;Dry-run:  0,   495181 ns\n") == "Dry-run:  0,   495181 ns"
    assert kmsg.record_text(b"4,99,1,c;tab\\x09and \\x5c\n SUBSYSTEM=pci\n DEVICE=+pci:0000:00:01.0\n") == "tab\tand \\"
    assert kmsg.record_text(b"no separator") == ""


def test_the_source_is_data_and_a_forged_one_is_refused():
    source = Kmsg((RegexMetric.parse(r"dry_run=Dry-run:\s+\d+,\s+(\d+) ns:ns"),))
    assert decode_source(source.to_json()) == source
    for forged in (
        {"source": "kmsg", "metrics": []},
        {"source": "kmsg", "metrics": [{"name": "wall", "pattern": "(x)"}]},
        {"source": "kmsg", "metrics": [{"name": "x", "pattern": "no group"}]},
        {"source": "kmsg", "metrics": [{"name": "x", "pattern": "(x)"}], "path": "/etc/shadow"},
    ):
        with pytest.raises(ValueError):
            decode_source(forged)


def test_an_unreadable_log_is_one_line_naming_it(tmp_path):
    # the library names the field; the CLI names it by its flag (cli/flags.py)
    from abstat.cli.flags import namer

    with pytest.raises(ValueError, match=r"^metric_source kmsg: cannot read .*nope: No such file") as raised:
        kmsg.check_readable(str(tmp_path / "nope"))
    assert raised.value.named(namer("run")).startswith("--metric-source kmsg: cannot read ")


def test_kmsg_without_a_metric_is_a_usage_error(tmp_path):
    done = abstat("run", "-n", "1", "-v", "a=true", "--metric-source", "kmsg", cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.splitlines() == [
        "abstat run: --metric-source kmsg: give the numbers to read with --metric NAME=REGEX[:UNIT]"
    ]
    assert not (tmp_path / "abstat.db").exists()


@needs_kmsg
def test_each_run_gets_exactly_its_own_five_kernel_log_metrics(tmp_path):
    script = tmp_path / "ipi.sh"
    script.write_text(IPI_SCRIPT)
    script.chmod(0o755)
    decoy = "sh -c 'printf \"Dry-run:  1, 7 ns\\nSelf-IPI:  1, 7 ns\\n\" > /dev/kmsg'"
    done = abstat(
        "run",
        "-n",
        "20",
        "--experiment",
        "ipi",
        "--metric-source",
        "kmsg",
        *ipi_metrics(),
        "--prepare",
        decoy,
        "--no-json-lines",
        "-v",
        f"a={script}",
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    exported = abstat("export", "--experiment", "ipi", "--format", "json", cwd=tmp_path)
    rows = [row for row in json.loads(exported.stdout) if row["metric"] in dict(map(reversed, IPI_LINES))]
    by_run: dict[int, dict[str, float]] = {}
    for row in rows:
        by_run.setdefault(row["iteration"], {})[row["metric"]] = row["value"]
        assert row["unit"] == "ns"
    assert sorted(by_run) == list(range(1, 21))  # exported iterations count from 1, ABSTAT_ITERATION from 0
    for iteration, values in by_run.items():  # each run its own numbers, the decoys never
        assert values == {name: n * 1000000 + iteration - 1 for n, (_, name) in enumerate(IPI_LINES, 1)}
    assert len(rows) == 100


@needs_kmsg
def test_a_run_whose_module_printed_nothing_failed(tmp_path):
    done = abstat("run", "-n", "2", "--metric-source", "kmsg", *ipi_metrics(), "-v", "a=true", cwd=tmp_path)
    assert done.returncode != 0
    assert "run 1 of variant 'a' failed" in done.stderr and "kernel log: metric dry_run: pattern" in done.stderr


# --------------------------------------------------------------------------
# issue 36, item 8: only the kernel's own records, within the run's window


def test_only_kernel_records_stamped_within_the_run_are_accepted(tmp_path):
    log = tmp_path / "log"
    log.write_bytes(b"")
    collector = kmsg.KmsgCollector([], path=str(log))
    try:
        collector._user_lines = False
        collector.wrap([], None)  # type: ignore[arg-type]
        start = collector._start_us
        end = start + 10_000_000
        assert collector._accept(b"3,1,%d,-;Dry-run: 0, 5 ns\n" % (start + 100), end)  # the kernel's, in the run
        assert not collector._accept(b"11,2,%d,-;Dry-run: 0, 99 ns\n" % (start + 100), end)  # user space (<0> too)
        assert not collector._accept(b"3,3,%d,-;Dry-run: 0, 99 ns\n" % (start - 10**6), end)  # before the run
        assert not collector._accept(b"3,4,%d,-;Dry-run: 0, 99 ns\n" % (end + 1), end)  # after it
        assert not collector._accept(b"garbage;Dry-run: 0, 99 ns\n", end)
        collector._user_lines = True
        assert collector._accept(b"11,2,%d,-;Dry-run: 0, 99 ns\n" % (start + 100), end)
    finally:
        collector.close()


@needs_kmsg
def test_lines_user_space_writes_during_a_run_are_not_metrics(tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in ("ABSTAT_STORE", "ABSTAT_DEBUG", "ABSTAT_KMSG_USER_LINES")}
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "abstat",
            "run",
            "-n",
            "3",
            "--experiment",
            "forged",
            "--metric-source",
            "kmsg",
            "--metric",
            r"cycles=abstat-forged cycles: (\d+)",
            "--shell",
            "-v",
            "a=echo 'abstat-forged cycles: 99' > /dev/kmsg",
            "--format",
            "json",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        env={**env, "NO_COLOR": "1"},
    )
    assert "Traceback" not in done.stderr and done.returncode != 0
    assert "kernel log: 1 record(s) not written by the kernel during this run ignored" in done.stderr, done.stderr
    assert "metric cycles: pattern 'abstat-forged cycles: " in done.stderr and "matched nothing" in done.stderr


@needs_kmsg
@pytest.mark.parametrize("drift_us", [-50_000, 0, 50_000])
def test_the_window_follows_the_logs_clock_when_it_drifts_from_monotonic(monkeypatch, drift_us):
    """The log's clock (local_clock) and CLOCK_MONOTONIC drift apart with uptime (NTP slews one): 4 ms
    after 8 hours here refused every record with the old fixed 2 ms slack.  A monotonic clock 50 ms off
    either way still takes exactly the run's record, and not the one written before the run."""
    real = kmsg._now_us
    monkeypatch.setattr(kmsg, "_now_us", lambda: real() + drift_us)
    monkeypatch.setenv("ABSTAT_KMSG_USER_LINES", "1")
    source = Kmsg((RegexMetric.parse(r"dry_run=Drift-run:\s+\d+,\s+(\d+) ns:ns"),)).collector()
    try:
        writer = os.open("/dev/kmsg", os.O_WRONLY)
        try:
            os.write(writer, b"Drift-run: 1, 111 ns\n")  # before the run: never read
            source.wrap(["true"], None)  # type: ignore[arg-type]
            os.write(writer, b"Drift-run: 1, 222 ns\n")
        finally:
            os.close(writer)
        lines, notes = source._records()  # type: ignore[attr-defined]
    finally:
        source.close()
    assert [line for line in lines if line.startswith("Drift-run")] == ["Drift-run: 1, 222 ns"], (lines, notes)
    assert not [note for note in notes if "ignored" in note], notes
