"""newcomer22 #2: two sides each measured in one ``abstat run`` of its own (one invocation a cell of a 2 x 2, or a
CI job against a saved baseline) were compared with nothing saying that the run-to-run shift is not measured: a
cell measured while the machine was busy gave -60% starred for an identical command.  Such a pair now carries a
warning; variants interleaved in one run do not."""

from __future__ import annotations

import json
import random

from abstat.store import open_store
from support.store_runs import add_ok_run


def _store(path):
    rng = random.Random(5)
    with open_store(str(path)) as store:
        for experiment in ("e1", "e2"):
            invocation = store.start_invocation(experiment, {"hostname": "h"}, variants=["old", "new"])
            for i in range(8):
                for variant in ("old", "new"):
                    add_ok_run(store, invocation, variant, i, {"t": [100 * rng.gauss(1, 0.01)]}, {"t": "ns"})
            store.finish_invocation(invocation, "complete")
    return str(path)


def test_separate_runs_are_said_and_interleaved_ones_are_not(abstat_cli, tmp_path):
    db = _store(tmp_path / "s.db")
    apart = abstat_cli("compare", "--store", db, "e1:old", "e2:old", "--metric", "t", "--format", "json")
    assert apart.returncode == 0, apart.stderr
    codes = [w["code"] for c in json.loads(apart.stdout)["comparisons"] for w in c["warnings"]]
    assert "separate-invocations" in codes, codes
    text = abstat_cli("compare", "--store", db, "e1:old", "e2:old", "--metric", "t").stdout
    assert "each side measured in one abstat run of its own, not interleaved" in text, text
    together = abstat_cli("compare", "--store", db, "e1:old", "e1:new", "--metric", "t", "--format", "json")
    codes = [w["code"] for c in json.loads(together.stdout)["comparisons"] for w in c["warnings"]]
    assert "separate-invocations" not in codes, codes
