"""Build small git repositories for the bisect tests: a C benchmark over 64 commits."""
from __future__ import annotations

import os
import subprocess

BENCH_C = r"""
#include <stdio.h>
#include <time.h>
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec * 1e9 + t.tv_nsec; }
int main(void) {
    unsigned long work = WORK;
    FILE *input = fopen("work.txt", "r");  /* a run-time input, when the repository has one */
    if (input) { if (fscanf(input, "%lu", &work) != 1) return 3; fclose(input); }
    volatile unsigned long sink = 0;
    double best = 1e30;
    for (int rep = 0; rep < 7; rep++) {
        double start = now();
        for (unsigned long i = 0; i < work; i++) sink += i * 2654435761UL;
        double took = now() - start;
        if (took < best) best = took;
    }
    printf("ns %.0f\n", best);
    return 0;
}
"""


def git(path: str, *args: str, env: dict[str, str] | None = None) -> str:
    return subprocess.run(["git", *args], cwd=path, check=True, capture_output=True, text=True,
                          env={**os.environ, **(env or {})}).stdout.strip()


def make_repo(path: str, *, commits: int = 64, slow_at: int | None = None, broken_at: tuple[int, ...] = (),
              work: int = 2_000_000, slowdown: float = 0.05, runtime_input: bool = False) -> list[str]:
    """A repository whose commit ``slow_at`` (1-based) adds ``slowdown`` more work in the loop, and
    whose commits ``broken_at`` do not compile (the next one fixes it).  With ``runtime_input`` the
    loop count is read from work.txt at run time, so the binary never changes.  Returns the shas,
    oldest first."""
    os.makedirs(path)
    git(path, "init", "-q")
    git(path, "config", "user.email", "t@example.org")
    git(path, "config", "user.name", "test")
    shas = []
    for number in range(1, commits + 1):
        amount = work + (int(work * slowdown) if slow_at is not None and number >= slow_at else 0)
        source = BENCH_C.replace("WORK", f"{work if runtime_input else amount}UL")
        if runtime_input:
            with open(os.path.join(path, "work.txt"), "w") as out:
                out.write(f"{amount}\n")
        if number in broken_at:
            source += "this does not compile\n"
        with open(os.path.join(path, "bench.c"), "w") as out:
            out.write(source)
        with open(os.path.join(path, "NOTES"), "a") as out:
            out.write(f"change {number}\n")
        git(path, "add", "-A")
        stamp = f"2024-01-01T00:00:{number:02d}" if number < 60 else f"2024-01-01T00:01:{number - 60:02d}"
        git(path, "commit", "-qm", f"commit {number}" + (" slower loop" if number == slow_at else ""),
            env={"GIT_COMMITTER_DATE": stamp, "GIT_AUTHOR_DATE": stamp})
        shas.append(git(path, "rev-parse", "HEAD"))
    return shas


BUILD = "cc -O1 -o bench bench.c"
RUN = "./bench"
METRIC = r"ns=^ns (\d+)"
