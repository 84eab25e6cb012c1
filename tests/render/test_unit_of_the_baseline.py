"""attack23 #10b: compare printed the candidate's unit beside a unitless baseline's values (``baseline:main |
98.69 ms...`` when only the fork's artifact stored a unit).  The values are shown in the baseline's unit, as the
direction is taken from it: none when it has none, and a note says the candidate had one."""

from __future__ import annotations

import random

from abstat.store import open_store
from support.store_runs import add_ok_run


def _store(path, units, pr=120.0):
    rng = random.Random(5)
    with open_store(str(path)) as store:
        for name, centre in (("main", 100.0), ("pr", pr)):
            invocation = store.start_invocation(name, {"hostname": "h"}, variants=["bench"])
            for i in range(10):
                value = {"t": [centre * rng.gauss(1, 0.01)]}
                add_ok_run(store, invocation, "bench", i, value, {"t": units[name]} if units.get(name) else None)
            store.finish_invocation(invocation, "complete")
    return str(path)


def test_a_unitless_baseline_shows_no_unit(abstat_cli, tmp_path):
    db = _store(tmp_path / "s.db", {"pr": "ms"})
    done = abstat_cli("compare", "--store", db, "main:bench", "pr:bench", "--metric", "t", "--verbose")
    assert done.returncode == 0, done.stderr
    assert " ms" not in done.stdout.replace("has a unit", ""), done.stdout
    assert "has a unit, the baseline main:bench none: the values are compared as they are and shown without" in (
        done.stdout
    )
    # the baseline's unit, also when --baseline names a later input: the candidate's values in it
    db2 = _store(tmp_path / "u.db", {"main": "ms", "pr": "us"}, pr=120_000.0)
    done = abstat_cli("compare", "--store", db2, "pr:bench", "main:bench", "--metric", "t", "--baseline", "main:bench")
    assert done.returncode == 0, done.stderr
    assert "+20" in done.stdout and " ms" in done.stdout and "µs" not in done.stdout, done.stdout
