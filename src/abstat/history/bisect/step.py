"""``abstat bisect step``: one verdict for ``git bisect run`` (0 good, 1 bad, 125 skip).

It runs in the tree ``git bisect`` checked out.  Its references are the
stored measurements of ``refs/bisect/bad`` and of the ``refs/bisect/good-*``
revisions in the experiment; a reference not yet measured is built and
measured first (``REFERENCE_RUNS`` runs, in a worktree of its own).  Then
the current commit is measured in batches with a sequential probability
ratio test (the likelihood of :mod:`abstat.history.bisect.search`) until the
evidence reaches +-``THRESHOLD`` (odds 99:1) or ``--max-runs``.

Every error exits with status 128, which makes ``git bisect run`` stop:
status 2 would mark the commit bad.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable
from dataclasses import dataclass

from abstat.errors import AbstatError

REFERENCE_RUNS = 10
BATCH = 3
THRESHOLD = math.log(99.0)
UNDECIDED = 125


class StepError(AbstatError):
    exit_status = 128


@dataclass(frozen=True)
class StepConfig:
    """What one ``abstat bisect step`` measures: ``metric`` (a built-in one, or the name of
    ``metric_spec``, ``NAME=REGEX``) of ``run`` after ``build``, in ``repo``'s checked-out tree."""

    run: str
    metric: str
    metric_spec: str | None
    metric_text: str  # --metric as given (recorded)
    build: str | None = None
    repo: str = "."
    timeout: float | None = None
    experiment: str | None = None
    store: str | None = None
    max_runs: int = 30


def _references(store, experiment: str, metric: str, shas: list[str]) -> list[float]:
    values: list[float] = []
    if not store.has_experiment(experiment):
        return values
    for sample_set in store.sample_sets({"experiment": experiment, "metric": metric, "rev": shas}):
        values.extend(v for run in sample_set.runs for v in run)
    return values


def llr(values: list[float], good: list[float], bad: list[float]) -> float:
    """Sum of the clipped, tempered Student-t log-likelihood ratios (bad over good)."""
    from abstat.history.bisect import levels
    from abstat.history.bisect.search import CLIP, STEP_TEMPER, Search

    search = Search(1)
    unit = levels.unit_of(good + bad) or 1.0  # exact: squares of values beyond 1e154 stay in range
    search.samples = [(0, v / unit, 0) for v in good] + [(1, v / unit, 0) for v in bad]
    search.batches = 1
    g, b, scale = search._model()
    total = 0.0
    for x in values:
        zg, zb = (x / unit - g) / scale, (x / unit - b) / scale
        one = -(4.0 + 1) / 2 * (math.log1p(zb * zb / 4.0) - math.log1p(zg * zg / 4.0))
        total += STEP_TEMPER * max(-CLIP, min(CLIP, one))
    return total


def _bisect_state(args: StepConfig) -> tuple[str, str, list[str], str]:
    """(HEAD, refs/bisect/bad, the refs/bisect/good-* revisions, the experiment) of the bisection in progress."""
    from abstat.errors import UsageError
    from abstat.history.revision import git

    repo = args.repo
    head = git(["rev-parse", "HEAD"], repo).stdout.strip()
    bad_ref = git(["rev-parse", "--verify", "-q", "refs/bisect/bad"], repo, check=False).stdout.strip()
    goods = git(["for-each-ref", "--format=%(objectname)", "refs/bisect/good-*"], repo).stdout.split()
    if not bad_ref or not goods:
        raise UsageError("no git bisect in progress with a good and a bad revision (git bisect start BAD GOOD)")
    log = git(["bisect", "log"], repo, check=False).stdout.splitlines()
    first_bad = next((line.split("[", 1)[1][:12] for line in log if line.startswith("# bad: [")), bad_ref[:12])
    return head, bad_ref, goods, args.experiment or f"bisect-step-{first_bad}"  # one experiment for the bisect


def _reference(args: StepConfig, store, recorder, executor, experiment: str, role: str, shas: list[str]) -> list[float]:
    """The stored runs of a reference, measured first (``REFERENCE_RUNS``, in a worktree) when too few."""
    from abstat.history.bisect.workspace import Worktrees, build, measure

    found = _references(store, experiment, args.metric, shas)
    if len(found) < REFERENCE_RUNS:
        with Worktrees(args.repo) as trees:
            path = trees.checkout(role, shas[0])
            failure = build(executor, args.build, path, role, args.timeout)
            if failure is not None:
                raise StepError(f"the {role} reference {shas[0][:12]} does not build: {failure}")
            for _ in range(REFERENCE_RUNS):
                measure(executor, recorder, shas[0], role, path, args.run, args.metric, args.timeout)
        recorder.close("complete")
        found = _references(store, experiment, args.metric, shas)
    if not found:
        why = recorder.failures.get((shas[0], role), "no value")
        raise StepError(f"every run of the benchmark failed at the {role} reference {shas[0][:12]}: {why}")
    return found


def _measure_head(
    args: StepConfig, recorder, executor, head: str, references: dict[str, list[float]]
) -> tuple[list[float], float]:
    """Runs of the checked-out commit in batches until the evidence reaches +-``THRESHOLD`` or ``max_runs``
    (failed runs count too: a commit whose every run fails is skipped, not run forever)."""
    from abstat.history.bisect.workspace import measure

    values: list[float] = []
    evidence = 0.0
    runs = 0
    while runs < args.max_runs:
        for _ in range(BATCH):
            runs += 1
            value = measure(executor, recorder, head, "test", args.repo, args.run, args.metric, args.timeout)
            if value is not None:
                values.append(value)
        evidence = llr(values, references["good"], references["bad"])
        if abs(evidence) >= THRESHOLD:
            break
    return values, evidence


def run_step(args: StepConfig, argv: list[str]) -> int:
    """Measure the checked-out commit against the references; 0 good, 1 bad, 125 undecided."""
    from abstat.errors import UsageError
    from abstat.history.bisect.measure import measurement_session
    from abstat.history.bisect.workspace import Recorder, build
    from abstat.store import open_store, resolve_store_path

    if args.max_runs < BATCH:
        raise UsageError(f"{{max_runs}} must be at least {BATCH}", fields=["max_runs"])
    head, bad_ref, goods, experiment = _bisect_state(args)
    executor = measurement_session(args.run, args.metric_spec, args.timeout)
    store_path = resolve_store_path(args.store)
    try:
        with open_store(store_path) as store:
            recorder = Recorder(
                store,
                experiment,
                args.repo,
                ["abstat", "bisect", "step", *argv],
                {"bisect_step": {"run": args.run, "build": args.build, "metric": args.metric_text}},
            )
            try:
                references = {
                    role: _reference(args, store, recorder, executor, experiment, role, shas)
                    for role, shas in (("good", goods), ("bad", [bad_ref]))
                }
                failure = build(executor, args.build, args.repo, "test", args.timeout) if args.build else None
                if failure is not None:
                    sys.stderr.write(f"abstat bisect step: {head[:12]}: build failed, skip ({failure[:200]})\n")
                    return UNDECIDED
                values, evidence = _measure_head(args, recorder, executor, head, references)
                if not values:
                    why = recorder.failures.get((head, "test"), "no value")
                    sys.stderr.write(f"abstat bisect step: {head[:12]}: every run failed, skip ({why[:200]})\n")
                    return UNDECIDED
            finally:
                recorder.close("complete")
    finally:
        executor.close()
    verdict = (
        1
        if evidence >= THRESHOLD
        else 0
        if evidence <= -THRESHOLD
        else (1 if evidence > 1.0 else 0 if evidence < -1.0 else UNDECIDED)
    )
    word = {0: "good", 1: "bad", UNDECIDED: "undecided (skip)"}[verdict]
    sys.stderr.write(
        f"abstat bisect step: {head[:12]}: {word}; log-likelihood ratio {evidence:+.2f} "
        f"after {len(values)} runs (references: {len(references['good'])} good, "
        f"{len(references['bad'])} bad; experiment {experiment})\n"
    )
    return verdict


def guarded(step: Callable[[], int]) -> int:
    """Run ``step`` so that every error exits 128 (``git bisect run`` stops), never 1 or 2 (bad)."""
    import os

    try:
        return step()
    except StepError:
        raise
    except AbstatError as err:
        raise StepError(err.template(), fields=err.fields) from None
    except KeyboardInterrupt:
        raise
    except Exception as err:  # never "bad" by accident
        if os.environ.get("ABSTAT_DEBUG"):
            raise
        raise StepError(f"internal error: {type(err).__name__}: {err}") from None
