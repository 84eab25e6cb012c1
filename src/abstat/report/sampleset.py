"""The unit a report is built from: :class:`abstat.readers.sampleset.SampleSet` (read by the readers,
so it lives with them; its old name here still works)."""

from __future__ import annotations

from abstat.readers.sampleset import SampleSet, from_store_set, label_keys

__all__ = ["SampleSet", "from_store_set", "label_keys"]
