"""Peers' own tools on abstat's files, and abstat on peers' own test data (a dev check).

1. hyperfine's analysis scripts (scripts/*.py of a sharkdp/hyperfine
   checkout) run on abstat's ``--format hyperfine`` exports -- of a live
   hyperfine export with a parameter scan, of one with two commands, of
   one with failing runs (``-i``), and of ``abstat run`` stores, one with
   failing runs (``--ignore-failure``) -- and, as the anchor, on hyperfine's own export
   of the same runs.  A script must do on abstat's export what it does on
   hyperfine's (plot_parametrized.py refuses exports without parameters,
   plot_progression.py needs more runs than its averaging window, in both).
2. Every file of golang/perf's testdata (benchfmt, benchproc, benchseries,
   benchstat) read by abstat's Go benchmark reader: files read, results,
   malformed lines reported.

The checkouts are git directories or work trees (e.g. the ``fetch`` mirrors):

    python benchmarks/peer_scripts.py --hyperfine /work/.mirror/sharkdp+hyperfine/repo \\
        --perf /work/.mirror/golang+perf/repo
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

SRC = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "src")
ENV = {**os.environ, "PYTHONPATH": os.path.abspath(SRC), "MPLBACKEND": "Agg"}


def checkout_files(repo: str, prefix: str, into: str, keep=lambda rel: True) -> list[str]:
    """Copy the files under ``prefix`` (that ``keep``) of a work tree or git directory into ``into``."""
    if not os.path.isfile(os.path.join(repo, "HEAD")):  # a work tree, not a git directory
        found = []
        for root, _, names in os.walk(os.path.join(repo, prefix)):
            for name in names:
                found.append(os.path.relpath(os.path.join(root, name), repo))
        read = lambda rel: open(os.path.join(repo, rel), "rb").read()  # noqa: E731
    else:
        listing = subprocess.run(
            ["git", "--git-dir", repo, "ls-tree", "-r", "--name-only", "HEAD", *([prefix] if prefix else [])],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.split()
        found = listing
        read = lambda rel: (  # noqa: E731
            subprocess.run(
                ["git", "--git-dir", repo, "show", f"HEAD:{rel}"],
                capture_output=True,
                check=True,
            ).stdout
        )
    paths = []
    for rel in filter(keep, found):
        target = os.path.join(into, rel)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        with open(target, "wb") as handle:
            handle.write(read(rel))
        paths.append(target)
    return paths


def abstat(*args: str) -> str:
    done = subprocess.run([sys.executable, "-m", "abstat", *args], capture_output=True, text=True, env=ENV)
    if done.returncode != 0:
        raise SystemExit(f"abstat {' '.join(args)}: {done.stderr.strip()}")
    return done.stdout


def run_script(script: str, export: str, work: str) -> str:
    args = [sys.executable, script, export]
    if "plot" in os.path.basename(script):
        args += ["-o", os.path.join(work, "plot.png")]
    done = subprocess.run(args, capture_output=True, text=True, env=ENV, timeout=300)
    last = (done.stderr.strip().splitlines() or [""])[-1]
    return "ok" if done.returncode == 0 else f"exit {done.returncode}: {last[:70]}"


def hyperfine_check(repo: str, work: str, runs: int) -> int:
    hyperfine = shutil.which("hyperfine")
    if hyperfine is None:
        print("hyperfine is not installed: skipped")
        return 0
    scripts = sorted(p for p in checkout_files(repo, "scripts", work) if p.endswith(".py"))
    # exits 0, 3, then kills itself with SIGTERM, in turn ($0: its counter file)
    flaky = (
        'sh -c \'n=$(cat "$0" 2>/dev/null || echo 0); echo $((n+1)) > "$0"; '
        "case $((n % 3)) in 1) exit 3;; 2) kill -TERM $$;; esac' "
    )
    cases = {
        "parameter scan": ["-L", "t", "0.010,0.002", "sleep {t}"],
        "two commands": ["sleep 0.010", "sleep 0.002"],
        "failing runs": ["-i", "sleep 0.002", flaky + os.path.join(work, "counter-hyperfine")],
    }
    exports: dict[str, tuple[str | None, str]] = {}
    for name, args in cases.items():
        theirs = os.path.join(work, f"{name}.hyperfine.json")
        subprocess.run(
            [hyperfine, "--runs", str(runs), "-N", "--style", "none", *args, "--export-json", theirs],
            check=True,
            capture_output=True,
        )
        mine = os.path.join(work, f"{name}.abstat.json")
        with open(mine, "w") as handle:
            handle.write(abstat("report", theirs, "--format", "hyperfine"))
        exports[name] = (theirs, mine)
    store = os.path.join(work, "s.db")
    abstat(
        "run", "-n", str(runs), "--no-progress", "--store", store, "-v", "slow=sleep 0.010", "-v", "fast=sleep 0.002"
    )
    mine = os.path.join(work, "store.abstat.json")
    with open(mine, "w") as handle:
        handle.write(abstat("report", "--store", store, "--format", "hyperfine"))
    exports["abstat run store"] = (exports["two commands"][0], mine)
    store = os.path.join(work, "failing.db")
    abstat(
        "run",
        "-n",
        str(runs),
        "--no-progress",
        "--ignore-failure",
        "--store",
        store,
        "-v",
        "fast=sleep 0.002",
        "-v",
        "flaky=" + flaky + os.path.join(work, "counter-abstat"),
    )
    mine = os.path.join(work, "failing.abstat.json")
    with open(mine, "w") as handle:
        handle.write(abstat("report", "--store", store, "--format", "hyperfine"))
    exports["store, failing runs"] = (exports["failing runs"][0], mine)
    differ = 0
    print(f"{'script':<30} {'export':<20} {'on hyperfine export':<40} on abstat export")
    for script in scripts:
        for name, (theirs, mine) in exports.items():
            anchor, outcome = run_script(script, theirs, work), run_script(script, mine, work)
            differ += anchor != outcome
            print(f"{os.path.basename(script):<30} {name:<20} {anchor:<40} {outcome}")
    with open(exports["parameter scan"][1]) as handle:
        print("abstat export, first result's keys:", list(json.load(handle)["results"][0]))
    for name, path in zip(("hyperfine -i", "abstat store"), exports["store, failing runs"]):
        with open(path) as handle:
            failing = json.load(handle)["results"][1]
        print(f"{name}, failing command: keys {list(failing)}, exit_codes {failing.get('exit_codes')}")
    return differ


def perf_check(repo: str, work: str) -> int:
    sys.path.insert(0, os.path.abspath(SRC))
    from abstat.errors import AbstatError
    from abstat.readers.gobench import read_gobench
    from abstat.readers.peers import detect_format, read_text

    files = checkout_files(
        repo,
        "",
        work,
        keep=lambda rel: "testdata/" in rel and not rel.endswith((".go", ".stdout", ".stderr", ".json", ".gitignore")),
    )
    failed = results = with_notes = undetected = 0
    for path in sorted(files):
        text = read_text(path)
        if detect_format(path, text) != "go":
            undetected += 1
            print(f"  not recognised as Go benchmark text: {os.path.relpath(path, work)}")
        try:
            sets = read_gobench(path, text)
        except AbstatError as err:
            failed += 1
            print(f"  FAILED {os.path.relpath(path, work)}: {err}")
            continue
        results += sum(s.n for s in sets)
        notes = {n for s in sets for n in s.notes}
        if notes:
            with_notes += 1
            for note in notes:
                print(f"  note: {note.replace(work + os.sep, '')}")
    print(
        f"golang/perf testdata: {len(files)} files, {len(files) - failed} read ({results} values), "
        f"{failed} failed, {undetected} not auto-detected, {with_notes} with notes"
    )
    return failed + undetected


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hyperfine", help="sharkdp/hyperfine checkout (git directory or work tree)")
    parser.add_argument("--perf", help="golang/perf checkout (git directory or work tree)")
    parser.add_argument("--runs", type=int, default=12, help="hyperfine and abstat runs per command (default 12)")
    args = parser.parse_args()
    problems = 0
    with tempfile.TemporaryDirectory(prefix="abstat-peers-") as work:
        if args.hyperfine:
            problems += hyperfine_check(args.hyperfine, os.path.join(work, "hyperfine"), args.runs)
        if args.perf:
            problems += perf_check(args.perf, os.path.join(work, "perf"))
    print("differences from the peers' own behaviour:", problems)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
