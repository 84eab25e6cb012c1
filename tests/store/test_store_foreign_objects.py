"""A store's schema objects must be abstat's own tables (attack19 F2).

A store received from someone (the import workflow) whose ``samples`` is a view over an endless recursive CTE
hung ``show`` and ``import`` at 100% CPU; ``PRAGMA quick_check`` finds nothing wrong (the file is sound).  Such a
store is refused when opened, in one line naming the object, before any query reads it; so is a trigger (abstat
makes none: it would run inside abstat's own writes).  The dashboards' views abstat makes are kept.
"""

from __future__ import annotations

import sqlite3
import subprocess
import sys

import pytest
from support import paths

from abstat.errors import InputError
from abstat.store import open_store


def _store(path: str) -> None:
    with open_store(path):
        pass


FORGERIES = {
    "samples is a view": [
        "ALTER TABLE samples RENAME TO samples_real",
        "CREATE VIEW samples AS WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c) "
        "SELECT s.run_id AS run_id, s.metric AS metric, s.idx AS idx, s.value AS value, s.unit AS unit "
        "FROM samples_real s, c",
    ],
    "runs_touch is a trigger": [
        "CREATE TRIGGER runs_touch AFTER INSERT ON runs BEGIN "
        "UPDATE runs SET notes = (WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c) SELECT max(x) FROM c); "
        "END"
    ],
    "experiments is not a table abstat made": [
        "ALTER TABLE experiments RENAME TO e_real",
        "CREATE VIRTUAL TABLE experiments USING rtree(id, a, b)",
    ],
}


@pytest.mark.parametrize("said", sorted(FORGERIES))
def test_a_store_whose_objects_are_not_abstats_tables_is_refused_at_open(tmp_path, said):
    path = str(tmp_path / "v.db")
    _store(path)
    db = sqlite3.connect(path)
    for statement in FORGERIES[said]:
        db.execute(statement)
    db.commit()
    db.close()
    with pytest.raises(InputError, match=f"not an abstat store: {said}"):
        _store(path)


def test_show_of_the_view_store_is_one_line_and_exit_2(tmp_path):
    path = str(tmp_path / "v.db")
    _store(path)
    db = sqlite3.connect(path)
    for statement in FORGERIES["samples is a view"]:
        db.execute(statement)
    db.commit()
    db.close()
    env = {"PYTHONPATH": paths.SRC}
    done = subprocess.run(  # the timeout only stops a hang (as before): no speed is asserted
        [sys.executable, "-m", "abstat", "show", "e", "--store", path],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert done.returncode == 2 and done.stdout == "", done
    assert done.stderr.count("\n") == 1 and "samples is a view" in done.stderr, done.stderr


def test_abstats_own_store_with_a_dashboard_view_of_the_users_opens(tmp_path):
    path = str(tmp_path / "s.db")
    _store(path)
    db = sqlite3.connect(path)
    db.execute("CREATE VIEW my_dashboard AS SELECT * FROM abstat_samples")
    db.commit()
    db.close()
    _store(path)
