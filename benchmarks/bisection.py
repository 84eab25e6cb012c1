"""Bisection under noise: abstat's probabilistic bisection against the usual rules.

    python benchmarks/bisection.py [--trials 100] [--seed 1] [--markdown]

(Not benchmarks/bisect.py: a file of that name would shadow the standard
library's bisect module, which `random` imports, for every script run from
this directory.)

Histories of N = 100 and 1000 commits with one change of d = 0.5, 1 and 2
noise standard deviations at a uniformly drawn commit.  Noise shapes:
normal; quantized TSC cycles (level 440 cycles, SD 2 cycles, integers);
outliers (normal plus 5% of runs 5-20 SD slow, one-sided).

Methods, each given the good and bad ends:
- abstat: abstat.history.bisect.search (confidence 0.95, budget 2000 runs);
- welch-n10, welch-n30: plain bisection, n runs per commit (and of the good
  end), bad when Welch's t-test against the good end gives p < 0.05;
- pinpoint: plain bisection, p = min(KS, Mann-Whitney) of the commit
  against the good end, <= 0.01 different (bad), >= 0.10 same (good),
  otherwise both get twice the attempts (10, 20, ... up to 160; still
  unknown at 160 counts as same);
- asv: one run per commit (asv find): bad when closer to the bad end's run.

Printed: accuracy (named commit is the changed one) and benchmark runs
spent (mean, 95th percentile), references included.  ``--coverage`` prints
instead how often abstat's 95% interval of the change's size (``abstat compare``'s
of the bad against the good references: the Hodges-Lehmann ratio) holds the true ratio of the levels.

``--merges``: histories with merges, shaped like a kernel merge window: a
mainline of direct commits (30%) and merges of topic branches of 1-7 commits
forked from one of the 5 latest mainline commits, a fifth of them with a
sub-topic merged into the topic first; the culprit uniformly drawn among all
commits, and a commit bad iff the culprit is it or one of its ancestors (git
bisect's model).  Methods:
- abstat: the search on the commit graph (as ``abstat bisect`` runs it);
- abstat-linear: the same search on the commits in a topological order, as
  abstat bisect did before it knew merges;
- git-mean10: git bisect's own choice of commits on the graph (the one whose
  ancestors among the remaining candidates are closest to half of them), a
  commit bad when its 10-run mean is nearer the bad end's 10-run mean than
  the good end's;
- pinpoint: git bisect's choice of commits, Pinpoint's rule (above) for each.

``--boots``: the boot-level case (benchmarks/bisection_boots.py): bisection on
simulated test boxes, each measurement one boot, a 4% culprit in 2% run noise
and boot-to-boot offsets, a commit that does not boot; abstat bisect --host's
loop against Pinpoint's rule, boots and runs spent (default N = 32, 10 trials).

``--repos``: ``abstat bisect`` end to end on real git repositories of 32 commits
(benchmarks/bisection_repos.py): clean, 5% outlier, bimodal, two-change and
partly-undone histories; right answers, wrong ``found`` and the probability it
stated (default 40 trials per scenario); ``--simulate``: the same through the
library (no git); ``--replay``: the real trials themselves in-process (the
benchmark's own noise generator, the same answers at a fraction of the cost);
``--first K``: trials from number K; ``--budget N``: a hard limit (default:
abstat's own).

``--scale``: the graph search's cost against the linear search's (the anchor,
same run) on merge histories of 150, 1,500 and 15,000 commits.
"""

from __future__ import annotations

import argparse
import sys
import warnings

import numpy as np

SHAPES = ("normal", "quantized", "outliers")


class History:
    def __init__(self, n: int, d: float, shape: str, rng: np.random.Generator) -> None:
        self.n, self.d, self.shape, self.rng = n, d, shape, rng
        self.culprit = int(rng.integers(1, n + 1))
        self.runs = 0

    def is_bad(self, commit: int) -> bool:
        return commit >= self.culprit

    def measure(self, commit: int, count: int = 1) -> np.ndarray:
        self.runs += count
        bad = self.is_bad(commit)
        if self.shape == "quantized":
            return np.round(440.0 + 2.0 * (self.rng.normal(0, 1, count) + (self.d if bad else 0)))
        values = self.rng.normal(0, 1, count) + (self.d if bad else 0.0)
        if self.shape == "outliers":
            hit = self.rng.random(count) < 0.05
            values = np.where(hit, values + self.rng.uniform(5, 20, count), values)
        return 100.0 + values


def plain_bisect(history: History, is_bad) -> int:
    low, high = 0, history.n
    while high - low > 1:
        mid = (low + high) // 2
        if is_bad(mid):
            high = mid
        else:
            low = mid
    return high


def run_welch(history: History, n: int) -> int:
    from scipy.stats import ttest_ind

    good = history.measure(0, n)
    history.measure(history.n, n)  # the bad end is measured too (to confirm there is a change)
    return plain_bisect(history, lambda c: float(ttest_ind(history.measure(c, n), good, equal_var=False).pvalue) < 0.05)


def run_pinpoint(history: History, bisect=None) -> int:
    from scipy.stats import ks_2samp, mannwhitneyu

    good = list(history.measure(0, 10))
    history.measure(history.n, 10)

    def is_bad(commit: int) -> bool:
        nonlocal good
        values = list(history.measure(commit, 10))
        while True:
            p = min(
                float(ks_2samp(values, good).pvalue), float(mannwhitneyu(values, good, alternative="two-sided").pvalue)
            )
            if p <= 0.01:
                return True
            if p >= 0.10 or len(values) >= 160:
                return False
            values += list(history.measure(commit, len(values)))
            if len(good) < len(values):
                good += list(history.measure(0, len(values) - len(good)))

    return bisect(is_bad) if bisect is not None else plain_bisect(history, is_bad)


def run_asv(history: History) -> int:
    good = float(history.measure(0)[0])
    bad = float(history.measure(history.n)[0])
    return plain_bisect(history, lambda c: abs(float(history.measure(c)[0]) - bad) < abs(good - bad) / 2)


COVERED: list[bool] = []  # whether abstat's interval of the change held the true shift


def run_abstat(history: History) -> int | None:
    from abstat.history.bisect.search import Search, simulate

    search = Search(history.n, confidence=0.95, budget=2000)
    outcome = simulate(search, lambda c: float(history.measure(c)[0]))
    change = outcome.change  # abstat compare's of the ends' runs: a ratio of levels, in percent
    if change is not None and change.ci_pct is not None:
        level, step = (440.0, 2.0) if history.shape == "quantized" else (100.0, 1.0)
        COVERED.append(change.ci_pct[0] <= 100.0 * history.d * step / level <= change.ci_pct[1])
    return outcome.culprit


METHODS = {
    "abstat": run_abstat,
    "welch-n10": lambda h: run_welch(h, 10),
    "welch-n30": lambda h: run_welch(h, 30),
    "pinpoint": run_pinpoint,
    "asv": run_asv,
}


def merge_parents(n: int, rng: np.random.Generator) -> list[list[int]]:
    """The parents of commits 1..n (about n; 0 = the good end) of a merge-window-like history."""
    parents: list[list[int]] = []
    mainline = [0]

    def add(*listed: int) -> int:
        parents.append(list(listed))
        return len(parents)

    while len(parents) < n - 1:
        if rng.random() < 0.3:
            mainline.append(add(mainline[-1]))
            continue
        tip = mainline[-1 - int(rng.integers(0, min(5, len(mainline))))]
        topic = []
        for _ in range(int(rng.integers(1, 8))):
            tip = add(tip)
            topic.append(tip)
        if rng.random() < 0.2:  # a sub-topic forked from the topic, merged into it
            sub = topic[int(rng.integers(0, len(topic)))]
            for _ in range(int(rng.integers(1, 4))):
                sub = add(sub)
            tip = add(tip, sub)
        mainline.append(add(mainline[-1], tip))
    add(mainline[-1])  # the bad end
    return parents


def scale(seed: int) -> None:
    """Time of the graph search against the linear search on the same number of commits (the
    anchor, measured in the same run): the graph's construction, and a search's planning cost per
    batch, for histories of 150 to 15,000 commits (a kernel release has about 14,000)."""
    import time

    from abstat.history.bisect.graph import Graph
    from abstat.history.bisect.search import Search

    def plan_time(search: Search, rng: np.random.Generator, culprit: int, graph: Graph) -> float:
        spent, batches = 0.0, 0
        while batches < 12:
            started = time.perf_counter()
            step = search.plan()
            spent += time.perf_counter() - started
            if not hasattr(step, "commits"):
                break
            search.record(
                step,
                [
                    rng.normal(2.0 if c == graph.n or (c and graph.is_ancestor(culprit, c)) else 0.0)
                    for c in step.commits
                ],
            )
            batches += 1
        return spent / max(1, batches)

    warm = Graph(merge_parents(50, np.random.default_rng(0)))  # imports and first calls, not timed
    plan_time(Search(warm.n, graph=warm), np.random.default_rng(0), 1, warm)
    print("commits  merges  segments  build graph  plan/batch graph  plan/batch linear  ratio")
    for n in (150, 1500, 15000):
        rng = np.random.default_rng([seed, n])
        parents = merge_parents(n, rng)
        started = time.perf_counter()
        graph = Graph(parents)
        built = time.perf_counter() - started
        culprit = int(rng.integers(1, graph.n + 1))
        on_graph = plan_time(Search(graph.n, graph=graph), np.random.default_rng([seed, n, 1]), culprit, graph)
        linear = plan_time(Search(graph.n), np.random.default_rng([seed, n, 1]), culprit, graph)
        print(
            f"{graph.n:7d}  {graph.merges:6d}  {graph.segments:8d}  {built * 1e3:9.1f} ms  {on_graph * 1e3:13.1f} ms"
            f"  {linear * 1e3:14.1f} ms  {on_graph / linear:5.2f}x",
            flush=True,
        )


class MergeHistory(History):
    """A history with merges (see the module's --merges); commits 1..n in creation (topological) order."""

    def __init__(self, n: int, d: float, shape: str, rng: np.random.Generator) -> None:
        self.parents = parents = merge_parents(n, rng)
        closure = np.zeros((len(parents) + 1, len(parents) + 1), dtype=bool)
        for i, listed in enumerate(parents, start=1):
            closure[i, i] = True
            for p in listed:
                if p:
                    closure[i] |= closure[p]
        self.closure = closure[1:, 1:]  # closure[i - 1, k - 1]: k is i or one of its ancestors
        super().__init__(len(parents), d, shape, rng)

    def is_bad(self, commit: int) -> bool:
        return commit > 0 and bool(self.closure[commit - 1, self.culprit - 1])


def git_bisect(history: MergeHistory, is_bad) -> int:
    """git bisect's traversal of the graph: test the remaining commit whose ancestors among the
    remaining ones are closest to half of them; bad keeps its ancestors, good removes them."""
    closure = history.closure
    remaining = np.ones(history.n, dtype=bool)
    bad = history.n
    while remaining.sum() > 1:
        weights = closure[:, remaining].sum(axis=1)
        score = np.minimum(weights, remaining.sum() - weights)
        score[~remaining] = -1
        score[bad - 1] = -1
        commit = int(np.argmax(score)) + 1
        if is_bad(commit):
            bad = commit
            remaining &= closure[commit - 1]
        else:
            remaining &= ~closure[commit - 1]
    return bad


def run_git_mean10(history: MergeHistory) -> int:
    good, bad = float(history.measure(0, 10).mean()), float(history.measure(history.n, 10).mean())
    return git_bisect(history, lambda c: abs(float(history.measure(c, 10).mean()) - bad) < abs(good - bad) / 2)


def run_graph_pinpoint(history: MergeHistory) -> int:
    return run_pinpoint(history, bisect=lambda is_bad: git_bisect(history, is_bad))


def run_abstat_graph(history: MergeHistory, linear: bool = False) -> int | None:
    from abstat.history.bisect.graph import Graph
    from abstat.history.bisect.search import Search, simulate

    graph = None if linear else Graph(history.parents)
    search = Search(history.n, graph=graph, confidence=0.95, budget=2000)
    return simulate(search, lambda c: float(history.measure(c)[0])).culprit


MERGE_METHODS = {
    "abstat": run_abstat_graph,
    "abstat-linear": lambda h: run_abstat_graph(h, linear=True),
    "git-mean10": run_git_mean10,
    "pinpoint": run_graph_pinpoint,
}


def _table(args: argparse.Namespace, methods: dict, history_class: type, shapes: tuple[str, ...]) -> None:
    header = ["N", "d", "noise", *[f"{m} acc / runs (p95)" for m in methods]]
    rows = []
    for n in [int(x) for x in args.sizes.split(",")]:
        for d in [float(x) for x in args.effects.split(",")]:
            for shape in shapes:
                cells = []
                for index, (name, method) in enumerate(methods.items()):
                    rng = np.random.default_rng([args.seed, n, int(d * 10), SHAPES.index(shape), index])
                    correct, spent = 0, []
                    for _ in range(args.trials):
                        history = history_class(n, d, shape, rng)
                        correct += method(history) == history.culprit
                        spent.append(history.runs)
                    cells.append(f"{correct / args.trials:.2f} / {np.mean(spent):.0f} ({np.percentile(spent, 95):.0f})")
                rows.append([str(n), f"{d:g}", shape, *cells])
                if not args.markdown:
                    print("  ".join(rows[-1]), flush=True)
    if args.markdown:
        print("| " + " | ".join(header) + " |")
        print("|" + "|".join("---" for _ in header) + "|")
        for row in rows:
            print("| " + " | ".join(row) + " |")
    print(f"\n{args.trials} trials per cell, seed {args.seed}; accuracy / mean runs (95th percentile)")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trials", type=int, default=100)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--sizes", default="100,1000")
    parser.add_argument("--effects", default="0.5,1,2")
    parser.add_argument("--markdown", action="store_true")
    parser.add_argument(
        "--coverage",
        action="store_true",
        help="only abstat: coverage of its 95%% interval of the change's size, per shape",
    )
    parser.add_argument("--merges", action="store_true", help="histories with merges (see the module)")
    parser.add_argument("--boots", action="store_true", help="the boot-level case (benchmarks/bisection_boots.py)")
    parser.add_argument("--boot-effect", type=float, default=0.04, help="--boots: the culprit's relative change")
    parser.add_argument(
        "--grid", action="store_true", help="--boots: wrong found of the dear rules against the runs' (validity)"
    )
    parser.add_argument(
        "--scale", action="store_true", help="time of the graph search against the linear one, 150 to 15,000 commits"
    )
    parser.add_argument(
        "--repos",
        action="store_true",
        help="abstat bisect on real git repositories: clean, outliers, bimodal, two-change and "
        "partly-undone histories (benchmarks/bisection_repos.py)",
    )
    parser.add_argument(
        "--budget", type=int, default=None, help="--repos: abstat bisect's --budget (default: none given, its default)"
    )
    parser.add_argument(
        "--simulate", action="store_true", help="--repos: the scenarios through the library, no git (fast)"
    )
    parser.add_argument(
        "--replay",
        action="store_true",
        help="--repos: the real trials replayed in-process (the benchmark's own noise, no git): the same answers",
    )
    parser.add_argument("--first", type=int, default=0, help="--repos: the first trial's number (split a long run)")
    parser.add_argument("--scenarios", default=None, help="--repos: a comma-separated subset")
    parser.add_argument("--log", default=None, help="--repos: append every trial as a JSON line to this file")
    args = parser.parse_args()
    if args.repos:
        import os

        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        from bisection_repos import SCENARIOS
        from bisection_repos import table as repos_table

        chosen = args.scenarios.split(",") if args.scenarios else list(SCENARIOS)
        trials = args.trials if "--trials" in sys.argv else 40
        mode = "replay" if args.replay else "simulate" if args.simulate else "real"
        repos_table(trials, args.seed, args.budget, chosen, args.log, mode, args.first)
        return 0
    if args.boots:
        import os

        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        from bisection_boots import table

        warnings.simplefilter("ignore")
        sizes = [32] if args.sizes == "100,1000" else [int(x) for x in args.sizes.split(",")]
        if args.grid:
            from bisection_boots import grid

            effects = (
                [0.0, 2, 4, 8, 16, 45] if args.effects == "0.5,1,2" else [float(x) for x in args.effects.split(",")]
            )
            grid(args.trials if "--trials" in sys.argv else 50, effects)
            return 0
        table(args.trials if "--trials" in sys.argv else 10, sizes, args.seed, args.markdown, args.boot_effect)
        return 0
    if args.scale:
        scale(args.seed)
        return 0
    warnings.simplefilter("ignore")
    if args.coverage:
        for n in [int(x) for x in args.sizes.split(",")]:
            for d in [float(x) for x in args.effects.split(",")]:
                for shape in SHAPES:
                    rng = np.random.default_rng([args.seed, n, int(d * 10), SHAPES.index(shape), 99])
                    COVERED.clear()
                    for _ in range(args.trials):
                        run_abstat(History(n, d, shape, rng))
                    print(
                        f"N={n} d={d:g} {shape}: interval of the change covers the true ratio in "
                        f"{sum(COVERED)}/{len(COVERED)} = {sum(COVERED) / max(1, len(COVERED)):.3f}",
                        flush=True,
                    )
        return 0
    if args.merges:
        _table(args, MERGE_METHODS, MergeHistory, ("normal", "outliers"))
    else:
        _table(args, METHODS, History, SHAPES)
    return 0


if __name__ == "__main__":
    sys.exit(main())
