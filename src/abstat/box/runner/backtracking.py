"""Regular expressions whose matching can take exponential time: a repeat inside a repeat, nothing between.

``^(a+)+$`` on ``aaaa...a!`` (34 ``a``) keeps Python's backtracking matcher busy for hours: the outer ``+``
can split the run of ``a`` among its iterations in 2^33 ways, each tried before the match fails.  The shape is
a repeat whose body can be matched by one inner repeat alone (everything else in the body may match
nothing): ``(a+)+``, ``(a*)*``, ``(?:\\w+\\s?)+``, ``(a|b+)+``.  A required item between the iterations
(``(?:\\d+\\.)*``) splits them one way only, and is kept.  Not caught: alternatives that overlap
(``(a|a)+``) and two repeats in one body (``(x+x+)+``); a metric pattern is the user's own (or shown before
``--resume --yes``).

Standard library only, Python 3.8 (``sre_parse``; ``re._parser`` from 3.11, where ``sre_parse`` warns).
"""

from __future__ import annotations

try:
    from re import _parser as sre_parse  # type: ignore[attr-defined]  # Python >= 3.11
except ImportError:  # pragma: no cover - Python < 3.11 (the box's)
    import sre_parse

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

_REPEATS = {sre_parse.MAX_REPEAT, sre_parse.MIN_REPEAT, getattr(sre_parse, "POSSESSIVE_REPEAT", sre_parse.MAX_REPEAT)}


def _children(op: Any, av: Any) -> list[Any]:
    """The sub-patterns of one item that match in its place (groups, alternatives, lookarounds)."""
    if op in _REPEATS:
        return [av[2]]
    if op is sre_parse.SUBPATTERN:
        return [av[-1]]
    if op is sre_parse.BRANCH:
        return list(av[1])
    if op in (sre_parse.ASSERT, sre_parse.ASSERT_NOT):
        return [av[1]]
    if op is sre_parse.GROUPREF_EXISTS:
        return [p for p in av[1:] if p is not None]
    return [av] if op is getattr(sre_parse, "ATOMIC_GROUP", None) else []


def _alone(seq: Any) -> bool:
    """Whether one repeat (of more than one iteration) can match all that ``seq`` matches, the rest empty."""
    widths = [sre_parse.SubPattern(seq.state, [item]).getwidth()[0] for item in seq.data]
    total = sum(widths)
    for index, (op, av) in enumerate(seq.data):
        if total - widths[index]:
            continue
        if op in _REPEATS and av[1] > 1:
            return True
        if op not in _REPEATS and any(_alone(sub) for sub in _children(op, av)):
            return True
    return False


def _nested(seq: Any) -> bool:
    for op, av in seq.data:
        if op in _REPEATS and av[1] > 1 and _alone(av[2]):
            return True
        if any(_nested(sub) for sub in _children(op, av)):
            return True
    return False


def exponential(pattern: str, flags: int = 0) -> bool:
    """Whether ``pattern`` (a valid regular expression) holds a repeat inside a repeat with nothing between."""
    return _nested(sre_parse.parse(pattern, flags))


MESSAGE = "a repeat inside a repeat with nothing required between them (like (a+)+) can take exponential time"
