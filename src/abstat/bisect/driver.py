"""``abstat bisect``: drive git, the runner and the store with :class:`abstat.bisect.search.Search`."""
from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from abstat.bisect.search import Batch, Outcome, Search
from abstat.bisect.workspace import Recorder, Worktrees, artifact_digest, build, measure
from abstat.errors import InputError
from abstat.history.revision import commit_subject, commits_between, resolve


@dataclass
class Config:
    repo: str
    good: str
    bad: str
    run: str
    metric: str
    metric_spec: str | None
    build: str | None = None
    budget: int = 400
    confidence: float = 0.95
    artifact: str | None = None
    timeout: float | None = None


@dataclass
class Report:
    outcome: Outcome
    commits: list[str]                       # index -> sha (0 = good)
    subjects: dict[str, str]
    skipped: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    experiment: str = ""
    confidence: float = 0.95


def run_bisect(config: Config, store: Any, experiment: str | None, argv: Sequence[str],
               progress: Callable[[str], None] = lambda text: None) -> Report:
    """Bisect between ``config.good`` and ``config.bad``, recording every run under ``experiment``
    (default ``bisect-GOOD-BAD`` with both as 12-digit hashes)."""
    from abstat.bisect.measure import measurement_session

    shas = resolve([config.good, config.bad], config.repo)
    for name, sha in shas.items():
        if sha is None:
            raise InputError(f"unknown revision {name!r}", path=config.repo)
    commits = commits_between(shas[config.good] or "", shas[config.bad] or "", config.repo)
    n = len(commits) - 1
    experiment = experiment or f"bisect-{commits[0][:12]}-{commits[-1][:12]}"
    search = Search(n, confidence=config.confidence, budget=config.budget)
    executor = measurement_session(config.run, config.metric_spec, config.timeout)
    settings = {"bisect": {"good": commits[0], "bad": commits[-1], "build": config.build, "run": config.run,
                           "metric": config.metric_spec or config.metric, "budget": config.budget,
                           "confidence": config.confidence}}
    recorder = Recorder(store, experiment, config.repo, argv, settings)
    report = Report(Outcome("inconclusive", None, 0.0, [], 0), commits, {}, experiment=experiment,
                    confidence=config.confidence)
    progress(f"{n} commit(s) between {commits[0][:12]} (good) and {commits[-1][:12]} (bad)")
    status = "failed"
    try:
        with Worktrees(config.repo) as trees:
            paths = {0: trees.checkout("good", commits[0]), n: trees.checkout("bad", commits[-1])}
            for index, role in ((0, "good"), (n, "bad")):
                failure = build(executor, config.build, paths[index], role, config.timeout)
                if failure is not None:
                    raise InputError(f"the {role} revision {commits[index][:12]} does not build: {failure}")
            built: dict[int, str] = {}   # test commit -> worktree holding its build (two slots)
            while True:
                step = search.plan()
                if isinstance(step, Outcome):
                    report.outcome = step
                    break
                needed = [c for c in dict.fromkeys(step.commits) if c not in paths]
                failed = _build_tests(needed, built, commits, trees, executor, config)
                if failed is not None:
                    index, failure = failed
                    search.skip(index)
                    recorder.skipped(commits[index], failure)
                    report.skipped.append(commits[index])
                    progress(f"skip {commits[index][:12]}: build failed ({failure[:120]})")
                    continue
                for index in _run_batch(search, step, commits, {**built, **paths}, recorder, executor, config, n):
                    report.skipped.append(commits[index])
                    progress(f"skip {commits[index][:12]}: every run of the benchmark failed")
                _check_references(search, step, commits, recorder)
                progress(", ".join(f"measured {commits[c][:12]} x{step.commits.count(c)}" for c in needed)
                         + f"; {search.runs} runs; most likely culprit at {search.posterior().max():.0%}")
            if report.outcome.culprit is not None and config.artifact:
                report.warnings += _artifact_check(report.outcome.culprit, commits, {**built, **paths}, trees,
                                                   executor, config)
        status = "complete"
    except KeyboardInterrupt:
        status = "interrupted"
        raise
    finally:
        executor.close()
        recorder.close(status)
    report.subjects = {commits[i]: commit_subject(commits[i], config.repo)
                       for i, _ in report.outcome.candidates if i < len(commits)}
    return report


SLOTS = ("test-a", "test-b")


def _build_tests(needed: list[int], built: dict[int, str], commits: list[str], trees: Worktrees, executor: Any,
                 config: Config) -> tuple[int, str] | None:
    """Check out and build the batch's test commits (at most two) in the test slots; keeps builds
    already there.  Returns (commit, why) for the first that does not build."""
    keep = {c: path for c, path in built.items() if c in needed}
    free = [slot for slot in SLOTS if os.path.join(trees.root, slot) not in keep.values()]
    built.clear()
    built.update(keep)
    for index in needed:
        if index in built:
            continue
        path = trees.checkout(free.pop(0), commits[index])
        failure = build(executor, config.build, path, "test", config.timeout)
        if failure is not None:
            return index, failure
        built[index] = path
    return None


def _run_batch(search: Search, step: Batch, commits: list[str], paths: dict[int, str],
               recorder: Recorder, executor: Any, config: Config, n: int) -> list[int]:
    """Run the batch; the commits under test skipped because every run failed."""
    values: list[float | None] = []
    for index in step.commits:
        role = "good" if index == 0 else "bad" if index == n else "test"
        path = paths[index]
        values.append(measure(executor, recorder, commits[index], role, path, config.run, config.metric,
                              config.timeout))
    return search.record(step, values)


def _check_references(search: Search, step: Batch, commits: list[str], recorder: Recorder) -> None:
    """The good and bad revisions must measure: a reference whose every run failed is an error
    (the search cannot start without it; nothing else is worth measuring)."""
    measured = {commit for commit, _, _ in search.samples}
    for index, role in ((0, "good"), (len(commits) - 1, "bad")):
        if index in step.commits and index not in measured:
            why = recorder.failures.get((commits[index], role), "no value")
            raise InputError(f"every run of the benchmark failed at the {role} revision {commits[index][:12]}: {why}")


def _artifact_check(culprit: int, commits: list[str], paths: dict[int, str], trees: Worktrees,
                    executor: Any, config: Config) -> list[str]:
    digests = []
    for index in (culprit - 1, culprit):
        path = paths.get(index)
        if path is None:
            path = trees.checkout(SLOTS[0], commits[index])
            if build(executor, config.build, path, "artifact", config.timeout) is not None:
                return [f"--artifact: {commits[index][:12]} did not build again; artifacts not compared"]
        digest = artifact_digest(os.path.join(path, config.artifact or ""))
        if digest is None:
            return [f"--artifact {config.artifact}: no such file after building {commits[index][:12]}"]
        digests.append(digest)
    if digests[0] == digests[1]:
        return [f"the culprit's {config.artifact} is identical to its parent's ({digests[0][:40]}): "
                "the change in the measurements may not come from this commit (noise, or a build input "
                "outside the repository)"]
    return []
