"""``abstat bisect --host``: the search of :mod:`abstat.history.bisect.search` with boots as the unit.

Each element of a batch is one boot of one commit on the box
(:class:`abstat.history.bisect.onbox.Box`: build, install, boot, check, measure
through the engine); its value is the median of the boot's runs.  The good
and bad references are re-measured in fresh boots, interleaved with the
commit under test, as the search asks.  A commit that does not build,
install or boot is skipped (``git bisect skip``); a reference that does not
is an error.

**Resume.** Every boot is stored as it ends: the engine's invocation (runs
and all), or for a skipped commit one invocation of status ``skipped``, each
with the bisection's settings and the boot's place in the search (batch,
slot) in ``settings.caller.bisect``.  The search is deterministic given its
samples, so ``--resume`` replays it: every planned boot already stored is
read back instead of made again, and the bisection goes on from the first
one missing -- after the box was lost, or this machine restarted.
"""

from __future__ import annotations

import math
import os
import re
import statistics
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from abstat.history.bisect.driver import MODEL, Report, progress_line, resolve_range, subjects
from abstat.history.bisect.onbox import Box, BoxLost, BoxSetup, Failed
from abstat.history.bisect.search import Batch, Outcome
from abstat.history.bisect.segments import Bisection
from abstat.errors import InputError
from abstat.stats.warnings import StatWarning

BATCH_MAX = 8  # boots of the commit under test per batch, at most
SHA = re.compile(r"[0-9a-f]{40}")


@dataclass
class BoxBisect:
    """A bisection on one box: the range, the search's settings, and the box."""

    repo: str
    good: str
    bad: str
    setup: BoxSetup
    budget: int = 150  # boots
    confidence: float = 0.95

    def to_json(self) -> dict[str, Any]:
        return {
            "repo": self.repo,
            "good": self.good,
            "bad": self.bad,
            "budget": self.budget,
            "confidence": self.confidence,
            "setup": self.setup.to_json(),
        }

    @classmethod
    def from_json(cls, data: Any, where: str) -> BoxBisect:
        if (
            not isinstance(data, dict)
            or not all(isinstance(data.get(k), str) for k in ("repo", "good", "bad"))
            or not (SHA.fullmatch(data["good"]) and SHA.fullmatch(data["bad"]))
        ):
            raise InputError(f"{where}: the stored bisection is not valid", fields=["resume"])
        if not os.path.isabs(data["repo"]) or os.path.normpath(data["repo"]) != data["repo"]:  # as the CLI stores it
            raise InputError(f"{where}: the stored 'repo' {data['repo']!r} is not an absolute path", fields=["resume"])
        budget, confidence = data.get("budget"), data.get("confidence")
        if not (
            isinstance(budget, int)
            and 20 <= budget <= 1_000_000
            and isinstance(confidence, float)
            and 0.5 <= confidence < 1
        ):
            raise InputError(f"{where}: the stored bisection's budget or confidence is not valid", fields=["resume"])
        return cls(
            data["repo"], data["good"], data["bad"], BoxSetup.from_json(data.get("setup"), where), budget, confidence
        )


def stored_bisection(store: Any, experiment: str) -> BoxBisect:
    """The settings of the box bisection stored as ``experiment`` (for ``--resume``)."""
    found = [inv for inv in store.invocations(experiment) if _caller(inv) is not None]
    if not found:
        raise InputError(
            f"{{resume}} {experiment!r}: no bisection on a host is stored under that name",
            path=store.display,
            fields=["resume"],
        )
    caller = _caller(found[-1])
    assert caller is not None  # found holds only the invocations that have one
    return BoxBisect.from_json(caller.get("config"), f"{{resume}} {experiment!r}")


def _caller(invocation: dict[str, Any]) -> dict[str, Any] | None:
    caller = (invocation.get("settings") or {}).get("caller")
    bisect = caller.get("bisect") if isinstance(caller, dict) else None
    return bisect if isinstance(bisect, dict) and "config" in bisect else None


def stored_boots(store: Any, experiment: str, metric: str) -> dict[tuple[int, int], tuple[str, float | Failed]]:
    """(batch, slot) -> (commit, its boot's value or Failed) of every boot stored complete or skipped."""
    boots: dict[tuple[int, int], tuple[str, float | Failed]] = {}
    for inv in store.invocations(experiment):
        caller = _caller(inv)
        if caller is None or inv["status"] not in ("complete", "skipped"):
            continue
        batch, slot, rev = caller.get("batch"), caller.get("slot"), inv.get("labels", {}).get("rev", "")
        if not (isinstance(batch, int) and isinstance(slot, int) and SHA.fullmatch(rev)):
            continue
        if inv["status"] == "skipped":
            boots[(batch, slot)] = (rev, Failed("; ".join(inv.get("notes") or []) or "skipped"))
            continue
        groups = store.groups_by_metric(experiment, invocations=[inv["id"]]).get(metric, {})
        values = [
            v for per_invocation in groups.values() for group in per_invocation for v in group if math.isfinite(v)
        ]
        if values:
            boots[(batch, slot)] = (rev, float(statistics.median(values)))
    return boots


def run_box_bisect(
    config: BoxBisect,
    store: Any,
    store_path: str,
    experiment: str | None,
    argv: list[str],
    progress: Callable[[str], None] = lambda text: None,
    *,
    resume: bool = False,
) -> Report:
    """Bisect ``config``'s range on its box, one boot at a time; every boot stored in ``experiment``."""
    from abstat.history.bisect.measure import measurement_session
    from abstat.history.bisect.worktrees import Worktrees

    commits, parent_shas, graph = resolve_range(config.good, config.bad, config.repo)
    config.good, config.bad = commits[0], commits[-1]
    n, setup = len(commits) - 1, config.setup
    experiment = experiment or f"bisect-{commits[0][:12]}-{commits[-1][:12]}"
    stored = stored_boots(store, experiment, setup.metric) if store.has_experiment(experiment) else {}
    if stored and not resume:
        raise InputError(
            f"experiment {experiment!r} already holds {len(stored)} boot(s) of a bisection: continue "
            f"it with {{resume}} {experiment} or name another with {{experiment}}",
            path=store.display,
            fields=["resume", "experiment"],
        )
    search = Bisection(
        n, graph=graph, confidence=config.confidence, budget=config.budget, batch_max=BATCH_MAX, dear=True
    )
    report = Report(
        Outcome("inconclusive", None, 0.0, [], 0),
        commits,
        {},
        experiment=experiment,
        confidence=config.confidence,
        graph={"commits": n, "merges": graph.merges, "segments": graph.segments, "model": MODEL},
    )
    report.boots = {"host": setup.label, "runs_per_boot": setup.runs, "boots": 0, "replayed": 0}
    progress(
        f"{n} commit(s) between {commits[0][:12]} (good) and {commits[-1][:12]} (bad), on host "
        f"{setup.label}: one boot per measurement, {setup.runs} run(s) each"
        + (f"; {len(stored)} boot(s) stored, replayed" if stored else "")
    )
    session = measurement_session(setup.run, setup.metric_spec, setup.timeout)
    try:
        with Worktrees(config.repo) as trees:
            box = Box(
                setup,
                repo=config.repo,
                experiment=experiment,
                store=store_path,
                argv=argv,
                session=session,
                trees=trees,
                caller={"config": config.to_json()},
            )
            try:
                report.outcome = _search(search, commits, stored, box, store, report, progress)
            except BoxLost as lost:
                raise BoxLost(
                    f"{lost.message}; the bisection stopped with its {report.boots['boots']} boot(s) "
                    f"stored: continue it with abstat bisect --resume {experiment} --store "
                    f"{store.display}",
                    fields=lost.fields,
                ) from None
            finally:
                box.close()
    finally:
        session.close()
    report.subjects = subjects(report.outcome, commits, config.repo)
    if report.outcome.culprit is not None and len(parent_shas[report.outcome.culprit]) > 1:
        report.warnings.append(
            StatWarning(
                "merge-culprit",
                f"the culprit {commits[report.outcome.culprit][:12]} is a "
                "merge whose parents measure like the good end: the change comes from "
                "combining them",
            )
        )
    return report


def _search(
    search: Bisection,
    commits: list[str],
    stored: dict[tuple[int, int], tuple[str, float | Failed]],
    box: Box,
    store: Any,
    report: Report,
    progress: Callable[[str], None],
) -> Outcome:
    n = len(commits) - 1
    while True:
        step = search.plan()
        if isinstance(step, Outcome):
            return step
        batch = search.batches
        values: list[float | None] = []
        failed: set[int] = set()
        made: list[int] = []
        for slot, index in enumerate(step.commits):
            sha, role = commits[index], "good" if index == 0 else "bad" if index == n else "test"
            if index in failed:  # it did not build, install or boot: its other boots of the batch are not made
                continue
            made.append(index)
            if (batch, slot) in stored:
                rev, value = stored[(batch, slot)]
                if rev != sha:
                    raise InputError(
                        f"the stored bisection does not match this search at boot {slot + 1} of batch "
                        f"{batch + 1} ({rev[:12]} stored, {sha[:12]} planned): resume it with the "
                        "abstat that began it",
                        path=store.display,
                    )
                report.boots["replayed"] += 1
            else:
                value = _boot(box, store, sha, role, batch, slot, progress)
            report.boots["boots"] += 1
            if isinstance(value, Failed):
                if role != "test":
                    raise BoxLost(
                        f"the {role} revision {sha[:12]} gave no measurement on host {box.setup.label} ({value.reason})"
                    )
                failed.add(index)
                if index not in search.skipped:
                    report.skipped.append(sha)
                    progress(f"skip {sha[:12]}: {value.reason[:160]}")
                values.append(None)
            else:
                values.append(value)
        done = Batch(made, step.test)
        search.record(done, values)
        for index in failed:
            search.skip(index)
        progress(progress_line(search, done, commits, "booted", "boots"))


def _boot(
    box: Box, store: Any, sha: str, role: str, batch: int, slot: int, progress: Callable[[str], None]
) -> float | Failed:
    """One boot of ``sha`` measured on the box; a failed one is stored as ``skipped`` and the box recovered."""
    place = {"batch": batch, "slot": slot}
    progress(f"boot {slot + 1} of batch {batch + 1}: {role} {sha[:12]} on host {box.setup.label}")
    value = box.measure(sha, role, place)
    if isinstance(value, Failed) and role == "test":  # a reference's failure is not stored: a resume boots it again
        invocation = store.start_invocation(
            box.experiment,
            {},
            argv=box.argv,
            settings={"caller": {"bisect": {**box.caller, **place, "role": role}}},
            labels={"rev": sha, "role": "skipped", "host": box.setup.label},
        )
        store.finish_invocation(invocation, "skipped", [value.reason])
    if isinstance(value, Failed) and value.booted:  # a build that failed left the box as it was
        box.recover(sha)
    return value
