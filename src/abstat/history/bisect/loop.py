"""Confirm, then bisect: the loop behind ``abstat history --confirm --bisect``.

For each change point of a history report that is new, moved or provisional
(:func:`abstat.history.bisect.confirm.to_confirm`), re-measure the revisions
around it (:func:`~abstat.history.bisect.confirm.confirm`) and, when asked
and the change holds, bisect between them
(:func:`abstat.history.bisect.driver.run_bisect`).  Returns the
confirmations as data; rendering them is the caller's.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from abstat.history.bisect.confirm import Confirmation, confirm, to_confirm


@dataclass(frozen=True)
class Loop:
    """What to run for each change point, and how."""

    repo: str  # the git repository
    run: str  # the benchmark (shell), run in each revision's worktree
    metric: str  # the metric compared
    metric_spec: str | None  # NAME=REGEX reading it from the output, or None for a built-in one
    build: str | None  # build command (shell), run in each worktree first
    runs: int  # runs of each side
    store: str  # where the measurements are recorded
    confidence: float = 0.95  # of the shift's interval (a fraction)
    timeout: float | None = None  # per build and run, seconds
    bisect: bool = False  # bisect each change that holds


def confirm_and_bisect(
    report: Any, loop: Loop, progress: Callable[[str], None] = lambda text: None, argv: list[str] | None = None
) -> list[Confirmation]:
    """Confirm the report's change points, bisecting those that hold when ``loop.bisect``."""
    found = []
    for series, before, after, detected in to_confirm(report):
        item = confirm(
            series,
            before,
            after,
            detected,
            repo=loop.repo,
            run=loop.run,
            metric=loop.metric,
            metric_spec=loop.metric_spec,
            build=loop.build,
            runs=loop.runs,
            store=loop.store,
            experiment=f"confirm-{before[:12]}-{after[:12]}",
            confidence=loop.confidence,
            timeout=loop.timeout,
            progress=progress,
        )
        if item.holds and loop.bisect:
            item.bisect = _bisect(item, loop, progress, argv or ["abstat", "history", "--bisect"])
        found.append(item)
    return found


def _bisect(item: Confirmation, loop: Loop, progress: Callable[[str], None], argv: list[str]) -> Any:
    from abstat.history.bisect.driver import Config, run_bisect
    from abstat.store import open_store

    config = Config(
        repo=loop.repo,
        good=item.before,
        bad=item.after,
        run=loop.run,
        metric=loop.metric,
        metric_spec=loop.metric_spec,
        build=loop.build,
        confidence=loop.confidence,
        timeout=loop.timeout,
    )
    progress(f"bisecting {item.before[:12]}..{item.after[:12]}")
    with open_store(loop.store) as opened:
        return run_bisect(config, opened, None, argv, progress)
