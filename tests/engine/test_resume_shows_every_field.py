"""Wave 19 (attack18 H2): a resume shows, and its approval covers, every stored field that becomes a command,
a program's argument, a path followed or a change to the box -- a parameter scan's values above all.

A forged store held ``echo {n}`` with n = ``1`` and ``2; touch MARK``: ``abstat run --resume`` showed
``-v a=echo {n}`` only, and ``--yes`` (or ``abstat.resume(approved=that list)``) ran ``touch MARK``.
The hosts are this machine through tests/support/local_ssh.py: what is approved really runs.
"""

from __future__ import annotations

import os
import sys

import pytest

from abstat.box.runner.sources import SOURCES, Kmsg, Monitor, Perf, RegexMetric, Trace
from abstat.engine import ExperimentSpec, Hooks, Host, Lab, Variant
from abstat.engine.spec import _TOP, encode
from abstat.engine.stored import stored_commands
from abstat.store import open_store
from support import forged, paths
from support.cli import run_abstat

SHIM = os.path.join(str(paths.ROOT), "tests", "support", "local_ssh.py")


_store = forged.run_store


def _forged(tmp_path) -> tuple[str, str]:
    store, marker = str(tmp_path / "forged.db"), str(tmp_path / "PWNED")
    spec = ExperimentSpec(
        (Variant("a", "echo {n}"),),
        seed=1,
        shell=True,
        runs=1,
        lab=Lab((Host("m", "m"),)),
        parameters={"n": ("1", f"2; touch {marker}")},
    )
    _store(store, spec)
    return store, marker


def test_run_resume_shows_the_values_and_every_command_as_it_runs(tmp_path):
    store, marker = _forged(tmp_path)
    result = run_abstat("run", "--resume", "x", "--store", store, cwd=str(tmp_path))
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert result.stderr.splitlines() == [
        "on m (m) (in a shell):",
        "  -v a=echo {n}",
        f'  -L n "1" "2; touch {marker}"',
        "  as run, the values put in:",
        '    at n="1": -v a=echo 1',
        f'    at n="2; touch {marker}": -v a=echo 2; touch {marker}',
        "abstat run: --resume 'x' runs the stored commands above; check them, then add --yes",
    ]
    assert not os.path.exists(marker)


def test_an_approval_without_the_values_runs_nothing_and_the_listed_one_runs_as_listed(tmp_path, monkeypatch):
    import abstat
    from abstat.errors import UsageError

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("ABSTAT_SSH_COMMAND", f"{sys.executable} {SHIM}")
    store, marker = _forged(tmp_path)
    wave18 = ["on m (m) (in a shell):", "  -v a=echo {n}"]  # what was listed, and approved, before
    with pytest.raises(UsageError, match="runs the stored commands .*2; touch"):
        abstat.resume("x", store=store, approved=wave18)
    assert not os.path.exists(marker)
    with open_store(store, create=False) as opened:
        assert len(opened.invocations("x")) == 1  # nothing started
    listed = abstat.stored_commands("x", store=store)
    assert f'    at n="2; touch {marker}": -v a=echo 2; touch {marker}' in listed
    result = abstat.resume("x", store=store, approved=listed)
    assert result.status == "complete" and os.path.exists(marker)  # what was listed is what ran


# Every top-level field of the JSON form is either shown (a change to it changes the list) or runs nothing.
INERT = {
    "abstat_spec",
    "experiment",  # the one resumed is the one named
    "store",  # the one resumed from
    "runs",
    "warmup",
    "order",
    "seed",
    "timeout",
    "on_failure",
    "labels",
    "analysis",
    "sequential",
}
BASE = ExperimentSpec(
    (Variant("a", "bench {n}"),),
    lab=Lab((Host("m", "m"),)),
    cpus=(1,),
    parameters={"n": ("1",)},
)
CHANGED = {
    "variants": dict(variants=(Variant("a", "bench {n} --other"),)),
    "shell": dict(shell=True),
    "hooks": dict(hooks=Hooks(prepare="drop-caches {n}")),
    "background": dict(background=("stress",)),
    "metrics": dict(metrics=(Perf(("cycles",)),)),
    "rev": dict(rev="/some/checkout"),
    "lab": dict(lab=Lab((Host("m", "other.box"),))),
    "cpus": dict(cpus=(2,)),
    "isolate": dict(isolate=True),
    "parameters": dict(parameters={"n": ("1", "2")}),
}


def test_every_field_of_the_specification_is_shown_or_runs_nothing():
    assert set(CHANGED) | INERT == set(_TOP) and not set(CHANGED) & INERT, "classify the new field"
    shown = stored_commands(BASE)
    for name, change in CHANGED.items():
        assert stored_commands(BASE.replace(**change)) != shown, name
    booted = ExperimentSpec((Variant("a", "bench"),), lab=Lab((Host("m", "m"),), {"a": "boot-into x"}, {"a": "ok x"}))
    assert set(encode(booted)["lab"]) == {"hosts", "boot", "check", "boots", "boot_timeout"}, "classify the new field"
    shown = stored_commands(booted)
    for change in (dict(hosts=(Host("m", "n"),)), dict(boot={"a": "boot-into y"}), dict(check={"a": "ok y"})):
        assert stored_commands(booted.replace(lab=Lab(**{**vars(booted.lab), **change}))) != shown, change


SHOWN_SOURCES = {
    "perf": Perf(("cycles", "instructions")),
    "kmsg": Kmsg((RegexMetric.parse(r"irq=irq (\d+)"),)),
    "trace": Trace.parse(["vfs_read"]),
    "monitor": Monitor.parse(["interrupts"]),
}


def test_every_metric_source_that_starts_a_program_or_reads_the_kernel_is_shown():
    assert set(SHOWN_SOURCES) == set(SOURCES) - {"regex", "json-lines"}, "show the new source, or say why not"
    for kind, source in SHOWN_SOURCES.items():
        lines = stored_commands(BASE.replace(metrics=(source,)))
        assert [line for line in lines if line.startswith(f'  --metric-source "{kind}"')], (kind, lines)
    lines = stored_commands(BASE.replace(metrics=(Trace.parse(["vfs_read"]),)))
    assert any('"probe": "vfs_read"' in line for line in lines), lines


def test_a_stored_regex_metric_is_shown_as_typed():
    """It decides what is recorded, and matching it is work the box does (attack19 F9): shown with the commands."""
    lines = stored_commands(BASE.replace(metrics=(RegexMetric.parse(r"x=^wall (\d+)$:ns"),)))
    assert "  --metric x=^wall (\\d+)$:ns" in lines, lines


def test_hooks_with_values_are_shown_once_per_point_as_they_run():
    spec = ExperimentSpec(
        (Variant("a", "bench {n}"), Variant("b", "bench2 {n}")),
        hooks=Hooks(setup="make N={n}", cleanup="rm -f out"),
        lab=Lab((Host("m", "m"),)),
        parameters={"n": ("4", "8")},
    )
    lines = stored_commands(spec)
    assert lines[lines.index("  as run, the values put in:") :] == [
        "  as run, the values put in:",
        '    at n="4": -v a=bench 4',
        '    at n="4": --setup make N=4',
        '    at n="4": -v b=bench2 4',
        '    at n="8": -v a=bench 8',
        '    at n="8": --setup make N=8',
        '    at n="8": -v b=bench2 8',
    ]
