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

from abstat.history.revision import REV_LABEL, commit_subject
from abstat.history.series import History, build_series, order_revisions
from abstat.readers.bulk import gc_paused
from abstat.stats.warnings import StatWarning


def history_from_sets(sets: Sequence[Any], store_path: str, experiment: str, repo: str | None) -> History | None:
    """The History ``load_history`` makes of ``experiment`` (every metric, ``repo``) from ``sets``, the
    experiment's every set as the store hands them out; None when it would find no series."""
    from abstat.history.load import _FIRST_SEEN, _input_warnings, _load_advice
    from abstat.store import open_store

    with gc_paused():  # a point per revision, none in a cycle (as load_history)
        series, skipped = build_series(sets, rev_label=REV_LABEL, first_seen=_FIRST_SEEN)
    if not series:
        return None
    notes: list[Any] = []
    walls = sorted({i for s in sets if s.labels.get("metric") == "wall" for i in s.invocations})
    if walls:
        with open_store(store_path, create=False) as store:
            _load_advice(store, experiment, walls, store.metrics(experiment), notes)
    warnings = _input_warnings(notes)
    if skipped:
        warnings.append(
            StatWarning(
                "no-revision-label",
                f"{skipped} sample set(s) without a {REV_LABEL!r} label left "
                f"out (record revisions with abstat run --rev or --label {REV_LABEL}=...)",
            )
        )
    how, order_warnings, full = order_revisions(series, repo)
    subjects: dict[str, str] = {}
    if full and repo is not None:
        revs = {p.rev for s in series for p in s.points}
        if len(revs) <= 2000:
            subjects = {rev: commit_subject(full[rev], repo) for rev in revs}
    return History(series, how, subjects, warnings + order_warnings)
