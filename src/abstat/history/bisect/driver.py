"""``abstat bisect``: drive git, the runner and the store with :class:`abstat.history.bisect.search.Search`."""

from __future__ import annotations

import os
import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from abstat.history.bisect.graph import Graph
from abstat.history.bisect.outcome import Batch, Outcome
from abstat.history.bisect.segments import Bisection
from abstat.history.bisect.workspace import Recorder, Worktrees, artifact_digest, build, measure
from abstat.errors import InputError
from abstat.history.revision import commit_subject, git, resolve
from abstat.stats.warnings import StatWarning

MODEL = "a commit is bad iff the culprit is it or one of its ancestors, as git bisect assumes"


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
    overrun: float = 0.0  # share of the budget that may be spent beyond it to finish confirming a culprit
    confidence: float = 0.95
    artifact: str | None = None
    timeout: float | None = None


@dataclass
class Report:
    outcome: Outcome
    commits: list[str]  # index -> sha (0 = good)
    subjects: dict[str, str]
    skipped: list[str] = field(default_factory=list)
    warnings: list[StatWarning] = field(default_factory=list)  # codes: see :func:`_culprit_warnings`, store
    experiment: str = ""
    confidence: float = 0.95
    graph: dict[str, Any] = field(default_factory=dict)  # commits, merges, segments, model
    boots: dict[str, Any] = field(default_factory=dict)  # on a host: host, runs_per_boot, boots, replayed


def run_bisect(
    config: Config,
    store: Any,
    experiment: str | None,
    argv: Sequence[str],
    progress: Callable[[str], None] = lambda text: None,
) -> Report:
    """Bisect between ``config.good`` and ``config.bad``, recording every run under ``experiment``
    (default ``bisect-GOOD-BAD`` with both as 12-digit hashes)."""
    from abstat.history.bisect.measure import measurement_session

    commits, parent_shas, graph = resolve_range(config.good, config.bad, config.repo)
    n = len(commits) - 1
    experiment = experiment or f"bisect-{commits[0][:12]}-{commits[-1][:12]}"
    search = Bisection(n, graph=graph, confidence=config.confidence, budget=config.budget, overrun=config.overrun)
    executor = measurement_session(config.run, config.metric_spec, config.timeout)
    settings = {
        "bisect": {
            "good": commits[0],
            "bad": commits[-1],
            "build": config.build,
            "run": config.run,
            "metric": config.metric_spec or config.metric,
            "budget": config.budget,
            "confidence": config.confidence,
        }
    }
    report = Report(
        Outcome("inconclusive", None, 0.0, [], 0),
        commits,
        {},
        experiment=experiment,
        confidence=config.confidence,
        graph={"commits": n, "merges": graph.merges, "segments": graph.segments, "model": MODEL},
    )
    store_notes: list[StatWarning] = []
    _load_advice(config, report, progress)

    def spooled(line: str) -> None:  # the store's own one-line messages when its server goes away
        text = line.split(": ", 1)[1] if line.startswith("abstat run: ") else line
        # its count of runs kept is one revision's: say "the runs", the bisection's
        text = re.sub(
            r"the \d+ run\(s\) already committed there are kept", "the runs already committed there are kept", text
        )
        if ("answers again" in text and ": 0 spooled run(s)" not in text) or not store_notes:
            store_notes[:] = [StatWarning("store", text)]
            progress(text)

    recorder = Recorder(store, experiment, config.repo, argv, settings, spool=spooled)
    progress(
        f"{n} commit(s) between {commits[0][:12]} (good) and {commits[-1][:12]} (bad)"
        + (f", {graph.merges} merge(s): searching the commit graph ({MODEL})" if graph.merges else "")
    )
    status = "failed"
    try:
        with Worktrees(config.repo) as trees:
            if trees.pruned:
                progress(
                    f"removed {len(trees.pruned)} worktree(s) of a bisection that was killed: "
                    + ", ".join(trees.pruned)
                )
            paths = {0: trees.checkout("good", commits[0]), n: trees.checkout("bad", commits[-1])}
            for index, role in ((0, "good"), (n, "bad")):
                failure = build(executor, config.build, paths[index], role, config.timeout)
                if failure is not None:
                    raise InputError(f"the {role} revision {commits[index][:12]} does not build: {failure}")
            built: dict[int, str] = {}  # test commit -> worktree holding its build (two slots)
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
                progress(progress_line(search, step, commits))
            report.warnings += _failed_references(recorder, commits)
            if report.outcome.culprit is not None:
                report.warnings += _culprit_warnings(
                    report.outcome.culprit, commits, parent_shas, {**built, **paths}, trees, executor, config
                )
        status = "complete"
    except KeyboardInterrupt:
        status = "interrupted"
        raise
    finally:
        executor.close()
        try:
            recorder.close(status)
        finally:
            report.warnings += store_notes
    report.subjects = subjects(report.outcome, commits, config.repo)
    return report


def _load_advice(config: Config, report: Report, progress: Callable[[str], None]) -> None:
    """Wall time on a machine loaded as the bisection starts: say which CPU-time metric resists it."""
    from abstat.history.load_advice import now

    advice = now(config.metric)
    if advice is not None:
        report.warnings.append(advice)
        progress(advice.message)


def subjects(outcome: Outcome, commits: list[str], repo: str) -> dict[str, str]:
    """The subjects of the commits the outcome names (candidates, the steps of several changes)."""
    named = [i for i, _ in outcome.candidates] + [o.culprit for o in outcome.steps if o.culprit is not None]
    return {commits[i]: commit_subject(commits[i], repo) for i in named if i < len(commits)}


def resolve_range(good: str, bad: str, repo: str) -> tuple[list[str], list[tuple[str, ...]], Graph]:
    """:func:`load_history` of two revisions as the user named them (one line when one is unknown)."""
    shas = resolve([good, bad], repo)
    for name, sha in shas.items():
        if sha is None:
            raise InputError(f"unknown revision {name!r}", path=repo)
    return load_history(good, shas[good] or "", bad, shas[bad] or "", repo)


def load_history(
    good_name: str, good: str, bad_name: str, bad: str, repo: str
) -> tuple[list[str], list[tuple[str, ...]], Graph]:
    """The commits git bisect would consider (reachable from ``bad``, not from ``good``), good
    first, then parents before children (``git rev-list --topo-order --reverse --parents``);
    each one's parents (shas); and their graph."""
    if git(["merge-base", "--is-ancestor", good, bad], repo, check=False).returncode != 0:
        base = git(["merge-base", good, bad], repo, check=False).stdout.strip()
        hint = (
            f"; their merge base is {base[:12]}: bisect from it ({{good}} {base[:12]}) once it measures like "
            f"{good_name}, as git bisect tests a merge base first"
            if base
            else ""
        )
        raise InputError(
            f"{{good}} {good_name} is not an ancestor of {{bad}} {bad_name}{hint}", path=repo, fields=["good", "bad"]
        )
    lines = git(["rev-list", "--topo-order", "--reverse", "--parents", bad, "--not", good], repo).stdout.splitlines()
    if not lines:
        raise InputError(f"no commits between {good_name} and {bad_name}", path=repo)
    commits: list[str] = [good]
    parents: list[tuple[str, ...]] = [()]
    for line in lines:
        sha, *listed = line.split()
        commits.append(sha)
        parents.append(tuple(listed))
    index = {sha: i for i, sha in enumerate(commits)}
    graph = Graph([[index.get(p, 0) for p in listed] for listed in parents[1:]])
    return commits, parents, graph


def progress_line(
    search: Bisection, step: Batch, commits: list[str], verb: str = "measured", unit: str = "runs"
) -> str:
    n = len(commits) - 1
    counts = Counter(step.commits)
    names = {0: f"good {commits[0][:12]}", n: f"bad {commits[n][:12]}"}
    line = f"{verb} " + ", ".join(f"{names.get(c, commits[c][:12])} x{k}" for c, k in counts.items())
    line += f"; {search.runs} {unit}"
    if step.test is not None:
        posterior = search.posterior()
        top = int(posterior.argmax())
        line += f"; most likely culprit {commits[top + 1][:12]} at {posterior[top]:.0%}"
    return line


SLOTS = ("test-a", "test-b")  # worktrees for commits under test; a merge's verification batch adds one per parent


def _build_tests(
    needed: list[int], built: dict[int, str], commits: list[str], trees: Worktrees, executor: Any, config: Config
) -> tuple[int, str] | None:
    """Check out and build the batch's test commits in the test slots (two, more for a merge and
    its parents); keeps builds already there.  Returns (commit, why) for the first that does not build."""
    keep = {c: path for c, path in built.items() if c in needed}
    slots = [*SLOTS, *(f"test-{chr(ord('a') + i)}" for i in range(len(SLOTS), len(needed)))]
    free = [slot for slot in slots if os.path.join(trees.root, slot) not in keep.values()]
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


def _run_batch(
    search: Bisection,
    step: Batch,
    commits: list[str],
    paths: dict[int, str],
    recorder: Recorder,
    executor: Any,
    config: Config,
    n: int,
) -> list[int]:
    """Run the batch; the commits under test skipped because every run failed."""
    values: list[float | None] = []
    for index in step.commits:
        role = "good" if index == 0 else "bad" if index == n else "test"
        path = paths[index]
        values.append(
            measure(executor, recorder, commits[index], role, path, config.run, config.metric, config.timeout)
        )
    return search.record(step, values)


def _failed_references(recorder: Recorder, commits: list[str]) -> list[StatWarning]:
    """The ends' failed runs, said: a search whose bad end's runs fail from some point on spends its budget on
    them and ends inconclusive (or no change), which without this would not say why."""
    notes = []
    for sha, role in ((commits[0], "good"), (commits[-1], "bad")):
        failed = recorder.failed.get((sha, role), 0)
        if failed:
            notes.append(
                StatWarning(
                    "reference-failures",
                    f"{failed} of {recorder.counts[(sha, role)]} runs of the benchmark failed at the {role} "
                    f"revision {sha[:12]} (the last: {recorder.failures[(sha, role)]})",
                )
            )
    return notes


def _check_references(search: Bisection, step: Batch, commits: list[str], recorder: Recorder) -> None:
    """The good and bad revisions must measure: a reference whose every run failed is an error
    (the search cannot start without it; nothing else is worth measuring)."""
    measured = {commit for commit, _, _ in search.samples}
    for index, role in ((0, "good"), (len(commits) - 1, "bad")):
        if index in step.commits and index not in measured:
            why = recorder.failures.get((commits[index], role), "no value")
            raise InputError(f"every run of the benchmark failed at the {role} revision {commits[index][:12]}: {why}")


def _culprit_warnings(
    culprit: int,
    commits: list[str],
    parent_shas: list[tuple[str, ...]],
    paths: dict[int, str],
    trees: Worktrees,
    executor: Any,
    config: Config,
) -> list[StatWarning]:
    """What the culprit's artifact and parents say about it (codes ``artifact-not-compared``,
    ``artifact-identical``, ``merge-culprit``)."""
    warnings = []
    if config.artifact:
        known = {commits[i]: path for i, path in paths.items()}
        warnings += _artifact_check(commits[culprit], parent_shas[culprit], known, trees, executor, config)
    if len(parent_shas[culprit]) > 1:
        warnings.append(
            StatWarning(
                "merge-culprit",
                f"the culprit {commits[culprit][:12]} is a merge whose parents ("
                + ", ".join(p[:12] for p in parent_shas[culprit])
                + ") measure like the good end: the change comes from "
                "combining them (its conflict resolution, or changes that only together make the difference)",
            )
        )
    return warnings


def _artifact_check(
    culprit: str, parents: Sequence[str], paths: dict[str, str], trees: Worktrees, executor: Any, config: Config
) -> list[StatWarning]:
    """Compare the culprit's built ``--artifact`` with each parent's."""
    digests = {}
    for sha in (culprit, *parents):
        path = paths.get(sha)
        if path is None or trees.at.get(os.path.basename(path)) != sha:
            path = trees.checkout(SLOTS[0], sha)
            if build(executor, config.build, path, "artifact", config.timeout) is not None:
                return [
                    StatWarning(
                        "artifact-not-compared",
                        f"{{artifact}}: {sha[:12]} did not build again; artifacts not compared",
                        fields=["artifact"],
                    )
                ]
        digest = artifact_digest(os.path.join(path, config.artifact or ""))
        if digest is None:
            return [
                StatWarning(
                    "artifact-not-compared",
                    f"{{artifact}} {config.artifact}: no such file after building {sha[:12]}",
                    fields=["artifact"],
                )
            ]
        digests[sha] = digest
    same = [sha for sha in parents if digests[sha] == digests[culprit]]
    if same:
        whose = "its parent's" if len(parents) == 1 else f"its parent {same[0][:12]}'s"
        return [
            StatWarning(
                "artifact-identical",
                f"the culprit's {config.artifact} is identical to {whose} "
                f"({digests[culprit][:40]}): the change in the measurements may not come from this "
                "commit (noise, or a build input outside the repository)",
            )
        ]
    return []
