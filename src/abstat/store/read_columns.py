"""The store's sample sets read as columns (:meth:`ColumnReader.light_sets`): the sets of
``sample_sets(where, machines=False)`` (the same sets, in the same order, with the same labels, runs,
units and invocations), for readers that take each set once and let it go (``abstat history``).

The samples come as arrays (variant, invocation, metric and unit, value: one query), grouped with
numpy; a set's Python objects (its labels, its runs as lists) are made only as it is handed out, so a
history of 10^5 revisions (one invocation, one set each) holds arrays and one set at a time, not
10^5 sets' dicts and lists.  A store the columns do not take as they are (a sample that is not a
number or a damaged key, a run holding several samples of a metric, a metric stored in several
units, rows written during the read) is read row by row as before (:mod:`abstat.store.read_sets`):
the same sets, damage notes and errors.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, Any

from abstat.store.read_runs import gc_paused
from abstat.store.read_sets import _accepted, chosen_variants, samples_query
from abstat.store.records import SampleSet

if TYPE_CHECKING:
    from abstat.store.columns import Columns

# numpy (abstat.store.columns) is imported only when a store is read as columns: the store package
# imports the standard library only.


class ColumnReader:
    db: Any
    _names: Any
    _sample_sets: Any
    _all_labels: Any

    def light_sets(self, where: Mapping[str, Any] | None = None) -> Iterator[SampleSet]:
        """The sets of ``sample_sets(where, machines=False)``, each made as it is handed out
        (module docstring); read row by row when the columns do not take the store as it is."""
        accepted = {key: _accepted(wanted) for key, wanted in (where or {}).items()}
        with gc_paused():
            names = self._names()
            chosen = chosen_variants(names, accepted)
            if not chosen:
                return
            from abstat.store.columns import _known, _sets

            columns = self._columns(chosen, len(chosen) < len(names), accepted)
            hosts = dict(self.db.execute("SELECT id, hostname FROM invocations").fetchall())
            if columns is None or not _known(columns, names, hosts):
                found: Iterable[SampleSet] = self._sample_sets(where, False)
            else:
                found = _sets(columns, names, hosts, self._all_labels(), accepted)
        yield from found

    def column_read(self, where: Mapping[str, Any]) -> tuple[Columns, Any, Any, Any] | None:
        """What :meth:`light_sets` makes its sets of (the columns, the variants' names, the invocations'
        hosts and labels), for a reader that makes no set (``abstat history``); None when its sets are
        not made of columns (no variant chosen, or read row by row) or ``where`` names labels other than
        the experiment, the variant and the metric (which the query itself chooses)."""
        accepted = {key: _accepted(wanted) for key, wanted in where.items()}
        if not set(accepted) <= {"experiment", "variant", "metric"}:
            return None
        with gc_paused():
            names = self._names()
            chosen = chosen_variants(names, accepted)
            if not chosen:
                return None
            from abstat.store.columns import _known

            columns = self._columns(chosen, len(chosen) < len(names), accepted)
            hosts = dict(self.db.execute("SELECT id, hostname FROM invocations").fetchall())
            if columns is None or not _known(columns, names, hosts):
                return None
            return columns, names, hosts, self._all_labels()

    def _columns(self, chosen: list[int], some: bool, accepted: Mapping[str, set[str]]) -> Columns | None:
        from abstat.store.columns import grouped

        sql, params = samples_query(chosen, some, accepted)
        return grouped(self.db.execute(sql, params))
