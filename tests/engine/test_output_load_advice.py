"""When the doctor warned about load, ``run`` says which metrics resist it (issue 35: a loaded machine hid
a 10% regression in wall time that user time showed), with a command that runs as printed: the
experiment's name and the store the run used, shell-quoted and escaped for the terminal (newcomer22's
item 10: it printed ``abstat show EXPERIMENT`` and no ``--store``); ``abstat demo``'s temporary store is
gone when the advice could be followed, so it names no command."""

from __future__ import annotations

import io
import re
import shlex

import pytest

from abstat.engine import ExperimentSpec, Variant
from abstat.engine.events import ExperimentStarted
from abstat.cli.progress.display import LOAD_ADVICE, RunDisplay

LOAD = ("load: load average 3.1 on 2 CPUs: other work competes for them",)


@pytest.mark.parametrize(
    "warnings, advised",
    [
        (LOAD, True),
        (("aslr: randomized address space",), False),
        ((), False),
    ],
)
def test_run_suggests_cpu_time_only_when_the_doctor_warned_about_load(warnings, advised):
    stream = io.StringIO()
    spec = ExperimentSpec((Variant("a", "true"),), runs=2)
    RunDisplay(stream, progress=False)(ExperimentStarted("e", spec, "s.db", doctor_warnings=warnings))
    assert (LOAD_ADVICE in stream.getvalue()) == advised
    if advised:
        assert "--metric user,sys" in stream.getvalue()


def _advice(experiment: str, store: str, **display) -> str:
    stream = io.StringIO()
    spec = ExperimentSpec((Variant("a", "true"),), runs=2)
    RunDisplay(stream, progress=False, **display)(ExperimentStarted(experiment, spec, store, doctor_warnings=LOAD))
    (line,) = [line for line in stream.getvalue().splitlines() if LOAD_ADVICE in line]
    return line


@pytest.mark.parametrize("experiment, store", [("sort", "sort.db"), ("my sort", "/tmp/x y/s.db"), ("it's", "a.db")])
def test_the_advised_command_names_the_experiment_and_store_as_a_shell_reads_them(experiment, store):
    line = _advice(experiment, store)
    command = re.search(r"compare them \((abstat show .*)\)$", line)
    assert command, line
    assert shlex.split(command.group(1)) == ["abstat", "show", experiment, "--metric", "user,sys", "--store", store]


def test_the_advised_command_is_escaped_for_the_terminal():
    line = _advice("evil\x1b[2J", "s.db")
    assert "\x1b" not in line
    assert "EXPERIMENT" not in line


def test_a_temporary_store_gets_no_command(monkeypatch):
    line = _advice("demo", "/tmp/abstat-demo-x/demo.db", store_kept=False)
    assert "abstat show" not in line and "demo.db" not in line
    assert "--store PATH" in line
    # abstat demo runs into a temporary store unless --store is given
    import abstat.cli.commands.run as run
    from abstat.cli.commands import demo

    calls: list[bool] = []
    monkeypatch.setattr(run, "execute", lambda spec, **kw: (calls.append(kw["store_kept"]), (0, None))[1])
    assert demo.main(["-n", "1", "--no-progress"]) == 0
    assert calls == [False]
