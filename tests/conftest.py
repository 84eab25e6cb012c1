"""The ``slow`` marker: test files that drive real sshd boxes, reboots, bisections, Chromium, bpftrace
or timed benchmarks.  ``python -m pytest -m "not slow"`` is the README's fast first try."""
from __future__ import annotations

import os

import pytest

SLOW_FILES = frozenset({
    "test_bisect.py", "test_bisect_host.py", "test_bisect_merges.py", "test_bisect_store.py",
    "test_bisect_worktrees.py", "test_ci_gate.py", "test_engine_lab.py", "test_hardening_processes.py",
    "test_history_confirm.py", "test_html_figures.py", "test_html_report.py", "test_lab_bundle_supervisor.py",
    "test_lab_doctor.py", "test_lab_hostile.py", "test_lab_ssh.py", "test_lab_store_loss.py",
    "test_publish.py", "test_store_scale.py", "test_trace.py", "test_workflows_build.py",
    "test_workflows_hcall.py", "test_workflows_ipi.py",
})


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "slow: real boxes, reboots, bisections, browsers or tracers (minutes)")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if os.path.basename(str(item.fspath)) in SLOW_FILES:
            item.add_marker(pytest.mark.slow)
