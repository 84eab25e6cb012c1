"""A report read from the store without every set's machine record (``machines=False``, then
``add_machines``: what ``abstat report`` and ``publish`` do) shows the same machines as a report of
sets that each carry their record: each host's record from the first set the report chooses that has
one, whatever ``where`` and ``metrics`` choose."""

from __future__ import annotations

import pytest

from abstat.report import api

store_api = pytest.importorskip("abstat.store")


def make_store(path) -> None:
    with store_api.open_store(str(path)) as store:
        for boot in range(3):
            for host in ("milan", "skx"):
                # every invocation its own record (a set shows its last invocation's); milan's last boot
                # recorded none, so its sets have no host label: their (empty) records are read too
                machine = {} if (host, boot) == ("milan", 2) else {"hostname": host, "boot_id": f"{host}-{boot}"}
                inv = store.start_invocation(
                    "hcall", machine, argv=["abstat", "run"], labels={"mode": f"m{boot % 2}"}, variants=["a", "b"]
                )
                for position, variant in enumerate(("a", "b")):
                    for iteration in range(4):
                        value = 1e-3 * (1 + position + iteration / 10 + boot / 100)
                        store.add_run(
                            inv,
                            variant=variant,
                            command="./x",
                            iteration=iteration,
                            position=position,
                            status="ok",
                            exit_code=0,
                            started_at=0.0,
                            wall=value,
                            values={"wall": [value], "cycles": [float(1000 + iteration)]},
                            units={"wall": "s"},
                        )
                store.finish_invocation(inv, "ok")


@pytest.mark.parametrize(
    "where, metrics",
    [(None, None), ({"host": {"skx"}}, None), (None, ["cycles"]), ({"mode": {"m1"}}, ["wall"])],
)
def test_report_machines_read_for_the_chosen_sets(tmp_path, where, metrics) -> None:
    db = str(tmp_path / "abstat.db")
    make_store(db)
    full = api.build(api.load([], store=db), where=where, metrics=metrics)
    sets = api.load([], store=db, machines=False)
    assert all(s.machine == {} for s in sets)
    api.add_machines(sets, db, where=where, metrics=metrics)
    assert 0 < sum(bool(s.machine) for s in sets) <= 2  # one record a host, not one a set
    lean = api.build(sets, where=where, metrics=metrics)
    assert lean.machines == full.machines
    assert sorted(lean.machines) == (["skx"] if where == {"host": {"skx"}} else ["milan", "skx"])
    assert any("host" not in s.labels for s in sets)
