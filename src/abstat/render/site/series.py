"""An experiment's history series made from the sets its report read (``publish``), not read again.

``publish`` reads an experiment's sets once for its report (``api.load``: the store's
``light_sets`` of the experiment, every metric); its history page analyses every metric of the
same experiment, which ``load_history(store_path=..., experiment=..., metrics=every metric)`` reads
from the store a second time: the same sets, in the same order (the same ``light_sets`` query;
``tests/render/site/test_publish_series_sets.py`` checks the History equal to load_history's).
:func:`history_from_sets` builds that History from the report's sets instead (at 10^4 revisions
the second read was a fifth of the publish), with load_history's notes: the load advice of the
latest invocations of ``wall`` and the sets without a revision.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from abstat.history.revision import REV_LABEL
from abstat.history.series import History, build_series
from abstat.readers.bulk import gc_paused


def history_from_sets(sets: Sequence[Any], store_path: str, experiment: str, repo: str | None) -> History | None:
    """The History ``load_history`` makes of ``experiment`` (every metric, ``repo``) from ``sets``, the
    experiment's every set as the store hands them out; None when it would find no series."""
    from abstat.history.load import INVOCATION_ORDER, add_load_advice, finish_history
    from abstat.store import open_store

    with gc_paused():  # a point per revision, none in a cycle (as load_history)
        series, skipped = build_series(sets, rev_label=REV_LABEL, first_seen=INVOCATION_ORDER)
    if not series:
        return None
    notes: list[Any] = []
    walls = sorted({i for s in sets if s.labels.get("metric") == "wall" for i in s.invocations})
    if walls:
        with open_store(store_path, create=False) as store:
            add_load_advice(store, experiment, walls, store.metrics(experiment), notes)
    return finish_history(series, skipped, notes, REV_LABEL, repo)
