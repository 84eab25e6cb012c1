"""The anchor of the store benchmarks: the least any summary of a stored experiment must do.

One sqlite3 query reads every successful sample of the experiment
(variant, metric, invocation, value); numpy then gives each variant's and
metric's median, and the median of each run group (invocation) within it.
Run in a fresh interpreter, it pays the start-up and numpy import a
command pays too.

With METRIC, only that metric's samples (the anchor of ``abstat history --metric METRIC``: on a
history experiment, one invocation per revision, the run-group medians are the revision centres).

    python benchmarks/store_anchor.py STORE.db [EXPERIMENT [METRIC]]
"""

from __future__ import annotations

import sqlite3
import sys

import numpy as np


def main(path: str, experiment: str = "nightly", only: str | None = None) -> int:
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    groups: dict[tuple[str, str], tuple[list[int], list[float]]] = {}
    for variant, metric, invocation, value in db.execute(
        "SELECT v.name, s.metric, r.invocation_id, s.value FROM samples s JOIN runs r ON r.id = s.run_id"
        " JOIN variants v ON v.id = r.variant_id JOIN experiments e ON e.id = v.experiment_id"
        " WHERE e.name = ? AND r.status = 'ok'" + (" AND s.metric = ?" if only else ""),
        (experiment, only) if only else (experiment,),
    ):
        entry = groups.get((variant, metric))
        if entry is None:
            entry = groups[(variant, metric)] = ([], [])
        entry[0].append(invocation)
        entry[1].append(value)
    for (variant, metric), (invocations, values) in sorted(groups.items()):
        ids = np.asarray(invocations)
        numbers = np.asarray(values)
        order = np.argsort(ids, kind="stable")
        _, starts = np.unique(ids[order], return_index=True)
        centres = [float(np.median(part)) for part in np.split(numbers[order], starts[1:])]
        print(variant, metric, len(numbers), float(np.median(numbers)), len(centres), float(np.median(centres)))
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:4]))
