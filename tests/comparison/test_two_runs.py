"""Two runs a variant (README's cycle recipe, ``abstat run -n 2``; newcomer22 #1): the store pooled two process
runs into one sample, which reads a per-process offset (page placement, address-space layout) as the change: an
A/A of 2 runs x 49 TSC samples a side with a 2% offset a process was starred in half of the draws.  Two runs that
differ by more than their samples do (Brunner-Munzel p < DISAGREE_P) now stay runs, and a comparison of at most two
runs a side says it cannot be judged and why; two runs that agree are pooled as before."""

from __future__ import annotations

import sys

import abstat
import numpy as np
import scipy.stats
from abstat.readers.run_units import DISAGREE_P, replicates, two_runs_p


def _run(rng, level, n=49):
    return list(np.round(level * (1 + rng.normal(0, 0.01, n)) / 20) * 20)


def test_two_runs_p_is_brunner_munzels():
    rng = np.random.default_rng(1)
    a, b = list(rng.normal(100, 1, 30)), list(rng.normal(100.8, 1, 25))
    assert abs(two_runs_p([a, b]) - scipy.stats.brunnermunzel(a, b).pvalue) < 1e-9
    assert two_runs_p([a]) is None and two_runs_p([a, [1.0]]) is None


def test_the_store_keeps_two_differing_runs_apart_and_pools_two_that_agree():
    rng = np.random.default_rng(2)
    differ = _run(rng, 440) + _run(rng, 480)
    groups, invocations = replicates({7: differ}, {7: [49, 49]}, [7])
    assert [len(g) for g in groups] == [49, 49] and invocations == [7, 7]
    agree = _run(rng, 440) + _run(rng, 440)
    groups, invocations = replicates({7: agree}, {7: [49, 49]}, [7])
    assert two_runs_p([agree[:49], agree[49:]]) >= DISAGREE_P
    assert [len(g) for g in groups] == [98] and invocations == [7]
    groups, _ = replicates({7: [1.0, 2.0]}, {7: [1, 1]}, [7])  # one sample a run: pooled, as before
    assert groups == [[1.0, 2.0]]


def test_a_comparison_of_two_differing_runs_cannot_be_judged():
    rng = np.random.default_rng(3)
    runs = [_run(rng, 440), _run(rng, 480)]
    flat = _run(rng, 460, 98)
    for x, y in ((runs, flat), (flat, runs), (runs, [_run(rng, 440), _run(rng, 445)])):
        c = abstat.compare(x, y)
        assert c.verdict == "cannot judge" and not c.significant
        assert any("2 runs of" in w.message and "make 5 or more runs" in w.message for w in c.warnings), c.warnings
    # three runs a side are the unit as before: the check is for two
    assert "2 runs of" not in str(abstat.compare(runs + [_run(rng, 460)], flat).to_dict())


def test_run_with_two_runs_a_variant_that_differ_says_cannot_judge(abstat_cli, tmp_path):
    """Each variant's first run prints 49 values about one level, its second about a level 9% up: pooled, the
    second variant (levels 480, 520) was 'slower' than the first (440, 480); kept as runs, no verdict."""
    script = tmp_path / "cyc.py"
    script.write_text(
        "import os, random, sys\n"
        "state = sys.argv[1]\n"
        "count = int(open(state).read()) if os.path.exists(state) else 0\n"
        "open(state, 'w').write(str(count + 1))\n"
        "level = float(sys.argv[2]) * (1.09 if count else 1.0)\n"
        "for _ in range(49):\n"
        "    print('cycles: %d' % (round(level * random.gauss(1, 0.01) / 20) * 20))\n"
    )
    done = abstat_cli(
        "run", "--store", "s.db", "--experiment", "hc", "-n", "2", "--no-json-lines",
        "--metric", "cycles=^cycles: (\\d+)",
        "-v", f"before={sys.executable} {script} {tmp_path / 'a'} 440",
        "-v", f"after={sys.executable} {script} {tmp_path / 'b'} 480",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    line = next(line for line in done.stdout.splitlines() if line.startswith("cycles"))
    assert "cannot judge" in line, done.stdout
    assert "2 runs of before" in done.stdout and "make 5 or more runs" in done.stdout, done.stdout
    compared = abstat_cli("compare", "--store", "s.db", "hc:before", "hc:after", "--metric", "cycles")
    assert "cannot judge" in compared.stdout, compared.stdout
