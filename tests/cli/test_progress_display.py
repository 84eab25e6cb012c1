"""``abstat run``'s live display: drawn between runs only, medians as statistics.median gives them."""

from __future__ import annotations

import io
import random
import statistics
import threading

import pytest

from abstat.engine.events import RunDone
from abstat.cli.progress import local as progress_mod
from abstat.cli.progress.local import Progress


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def done(variant: str, index: int, wall: float, status: str = "ok") -> RunDone:
    return RunDone(
        variant, index, index, status, wall, 0 if status == "ok" else 1, 0.0, {"wall": [wall]}, {"wall": "s"}, ()
    )


@pytest.mark.parametrize("count", [1, 2, 7, 200])
def test_running_medians_are_those_of_statistics_median(count):
    rng = random.Random(count)
    shown = Progress(["a", "b"], 2 * count, io.StringIO(), enabled=False)
    walls = {"a": [], "b": []}
    for index in range(count):
        for name in walls:
            wall = rng.choice([0.001, 0.002, rng.lognormvariate(-7, 0.5)])
            walls[name].append(wall)
            shown.result(done(name, index, wall))
    shown.result(done("a", count, 9.0, status="failed"))  # a failure counts, its time does not
    fmt = progress_mod.format_value
    assert shown.medians_text() == (
        f"median: a {fmt(statistics.median(walls['a']), 's')} (1 failed), b {fmt(statistics.median(walls['b']), 's')}"
    )


def test_the_rich_display_starts_no_thread_and_draws_at_most_every_redraw_interval(monkeypatch):
    clock = [100.0]
    monkeypatch.setattr(progress_mod.time, "monotonic", lambda: clock[0])
    before = threading.active_count()
    terminal = Terminal()
    shown = Progress(["a"], 50, terminal, enabled=True)
    assert shown._rich is not None
    draws = []
    real = shown._rich.refresh
    monkeypatch.setattr(shown._rich, "refresh", lambda: (draws.append(clock[0]), real()))
    for index in range(49):
        clock[0] += 0.01  # 100 runs a second
        shown.result(done("a", index, 0.0005))
        assert threading.active_count() == before  # nothing draws while a command runs
    assert 4 <= len(draws) <= 6  # 0.49 s: about every 0.1 s, not once a run
    shown.result(done("a", 49, 0.0005))
    assert draws[-1] == clock[0]  # the last run is always drawn
    shown.stop()
    assert "50/50" in terminal.getvalue() and "a 500" in terminal.getvalue()
