"""Seed 000 end to end: hypercall TSC cycles, before/after, machines x modes.

The benchmark is ``examples/workflows/hcall_bench.py`` (quantized cycle
counts with a few wild outliers); it also logs every value it prints, and
those logs are the reference the stored samples, the e-mail report and its
``ministat -A`` blocks are checked against (with Debian's ministat as a
live reference when it is installed).
"""

from __future__ import annotations

import json
import re
import shutil
import statistics
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from support import hl_oracle, paths
from support.cli import run_abstat as abstat

ROOT = paths.ROOT
BENCH = ROOT / "examples" / "workflows" / "hcall_bench.py"
CELLS = [("milan", "pv64"), ("milan", "pv32"), ("naples", "pv64"), ("naples", "pv32")]
CALLS, RUNS, PLANTED = 49, 2, 1  # 98 samples per cell, 2 planted outliers, like the seed's N


def bench_command(host: str, mode: str, variant: str, *extra: str) -> str:
    return " ".join([sys.executable, str(BENCH), "--host", host, "--mode", mode, "--variant", variant, *extra])


RUN_RESULTS: dict[tuple[str, str], dict] = {}


@pytest.fixture(scope="module")
def hcall_store(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[tuple[str, str, str], list[float]]]:
    """Four ``abstat run`` invocations (host x mode) into one store; the benchmark's own logs."""
    work = tmp_path_factory.mktemp("hcall")
    logs = work / "logs"
    logs.mkdir()
    RUN_RESULTS.clear()
    for cell, (host, mode) in enumerate(CELLS):
        variants = []
        for offset, variant in enumerate(("before", "after")):
            log = logs / f"{host}-hcall-{mode}-{variant}"
            # seeded: a variant's two runs are then the same draws.  Unseeded, two runs of one variant differed
            # at the store's two-runs check (Brunner-Munzel p < 0.01, 1% of i.i.d. pairs) in about one suite in
            # ten, and the cell was compared by runs, not as the pooled samples this file's oracle computes
            seed = str(10 * cell + offset)
            variants += [
                "-v",
                f"{variant}="
                + bench_command(
                    host, mode, variant, "--calls", str(CALLS), "--outliers", str(PLANTED), "--log", str(log),
                    "--seed", seed,
                ),
            ]  # fmt: skip
        done = abstat(
            "run",
            "-n",
            str(RUNS),
            "--no-progress",
            "--store",
            str(work / "abstat.db"),
            "--experiment",
            "hcall",
            "--metric",
            r"cycles=^xen_version: (\d+) cycles",
            "--label",
            f"host={host}",
            "--label",
            f"mode={mode}",
            "--format",
            "json",
            *variants,
        )
        assert done.returncode == 0, done.stderr
        RUN_RESULTS[(host, mode)] = json.loads(done.stdout)
    values = {}
    for log in logs.iterdir():
        host, _, mode, variant = log.name.split("-")
        values[(host, mode, variant)] = [float(x) for x in log.read_text().split()]
    return work, values


def test_run_stores_every_printed_cycle_count_under_its_labels(hcall_store):
    work, logged = hcall_store
    done = abstat("export", "--store", str(work / "abstat.db"), "--format", "json")
    assert done.returncode == 0, done.stderr
    stored: dict[tuple[str, str, str], list[float]] = {}
    for row in json.loads(done.stdout):
        if row["metric"] == "cycles":
            key = (row["labels"]["host"], row["labels"]["mode"], row["variant"])
            stored.setdefault(key, []).append(row["value"])
    assert set(stored) == set(logged) and len(logged) == 8
    for key, values in logged.items():
        assert len(values) == CALLS * RUNS
        assert sorted(stored[key]) == sorted(values), key


def test_each_run_compares_only_its_own_host_and_mode(hcall_store):
    """The experiment collects four configurations; the comparison ``abstat run`` prints at the
    end is about the one just measured, not the four pooled as if they were repeated runs."""
    _, logged = hcall_store
    for (host, mode), result in RUN_RESULTS.items():
        comparison = result["metrics"]["cycles"]["comparisons"]["comparisons"][0]
        assert (comparison["baseline"], comparison["candidate"]) == ("before", "after")
        assert comparison["n"] == [CALLS * RUNS] * 2 and comparison["runs"] is None
        medians = [s["median"] for s in comparison["summaries"]]
        assert medians == [statistics.median(logged[(host, mode, v)]) for v in ("before", "after")]


def _median_cells(table: str) -> dict[tuple[str, str], tuple[float, float, float, float]]:
    """(before, after, change, half a unit of the change's last printed digit) per cell."""
    cells = {}
    # counts are grouped by thousands (issue 10): 1,982.5
    for match in re.finditer(
        r"^(milan|naples)\s+(pv64|pv32)\s+([\d.,]+)\s+([\d.,]+)\s+([+-][\d.]+)%", table, re.MULTILINE
    ):
        decimals = len(match[5].partition(".")[2])  # as many as the interval supports (issue 10)
        cells[(match[1], match[2])] = (
            *(float(match[i].replace(",", "")) for i in (3, 4, 5)),
            0.5 * 10.0**-decimals + 1e-9,
        )
    return cells


def _grid_median(values) -> float:
    """The median a report prints for integer data: the lower middle value (a value of the data)."""
    ordered = sorted(float(v) for v in values)
    return ordered[(len(ordered) - 1) // 2]


def _blocks(email: str) -> dict[str, str]:
    """``ministat -A`` blocks by command line, dedented (the e-mail indents by two spaces)."""
    blocks: dict[str, str] = {}
    for chunk in email.rstrip("\n").split("\n\n"):
        lines = chunk.split("\n")
        if lines[0].startswith("  $ ministat -A "):
            assert all(line.startswith("  ") or not line for line in lines), chunk
            blocks[lines[0][4:]] = "\n".join(line[2:] for line in lines[1:] if not line.startswith("  ! "))
    return blocks


@pytest.fixture(scope="module")
def hcall_email(hcall_store) -> str:
    work, _ = hcall_store
    done = abstat(
        "report",
        "--store",
        str(work / "abstat.db"),
        "--by",
        "variant",
        "--rows",
        "host,mode",
        "--metric",
        "cycles",
        "--format",
        "email",
        "--ministat",
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_email_report_has_the_table_and_a_ministat_block_per_machine_and_mode(hcall_store, hcall_email, tmp_path):
    work, logged = hcall_store
    email = hcall_email
    assert max(len(line.expandtabs()) for line in email.splitlines()) <= 80
    assert re.search(r"^host\s+mode\s+before\s+after\s+change$", email, re.MULTILINE)
    cells = _median_cells(email)
    assert set(cells) == set(CELLS)
    as_json = json.loads(
        abstat(
            "report",
            "--store",
            str(work / "abstat.db"),
            "--by",
            "variant",
            "--rows",
            "host,mode",
            "--metric",
            "cycles",
            "--format",
            "json",
        ).stdout
    )
    deltas = {
        (r["labels"]["host"], r["labels"]["mode"]): r["cells"]["after"]["comparison"]["delta_pct"]
        for r in as_json["rows"]
    }
    for (host, mode), (before, after, change, rounding) in cells.items():
        # the cells show each side's median (integer cycles: the lower middle value, issue 35), the change
        # is the Hodges-Lehmann ratio (the default's named estimand, issue 20), by brute force over every pair
        want_before = _grid_median(logged[(host, mode, "before")])
        want_after = _grid_median(logged[(host, mode, "after")])
        assert before == pytest.approx(want_before, rel=2e-3) and after == pytest.approx(want_after, rel=2e-3)
        assert change == pytest.approx(deltas[(host, mode)], abs=rounding)
        assert change == pytest.approx(
            hl_oracle.hl_ratio_pct(logged[(host, mode, "before")], logged[(host, mode, "after")]), abs=rounding
        )
    # Every patch makes the call cheaper; the big ones are significant (Holm over 4 cells).
    assert re.search(r"^milan\s+pv64\s.*%.*\]\s+\*", email, re.MULTILINE)
    assert re.search(r"^naples\s+pv64\s.*%.*\]\s+\*", email, re.MULTILINE)

    blocks = _blocks(email)
    assert sorted(blocks) == sorted(f"ministat -A {h}-{m}-{{before,after}}" for h, m in CELLS)
    live = shutil.which("ministat")
    for host, mode in CELLS:
        block = blocks[f"ministat -A {host}-{mode}-{{before,after}}"]
        lines = block.split("\n")
        assert lines[0] == f"x {host}-{mode}-before" and lines[1] == f"+ {host}-{mode}-after"
        for symbol, variant, line in (("x", "before", lines[3]), ("+", "after", lines[4])):
            values = logged[(host, mode, variant)]
            fields = line.split()
            assert fields[0] == symbol and int(fields[1]) == len(values)
            assert float(fields[2]) == min(values) and float(fields[3]) == max(values)
            assert float(fields[5]) == pytest.approx(statistics.fmean(values), rel=1e-7)
            assert float(fields[6]) == pytest.approx(statistics.stdev(values), rel=1e-7)
        if live:  # byte-exact against the real ministat on the benchmark's own logs
            for variant in ("before", "after"):
                name = f"{host}-{mode}-{variant}"
                (tmp_path / name).write_text("".join(f"{v:g}\n" for v in logged[(host, mode, variant)]))
            reference = subprocess.run(
                [live, "-A", f"{host}-{mode}-before", f"{host}-{mode}-after"],
                capture_output=True,
                text=True,
                cwd=tmp_path,
                check=True,
            ).stdout
            assert block == "\n".join(line.rstrip() for line in reference.rstrip("\n").split("\n"))


def test_audit_finds_the_email_consistent_and_a_tampered_copy_not(hcall_email, tmp_path):
    email = hcall_email
    (tmp_path / "cover-letter.txt").write_text(email)
    done = abstat("audit", "--format", "json", str(tmp_path / "cover-letter.txt"))
    assert done.returncode == 0, done.stdout + done.stderr
    audit = json.loads(done.stdout)
    assert audit["consistent"] is True
    assert audit["counts"]["ministat_reports"] == 4 and audit["counts"]["inconsistent"] == 0
    assert audit["counts"]["consistent"] + audit["counts"]["unchecked"] == 4
    # Print both standard deviations of the first block as 1 (as if the outliers had been
    # left out of the spread only): its printed verdict no longer follows from its vitals.
    tampered = re.sub(
        r"^(  [x+] +\d+ .* )([\d.]+)$", lambda m: m[1] + "1".rjust(len(m[2])), email, count=2, flags=re.MULTILINE
    )
    assert tampered.count("\n") == email.count("\n") and tampered != email
    (tmp_path / "tampered.txt").write_text(tampered)
    done = abstat("audit", str(tmp_path / "tampered.txt"))
    assert done.returncode == 1 and "INCONSISTENT" in done.stdout


@pytest.fixture(scope="module")
def hcall_files(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``{host}-hcall-{mode}-{variant}`` files as the seed's author had them, one number per line."""
    folder = tmp_path_factory.mktemp("hcall-files")
    for seed, (host, mode) in enumerate(CELLS):
        for offset, variant in enumerate(("before", "after")):
            argv = [
                sys.executable,
                str(BENCH),
                "--host",
                host,
                "--mode",
                mode,
                "--variant",
                variant,
                "--format",
                "plain",
                "--seed",
                str(10 * seed + offset),
            ]
            with open(folder / f"{host}-hcall-{mode}-{variant}", "w") as handle:
                subprocess.run(argv, stdout=handle, check=True)
    return folder


def test_report_from_files_takes_labels_from_the_file_names(hcall_files):
    files = sorted(str(p) for p in hcall_files.iterdir())
    done = abstat(
        "report",
        "--pattern",
        "{host}-hcall-{mode}-{variant}",
        "--by",
        "variant",
        "--rows",
        "host,mode",
        "--format",
        "json",
        *files,
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["columns"] == ["before", "after"] and report["baseline"] == "before"
    assert report["row_keys"] == ["host", "mode"]
    rows = {(r["labels"]["host"], r["labels"]["mode"]): r for r in report["rows"]}
    assert set(rows) == set(CELLS)
    for (host, mode), row in rows.items():
        for variant in ("before", "after"):
            values = np.loadtxt(hcall_files / f"{host}-hcall-{mode}-{variant}")
            assert row["cells"][variant]["n"] == 98
            assert row["cells"][variant]["center"] == _grid_median(values)
        assert row["cells"]["after"]["comparison"]["delta_pct"] < 0
    email = abstat(
        "report",
        "--pattern",
        "{host}-hcall-{mode}-{variant}",
        "--by",
        "variant",
        "--rows",
        "host,mode",
        "--format",
        "email",
        "--ministat",
        *files,
    ).stdout
    assert f"$ ministat -A {hcall_files}/milan-hcall-pv64-{{before,after}}" in email


def tukey_dropped(values: np.ndarray) -> int:
    """Tukey's rule (1.5 IQR beyond the quartiles), computed with numpy; on
    quantized data an IQR of 0 is taken as one quantization step."""
    q1, q3 = np.percentile(values, [25, 75])
    iqr = q3 - q1 or float(np.min(np.diff(np.unique(values))))
    return int(np.sum((values < q1 - 1.5 * iqr) | (values > q3 + 1.5 * iqr)))


def test_compare_excludes_outliers_by_a_stated_rule_and_says_how_many(hcall_files):
    for host, mode in (("milan", "pv64"),):
        before = hcall_files / f"{host}-hcall-{mode}-before"
        after = hcall_files / f"{host}-hcall-{mode}-after"
        done = abstat("compare", "--outliers", "tukey", "--format", "json", str(before), str(after))
        assert done.returncode == 0, done.stderr
        comparison = json.loads(done.stdout)["comparisons"][0]
        assert comparison["outliers"] == "tukey"
        expected = {}
        for summary, path in zip(comparison["summaries"], (before, after)):
            values = np.loadtxt(path)
            expected[str(path)] = tukey_dropped(values)
            assert summary["outliers"]["dropped"] == expected[str(path)] >= 2  # the planted ones at least
            assert summary["n"] == values.size - expected[str(path)]
            assert summary["max"] < 3 * np.median(values)  # every wild value is gone
        notes = [n["message"] for n in comparison["notes"] if n["code"] == "outliers-dropped"]
        assert notes == [
            f"outliers dropped (tukey rule): {before} {expected[str(before)]}, {after} {expected[str(after)]}"
        ]
        assert comparison["delta_pct"] < 0 and comparison["significant"]
        text = abstat("compare", "--outliers", "tukey", str(before), str(after)).stdout
        assert notes[0] in text
        # Without a rule nothing is dropped, but the outliers are still counted.
        kept = json.loads(abstat("compare", "--format", "json", str(before), str(after)).stdout)["comparisons"][0]
        assert kept["n"] == [98, 98]
        assert [s["outliers"]["dropped"] for s in kept["summaries"]] == [0, 0]
        assert [s["outliers"]["mild"] + s["outliers"]["severe"] for s in kept["summaries"]] == [
            expected[str(before)],
            expected[str(after)],
        ]
