"""abstat report: the matrix and every output format.

Golden files live in tests/data/report/golden/; after a deliberate change
of output, regenerate them with ABSTAT_UPDATE_GOLDEN=1 and review the diff.
The e-mail format's ministat blocks are checked against independent
references: the ministat conformance corpus and, when installed, the real
ministat(1).
"""

from __future__ import annotations

import csv
import io
import json
import os
import shutil
import subprocess
import tarfile

import pytest

from abstat.cli import main as cli_main
from abstat.report import api
from support import paths

HERE = str(paths.TESTS)
DATA = os.path.join(HERE, "data", "report")
HCALL = os.path.join(DATA, "hcall")
GOLDEN = os.path.join(DATA, "golden")
PATTERN = "{host}-hcall-{mode}-{variant}"
HOSTS = ("milan", "naples", "cflr")
MODES = ("pv64", "pv32")
FILES = [f"{h}-hcall-{m}-{v}" for h in HOSTS for m in MODES for v in ("before", "after")]
UPDATE = bool(os.environ.get("ABSTAT_UPDATE_GOLDEN"))


def run_cli(args, capsys):
    status = cli_main(["report", *args])
    out, err = capsys.readouterr()
    return status, out, err


def check_golden(name: str, text: str) -> None:
    path = os.path.join(GOLDEN, name)
    if UPDATE:
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(text)
    with open(path, encoding="utf-8") as handle:
        expected = handle.read()
    assert text == expected, f"{name} differs from its golden file"


@pytest.fixture
def in_hcall(monkeypatch):
    monkeypatch.chdir(HCALL)


def hcall_report(**options):
    cwd = os.getcwd()
    os.chdir(HCALL)
    try:
        sets = api.load(FILES, pattern=PATTERN)
    finally:
        os.chdir(cwd)
    return api.build(sets, **options)


# -- the matrix ---------------------------------------------------------------


def test_matrix_layout_from_file_names():
    report = hcall_report()
    assert report.by == "variant" and report.baseline == "before"
    assert report.columns == ["before", "after"]
    assert report.row_keys == ["host", "mode"]
    assert [tuple(r.labels.values()) for r in report.rows] == [(h, m) for h in HOSTS for m in MODES]
    assert len(report.comparisons) == 6
    for row in report.rows:
        base, after = row.cells["before"], row.cells["after"]
        assert base.comparison is None and after.comparison is not None
        assert after.comparison.n == [base.n, after.n] == [30, 30]


def test_cells_are_what_compare_says():
    from abstat.comparison import compare

    report = hcall_report(adjust="none")
    row = report.rows[0]
    with open(os.path.join(HCALL, "milan-hcall-pv64-before")) as f:
        before = [float(x) for x in f]
    with open(os.path.join(HCALL, "milan-hcall-pv64-after")) as f:
        after = [float(x) for x in f]
    direct = compare(before, after)
    cell = row.cells["after"]
    assert cell.comparison.delta_pct == direct.delta_pct
    assert cell.comparison.ci_pct == direct.ci_pct
    assert cell.p_adjusted == direct.p_value
    # the cells print each side's median (integer data: one of the values, the lower middle one), and
    # their ratio lies inside the change's interval (issue 35), not the one-sample pseudo-medians
    import statistics

    assert all(x == int(x) for x in before + after)
    assert cell.center == statistics.median_low(after) and cell.center_kind == "median"
    assert row.cells["before"].center == statistics.median_low(before)
    moved = 100 * (cell.center / row.cells["before"].center - 1)
    assert direct.ci_pct[0] <= moved <= direct.ci_pct[1] and moved * direct.delta_pct > 0
    median = hcall_report(adjust="none", center="median").rows[0].cells["after"]
    assert median.center == statistics.median_low(after) and median.center_kind == "median"


def test_holm_is_applied_across_the_table():
    from statsmodels.stats.multitest import multipletests

    report = hcall_report()
    cells = report.comparisons
    raw = [c.comparison.p_value for c in cells]
    reject, adjusted, _, _ = multipletests(raw, alpha=0.05, method="holm")
    assert [c.p_adjusted for c in cells] == pytest.approx(list(adjusted), rel=1e-12)
    assert [c.significant for c in cells] == [bool(r) for r in reject]
    none = hcall_report(adjust="none")
    assert [c.significant for c in none.comparisons] == [c.comparison.p_value < 0.05 for c in none.comparisons]
    bh = hcall_report(adjust="bh")
    expected = multipletests(raw, alpha=0.05, method="fdr_bh")[1]
    assert [c.p_adjusted for c in bh.comparisons] == pytest.approx(list(expected), rel=1e-12)
    assert "Benjamini-Hochberg" in " ".join(bh.footer())


def test_geomean_row_is_the_geometric_mean_of_ratios():
    import math

    report = hcall_report()
    (summary,) = report.summaries
    ratios = [1 + c.comparison.delta_pct / 100 for c in report.comparisons]
    expected = math.exp(sum(math.log(r) for r in ratios) / len(ratios))
    assert summary.ratio == pytest.approx(expected, rel=1e-12)
    assert summary.cells == 6
    low, high = summary.ci
    assert low < summary.ratio < high


def test_where_rows_and_baseline_options():
    report = hcall_report(where=["host=milan,naples", "mode=pv64"], baseline="after")
    assert report.baseline == "after" and report.columns == ["after", "before"]
    assert report.row_keys == ["host"]
    assert report.common == {"mode": "pv64"}
    with pytest.raises(Exception, match="'mode' takes several values"):
        hcall_report(rows=["host"])
    by_host = hcall_report(by="host", baseline="milan", rows=["mode", "variant"])
    assert by_host.columns == ["milan", "naples", "cflr"]
    assert len(by_host.comparisons) == 8


def test_column_determined_labels_describe_columns(tmp_path):
    base = os.path.join(DATA, "peers")
    sets = api.load([os.path.join(base, "go-old.txt"), os.path.join(base, "go-new.txt")])
    report = api.build(sets, metrics=["ns/op", "MB/s"])
    assert report.columns == ["go-old", "go-new"]
    assert report.column_labels == {"go-old": {"note": "before"}, "go-new": {"note": "after"}}
    assert report.row_keys == ["format", "metric"]
    assert [r.labels["metric"] for r in report.rows] == ["ns/op", "MB/s", "ns/op", "MB/s"]
    # MB/s: higher is better, so a faster candidate has a positive change
    mbs = [r.cells["go-new"].comparison for r in report.rows if r.labels["metric"] == "MB/s"]
    assert all(c.higher_is_better and c.delta_pct > 0 and c.verdict == "faster" for c in mbs)
    assert {s.metric for s in report.summaries} == {"ns/op", "MB/s"}


def test_duplicate_cells_are_pooled_as_runs_with_a_note(tmp_path):
    for name in ("a.1", "a.2", "b.1", "b.2"):
        src = "milan-hcall-pv64-before" if name.startswith("a") else "milan-hcall-pv64-after"
        shutil.copy(os.path.join(HCALL, src), tmp_path / name)
    paths = [str(tmp_path / n) for n in ("a.1", "a.2", "b.1", "b.2")]
    sets = api.load(paths, pattern="{variant}.{run}")
    # 'run' varies but is not in the (empty) rows: an error naming it
    with pytest.raises(Exception, match="'run'"):
        api.build(sets, rows=[])
    sets = api.load(paths, pattern="{variant}.{x}", labels=["x=same"])
    report = api.build(sets)
    cell = report.rows[0].cells["b"]
    assert len(cell.sample_set.runs) == 2 and cell.comparison.runs == [2, 2]
    assert any("pooled as separate runs" in t for t in report.footnotes)


# -- formats --------------------------------------------------------------------


def test_text_golden(in_hcall, capsys):
    status, out, err = run_cli(["--pattern", PATTERN, "--format", "text", *FILES], capsys)
    assert status == 0 and err == ""
    check_golden("hcall.txt", out)


def test_markdown_golden(in_hcall, capsys):
    status, out, _ = run_cli(["--pattern", PATTERN, "--format", "markdown", *FILES], capsys)
    assert status == 0
    check_golden("hcall.md", out)
    table = [l for l in out.splitlines() if l.startswith("|")]
    assert len(table) == 2 + 6 + 1
    assert all(l.count("|") - l.count("\\|") == table[0].count("|") for l in table)


def test_email_golden_and_width(in_hcall, capsys):
    status, out, _ = run_cli(["--pattern", PATTERN, "--format", "email", *FILES], capsys)
    assert status == 0
    check_golden("hcall.email", out)
    assert max(len(l) for l in out.splitlines()) <= 72 and "ministat" not in out  # one answer: the table
    _, out, _ = run_cli(["--pattern", PATTERN, "--format", "email", "--ministat", *FILES], capsys)
    summary = out.split("\n\n  $ ministat")[0]
    assert max(len(l) for l in summary.splitlines()) <= 72
    assert out.count("  $ ministat -A ") == 6
    assert "  $ ministat -A milan-hcall-pv64-{before,after}\n  x milan-hcall-pv64-before\n" in out


@pytest.mark.skipif(not shutil.which("ministat"), reason="ministat(1) is not installed")
def test_email_blocks_are_exactly_what_ministat_prints(in_hcall, capsys):
    _, out, _ = run_cli(["--pattern", PATTERN, "--format", "email", "--ministat", *FILES], capsys)
    blocks = out.split("\n\n  $ ")[1:]
    assert len(blocks) == 6
    for block in blocks:
        lines = block.rstrip("\n").split("\n")
        command = lines[0].split()
        assert command[:2] == ["ministat", "-A"]
        files = subprocess.run(
            ["bash", "-c", "echo " + command[2]], capture_output=True, text=True, check=True
        ).stdout.split()
        real = subprocess.run(["ministat", "-A", *files], capture_output=True, text=True, check=True).stdout
        mine = "\n".join(l[2:] for l in lines[1:] if not l.startswith("  ! ")) + "\n"  # less abstat's flag
        assert mine == real


def _corpus_cases(tmp_path_factory):
    root = tmp_path_factory.mktemp("corpus")
    with tarfile.open(os.path.join(HERE, "data", "ministat-conformance.tar.xz")) as tar:
        tar.extractall(root, filter="data") if hasattr(tarfile, "data_filter") else tar.extractall(root)
    base = root / "classic"
    cases = json.loads((base / "cases.json").read_text())
    chosen = []
    for case in cases:
        args = case["args"]
        files = [a for a in args if a.startswith("data/")]
        options = [a for a in args if not a.startswith("data/")]
        if case["rc"] != 0 or case["stdin"] is not None or len(files) != 2 or files[0] == files[1]:
            continue
        rest, ok, confidence = list(options), True, "95"
        while rest:
            opt = rest.pop(0)
            if opt == "-A":
                continue
            if opt == "-w":
                rest.pop(0)
            elif opt == "-c":
                confidence = rest.pop(0)
            elif opt == "-C" and rest[0] == "1":
                rest.pop(0)
            else:
                ok = False
                break
        if ok and "-A" in options:
            chosen.append((case, files, confidence))
    return base, chosen


def test_email_blocks_match_the_ministat_conformance_corpus(tmp_path_factory, monkeypatch, capsys):
    base, chosen = _corpus_cases(tmp_path_factory)
    assert len(chosen) >= 5
    monkeypatch.chdir(base)
    for case, files, confidence in chosen:
        status, out, err = run_cli(
            [
                "--format",
                "email",
                "--ministat",
                "-c",
                confidence,
                "--baseline",
                os.path.basename(files[0])[:-4],
                *files,
            ],
            capsys,
        )
        assert status == 0, (case["name"], err)
        block = out.split("\n\n  $ ")[1]
        mine = "\n".join(l[2:] for l in block.rstrip("\n").split("\n")[1:] if not l.startswith("  ! ")) + "\n"
        assert mine == case["stdout"], case["name"]


def test_json_golden(in_hcall, capsys):
    status, out, _ = run_cli(["--pattern", PATTERN, "--format", "json", *FILES], capsys)
    assert status == 0
    doc = json.loads(out)
    assert doc["schema"] == "abstat.report/1"
    assert [r["labels"] for r in doc["rows"]][:2] == [
        {"host": "milan", "mode": "pv64"},
        {"host": "milan", "mode": "pv32"},
    ]
    if UPDATE:
        check_golden("hcall.json", out)
    expected = json.loads(open(os.path.join(GOLDEN, "hcall.json")).read())
    assert _approx_tree(doc) == expected


def _approx_tree(value):
    if isinstance(value, dict):
        return {k: _approx_tree(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_approx_tree(v) for v in value]
    if isinstance(value, float):
        return pytest.approx(value, rel=1e-9, abs=1e-300)
    return value


def test_csv_golden(in_hcall, capsys):
    status, out, _ = run_cli(["--pattern", PATTERN, "--format", "csv", *FILES], capsys)
    assert status == 0
    rows = list(csv.DictReader(io.StringIO(out)))
    assert len(rows) == 12 + 1
    cells = [r for r in rows if r["kind"] == "cell" and r["column"] == "after"]
    assert len(cells) == 6 and all(r["baseline"] == "before" for r in cells)
    assert [r["kind"] for r in rows].count("geomean") == 1
    check_golden("hcall.csv", out)


def test_hyperfine_export_of_a_report(tmp_path, capsys):
    src = os.path.join(DATA, "peers", "hyperfine-params.json")
    out = tmp_path / "out.json"
    status, _, err = run_cli(["--format", "hyperfine", "-o", str(out), src], capsys)
    assert status == 0, err
    doc = json.loads(out.read_text())
    original = json.loads(open(src).read())
    assert [r["times"] for r in doc["results"]] == [r["times"] for r in original["results"]]
    assert [r["parameters"]["ms"] for r in doc["results"]] == ["5", "10"]
    check_golden("hyperfine-export.json", out.read_text())


def test_table_format_uses_rich_and_plain_when_piped(in_hcall, capsys):
    report = hcall_report()
    drawn = api.render(report, "table", color=True, width=120)
    assert "\x1b[" in drawn and "━" in drawn or "─" in drawn
    plain = api.render(report, "table", color=False, width=120)
    assert "\x1b[" not in plain and "milan" in plain
    status, out, _ = run_cli(["--pattern", PATTERN, *FILES], capsys)  # not a tty: text
    assert status == 0 and out.startswith("abstat report: variant, baseline before\n")


def test_rich_table_shows_markup_in_labels_as_typed(tmp_path):
    for variant in ("before", "after"):
        shutil.copy(os.path.join(HCALL, f"milan-hcall-pv64-{variant}"), tmp_path / f"[red]m-{variant}")
    sets = api.load(
        [str(tmp_path / f"[red]m-{v}") for v in ("before", "after")],
        pattern="{host}-{variant}",
        labels=["mode=[bold]pv64[/bold]"],
    )
    drawn = api.render(api.build(sets), "table", color=False, width=200)
    assert "host=[red]m, mode=[bold]pv64[/bold]" in drawn


def test_markdown_escapes_labels(tmp_path):
    for name in ("a|b<i>-before", "a|b<i>-after"):
        shutil.copy(os.path.join(HCALL, "milan-hcall-pv64-before"), tmp_path / name)
    sets = api.load(
        [str(tmp_path / "a|b<i>-before"), str(tmp_path / "a|b<i>-after")],
        pattern="{host}-{variant}",
        labels=["mode=x|y"],
    )
    report = api.build(sets, rows=["host"])
    text = api.render(report, "markdown")
    assert "a\\|b&lt;i&gt;" in text and "<i>" not in text


# -- errors ---------------------------------------------------------------------


def test_file_not_matching_the_pattern_is_one_line_exit_2(in_hcall, capsys):
    status, out, err = run_cli(["--pattern", "{host}-{variant}.txt", "milan-hcall-pv64-before"], capsys)
    assert status == 2 and out == ""
    assert err == (
        "abstat report: milan-hcall-pv64-before: file name does not match --pattern '{host}-{variant}.txt'\n"
    )


@pytest.mark.parametrize(
    "args, message",
    [
        (["--baseline", "nope"], "--baseline 'nope'"),
        (["--by", "colour"], "has no label 'colour'"),
        (["--rows", "nope"], "--rows: no sample set has a label 'nope'"),
        (["--where", "host"], "expected KEY=VALUE"),
        (["--where", "host=vax"], "no sample set matches"),
        (["--format", "email", "--ministat", "-c", "97"], "ministat -A blocks need a confidence"),
    ],
)
def test_usage_errors(in_hcall, capsys, args, message):
    status, out, err = run_cli(["--pattern", PATTERN, *args, *FILES], capsys)
    assert status == 2 and out == ""
    assert err.startswith("abstat report: ") and message in err and err.count("\n") == 1


def test_bad_sample_file_names_file_and_line(tmp_path, capsys):
    good = tmp_path / "before"
    good.write_text("1\n2\n3\n")
    bad = tmp_path / "after"
    bad.write_text("1\n2\nNaN\n")
    status, out, err = run_cli([str(good), str(bad)], capsys)
    assert status == 2 and out == ""
    assert err.startswith(f"abstat report: {bad}:3") and "Traceback" not in err


def test_store_missing_is_an_error(tmp_path, capsys):
    status, _, err = run_cli(["--store", str(tmp_path / "none.db")], capsys)
    assert status == 2 and "no such store" in err


@pytest.mark.skipif(not shutil.which("ministat"), reason="ministat(1) is not installed")
def test_email_says_why_a_block_is_missing_like_ministat_refuses(tmp_path, capsys):
    (tmp_path / "a-before").write_text("5\n")
    (tmp_path / "a-after").write_text("4\n5\n6\n")
    real = subprocess.run(
        ["ministat", "-A", str(tmp_path / "a-before"), str(tmp_path / "a-after")], capture_output=True, text=True
    )
    assert real.returncode != 0 and "at least 3" in real.stderr
    status, out, err = run_cli(
        [
            "--pattern",
            "{host}-{variant}",
            "--format",
            "email",
            "--ministat",
            str(tmp_path / "a-before"),
            str(tmp_path / "a-after"),
        ],
        capsys,
    )
    assert status == 0, err
    assert out.endswith("a-before has 1 data point; ministat needs at least 3)\n")
    assert "not compared" in out


def test_two_by_two_design_with_five_metrics(tmp_path):
    """Seed 003's layout: patch x base commit, five IPI benchmarks, from one CSV."""
    import random

    rng = random.Random(3)
    averages = {  # seed 003's averages (ns), with/without the patch, on the old base
        "Dry-run": (495181, 607657),
        "Self-IPI": (21549999, 21217644),
        "Normal IPI": (575433727, 735015570),
        "Broadcast IPI": (1700692010, 2173803373),
        "Broadcast lock": (1663001374, 2150451543),
    }
    lines = ["base,patch,benchmark,ns"]
    for base in ("with-4bd06060762b", "without-4bd06060762b"):
        for name, (with_patch, without_patch) in averages.items():
            for patch, mean in (("without", without_patch), ("with", with_patch)):
                for _ in range(12):
                    lines.append(f"{base},{patch},{name},{rng.gauss(mean, mean * 0.02):.0f}")
    path = tmp_path / "ipi.csv"
    path.write_text("\n".join(lines) + "\n")
    sets = api.load([str(path)])
    report = api.build(sets, by="patch", baseline="without", rows=["base", "benchmark"])
    assert report.columns == ["without", "with"]
    assert len(report.rows) == 10 and len(report.comparisons) == 10
    assert "over the table's 10 comparisons" in " ".join(report.footer())
    normal = [r for r in report.rows if r.labels["benchmark"] == "Normal IPI"][0]
    assert normal.cells["with"].comparison.delta_pct == pytest.approx(-21.7, abs=2.5)
    assert normal.cells["with"].significant
    text = api.render(report, "markdown")
    assert text.count("\n| with-4bd06060762b | ") == 5


def test_email_table_too_wide_for_72_columns_switches_to_one_line_per_cell():
    report = hcall_report(by="host", baseline="milan", rows=["mode", "variant"])
    assert max(len(l) for l in api.render(report, "text").splitlines()[:12]) > 72
    text = api.render(report, "email", ministat=True)
    summary = text.split("\n\n  $ ministat")[0]
    assert max(len(l) for l in summary.splitlines()) <= 72
    assert "mode=pv64 variant=before\n  milan   " in summary
    assert text.count("  $ ministat -A ") == 8


def test_unknown_json_is_named(tmp_path, capsys):
    path = tmp_path / "x.json"
    path.write_text('{"benchmarks_v2": []}\n')
    status, _, err = run_cli([str(path)], capsys)
    assert status == 2
    assert err == (
        f"abstat report: {path}: JSON in no format abstat knows (hyperfine, pyperf, Google "
        "Benchmark, pytest-benchmark, criterion, asv, BMF); choose one with --input-format\n"
    )


def test_verdicts_follow_the_holm_adjusted_significance():
    # Issue 9.4: a cell not significant after Holm (unadjusted p 0.031,
    # adjusted 0.251) still said "faster" in CSV, JSON and HTML.
    from abstat.report.adjust import adjust_p_values

    report = hcall_report(center="median")  # one of its cells is significant before Holm, not after
    cells = [c for r in report.rows for c in r.cells.values() if c.comparison is not None]
    raw = [c.comparison.p_value for c in cells]
    unadjusted_only = 0
    for cell, p_holm in zip(cells, adjust_p_values(raw, "holm")):
        assert cell.p_adjusted == pytest.approx(p_holm)
        assert cell.significant == (p_holm < 0.05) == cell.comparison.significant
        assert (cell.comparison.verdict in ("faster", "slower")) == cell.significant
        unadjusted_only += cell.comparison.p_value < 0.05 <= p_holm
    assert unadjusted_only >= 1  # the data hold such a cell: the test can fail


def test_a_table_without_a_comparison_says_so_and_names_no_test(tmp_path, capsys):
    # a newcomer's `abstat report --by variant ONE-FILE` read "the change of the auto ... over the table's 0
    # comparisons": a mode's name where an estimand belongs, and a test that was never made
    one = tmp_path / "one"
    one.write_text("440\n441\n439\n450\n")
    code, out, _ = run_cli(["--by", "variant", str(one)], capsys)
    assert code == 0
    footer = out.split("\n\n")[-1]
    assert footer.strip() == (
        "Cells: median of each sample set; no change is computed: no row has both the "
        "baseline variant=one and another variant."
    )
    code, out, _ = run_cli(["--by", "variant", "--format", "json", str(one)], capsys)
    assert code == 0 and "auto" not in json.loads(out)["footer"][0]


def test_an_email_footnote_longer_than_a_line_is_wrapped_whole():
    # a newcomer's e-mail read "[3] naples-pv64-before is on a grid of 5, naples-pv64-after on a grid...": the
    # finding cut where the text format has it whole
    from abstat.render.email import render_email
    from abstat.report.notes import Footnote

    report = hcall_report()
    head = (
        "naples-pv64-before is on a grid of 5, naples-pv64-after on a grid of 20 (different machines or clock ratios?)"
    )
    report.short_footnotes = [*report.short_footnotes, Footnote(head, subjects=[("naples/pv64", "before")]).short(68)]
    letter = render_email(report)
    assert all(len(line) <= 72 for line in letter.splitlines())
    number = len(report.short_footnotes)
    start = letter.index(f"[{number}] ")
    assert " ".join(letter[start:].split()) == f"[{number}] {head}"


@pytest.mark.parametrize("n, said", [(5, True), (8, False)])
def test_a_table_whose_cells_cannot_be_significant_says_so(tmp_path, capsys, n, said):
    # a newcomer's 5-run, 10-metric table had no star even at -21% [-23.5, -18.2], and said nothing: a rank
    # test's p-value is at least 2 / C(10, 5) = 0.0079 (scipy's comb below), and Holm over 10 needs 0.005
    from scipy.special import comb

    import numpy as np

    rng = np.random.default_rng(34)
    files = []
    for metric in range(10):
        for variant, shift in (("without", 0.0), ("with", 20.0)):
            path = tmp_path / f"{variant}-m{metric}"
            path.write_text("".join(f"{100 + shift + x:.4f}\n" for x in rng.normal(0, 1, n)))
            files.append(str(path))
    code, out, _ = run_cli(
        [
            "--by",
            "variant",
            "--baseline",
            "without",
            "--rows",
            "m",
            "--pattern",
            f"{tmp_path}/{{variant}}-{{m}}",
            *files,
        ],
        capsys,
    )
    assert code == 0
    floor = 2 / comb(2 * n, n)
    line = [x for x in out.splitlines() if x.startswith("No cell can be significant")]
    assert bool(line) == said == (10 * floor > 0.05)
    if said:
        assert f"the smallest p-value the rank test can give is {floor:.2g}" in line[0]
        assert "*" not in out.split("\n\n")[1]
    else:
        assert out.split("\n\n")[1].count("*") == 10  # a 20-sd change in every row, now significant
