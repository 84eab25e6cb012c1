"""Every format of ``compare`` states the verdict its family's adjustment gives, names the adjustment and gives
the adjusted p (attack20 A1, A10); no verdict word beside a change beyond the floating-point range (A13).

tests/data/compare_holm: attack20's seed-16 draws, N(100, 2) with hc1 1.3% slower: hc1's own p is 0.03, Holm's
over the three candidates 0.09."""

from __future__ import annotations

import csv
import io
import itertools
import json
import math
from pathlib import Path

from statsmodels.stats.multitest import multipletests

from support.cli import run_abstat
from support.paths import DATA

HOLM = [str(DATA / "compare_holm" / f"{name}.txt") for name in ("hb0", "hc1", "hc2", "hc3")]
# compare's CSV columns before wave 21, in their order: a consumer reading them by position still can
OLD_CSV = [
    *("baseline", "candidate", "n_baseline", "n_candidate", "unit", "center", "delta_pct", "ci_low_pct"),
    *("ci_high_pct", "confidence", "p_value", "significant", "verdict", "method", "warnings"),
]


def _compare(*args: str) -> str:
    return run_abstat("compare", *args, check=True).stdout


def _json(*inputs: str) -> list[dict]:
    return json.loads(_compare(*inputs, "--format", "json"))["comparisons"]


def test_the_family_is_a_discriminating_case():
    """statsmodels' Holm over the three p-values compare reports: hc1 below 5% alone, above it after Holm."""
    found = _json(*HOLM)
    raw = [c["p_value"] for c in found]
    reference = multipletests(raw, alpha=0.05, method="holm")[1]
    assert [c["p_adjusted"] for c in found] == list(reference) and {c["adjustment"] for c in found} == {"holm"}
    assert raw[0] < 0.05 < reference[0]
    assert [c["verdict"] for c in found] == ["no difference proven"] * 3


def test_github_and_gitlab_flag_what_the_verdicts_and_the_gate_say():
    verdicts = [c["verdict"] for c in _json(*HOLM)]
    github = _compare(*HOLM, "--format", "github")
    gitlab = json.loads(_compare(*HOLM, "--format", "gitlab"))
    gate = run_abstat("compare", *HOLM, "--fail-on", "slower")
    report = run_abstat("report", *HOLM, "--format", "github", check=True).stdout
    assert verdicts.count("slower") == 0 and gate.returncode == 0, gate.stderr
    assert "::error" not in github and "No regression proven" in github, github
    assert [i for i in gitlab if i["severity"] == "major"] == [], gitlab
    assert "::error" not in report
    # alone (a family of one: its own p), hc1 is slower, and both CI formats say so, with the p it follows
    alone = _json(*HOLM[:2])[0]
    assert alone["verdict"] == "slower" and alone["p_adjusted"] is None
    github = _compare(*HOLM[:2], "--format", "github")
    assert github.startswith("::error ") and f"; p {alone['p_value']:.2g}" in github.splitlines()[0], github
    assert [i["severity"] for i in json.loads(_compare(*HOLM[:2], "--format", "gitlab"))] == ["major"]


def test_markdown_and_csv_give_the_adjusted_p_and_name_holm():
    found = _json(*HOLM)
    markdown = _compare(*HOLM, "--format", "markdown")
    lines = markdown.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("| candidate"))
    rows = [line.split(" | ") for line in itertools.takewhile(lambda line: line.startswith("|"), lines[start + 2 :])]
    at = lines[start].split(" | ").index("p (Holm)")
    assert [row[at] for row in rows] == [f"{c['p_adjusted']:.2g}" for c in found], markdown
    assert "- p (Holm): adjusted over every comparison shown together; the verdicts follow it" in markdown
    table = list(csv.reader(io.StringIO(_compare(*HOLM, "--format", "csv"))))
    assert table[0] == [*OLD_CSV, "p_adjusted", "adjustment"]
    assert [float(row[-2]) for row in table[1:]] == [c["p_adjusted"] for c in found]
    assert {row[-1] for row in table[1:]} == {"holm"}
    # a family of one: no adjustment, said as nothing (no column in Markdown, empty cells in CSV)
    alone = list(csv.reader(io.StringIO(_compare(*HOLM[:2], "--format", "csv"))))
    assert alone[1][-2:] == ["", ""] and "p (Holm)" not in _compare(*HOLM[:2], "--format", "markdown")


def test_a_change_beyond_the_float_range_gets_no_verdict_word(tmp_path):
    """1..2 against ~1.1e308: the ratio's percent overflows a double (as Python's own arithmetic says), so no
    format may say "slower" beside a change it prints as n/a; 1..2 against ~1.1e300 still can."""
    low, high = str(DATA / "float_range" / "lo4.txt"), str(DATA / "float_range" / "hi.txt")
    assert math.isinf(1.1e308 / 1.5 * 100)
    found = _json(low, high)[0]
    assert found["delta_pct"] is None and found["verdict"] == "cannot judge" and not found["significant"]
    assert any("floating-point range" in w["message"] for w in found["warnings"] if w["code"] == "cannot-judge")
    for fmt in ("text", "markdown", "csv", "github"):
        text = _compare(low, high, "--format", fmt)
        assert "slower" not in text and "cannot judge" in text, (fmt, text)
    assert json.loads(_compare(low, high, "--format", "gitlab"))[0]["severity"] == "minor"
    finite = tmp_path / "finite.txt"
    finite.write_text("".join(f"{float(v) * 1e-8!r}\n" for v in Path(high).read_text().split()))
    assert _json(low, str(finite))[0]["verdict"] == "slower"


def test_show_prints_the_settings_an_invocation_has():
    """attack20 A14: a bisection's invocations store no runs, warm-up, order or seed: show said ``None``."""
    from abstat.render.show import invocation_lines

    def lines(settings: dict) -> list[str]:
        inv = {"id": 1, "started_at": "t0", "ended_at": "t1", "status": "complete", "labels": {}}
        inv |= {"settings": settings, "runs": [], "machine": {}, "notes": []}
        out = invocation_lines("e", "s.db", [inv], [])[3:]  # (after the head and the invocation's line)
        return list(itertools.takewhile(lambda line: not line.startswith("    host:"), out))

    bisect = {"good": "a" * 40, "bad": "b" * 40, "build": None, "run": "./bench", "metric": "v", "budget": 30}
    assert lines({"bisect": {**bisect, "confidence": 0.95}}) == ["    bisect: metric v, budget 30, confidence 0.95"]
    assert lines({"runs": 3, "warmup": 1, "order": "interleaved", "seed": 7}) == [
        "    runs 3 + 1 warm-up, order interleaved, seed 7"
    ]
    assert lines({"runs": 3, "seed": 7}) == ["    runs 3, seed 7"]
    assert lines({}) == []
