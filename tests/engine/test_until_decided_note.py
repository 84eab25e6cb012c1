"""attack23 #10d: ``run --until-decided``'s stop note judged the pooled samples of runs printing several each while
the end table below it compared the runs (their medians): "+2.13% [+1.57, +2.7] at level 0.0089" above
"+2.24% [+1.85, +2.75]", the 99.1% interval ending below the 95% one.  A look now compares the runs as the table
does, so the note's estimate is the table's, and it names its interval's level beside the table's."""

from __future__ import annotations

import json
import re
import sys


def test_the_stop_note_states_the_tables_estimate(abstat_cli, tmp_path):
    script = tmp_path / "v.py"  # five samples a run around a run offset, each run its own seeded draws (seeded by
    # the run's number and the variant's centre: the same draws wherever the test runs)
    script.write_text(
        "import os, random, sys\n"
        "path = sys.argv[2]\n"
        "k = int(open(path).read()) if os.path.exists(path) else 0\n"
        "open(path, 'w').write(str(k + 1))\n"
        "rng = random.Random(k * 7 + int(sys.argv[1]))\n"
        "offset = rng.gauss(1, 0.01)\n"
        "for _ in range(5): print('t: %.4f' % (float(sys.argv[1]) * offset * rng.lognormvariate(0, 0.01)))\n"
    )
    db = str(tmp_path / "s.db")
    done = abstat_cli(
        "run", "--store", db, "--until-decided", "-n", "30", "--threshold", "3", "--seed", "1", "--experiment", "e",
        "-v", f"old={sys.executable} {script} 100 {tmp_path / 'ca'}",
        "-v", f"new={sys.executable} {script} 102 {tmp_path / 'cbb'}",
        "--metric", "t=t: ([0-9.]+)", "--no-progress",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    note = next(line for line in done.stderr.splitlines() if "--until-decided on t" in line)
    said = re.search(r"new \w+ \(([-+][0-9.]+)% \[([-+][0-9.]+), ([-+][0-9.]+)\]", note)
    assert said, note
    shown = abstat_cli("show", "e", "--store", db, "--metric", "t", "--format", "json")
    comparisons = json.loads(shown.stdout)["metrics"]["t"]["comparisons"]["comparisons"]
    comparison = next(c for c in comparisons if c["candidate"] == "new")
    assert float(said.group(1)) == float(f"{comparison['delta_pct']:.3g}"), (note, comparison["delta_pct"])
    level = re.search(r"\]: a ([0-9.]+)% interval, the look's level [0-9.e-]+; the table's intervals are 95%\)", note)
    low, high = float(said.group(2)), float(said.group(3))
    assert level, note
    table_low, table_high = comparison["ci_pct"]
    if float(level.group(1)) >= 95:  # a look's level below 5%: an interval around the table's
        assert low <= float(f"{table_low:.3g}") and float(f"{table_high:.3g}") <= high, note
    else:  # an equivalence's two one-sided tests at the last look (0.064: a 93.6% interval): within the table's
        assert float(f"{table_low:.3g}") <= low and high <= float(f"{table_high:.3g}"), note
