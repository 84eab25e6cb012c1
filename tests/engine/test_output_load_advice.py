"""When the doctor warned about load, ``run`` says which metrics resist it (issue 35: a loaded machine hid
a 10% regression in wall time that user time showed)."""

from __future__ import annotations

import io

import pytest

from abstat.engine import ExperimentSpec, Variant
from abstat.engine.events import ExperimentStarted
from abstat.cli.progress.display import LOAD_ADVICE, RunDisplay


@pytest.mark.parametrize(
    "warnings, advised",
    [
        (("load: load average 3.1 on 2 CPUs: other work competes for them",), True),
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
