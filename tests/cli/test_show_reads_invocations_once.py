"""``abstat show`` reads a stored experiment's invocations (a GROUP BY over every run and a JSON decoding of
every machine record) once: for its label configurations and, as text, for the invocations it lists (it read
them twice, issue 42).  The output is the one of the two reads (checked against the listed invocations)."""

from __future__ import annotations

import time

import pytest

from abstat.cli.commands import show
from abstat.store import Store, open_store

MACHINE = {"hostname": "lab", "boot_id": "boot-1"}


def _store(tmp_path):
    path = str(tmp_path / "s.db")
    with open_store(path) as store:
        for host in ("milan", "naples"):
            inv = store.start_invocation("hc", MACHINE, labels={"host": host}, variants=["before", "after"])
            for variant, base in (("before", 400.0), ("after", 440.0)):
                for i in range(6):
                    store.add_run(
                        inv,
                        variant=variant,
                        command=f"./hc-{variant}",
                        iteration=i,
                        position=i,
                        status="ok",
                        exit_code=0,
                        started_at=time.time(),
                        wall=base + i,
                        values={"cycles": [base + i]},
                        units={"cycles": "cycles"},
                    )
            store.finish_invocation(inv, "complete")
    return path


@pytest.mark.parametrize("fmt", ["text", "json"])
@pytest.mark.parametrize("where", [[], ["--where", "host=milan"]], ids=["all", "where"])
def test_show_reads_the_invocations_once(tmp_path, monkeypatch, capsys, fmt, where):
    path = _store(tmp_path)
    calls = []
    original = Store.invocations

    def counted(self, experiment):
        calls.append(experiment)
        return original(self, experiment)

    monkeypatch.setattr(Store, "invocations", counted)
    assert show.main(["hc", "--store", path, "--format", fmt, *where]) == 0
    assert calls == ["hc"]
    out = capsys.readouterr().out
    hosts = ["milan"] if where else ["milan", "naples"]
    if fmt == "text":
        listed = [line for line in out.splitlines() if line.startswith("invocation ")]
        assert [line.split("[")[1].rstrip("]") for line in listed] == [f"host={h}" for h in hosts]
    else:
        assert '"host": "naples"' in out if not where else '"host": "naples"' not in out
