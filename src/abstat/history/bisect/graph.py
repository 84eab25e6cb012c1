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

Both are exact on any DAG, and cost one pass over the graph's *segments*:
maximal chains in which every commit but the first has exactly one parent
in the range and that parent has exactly one child in it.  A segment's first
commit has its parents at the ends of earlier segments, so the ancestors of
a commit are whole segments plus the commits before it in its own segment.
The whole segments below segment ``s`` are those below its *main parent*
segment (the parent's with most ancestors), that segment itself, and
``extra[s]``: what its other parents bring that the main one does not have
(a merged topic branch's own segments).  So the mass below every segment is
one forward pass, and the sums over descendants the same pass backwards.  A
linear history is one segment; a kernel release (about 14,000 commits,
1,000 merges) a few thousand, each merge's extra a topic branch's few.
"""

from __future__ import annotations

from collections.abc import Sequence


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
        self.parents = inside  # parents[i - 1], in the range only
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
        self.order = np.argsort(self.segment, kind="stable")  # stable: topological within a segment
        counts = np.bincount(self.segment, minlength=self.segments)
        self.starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
        # below[s]: the segments wholly among the ancestors of segment s (bits of an int)
        below: list[int] = []
        self._main: list[int] = []  # segment -> its main parent segment (-1: none in the range)
        self._extra: list[list[int]] = []  # segment -> the whole segments its other parents add
        for head in heads:
            listed = [int(segment[p]) for p in inside[head - 1]]
            if not listed:
                below.append(0)
                self._main.append(-1)
                self._extra.append([])
                continue
            main = max(listed, key=lambda t: below[t].bit_count())
            mine = below[main] | (1 << main)
            others = 0
            for t in listed:
                others |= below[t] | (1 << t)
            extra, bits = [], others & ~mine
            while bits:
                low = bits & -bits
                extra.append(low.bit_length() - 1)
                bits ^= low
            below.append(mine | others)
            self._main.append(main)
            self._extra.append(extra)
        self._below = below

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
        totals = np.bincount(self.segment, weights=p, minlength=self.segments).tolist()
        whole = [0.0] * self.segments
        for s, (main, extra) in enumerate(zip(self._main, self._extra)):
            if main >= 0:  # in topological order: the main parent's is done
                whole[s] = whole[main] + totals[main] + sum(totals[e] for e in extra)
        return np.asarray(whole)[self.segment] + self._within(p, reverse=False)

    def descendant_sums(self, v):  # v over commits 1..n -> sum of v over each commit's descendants (and itself)
        import numpy as np

        v = np.asarray(v, dtype=np.float64)
        carried = np.bincount(self.segment, weights=v, minlength=self.segments).tolist()
        whole = [0.0] * self.segments
        for s in range(self.segments - 1, -1, -1):  # backwards: what every descendant segment carries
            main, amount = self._main[s], carried[s]
            if main < 0 or amount == 0.0:
                continue
            carried[main] += amount
            whole[main] += amount
            for e in self._extra[s]:
                whole[e] += amount
        return np.asarray(whole)[self.segment] + self._within(v, reverse=True)

    def is_ancestor(self, k: int, i: int) -> bool:
        """Whether ``k`` is ``i`` or one of its ancestors (both in ``1..n``)."""
        sk, si = int(self.segment[k - 1]), int(self.segment[i - 1])
        if sk == si:
            return k <= i
        return bool(self._below[si] >> sk & 1)
