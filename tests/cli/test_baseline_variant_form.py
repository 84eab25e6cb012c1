"""``compare baseline:NAME:VARIANT``: the form compare's own error asks for when a saved baseline holds several
variants (attack20 A6: its two colons were read as a summary n:mean:stddev first, so it never worked)."""

from __future__ import annotations

import json

from abstat.store import open_store
from support.cli import run_abstat


def _two_variant_experiment(path: str) -> None:
    with open_store(path) as store:
        invocation = store.start_invocation("e1", {"hostname": "h"}, variants=["a", "b"])
        for i in range(12):
            for variant, level in (("a", 100.0), ("b", 150.0)):
                store.add_run(
                    invocation,
                    variant=variant,
                    command="true",
                    iteration=i,
                    position=2 * i + (variant == "b"),
                    status="ok",
                    exit_code=0,
                    started_at=1.0 + i,
                    wall=0.01,
                    values={"t": [level + i % 4]},
                    units={"t": "s"},
                )
        store.finish_invocation(invocation, "complete")


def test_a_saved_baseline_of_two_variants_is_compared_by_naming_one(tmp_path):
    _two_variant_experiment(str(tmp_path / "b.db"))
    saved = run_abstat("baseline", "save", "v1", "e1", "--store", "b.db", cwd=str(tmp_path))
    assert saved.returncode == 0, saved.stderr
    asked = run_abstat("compare", "baseline:v1", "e1:b", "--store", "b.db", "--metric", "t", cwd=str(tmp_path))
    assert asked.returncode == 2 and "baseline:v1:VARIANT" in asked.stderr, asked.stderr
    for spec in ("baseline:v1:a", "old=baseline:v1:a"):
        done = run_abstat(
            "compare", spec, "e1:b", "--store", "b.db", "--metric", "t", "--format", "json", cwd=str(tmp_path)
        )
        assert done.returncode == 0, done.stderr
        (row,) = json.loads(done.stdout)["comparisons"]
        # the same comparison as of the experiment's own variants
        direct = run_abstat(
            "compare", "e1:a", "e1:b", "--store", "b.db", "--metric", "t", "--format", "json", cwd=str(tmp_path)
        )
        (same,) = json.loads(direct.stdout)["comparisons"]
        assert row["delta_pct"] == same["delta_pct"] and row["ci_pct"] == same["ci_pct"] and row["n"] == [12, 12]
    missing = run_abstat("compare", "baseline:v1:zz", "e1:b", "--store", "b.db", "--metric", "t", cwd=str(tmp_path))
    assert missing.returncode == 2 and "has no variant 'zz'" in missing.stderr, missing.stderr
