"""The commits a bisection searches, as a graph (library code, no I/O).

Commits are numbered ``1..n`` in a topological order (parents first; ``n``
is the bad end, the only commit without a child); ``0`` stands for the good
end and everything reachable from it, which git bisect takes as good.  The
model is git bisect's: one commit ``k`` (the culprit) changes the
benchmark, and a commit is bad exactly when ``k`` is itself or one of its
ancestors.  On a merge-free history that is "``i`` is bad iff ``i >= k``".

Two sums over the ancestor relation are all the search needs:

- ``bad_mass(p)``: for every commit ``i``, ``P(i is bad) = sum of p[k] over
  k ancestor-or-self of i``;
- ``descendant_sums(v)``: for every commit ``k``, ``sum of v[i] over i with k
  ancestor-or-self of i`` (the log-likelihood of "``k`` is the culprit").

Both are exact on any DAG.  The graph is cut into *segments*: maximal
chains in which every commit but the first has exactly one parent in the
range and that parent has exactly one child in it.  A segment's first
commit has its parents at the ends of earlier segments, so the ancestors of
a commit are whole segments (a bit matrix over segments, packed) plus the
commits before it in its own segment.  A linear history is one segment;
a kernel release (about 14,000 commits, 1,000 merges) a few thousand.
"""
from __future__ import annotations

from collections.abc import Sequence

_CHUNK = 1 << 22  # bits unpacked at once when multiplying by the segment matrix


class Graph:
    def __init__(self, parents: Sequence[Sequence[int]]) -> None:
        """``parents[i - 1]``: the parents of commit ``i`` (``1..n``) that are in the range, each
        ``< i``; a parent outside the range (reachable from the good end) is left out or given as 0."""
        import numpy as np

        n = len(parents)
        if n < 1:
            raise ValueError("need at least one commit after the good one")
        inside: list[tuple[int, ...]] = []
        children = np.zeros(n + 1, dtype=np.int64)
        for i, listed in enumerate(parents, start=1):
            own = tuple(dict.fromkeys(p for p in listed if p > 0))
            if any(p >= i for p in own):
                raise ValueError(f"commit {i}: a parent must come before it (topological order)")
            inside.append(own)
            for p in own:
                children[p] += 1
        if int(np.count_nonzero(children[1:n] == 0)):
            raise ValueError("every commit but the last must be an ancestor of the last (the bad end)")
        self.n = n
        self.parents = inside                     # parents[i - 1], in the range only
        self.merges = sum(1 for own in inside if len(own) > 1)
        segment = np.zeros(n + 1, dtype=np.int64)  # commit -> its segment
        heads: list[int] = []
        for i, own in enumerate(inside, start=1):
            if len(own) == 1 and children[own[0]] == 1:
                segment[i] = segment[own[0]]
            else:
                segment[i] = len(heads)
                heads.append(i)
        self.segments = len(heads)
        self.segment = segment[1:]
        # commits ordered by segment, then along it: cumulative sums within a segment are slices
        self.order = np.argsort(self.segment, kind="stable")   # stable: topological within a segment
        counts = np.bincount(self.segment, minlength=self.segments)
        self.starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
        # ancestors[s]: the segments wholly among the ancestors of segment s, packed bits (big-endian)
        s_count = self.segments
        width = (s_count + 7) // 8
        ancestors = np.zeros((s_count, width), dtype=np.uint8)
        for s, head in enumerate(heads):
            for p in inside[head - 1]:
                t = int(segment[p])
                ancestors[s] |= ancestors[t]
                ancestors[s, t >> 3] |= np.uint8(0x80 >> (t & 7))
        self._ancestors = ancestors

    @classmethod
    def linear(cls, n: int) -> Graph:
        return cls([[i - 1] if i > 1 else [] for i in range(1, n + 1)])

    @property
    def linear_history(self) -> bool:
        return self.merges == 0

    def parents_of(self, commit: int) -> tuple[int, ...]:
        """The parents of ``commit`` inside the range (empty: its parents are all good ends)."""
        return self.parents[commit - 1] if commit > 0 else ()

    # -- the two sums --------------------------------------------------------

    def _rows(self, rows):  # -> iterator of (row indices, unpacked bits as float)
        import numpy as np

        step = max(1, _CHUNK // max(1, self.segments))
        for start in range(0, len(rows), step):
            chosen = rows[start:start + step]
            bits = np.unpackbits(self._ancestors[chosen], axis=1, count=self.segments)
            yield chosen, bits.astype(np.float64)

    def _within(self, values, *, reverse: bool):  # -> per commit, inclusive cumulative sum in its segment
        import numpy as np

        values = np.asarray(values, dtype=np.float64)
        cumulative = np.cumsum(values[self.order])
        before = np.concatenate([[0.0], cumulative])
        prefix = np.empty(self.n)
        prefix[self.order] = cumulative - before[self.starts][self.segment[self.order]]
        if not reverse:
            return prefix
        totals = np.bincount(self.segment, weights=values, minlength=self.segments)
        return totals[self.segment] - prefix + values  # the commit itself and those after it in its segment

    def bad_mass(self, p):  # p over commits 1..n -> P(commit i is bad), i = 1..n
        import numpy as np

        p = np.asarray(p, dtype=np.float64)
        whole = np.zeros(self.segments)
        if self.segments > 1:
            totals = np.bincount(self.segment, weights=p, minlength=self.segments)
            for rows, bits in self._rows(np.arange(self.segments)):
                whole[rows] = bits @ totals
        return whole[self.segment] + self._within(p, reverse=False)

    def descendant_sums(self, v):  # v over commits 1..n -> sum of v over each commit's descendants (and itself)
        import numpy as np

        v = np.asarray(v, dtype=np.float64)
        whole = np.zeros(self.segments)
        if self.segments > 1:
            totals = np.bincount(self.segment, weights=v, minlength=self.segments)
            measured = np.flatnonzero(totals)
            for rows, bits in self._rows(measured):
                whole += totals[rows] @ bits
        return whole[self.segment] + self._within(v, reverse=True)

    def is_ancestor(self, k: int, i: int) -> bool:
        """Whether ``k`` is ``i`` or one of its ancestors (both in ``1..n``)."""
        sk, si = int(self.segment[k - 1]), int(self.segment[i - 1])
        if sk == si:
            return k <= i
        return bool(self._ancestors[si, sk >> 3] & (0x80 >> (sk & 7)))
