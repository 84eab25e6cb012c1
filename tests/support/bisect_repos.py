"""Build small git repositories for the bisect tests: a C benchmark over linear and merged histories.

The benchmark (bench.c) really runs a loop whose length is the commit's work (``work.h``, or
``work.txt`` read at run time).  What it prints as ``ns N`` is either

- its real time (best of 7 repetitions), when ``$BENCH_NOISE`` is unset; or
- with ``BENCH_NOISE=COUNTER:SEED:SD[:SHAPE]``, a measurement the VM's clock cannot perturb: the
  work times 0.5 ns, with Gaussian noise of SD percent and (SHAPE ``oP``, default ``o3``) P% of
  runs 10-30% slow, or (SHAPE ``bP``) half of the runs on a path P% slower (bimodal), drawn from
  a 64-bit mix of SEED and the run's number, which each run takes from the file COUNTER (under
  flock).  A seed gives the same noise to the same sequence of runs, so a trial is reproducible,
  and a different seed is a different trial.

:func:`bench_value` computes in Python what the benchmark prints under ``BENCH_NOISE`` for a run's number, so
a bisection's runs can be replayed in-process (benchmarks/bisection.py --repos --replay).

``./bench --work`` prints the work alone: the deterministic verdict that ``git bisect run``
scripts use as the reference.
"""

from __future__ import annotations

import math
import os
import subprocess

BENCH_C = r"""
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <time.h>
#include <unistd.h>
#include "work.h"
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec * 1e9 + t.tv_nsec; }
static unsigned long long mix(unsigned long long x) {  /* splitmix64 */
    x += 0x9e3779b97f4a7c15ULL; x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL; return x ^ (x >> 31);
}
static double uniform(unsigned long long x) { return ((mix(x) >> 11) + 0.5) / 9007199254740992.0; }
static unsigned long long take_number(const char *path) {
    int fd = open(path, O_RDWR | O_CREAT, 0644);
    char text[32] = {0};
    if (fd < 0 || flock(fd, LOCK_EX) != 0) exit(4);
    unsigned long long n = read(fd, text, sizeof text - 1) > 0 ? strtoull(text, NULL, 10) : 0;
    if (lseek(fd, 0, SEEK_SET) != 0 || ftruncate(fd, 0) != 0 || dprintf(fd, "%llu\n", n + 1) <= 0) exit(4);
    close(fd);
    return n;
}
int main(int argc, char **argv) {
    unsigned long work = WORK;
    FILE *input = fopen("work.txt", "r");  /* a run-time input, when the repository has one */
    if (input) { if (fscanf(input, "%lu", &work) != 1) return 3; fclose(input); }
    if (argc > 1 && strcmp(argv[1], "--work") == 0) { printf("%lu\n", work); return 0; }
    const char *noise = getenv("BENCH_NOISE");
    volatile unsigned long sink = 0;
    double best = 1e30;
    for (int rep = 0; rep < (noise ? 1 : 7); rep++) {
        double start = now();
        for (unsigned long i = 0; i < work; i++) sink += i * 2654435761UL;
        double took = now() - start;
        if (took < best) best = took;
    }
    if (noise) {
        char counter[4096], shape[16] = "o3"; unsigned long long seed; double sd;
        if (sscanf(noise, "%4095[^:]:%llu:%lf:%15s", counter, &seed, &sd, shape) < 3) return 5;
        unsigned long long key = mix(seed) ^ take_number(counter) * 0x2545f4914f6cdd1dULL;
        double z = sqrt(-2.0 * log(uniform(key))) * cos(6.283185307179586 * uniform(key + 1));
        double value = work * 0.5 * (1.0 + sd / 100.0 * z);
        if (shape[0] == 'b') { if (uniform(key + 2) < 0.5) value *= 1.0 + atof(shape + 1) / 100.0; }
        else if (uniform(key + 2) < atof(shape + 1) / 100.0) value *= 1.10 + 0.20 * uniform(key + 3);
        printf("ns %.0f\n", value);
    } else {
        printf("ns %.0f\n", best);
    }
    return 0;
}
"""

BUILD = "cc -O1 -o bench bench.c -lm"
RUN = "./bench"
METRIC = r"ns=^ns (\d+)"
# git bisect run's deterministic verdict: bad when the commit's work is above the good end's
STEP_SCRIPT = 'cc -O1 -o bench bench.c -lm || exit 125\ntest "$(./bench --work)" -le {work}\n'


_MASK = (1 << 64) - 1


def _mix(x: int) -> int:
    """bench.c's splitmix64."""
    x = (x + 0x9E3779B97F4A7C15) & _MASK
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & _MASK
    return x ^ (x >> 31)


def _uniform(x: int) -> float:
    return ((_mix(x & _MASK) >> 11) + 0.5) / 9007199254740992.0


def bench_value(seed: int, number: int, work: int, sd: float = 1.0, shape: str = "o3") -> float:
    """What bench.c prints as ``ns`` for its run ``number`` (0, 1, ... as the counter hands them out) of ``work``
    under ``noise_env(counter, seed, sd, shape)``: the same arithmetic in the same order, so the same value."""
    key = _mix(seed) ^ ((number * 0x2545F4914F6CDD1D) & _MASK)
    z = math.sqrt(-2.0 * math.log(_uniform(key))) * math.cos(6.283185307179586 * _uniform(key + 1))
    value = work * 0.5 * (1.0 + sd / 100.0 * z)
    if shape[0] == "b":
        if _uniform(key + 2) < 0.5:
            value *= 1.0 + float(shape[1:]) / 100.0
    elif _uniform(key + 2) < float(shape[1:]) / 100.0:
        value *= 1.10 + 0.20 * _uniform(key + 3)
    return float(round(value))


def work_of(number: int, work: int, steps: dict[int, float]) -> int:
    """The loop's work of commit ``number`` (1-based) of :func:`make_repo` ``(work=work, steps=steps)``."""
    return work + int(round(work * sum(change for at, change in steps.items() if number >= at)))


def git(path: str, *args: str, env: dict[str, str] | None = None) -> str:
    return subprocess.run(
        ["git", *args], cwd=path, check=True, capture_output=True, text=True, env={**os.environ, **(env or {})}
    ).stdout.strip()


def noise_env(counter: str, seed: int, sd: float = 1.0, shape: str = "o3") -> dict[str, str]:
    """The environment that makes bench print controlled noise (see the module)."""
    return {"BENCH_NOISE": f"{counter}:{seed}:{sd:g}:{shape}"}


def _init(path: str) -> None:
    os.makedirs(path)
    git(path, "init", "-q", "-b", "main")
    git(path, "config", "user.email", "t@example.org")
    git(path, "config", "user.name", "test")
    git(path, "config", "merge.ff", "false")


def make_repo(
    path: str,
    *,
    commits: int = 64,
    slow_at: int | None = None,
    broken_at: tuple[int, ...] = (),
    work: int = 2_000_000,
    slowdown: float = 0.05,
    runtime_input: bool = False,
    steps: dict[int, float] | None = None,
) -> list[str]:
    """A linear history whose commit ``slow_at`` (1-based) adds ``slowdown`` more work in the loop (or
    each commit ``at`` of ``steps`` adds ``steps[at]`` of ``work``, negative to undo some), and
    whose commits ``broken_at`` do not compile (the next one fixes it).  With ``runtime_input`` the
    loop count is read from work.txt at run time, so the binary never changes.  Returns the shas,
    oldest first.  The commits are written by one ``git fast-import`` (a git process per commit and
    file costs seconds for 64 commits on a loaded 2-core machine); the work tree is then checked out."""
    _init(path)
    stream: list[bytes] = []

    def data(text: str) -> bytes:
        raw = text.encode()
        return b"data %d\n%s\n" % (len(raw), raw)

    notes = ""
    for number in range(1, commits + 1):
        amount = work + (int(work * slowdown) if slow_at is not None and number >= slow_at else 0)
        amount += int(round(work * sum(change for at, change in (steps or {}).items() if number >= at)))
        header = f"#define WORK {work if runtime_input else amount}UL\n"
        if number in broken_at:
            header += "this does not compile\n"
        notes += f"change {number}\n"
        files = {"bench.c": BENCH_C, "work.h": header, "NOTES": notes}
        if runtime_input:
            files["work.txt"] = f"{amount}\n"
        when = f"{_EPOCH + number} +0000"
        stream.append(
            f"commit refs/heads/main\nauthor test <t@example.org> {when}\n"
            f"committer test <t@example.org> {when}\n".encode()
        )
        stream.append(
            data(f"commit {number}" + (" slower loop" if number == slow_at or number in (steps or {}) else "") + "\n")
        )
        for name, text in files.items():
            stream.append(f"M 100644 inline {name}\n".encode() + data(text))
    stream.append(b"done\n")
    subprocess.run(
        ["git", "fast-import", "--quiet", "--done"], cwd=path, input=b"".join(stream), check=True, capture_output=True
    )
    git(path, "reset", "-q", "--hard", "main")
    return git(path, "rev-list", "--reverse", "main").split()


_EPOCH = 1704067200  # 2024-01-01T00:00:00Z: commit N of a linear history is N seconds after it


# -- merged histories ---------------------------------------------------------------------------
#
# Every branch adds its share of the work in a header of its own (work_<branch>.h), and its notes
# in a file of its own, so merges never conflict.  A history is a list of steps:
#   ("commit", branch, name)               a commit on branch
#   ("branch", new, from_name)             start branch new at the commit called from_name
#   ("merge", into, branch, name)          merge branch into into, the merge commit called name
# The culprit (a commit's name) adds SLOWDOWN of the base work to its branch's header; a merge
# named as culprit adds it to a header of its own, in the merge commit itself (an "evil merge").

BASE_WORK = 1_000_000
SLOWDOWN = 0.05


def _history(side_from: str, nested: bool) -> list[tuple[str, ...]]:
    steps: list[tuple[str, ...]] = [("commit", "main", f"m{i}") for i in range(0, 3)]
    steps.append(("branch", "side", side_from))
    steps += [("commit", "side", "s1"), ("commit", "main", "m3"), ("commit", "side", "s2")]
    if nested:
        steps.append(("branch", "topic", "s2"))
        steps += [
            ("commit", "topic", "t1"),
            ("commit", "side", "s3"),
            ("commit", "topic", "t2"),
            ("commit", "main", "m4"),
            ("commit", "topic", "t3"),
            ("commit", "side", "s4"),
            ("merge", "side", "topic", "Merge branch 'topic' into side"),
        ]
    else:
        steps += [("commit", "side", "s3"), ("commit", "main", "m4"), ("commit", "side", "s4")]
    steps += [
        ("commit", "main", "m5"),
        ("commit", "side", "s5"),
        ("commit", "main", "m6"),
        ("commit", "side", "s6"),
        ("merge", "main", "side", "Merge branch 'side'"),
        ("commit", "main", "m7"),
    ]
    return steps


SHAPES = {
    # the repository: main m1..m6 (the good end m1), side s1..s6 forked at m2, merged, then m7
    "side": _history("m2", nested=False),
    # a topic branch t1..t3 forked from s2 and merged into side before side is merged into main
    "nested": _history("m2", nested=True),
    # side forked at m0, before the good end m1: its commits are not descendants of the good end
    "before-good": _history("m0", nested=False),
}


def make_merge_repo(path: str, shape: str, culprit: str) -> dict[str, str]:
    """Build ``SHAPES[shape]`` with the slowdown at ``culprit``; commit name -> sha (also ``good``
    (m1) and ``bad`` (m7)).  Commits other than merges are tagged with their names.  Written by one
    ``git fast-import``, with the trees ``git merge`` makes of these histories (every file is changed
    on one line of development only, so a merge takes each file from the side that changed it since
    the merge base); the work tree is then checked out at main."""
    _init(path)
    steps = SHAPES[shape]
    branches = sorted({step[1] for step in steps if step[0] == "commit"} | {"merge"})
    extra = int(BASE_WORK * SLOWDOWN)
    work_h = (
        "".join(f'#include "work_{branch}.h"\n' for branch in branches)
        + f"#define WORK ({BASE_WORK}UL"
        + "".join(f" + WORK_{b.upper()}" for b in branches)
        + ")\n"
    )
    trees: list[dict[str, str]] = []
    ancestry: list[set[int]] = []  # each commit's ancestors, itself included
    heads: dict[str, int] = {}
    named: dict[str, int] = {}
    stream: list[bytes] = []

    def header(branch: str, amount: int) -> tuple[str, str]:
        return f"work_{branch}.h", f"#define WORK_{branch.upper()} {amount}UL\n"

    def commit(branch: str, name: str, number: int, tree: dict[str, str], parents: list[int]) -> int:
        mark = len(trees)
        trees.append(tree)
        ancestry.append({mark}.union(*(ancestry[p] for p in parents)))
        when = f"{_EPOCH + number * 60} +0000"
        message = f"{name}\n".encode()
        stream.append(
            f"commit refs/heads/{branch}\nmark :{mark + 1}\nauthor test <t@example.org> {when}\n"
            f"committer test <t@example.org> {when}\ndata {len(message)}\n".encode()
            + message
            + b"\n"
        )
        if parents:
            stream.append(f"from :{parents[0] + 1}\n".encode())
        for other in parents[1:]:
            stream.append(f"merge :{other + 1}\n".encode())
        stream.append(b"deleteall\n")
        for file, text in sorted(tree.items()):
            raw = text.encode()
            stream.append(f"M 100644 inline {file}\ndata {len(raw)}\n".encode() + raw + b"\n")
        heads[branch] = mark
        return mark

    for number, step in enumerate(steps):
        if step[0] == "branch":
            heads[step[1]] = named[step[2]]
            continue
        if step[0] == "merge":
            into, branch, name = step[1:]
            ours, theirs = heads[into], heads[branch]
            common = ancestry[ours] & ancestry[theirs]
            base = trees[max(common, key=lambda c: len(ancestry[c]))]  # the one merge base of these shapes
            tree = {}
            for file in set(trees[ours]) | set(trees[theirs]):
                mine, other = trees[ours].get(file), trees[theirs].get(file)
                tree[file] = other if mine == base.get(file) else mine
                assert mine == base.get(file) or other == base.get(file) or mine == other, file
            tree = {file: text for file, text in tree.items() if text is not None}
            if name == culprit:
                tree.update([header("merge", extra)])
            named[name] = commit(into, name, number, tree, [ours, theirs])
            continue
        _, branch, name = step
        if not trees:  # the root commit: every branch's header, with no extra work
            tree = {"bench.c": BENCH_C, "work.h": work_h, **dict(header(other, 0) for other in branches)}
            parents: list[int] = []
        else:
            tree, parents = dict(trees[heads[branch]]), [heads[branch]]
        if name == culprit:
            tree.update([header(branch, extra)])
        tree[f"NOTES-{branch}"] = tree.get(f"NOTES-{branch}", "") + f"change {name}\n"
        named[name] = commit(branch, name + (" slower loop" if name == culprit else ""), number, tree, parents)
        stream.append(f"reset refs/tags/{name}\nfrom :{named[name] + 1}\n".encode())
    stream.append(b"done\n")
    marks = os.path.join(path, ".git", "abstat-test-marks")
    subprocess.run(
        ["git", "fast-import", "--quiet", "--done", f"--export-marks={marks}"],
        cwd=path,
        input=b"".join(stream),
        check=True,
        capture_output=True,
    )
    with open(marks) as handle:
        by_mark = dict(line.split() for line in handle)
    os.unlink(marks)
    git(path, "reset", "-q", "--hard", "main")
    shas = {name: by_mark[f":{mark + 1}"] for name, mark in named.items()}
    shas["good"], shas["bad"] = shas["m1"], shas["m7"]
    return shas


def git_bisect_run(repo: str, good: str, bad: str, work: int) -> str:
    """The first bad commit ``git bisect run`` names with the deterministic step script."""
    script = os.path.join(os.path.dirname(repo), "step.sh")
    with open(script, "w") as out:
        out.write("#!/bin/sh\n" + STEP_SCRIPT.format(work=work))
    os.chmod(script, 0o755)
    git(repo, "bisect", "start", bad, good)
    try:
        done = subprocess.run(
            ["git", "bisect", "run", script], cwd=repo, capture_output=True, text=True, check=True, timeout=300
        )
    finally:
        git(repo, "bisect", "reset")
    first = [line for line in done.stdout.splitlines() if line.endswith(" is the first bad commit")]
    assert len(first) == 1, done.stdout
    return first[0].split()[0]
