"""``abstat bisect`` on real git repositories where its model may not fit: calibration of ``found``.

    python benchmarks/bisection.py --repos [--trials 40] [--seed 1] [--budget N] [--scenarios a,b] [--simulate]

Each trial builds a linear history of 32 commits after the good end (tests/support/bisect_repos.py: a C
benchmark whose loop is the commit's work, ``git fast-import``), and runs ``python -m abstat bisect``
on it end to end (worktrees, builds with cc, the runner, a SQLite store).  The benchmark prints the
commit's work with 2% Gaussian noise drawn from a per-trial seed (bisect_repos.noise_env), so the
shared machine's clock cannot change the answer.  Scenarios, steps at uniformly drawn commits:

- clean: one +2% change;
- outliers: one +2% change, 5% of runs 10-30% slow;
- bimodal: one +2% change, half of the runs on a path 10% slower;
- two-change: two +2% changes (the bad end is +4%);
- partly-undone: +4% at one commit, -2% at a later one (the bad end is +2%).

An answer is **right** when every claim it makes is true, and it names a commit.  ``found`` claims that the
commit it names is the one change (its parents measure like the good end, it like the bad end): right only with
one change, and that one.  ``several`` claims that more than one change is in the range, that the commit it names
as intermediate measures unlike both ends (a change at or before it, another after it: with changes at
``a1 < a2``, ``a1 <= intermediate < a2``), and that each step it names is a change: right when all hold, whether
or not it could name a step within the budget (``abstat bisect`` names each step it can isolate; the columns
"a step named" and "both steps named" count those that did).  **wrong found**: ``found`` with another commit,
or with one commit when there are two (the whole change attributed to it).  **wrong several**: ``several``
with a false claim.  **no answer**: anything else (inconclusive, no change).
The stated probability is the mean (and minimum) that ``found`` stated.

``--budget``: abstat bisect's ``--budget`` (a hard limit); by default none is given, so abstat's default applies (400
runs, up to 600 to finish confirming a culprit).  ``--simulate``: the same scenarios through the library
(:class:`abstat.history.bisect.segments.Bisection`, no git, no build), the same commits changed as the real trial of
that number and the same noise model drawn from its generator; trial ``i`` of seed ``s`` is history ``1000 s + i``.
``--replay``: the real trials themselves, in-process: the benchmark's noise (splitmix64 of the seed and the run's
number, ``bench_value`` of tests/support/bisect_repos.py) computed in Python for the runs in the order ``abstat
bisect`` takes them, so each trial spends the same runs and gives the same answer as its real repository
(tests/history/bisect/test_bisect_replay.py), at a fraction of the cost; the git, build and store path is not
exercised.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "tests", "support"))
from bisect_repos import BUILD, METRIC, RUN, bench_value, make_repo, noise_env, work_of  # noqa: E402

COMMITS = 32
WORK = 200_000
SCENARIOS = {  # name: (changes, relative size of each, noise shape)
    "clean": (1, (0.02,), "o0"),
    "outliers": (1, (0.02,), "o5"),
    "bimodal": (1, (0.02,), "b10"),
    "two-change": (2, (0.02, 0.02), "o0"),
    "partly-undone": (2, (0.04, -0.02), "o0"),
}


def replay_trial(scenario: str, seed: int, budget: int | None) -> dict:
    """The real trial ``seed`` of ``scenario`` (:func:`trial`) in-process (``--replay``), scored as it is."""
    from abstat.history.bisect.search import OVERRUN
    from abstat.history.bisect.segments import Bisection, simulate

    count, sizes, shape = SCENARIOS[scenario]
    rng = np.random.default_rng([seed, list(SCENARIOS).index(scenario)])
    at = sorted(int(c) for c in rng.choice(np.arange(1, COMMITS + 1), size=count, replace=False))
    noise_seed = int(rng.integers(1, 2**62))
    # make_repo's work per commit: index i is commit number i + 1, the steps at numbers a + 1
    steps = {a + 1: s for a, s in zip(at, sizes, strict=True)}
    works = [work_of(i + 1, WORK, steps) for i in range(COMMITS + 1)]
    taken = [0]

    def measure(commit: int) -> float:
        taken[0] += 1
        return bench_value(noise_seed, taken[0] - 1, works[commit], 2.0, shape)

    search = Bisection(COMMITS, budget=budget or 400, overrun=OVERRUN if budget is None else 0.0)
    return _scored(simulate(search, measure), at)


def _scored(out, at: list[int]) -> dict:
    named = [step.culprit if step.culprit is not None else -1 for step in out.steps]
    kind = score(out.status, out.culprit, out.intermediate if out.intermediate is not None else -1, named, at)
    return {
        "kind": kind,
        "status": out.status,
        "probability": out.probability if out.status == "found" else None,
        "runs": out.runs,
        "both": out.status == "several" and set(named) == set(at),
        "truth": at,
        "culprit": out.culprit,
        "named": named,
        "intermediate": out.intermediate,
    }


def simulate_trial(scenario: str, seed: int, budget: int | None) -> dict:
    """One trial through the library (``--simulate``), scored as :func:`trial`."""
    from abstat.history.bisect.search import OVERRUN
    from abstat.history.bisect.segments import Bisection, simulate

    count, sizes, shape = SCENARIOS[scenario]
    rng = np.random.default_rng([seed, list(SCENARIOS).index(scenario)])
    at = sorted(int(c) for c in rng.choice(np.arange(1, COMMITS + 1), size=count, replace=False))

    def measure(commit: int) -> float:
        level = float(np.prod([1 + s for a, s in zip(at, sizes, strict=True) if commit >= a]))
        value = 100_000 * level * (1 + 0.02 * rng.normal())
        if shape[0] == "b":  # half of the runs on a path 10% slower
            value *= 1.10 if rng.random() < 0.5 else 1.0
        elif rng.random() < float(shape[1:]) / 100:  # outliers 10-30% slow
            value *= 1.10 + 0.2 * rng.random()
        return round(value)

    search = Bisection(COMMITS, budget=budget or 400, overrun=OVERRUN if budget is None else 0.0)
    return _scored(simulate(search, measure), at)


def trial(scenario: str, seed: int, budget: int | None, root: str) -> dict:
    count, sizes, shape = SCENARIOS[scenario]
    rng = np.random.default_rng([seed, list(SCENARIOS).index(scenario)])
    at = sorted(int(c) for c in rng.choice(np.arange(1, COMMITS + 1), size=count, replace=False))
    repo = os.path.join(root, "repo")
    # commit number 1 is the good end (index 0); index i is commit number i + 1
    shas = make_repo(repo, commits=COMMITS + 1, work=WORK, steps={i + 1: s for i, s in zip(at, sizes, strict=True)})
    env = {**os.environ, **noise_env(os.path.join(root, "counter"), int(rng.integers(1, 2**62)), 2.0, shape)}
    started = time.monotonic()
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "abstat",
            "bisect",
            "--repo",
            repo,
            "--good",
            shas[0],
            "--bad",
            shas[-1],
            "--build",
            BUILD,
            "--run",
            RUN,
            "--metric",
            METRIC,
            "--store",
            os.path.join(root, "b.db"),
            *(["--budget", str(budget)] if budget is not None else []),
            "--format",
            "json",
            "--no-progress",
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=3600,
    )
    shutil.rmtree(repo, ignore_errors=True)
    for name in ("b.db", "counter"):
        if os.path.exists(os.path.join(root, name)):
            os.unlink(os.path.join(root, name))
    try:
        answer = json.loads(done.stdout)
    except ValueError:
        return {"kind": "error", "error": done.stderr.strip()[-300:], "seconds": time.monotonic() - started}
    index = {sha: i for i, sha in enumerate(shas)}
    truth = set(at)
    named = [index.get(step.get("rev"), -1) for step in answer.get("steps") or []]
    status, culprit = answer["status"], index.get(answer.get("culprit") or "")
    kind = score(status, culprit, index.get(answer.get("intermediate") or "", -1), named, at)
    return {
        "kind": kind,
        "status": status,
        "probability": answer.get("probability"),
        "runs": answer["runs"],
        "both": status == "several" and set(named) == truth,
        "truth": at,
        "culprit": culprit,
        "named": named,
        "intermediate": index.get(answer.get("intermediate") or ""),
        "seconds": time.monotonic() - started,
    }


def score(status: str, culprit: int | None, intermediate: int, named: list[int], truth: list[int]) -> str:
    """right | wrong (found) | wrong-several | none, as the module says (``truth``: the changes, ascending)."""
    if status == "found":
        return "right" if len(truth) == 1 and culprit in truth else "wrong"
    if status != "several":
        return "none"
    between = len(truth) > 1 and truth[0] <= intermediate < truth[-1]
    return "right" if between and set(named) <= set(truth) else "wrong-several"


def footer(trials: int, seed: int, budget: int | None, mode: str, first: int = 0) -> str:
    spent = f"--budget {budget}" if budget is not None else "abstat's default budget"
    how = {
        "simulate": "simulated (the library)",
        "replay": "the real trials replayed in-process",
        "real": "real repositories",
    }[mode]
    numbers = f" (numbers {first}-{first + trials - 1})" if first else ""
    return f"\n{trials} trials per scenario{numbers}, seed {seed}, {spent}, {how}; 32 commits, 2% noise"


def _run(mode: str, scenario: str, seed: int, number: int, budget: int | None, root: str) -> dict:
    if mode == "simulate":
        return simulate_trial(scenario, seed * 1000 + number, budget)
    if mode == "replay":
        return replay_trial(scenario, seed * 100_000 + number, budget)
    return trial(scenario, seed * 100_000 + number, budget, root)


def _interval(count: int, trials: int) -> str:
    """``count`` of ``trials`` in percent with its exact (Clopper-Pearson) 95% interval."""
    from scipy.stats import binomtest

    if not trials:
        return "-"
    ci = binomtest(count, trials).proportion_ci(0.95, method="exact")
    return f"{count} ({100 * count / trials:.1f}% [{100 * ci.low:.1f}, {100 * ci.high:.1f}])"


def table(
    trials: int,
    seed: int,
    budget: int | None,
    scenarios: list[str],
    log: str | None,
    mode: str = "real",
    first: int = 0,
) -> None:
    """The table of ``trials`` trials per scenario from number ``first``; ``mode``: real | simulate | replay."""
    print(
        "| scenario | trials | right (95% interval) | wrong found (95% interval) | wrong several | no answer "
        "| a step named | both steps named | stated probability of found (mean, min) | runs (mean) |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|", flush=True)
    root = tempfile.mkdtemp(prefix="abstat-bisection-repos-")
    try:
        for scenario in scenarios:
            results = []
            for number in range(first, first + trials):
                result = _run(mode, scenario, seed, number, budget, root)
                results.append(result)
                if log:
                    with open(log, "a") as out:
                        out.write(json.dumps({"scenario": scenario, "trial": number, **result}) + "\n")
            kinds = [r["kind"] for r in results]
            stated = [r["probability"] for r in results if r.get("status") == "found" and r["probability"]]
            prob = f"{np.mean(stated):.3f}, {min(stated):.3f}" if stated else "-"
            both = sum(bool(r.get("both")) for r in results)
            stepped = sum(r["kind"] == "right" and bool(r.get("named")) for r in results)
            errors = kinds.count("error")
            print(
                f"| {scenario} | {trials} | {_interval(kinds.count('right'), trials)} | "
                f"{_interval(kinds.count('wrong'), trials)} | {kinds.count('wrong-several')} | "
                f"{kinds.count('none') + errors} | {stepped} | {both} | {prob} | "
                f"{np.mean([r.get('runs', 0) for r in results]):.0f} |" + (f" ({errors} errors)" if errors else ""),
                flush=True,
            )
    finally:
        shutil.rmtree(root, ignore_errors=True)
    print(footer(trials, seed, budget, mode, first))
