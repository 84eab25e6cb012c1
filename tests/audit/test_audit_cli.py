"""``abstat audit`` on the command line: output formats, JSON contract, exit statuses."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from support import paths
from support.cli import run_abstat

DATA = paths.DATA / "audit"
SEEDS = paths.DATA / "seeds"


def run(*args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess[str]:
    return run_abstat("audit", *args, stdin=stdin)


def test_consistent_seed_exits_0_with_a_human_report() -> None:
    result = run(str(DATA / "xen-hypercall-ministat.txt"))
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    first = result.stdout.splitlines()[0]
    assert "8 ministat report(s), 8 printed comparison(s): 8 consistent, 0 inconsistent" in first
    assert result.stdout.count("consistent -- classic dialect") == 8
    assert "Welch's t" in result.stdout


def test_json_contract() -> None:
    result = run("--format", "json", "--threshold", "5%", str(DATA / "xen-hypercall-ministat.txt"))
    assert result.returncode == 0
    data = json.loads(result.stdout)
    assert data["consistent"] is True and data["exit_status"] == 0 and data["threshold_pct"] == 5.0
    assert data["counts"]["printed_comparisons"] == 8
    assert len(data["blocks"]) == 8
    block = data["blocks"][0]
    assert block["line"] == 16 and block["kind"] == "ministat"
    assert [d["name"] for d in block["datasets"]] == ["milan-hcall-pv64-before", "milan-hcall-pv64-after"]
    assert block["datasets"][0] == {
        "symbol": "x",
        "name": "milan-hcall-pv64-before",
        "line": 19,
        "n": 98,
        "min": 420.0,
        "max": 460.0,
        "median": 440.0,
        "avg": 438.97959,
        "stddev": 6.6564899,
    }
    (comparison,) = block["comparisons"]
    assert comparison["consistent"] is True
    assert comparison["dialect"] == "classic"
    assert comparison["printed"] == {
        "line": 21,
        "confidence": 95.0,
        "verdict": "difference",
        "difference": -68.1633,
        "half_width": 2.81674,
        "percent": -15.5277,
        "percent_half_width": 0.641656,
        "pooled_s": 10.0598,
    }
    recomputed = comparison["recomputed"]
    assert recomputed["t"] == 1.96 and recomputed["df"] == 194
    assert "%g" % recomputed["difference"] == "-68.1633"
    assert "%g" % recomputed["percent_half_width"]["classic"] == "0.641656"
    assert "%g" % recomputed["percent_half_width"]["freebsd"] == "0.621212"
    codes = {f["code"] for f in comparison["findings"]}
    assert {"welch", "detectable_change", "samples_needed", "threshold_outside"} <= codes
    assert comparison["judgement"]["threshold_verdict"] == "outside"
    # Naples pv32 (-1.99%) lies within 5%.
    naples = data["blocks"][3]["comparisons"][0]
    assert naples["judgement"]["threshold_verdict"] == "inside"


def test_inconsistent_copy_exits_1(tmp_path: Path) -> None:
    text = (DATA / "xen-hypercall-ministat.txt").read_text().replace("-17.4306%", "-17.4316%")
    path = tmp_path / "mail.txt"
    path.write_text(text)
    result = run(str(path))
    assert result.returncode == 1
    assert "INCONSISTENT" in result.stdout
    assert "printed percent -17.4316" in result.stdout
    data = json.loads(run("--format", "json", str(path)).stdout)
    flagged = [c for b in data["blocks"] for c in b["comparisons"] if c["consistent"] is False]
    assert len(flagged) == 1 and flagged[0]["candidate"] == "naples-hcall-pv64-after"


def test_damaged_exits_1() -> None:
    result = run(str(DATA / "damaged.txt"))
    assert result.returncode == 1
    assert "DAMAGED" in result.stdout


def test_standard_input() -> None:
    result = run("-", stdin=(DATA / "quoted-reply.txt").read_bytes())
    assert result.returncode == 0
    assert result.stdout.startswith("<stdin>: 3 ministat report(s)")


def test_averages_only_exit_0_and_say_so() -> None:
    result = run(str(SEEDS / "002_a359c5e50bf6acc0.txt"))
    assert result.returncode == 0
    assert "cannot be judged" in result.stdout
    assert "collect instead" in result.stdout


@pytest.mark.parametrize(
    "content, message",
    [
        (None, "cannot open"),
        (b"\x7fELF\x02\x01\x01\x00\x00\x00", "binary data"),
        ("x  98 420\n".encode("utf-16"), "UTF-16"),
        (b"", "empty input"),
        (b"  \n\n", "empty input"),
    ],
)
def test_bad_input_exits_2_with_one_line(tmp_path: Path, content: bytes | None, message: str) -> None:
    path = tmp_path / "input.txt"
    if content is not None:
        path.write_bytes(content)
    result = run(str(path))
    assert result.returncode == 2
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1
    assert lines[0].startswith("abstat audit: ") and str(path) in lines[0] and message in lines[0]
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize("args", [["--threshold", "abc", "x"], ["--format", "xml", "x"], []])
def test_usage_errors_exit_2(args: list[str]) -> None:
    result = run(*args)
    assert result.returncode == 2
    assert len(result.stderr.splitlines()) == 1 and result.stderr.startswith("abstat audit: ")


def test_public_api_names() -> None:
    import abstat

    report = abstat.audit_text((DATA / "quoted-reply.txt").read_text())
    assert report.exit_status == 0
    assert abstat.audit_file(str(DATA / "damaged.txt")).exit_status == 1
    assert callable(abstat.plan)
