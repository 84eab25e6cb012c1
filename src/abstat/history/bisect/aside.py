"""One outlying boot of a dear search's ends, set aside where the ends' spread sizes a commit's boots (library code).

A dear search (boots) sizes a commit's boots and its ends' from the ends' pooled spread
(:func:`abstat.history.bisect.levels.runs_needed`).  One boot in a host's slow mode (1.3 to 1.9 times, docs/history.md)
among 3 of an end widened that spread so much that a change of 20 times asked 3 to 4 boots of each commit and twice
as many of each end.  :func:`set_aside` leaves such a boot out of the sizing only (every check still counts it): the
boot farthest from its end's median, when every boot of one end lies beyond every boot of the other and it lies more
than ``OUTLYING`` times the others' pooled spread from its end's median.
"""

from __future__ import annotations

OUTLYING = 10.0  # normal noise: a boot this far in 1% to 6% of draws of 3 against 2 boots, 0.6% of 4 a side


def set_aside(good, bad):
    """The ends' boots (numpy arrays, logarithms) less the one farthest from its end's median among ends of 3 boots or
    more, when the ends are apart (every boot of one beyond every boot of the other) and it lies more than ``OUTLYING``
    times the others' pooled spread (each end's about its mean) from that median; else as given."""
    import numpy as np

    if max(good.size, bad.size) < 3 or not (good.max() < bad.min() or bad.max() < good.min()):
        return good, bad
    far = [np.abs(x - np.median(x)) if x.size >= 3 else np.full(x.size, -1.0) for x in (good, bad)]
    k = int(np.argmax(np.concatenate(far)))
    rest = (np.delete(good, k), bad) if k < good.size else (good, np.delete(bad, k - good.size))
    ss = sum(float(np.sum((x - x.mean()) ** 2)) for x in rest)
    return rest if np.concatenate(far)[k] > OUTLYING * np.sqrt(ss / (good.size + bad.size - 3)) else (good, bad)
