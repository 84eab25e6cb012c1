"""Issue 35 reproduced: units converted by compare (a stored metric in ns against one in µs), units that
do not convert refused in one line, plain files 100x apart warned, ``--unit``; no silent drop of a
plain file beside a hyperfine export; run/show adjust their metrics x candidates with Holm.

References: the relative change computed here from the raw values; statsmodels' Holm."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest
from support.cli import run_abstat


def abstat(*args: str, cwd: str, check: bool = True) -> subprocess.CompletedProcess:
    done = run_abstat(*args, cwd=cwd)
    if check:
        assert done.returncode == 0, done.stderr
    return done


def _store(tmp_path, experiment: str, value: float, unit: str, seed: int) -> None:
    rng = np.random.default_rng(seed)
    script = tmp_path / f"{experiment}.py"
    values = iter(rng.normal(value, value * 0.002, 64))
    script.write_text(
        "import sys\nvalues = " + repr([float(next(values)) for _ in range(64)]) + "\n"
        "import os\nn = int(open('count').read()) if os.path.exists('count') else 0\n"
        "open('count', 'w').write(str(n + 1))\nprint('t', values[n % 64])\n"
    )
    (tmp_path / "count").unlink(missing_ok=True)
    abstat(
        "run",
        "--store",
        "s.db",
        "--experiment",
        experiment,
        "--no-progress",
        "-n",
        "12",
        "-v",
        f"v={sys.executable} {script}",
        "--metric",
        rf"t=t ([\d.e+-]+):{unit}",
        cwd=str(tmp_path),
    )


def test_stored_units_are_converted(tmp_path):
    _store(tmp_path, "old", 12000.0, "ns", 1)
    _store(tmp_path, "new", 12.5, "us", 2)
    done = abstat(
        "compare", "--store", "s.db", "--metric", "t", "--format", "json", "old:v", "new:v", cwd=str(tmp_path)
    )
    (comparison,) = json.loads(done.stdout)["comparisons"]
    assert comparison["delta_pct"] == pytest.approx(100 * (12.5e3 / 12000 - 1), abs=0.5)  # +4.2%, not -99.9%
    text = abstat("compare", "--store", "s.db", "--metric", "t", "old:v", "new:v", cwd=str(tmp_path)).stdout
    assert "µs → " in text and "slower" in text


def test_units_that_do_not_convert_are_refused_in_one_line(tmp_path):
    _store(tmp_path, "old", 12000.0, "ns", 1)
    (tmp_path / "b.txt").write_text("\n".join(str(1000 + i) for i in range(12)) + "\n")
    done = abstat(
        "compare",
        "--store",
        "s.db",
        "--metric",
        "t",
        "--unit",
        "b=KiB",
        "old:v",
        "b=b.txt",
        cwd=str(tmp_path),
        check=False,
    )
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.count("\n") == 1 and "do not convert" in done.stderr and "KiB" in done.stderr


def test_plain_files_far_apart_are_warned_and_unit_names_them(tmp_path):
    rng = np.random.default_rng(3)
    (tmp_path / "s.txt").write_text("\n".join(f"{v:.6f}" for v in rng.normal(0.0125, 1e-4, 20)) + "\n")
    (tmp_path / "ms.txt").write_text("\n".join(f"{v:.4f}" for v in rng.normal(13.0, 0.1, 20)) + "\n")
    warned = abstat("compare", "s.txt", "ms.txt", cwd=str(tmp_path)).stdout
    assert "100x or more apart" in warned
    done = abstat(
        "compare", "--unit", "s.txt=s", "--unit", "ms.txt=ms", "--format", "json", "s.txt", "ms.txt", cwd=str(tmp_path)
    )
    (comparison,) = json.loads(done.stdout)["comparisons"]
    assert comparison["delta_pct"] == pytest.approx(100 * (13.0 / 12.5 - 1), abs=1.0)
    assert not any(w["code"] == "scales-differ" for w in comparison["warnings"])


@pytest.mark.skipif(not os.path.exists("/usr/bin/hyperfine"), reason="needs hyperfine")
def test_no_silent_drop_beside_a_hyperfine_export(tmp_path):
    abstat_dir = str(tmp_path)
    subprocess.run(
        ["hyperfine", "-N", "--runs", "10", "--export-json", "hf.json", "sleep 0.01"],
        cwd=abstat_dir,
        check=True,
        capture_output=True,
    )
    (tmp_path / "ms.txt").write_text("\n".join(f"{10.5 + 0.01 * i:.3f}" for i in range(10)) + "\n")
    out = abstat("compare", "--unit", "ms", "hf.json", "ms.txt", cwd=abstat_dir).stdout
    table = out.split("\n\n")[1]
    assert " ms " in table.splitlines()[0] + " " and "hf" in table  # both inputs are columns of the table
    assert "change" in table and "not compared" not in table
    # without --unit: seconds beside milliseconds.  Values of ~105 ms keep the two 100x apart even when a
    # loaded machine stretches `sleep 0.01` tenfold (with 10.5 ms they fell below 100x at load 20)
    (tmp_path / "ms105.txt").write_text("\n".join(f"{105 + 0.1 * i:.1f}" for i in range(10)) + "\n")
    unnamed = abstat("compare", "hf.json", "ms105.txt", cwd=abstat_dir).stdout
    assert "100x or more apart" in unnamed or "different units" in unnamed


def test_run_and_show_adjust_their_family_with_holm(tmp_path):
    from statsmodels.stats.multitest import multipletests

    abstat(
        "run",
        "--store",
        "s.db",
        "--experiment",
        "fam",
        "--no-progress",
        "-n",
        "8",
        "-v",
        "a=true",
        "-v",
        "b=sleep 0.002",
        "-v",
        "c=sleep 0.001",
        cwd=str(tmp_path),
    )
    doc = json.loads(abstat("show", "fam", "--store", "s.db", "--format", "json", cwd=str(tmp_path)).stdout)
    comparisons = [c for metric in doc["metrics"].values() for c in metric["comparisons"]["comparisons"]]
    assert len(comparisons) >= 4
    raw = [1.0 if c["p_value"] is None else c["p_value"] for c in comparisons]
    expected = multipletests(raw, method="holm")[1]
    for comparison, p_holm in zip(comparisons, expected, strict=True):
        assert comparison["adjustment"] == "holm"
        assert comparison["p_adjusted"] == pytest.approx(p_holm, rel=1e-9)
        if comparison["verdict"] != "cannot judge":
            assert comparison["significant"] == (p_holm < 0.05)
    text = abstat("show", "fam", "--store", "s.db", cwd=str(tmp_path)).stdout
    assert text.count("Holm") == 1 and f"Holm over the {len(comparisons)} comparisons" in text
