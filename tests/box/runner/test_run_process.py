"""The real executor with real processes: exit codes, timeouts, process groups, rusage."""

from __future__ import annotations

import os
import shutil
import sys
import time

import pytest

from abstat.box.runner.metrics import KEPT_OUTPUT_BYTES
from abstat.box.runner import Command, ProcessExecutor, RunContext, parse_metric_pattern
from abstat.box.runner.executor import ProcessBackground
from abstat.box.runner import perf as perf_mod
from support.processes import alive, wait_gone

PY = sys.executable
CTX = RunContext("v", 0)


def read_pids(path) -> list[int]:
    deadline = time.monotonic() + 2
    while time.monotonic() < deadline:
        text = path.read_text() if path.exists() else ""
        if text.count("\n") >= 2:
            return [int(x) for x in text.split()]
        time.sleep(0.01)
    raise AssertionError(f"pids never written: {text!r}")


@pytest.fixture
def executor():
    ex = ProcessExecutor()
    yield ex
    ex.close()


def test_success_records_wall_and_rusage_metrics(executor):
    m = executor.measure(Command("true"), CTX, timeout=None)
    assert m.status == "ok" and m.exit_code == 0
    assert set(m.values) >= {"wall", "user", "sys", "vcsw", "ivcsw"}
    assert 0 < m.values["wall"][0] < 1
    assert m.units["wall"] == "s"


def test_exit_status_and_signals_are_failures(executor):
    m = executor.measure(Command("exit 3", shell=True), CTX, timeout=None)
    assert (m.status, m.exit_code) == ("failed", 3) and m.notes == ["exit status 3"]
    m = executor.measure(Command("echo boom >&2; kill -SEGV $$", shell=True), CTX, timeout=None)
    assert m.status == "failed" and m.notes == ["killed by SIGSEGV"] and m.stderr_tail == "boom"
    assert m.values == {}  # a failed run has no samples to average in


def test_a_missing_program_is_a_failure_not_a_crash(executor):
    m = executor.measure(Command("/nonexistent/bench"), CTX, timeout=None)
    assert m.status == "failed" and "cannot execute '/nonexistent/bench'" in m.notes[0]


def test_without_shell_arguments_are_not_interpreted(executor):
    m = executor.measure(Command("""echo '$HOME;' '{"x":1}'"""), CTX, timeout=None)
    assert m.stdout == '$HOME; {"x":1}\n'
    assert "x" not in m.values  # a JSON object only counts as a whole line
    m = executor.measure(Command("""printf '{"x": 1}\\n'"""), CTX, timeout=None)
    assert m.values["x"] == [1.0]


def test_timeout_kills_the_whole_process_group(executor, tmp_path):
    pids = tmp_path / "pids"
    script = f"echo $$ > {pids}; sleep 30 & echo $! >> {pids}; wait"
    start = time.monotonic()
    m = executor.measure(Command(script, shell=True), CTX, timeout=0.5)
    assert time.monotonic() - start < 3
    assert m.status == "timeout" and m.exit_code is None
    assert "timed out after 0.5 s" in m.notes[0]
    assert wait_gone(read_pids(pids)) == []


def test_processes_left_behind_by_a_successful_run_are_killed(executor, tmp_path):
    pids = tmp_path / "pids"
    m = executor.measure(Command(f"echo $$ > {pids}; sleep 30 & echo $! >> {pids}", shell=True), CTX, timeout=None)
    assert m.status == "ok"
    assert any("left running" in note for note in m.notes)
    assert wait_gone(read_pids(pids)) == []


def test_rusage_is_the_measured_process_not_cumulative_children(executor):
    burn = f'{PY} -c "import time\nt=time.process_time()\nwhile time.process_time()-t<0.3: pass"'
    first = executor.measure(Command(burn, shell=True), CTX, timeout=None)
    second = executor.measure(Command("true"), CTX, timeout=None)
    assert first.values["user"][0] + first.values["sys"][0] >= 0.25
    assert second.values["user"][0] + second.values["sys"][0] < 0.1


def test_peak_rss_of_a_large_process_is_measured(executor):
    from abstat.box.runner.executor import own_peak_rss_kib

    # larger than this test process's own peak, which is the floor Linux imposes
    size = max(300_000_000, ((own_peak_rss_kib() or 0) + 200_000) * 1024)
    m = executor.measure(Command(f"{PY} -c \"x = b'x' * {size}\""), CTX, timeout=None)
    assert m.status == "ok"
    assert size / 1024 <= m.values["maxrss"][0] < (size + 300_000_000) / 1024


def test_peak_rss_below_abstats_own_is_not_recorded(executor):
    m = executor.measure(Command("true"), CTX, timeout=None)
    assert "maxrss" not in m.values
    assert any("peak RSS not recorded" in note for note in m.notes)


def test_metric_regex_and_json_lines_from_a_real_benchmark(tmp_path):
    bench = tmp_path / "bench.sh"
    bench.write_text(
        "#!/bin/sh\n"
        "echo 'Dry-run                 0      495181'\n"
        "echo 'Self-IPI         11352737    21549999'\n"
        'for c in 440 436 452; do echo "{\\"cycles\\": $c}"; done\n'
    )
    bench.chmod(0o755)
    ex = ProcessExecutor(
        patterns=[
            parse_metric_pattern(r"dry_run=^Dry-run\s+\d+\s+(\d+)$:ns"),
            parse_metric_pattern(r"self_ipi=^Self-IPI\s+\d+\s+(\d+)$"),
        ]
    )
    try:
        m = ex.measure(Command(str(bench)), CTX, timeout=None)
    finally:
        ex.close()
    assert m.status == "ok"
    assert m.values["dry_run"] == [495181.0] and m.units["dry_run"] == "ns"
    assert m.values["self_ipi"] == [21549999.0]
    assert m.values["cycles"] == [440.0, 436.0, 452.0]


def test_a_metric_the_benchmark_did_not_print_fails_the_run(tmp_path):
    ex = ProcessExecutor(patterns=[parse_metric_pattern(r"cycles=cycles: (\d+)")])
    try:
        m = ex.measure(Command("echo nothing here"), CTX, timeout=None)
    finally:
        ex.close()
    assert m.status == "failed" and any("matched nothing" in n for n in m.notes)


def test_large_output_does_not_deadlock(executor):
    m = executor.measure(Command(f"{PY} -c \"print('y' * 4_000_000)\""), CTX, timeout=10)
    # issue 15: the output is scanned in blocks; only its start is kept on the measurement
    assert m.status == "ok" and m.stdout == "y" * KEPT_OUTPUT_BYTES


def test_variant_context_is_exported_to_the_command(executor):
    m = executor.measure(Command('echo "{\\"it\\": $ABSTAT_ITERATION}"', shell=True), RunContext("x", 7), timeout=None)
    assert m.values["it"] == [7.0]


def test_background_group_is_stopped_with_its_children(tmp_path):
    pids = tmp_path / "pids"
    handle = ProcessBackground(Command(f"echo $$ > {pids}; sleep 30 & echo $! >> {pids}; wait", shell=True), os.environ)
    found = read_pids(pids)
    assert all(alive(p) for p in found)
    assert handle.exited() is None
    assert handle.stop() == []
    assert wait_gone(found) == []


def test_background_ignoring_sigterm_gets_sigkill(tmp_path):
    pids = tmp_path / "pids"
    text = f"trap '' TERM; echo $$ > {pids}; sleep 30 & echo $! >> {pids}; wait"
    handle = ProcessBackground(Command(text, shell=True), os.environ, grace=0.3)
    found = read_pids(pids)
    notes = handle.stop()
    assert any("sent SIGKILL" in n for n in notes)
    assert wait_gone(found) == []


def test_background_that_ended_early_is_reported():
    handle = ProcessBackground(Command("exit 4", shell=True), os.environ)
    time.sleep(0.2)
    assert handle.exited() == "exit status 4"
    assert "had already ended (exit status 4)" in handle.stop()[0]


def test_hook_failure_carries_stderr(executor):
    m = executor.run_hook("prepare", Command("echo nope >&2; exit 2", shell=True), CTX, timeout=None)
    assert m.status == "failed" and m.exit_code == 2 and m.stderr_tail == "nope"


@pytest.mark.skipif(shutil.which("perf") is None, reason="perf is not installed")
def test_perf_counts_supported_events_and_names_unsupported_ones():
    support = perf_mod.probe(["task-clock", "page-faults"])
    if not support.usable:
        pytest.skip(f"perf stat cannot count software events here: {support.note}")
    ex = ProcessExecutor(perf=support)
    try:
        m = ex.measure(Command("true"), CTX, timeout=None)
    finally:
        ex.close()
    assert m.status == "ok"
    assert m.values["page-faults"][0] > 0 and m.units["task-clock"] == "msec"
    hw = perf_mod.probe(["cycles", "instructions"])
    if not hw.usable:
        assert "not supported" in hw.note and "cycles" in hw.note
