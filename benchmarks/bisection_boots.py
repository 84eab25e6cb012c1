"""The boot-level case of benchmarks/bisection.py (``--boots``): bisection on simulated test boxes.

    python benchmarks/bisection.py --boots [--trials 10] [--sizes 32] [--seed 1] [--markdown]

Each candidate is measured by booting it: a boot's runs share a boot offset
(kernel layout, firmware: ``N(0, boot_sd)`` relative) and each run adds 2%
Gaussian noise; one culprit makes every later commit 4% slower (``--boot-effect``: e.g. 21.3, getppid's
2,130% under TCG with pti=on, docs/lab.md).  Per boot
the box does ``--runs`` = 5 runs.  A commit among the first half of the
candidates may be broken (does not boot: skipped).

Methods, on the same boxes:
- abstat: ``abstat bisect --host``'s own loop (``abstat.history.bisect.boxes._search``
  with this box in place of the ssh one: the same batches, skips and
  stopping rule), the boot's median as the sample;
- pinpoint-boots: plain bisection, Pinpoint's rule (benchmarks/bisection.py)
  with one sample per boot (the boot's median): 10 boots per commit and of
  the good end, doubled up to 160 while undecided;
- pinpoint-runs: the same rule with the runs as the samples (10 runs = 2
  boots at first), as if runs of one boot were independent.

Printed per case: accuracy (the named commit is the culprit), boots and runs
spent (mean, 95th percentile).
"""

from __future__ import annotations

import numpy as np

RUNS_PER_BOOT = 5
RUN_SD = 0.02
EFFECT = 0.04


class Boxes:
    """The simulated history and box: ``boot(commit)`` gives the runs of one boot of it."""

    def __init__(self, n: int, boot_sd: float, broken: bool, rng: np.random.Generator, effect: float = EFFECT) -> None:
        self.n, self.boot_sd, self.rng, self.effect = n, boot_sd, rng, effect
        self.culprit = int(rng.integers(1, n + 1))
        self.broken = int(rng.integers(1, max(2, self.culprit))) if broken and self.culprit > 2 else None
        self.boots = 0

    def boot(self, commit: int) -> np.ndarray | None:
        self.boots += 1
        if commit == self.broken:
            return None
        level = 1000.0 * (1 + self.effect if commit >= self.culprit else 1.0) * (1 + self.rng.normal(0, self.boot_sd))
        return level * (1 + self.rng.normal(0, RUN_SD, RUNS_PER_BOOT))


class _FakeBox:
    """What ``_search`` needs of :class:`abstat.history.bisect.onbox.Box`, on :class:`Boxes`."""

    def __init__(self, boxes: Boxes, commits: list[str]) -> None:
        from abstat.history.bisect.onbox import BoxSetup

        self.boxes, self.index = boxes, {sha: i for i, sha in enumerate(commits)}
        self.setup = BoxSetup("sim", "sim", "bench", "ns")
        self.experiment, self.argv, self.caller = "sim", [], {}

    def measure(self, sha: str, role: str, slot: dict):
        from abstat.history.bisect.onbox import Failed

        runs = self.boxes.boot(self.index[sha])
        return Failed("does not boot", booted=True) if runs is None else float(np.median(runs))

    def recover(self, sha: str) -> None:
        pass


class _NoStore:
    display = "memory"

    def start_invocation(self, *args, **kwargs):
        return None

    def finish_invocation(self, *args, **kwargs):
        pass


def run_abstat(boxes: Boxes) -> int | None:
    from abstat.history.bisect.boxes import BATCH_MAX, _search
    from abstat.history.bisect.driver import Report
    from abstat.history.bisect.search import Outcome
    from abstat.history.bisect.segments import Bisection

    commits = [f"{i:040x}" for i in range(boxes.n + 1)]
    report = Report(Outcome("inconclusive", None, 0.0, [], 0), commits, {})
    report.boots = {"boots": 0, "replayed": 0}
    search = Bisection(boxes.n, confidence=0.95, budget=400, batch_max=BATCH_MAX, dear=True)  # as run_box_bisect
    outcome = _search(search, commits, {}, _FakeBox(boxes, commits), _NoStore(), report, lambda text: None)
    return outcome.culprit


def _pinpoint(boxes: Boxes, sample) -> int:
    """Plain bisection with Pinpoint's rule; ``sample(commit, count)`` gives ``count`` samples."""
    from scipy.stats import ks_2samp, mannwhitneyu

    good = sample(0, 10)
    sample(boxes.n, 10)
    low, high, skipped = 0, boxes.n, set()
    while high - low > 1:
        choices = [c for c in range(low + 1, high) if c not in skipped]
        if not choices:  # only commits that do not boot are left: git bisect's "could be any of"
            return high
        mid = min(choices, key=lambda c: abs(c - (low + high) / 2))
        values = sample(mid, 10)
        if values is None:  # does not boot: skipped, as git bisect skip
            skipped.add(mid)
            continue
        verdict = False
        while True:
            p = min(float(ks_2samp(values, good).pvalue), float(mannwhitneyu(values, good).pvalue))
            if p <= 0.01:
                verdict = True
                break
            if p >= 0.10 or len(values) >= 160:
                break
            values += sample(mid, len(values))
            if len(good) < len(values):
                good += sample(0, len(values) - len(good))
        if verdict:
            high = mid
        else:
            low = mid
    return high


def run_pinpoint_boots(boxes: Boxes) -> int:
    def sample(commit: int, count: int):
        found = [boxes.boot(commit) for _ in range(count)]
        return None if any(r is None for r in found) else [float(np.median(r)) for r in found]

    return _pinpoint(boxes, sample)


def run_pinpoint_runs(boxes: Boxes) -> int:
    def sample(commit: int, count: int):
        found = [boxes.boot(commit) for _ in range(-(-count // RUNS_PER_BOOT))]
        return None if any(r is None for r in found) else [float(v) for r in found for v in r][:count]

    return _pinpoint(boxes, sample)


METHODS = {"abstat": run_abstat, "pinpoint-boots": run_pinpoint_boots, "pinpoint-runs": run_pinpoint_runs}
CASES = [(0.0, False), (0.0, True), (0.01, False), (0.01, True)]  # (boot_sd, a broken commit)


def table(trials: int, sizes: list[int], seed: int, markdown: bool, effect: float = EFFECT) -> None:
    header = ["N", "boot SD", "broken", *[f"{m} acc / boots (p95) / runs" for m in METHODS]]
    rows = []
    for n in sizes:
        for boot_sd, broken in CASES:
            cells = []
            for index, method in enumerate(METHODS.values()):
                rng = np.random.default_rng([seed, n, int(boot_sd * 1000), int(broken), index])
                correct, spent = 0, []
                for _ in range(trials):
                    boxes = Boxes(n, boot_sd, broken, rng, effect)
                    correct += method(boxes) == boxes.culprit
                    spent.append(boxes.boots)
                cells.append(
                    f"{correct}/{trials} / {np.mean(spent):.0f} ({np.percentile(spent, 95):.0f}) / "
                    f"{np.mean(spent) * RUNS_PER_BOOT:.0f}"
                )
            rows.append([str(n), f"{boot_sd:.0%}", "yes" if broken else "no", *cells])
            if not markdown:
                print("  ".join(rows[-1]), flush=True)
    if markdown:
        print("| " + " | ".join(header) + " |")
        print("|" + "|".join("---" for _ in header) + "|")
        for row in rows:
            print("| " + " | ".join(row) + " |")
    print(
        f"\n{trials} trials per cell, seed {seed}; a {effect:.0%} culprit, {RUN_SD:.0%} run noise, "
        f"{RUNS_PER_BOOT} runs per boot; correct/trials / mean boots (95th percentile) / mean runs"
    )


def _grid_history(n: int, d: float, noise: str, seed: int, two: bool):
    """(changes, the commit that does not boot or none, boot(commit) -> value) of one history of the grid."""
    rng = np.random.default_rng([seed, n, int(d * 10), noise == "outliers", two])
    changes = sorted(int(c) for c in rng.choice(np.arange(1, n + 1), size=2 if two else 1, replace=False))
    broken = ({int(rng.integers(1, n))} if n > 3 and rng.random() < 0.3 and not two else set()) - set(changes)
    noise_rng = np.random.default_rng([seed, 7])

    def boot(commit: int) -> float:
        value = 100.0 + d * sum(commit >= a for a in changes) + noise_rng.normal()
        if noise == "outliers" and noise_rng.random() < 0.05:
            value += noise_rng.uniform(5, 20)
        return value

    return changes, broken, boot


def grid_trial(n: int, d: float, noise: str, seed: int, dear: bool, two: bool = False) -> tuple[str, int]:
    """One bisection of the validity grid (``--boots --grid``): ``n`` commits, one change (or two) of ``d`` boot SDs,
    normal boot noise or 5% boots 5-20 SD slow, 30% of one-change histories with a commit that does not boot;
    ``Bisection`` with ``dear`` or the runs' rules, budget 150 boots.  (right | wrong | several | none, boots)."""
    from abstat.history.bisect.outcome import Batch, Outcome
    from abstat.history.bisect.segments import Bisection

    changes, broken, boot = _grid_history(n, d, noise, seed, two)
    search = Bisection(n, budget=150, batch_max=8, dear=dear)
    while not isinstance(step := search.plan(), Outcome):
        made: list[int] = []  # as boxes._search: a commit's other boots of the batch are not made once one failed
        for c in step.commits:
            if not (c in broken and c in made):
                made.append(c)
        search.record(Batch(made, step.test), [None if c in broken else boot(c) for c in made])
        for c in broken & set(made):
            search.skip(c)
    if step.status == "found":
        return ("right" if d > 0 and not two and step.culprit == changes[0] else "wrong"), search.runs
    return ("several" if step.status == "several" else "none"), search.runs


def grid(trials: int, effects: list[float]) -> None:
    """Wrong found and boots of the dear rules against the runs' rules on the same histories."""
    print("| N | change (boot SDs) | noise | changes | dear: right / wrong / several / none, boots | runs' rules |")
    print("|---|---|---|---|---|---|")
    for two in (False, True):
        for n in (4, 16):
            for d in effects:
                for noise in ("normal", "outliers"):
                    if two and (d == 0 or noise == "outliers"):
                        continue
                    cells = []
                    for dear in (True, False):
                        found = [grid_trial(n, d, noise, seed, dear, two) for seed in range(trials)]
                        kinds = [k for k, _ in found]
                        counts = " / ".join(str(kinds.count(k)) for k in ("right", "wrong", "several", "none"))
                        cells.append(f"{counts}, {np.mean([b for _, b in found]):.0f}")
                    print(
                        f"| {n} | {d:g} | {noise} | {'two' if two else 'one'} | {cells[0]} | {cells[1]} |", flush=True
                    )
