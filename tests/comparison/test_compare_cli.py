"""``abstat compare`` end to end: inputs, formats, errors (one line, exit 2)."""

from __future__ import annotations

import csv
import io
import json

import numpy as np
import pytest

from abstat.cli import main


def run(args, capsys):
    rc = main(["compare", *args])
    out, err = capsys.readouterr()
    return rc, out, err


@pytest.fixture
def files(tmp_path):
    rng = np.random.default_rng(0)
    before = tmp_path / "before.txt"
    after = tmp_path / "after.txt"
    same = tmp_path / "same.txt"
    before.write_text("\n".join(f"{v:.3f}" for v in rng.normal(1000, 10, 60)) + "\n")
    after.write_text("# after the patch\r\n" + "\r\n".join(f"{v:.3f}" for v in rng.normal(950, 10, 60)) + "\r\n")
    same.write_text("\n".join(f"{v:.3f}" for v in rng.normal(1000, 10, 60)) + "\n")
    runs = tmp_path / "runs"
    runs.mkdir()
    for i in range(5):
        off = rng.normal(0, 0.01)
        (runs / f"before-{i}.txt").write_text("\n".join(map(str, rng.normal(1000 * (1 + off), 5, 20))))
        (runs / f"after-{i}.txt").write_text("\n".join(map(str, rng.normal(900 * (1 + off), 5, 20))))
    return tmp_path


def test_text_table(files, capsys):
    rc, out, err = run([str(files / "before.txt"), str(files / "after.txt")], capsys)
    assert rc == 0 and err == ""
    assert "faster" in out and "median CI" not in out  # terse by default (issue 10)
    rc, out, err = run(["--verbose", str(files / "before.txt"), str(files / "after.txt")], capsys)
    assert "faster" in out and "median CI" in out and "Hodges-Lehmann ratio" in out and "Brunner-Munzel" in out
    assert "\x1b[" not in out  # not a terminal: plain


def test_labels_json_contract(files, capsys):
    rc, out, _ = run(
        [
            "--format",
            "json",
            f"base={files / 'before.txt'}",
            f"new={files / 'after.txt'}",
            f"same={files / 'same.txt'}",
        ],
        capsys,
    )
    assert rc == 0
    doc = json.loads(out)
    assert doc["version"] == 2
    first, second = doc["comparisons"]
    assert (first["baseline"], first["candidate"]) == ("base", "new")
    assert second["candidate"] == "same"
    for key, kind in [
        ("baseline", str),
        ("candidate", str),
        ("n", list),
        ("center", str),
        ("delta_pct", float),
        ("ci_pct", list),
        ("p_value", float),
        ("significant", bool),
        ("verdict", str),
        ("method", str),
        ("warnings", list),
    ]:
        assert isinstance(first[key], kind), key
    assert first["verdict"] == "faster" and first["delta_pct"] < -4
    assert first["n"] == [60, 60] and first["unit"] == "samples"
    assert second["verdict"] in ("no difference proven", "faster", "slower")


def test_nested_glob(files, capsys):
    rc, out, _ = run(
        ["--format", "json", f"before={files}/runs/before-*.txt", f"after={files}/runs/after-*.txt"], capsys
    )
    assert rc == 0
    c = json.loads(out)["comparisons"][0]
    assert c["unit"] == "runs" and c["runs"] == [5, 5] and c["n"] == [100, 100]
    assert "runs are the independent unit" in c["method"]
    assert len(c["summaries"][0]["runs"]) == 5 and c["summaries"][0]["between_run_share"] is not None


def test_summaries_markdown(capsys):
    rc, out, _ = run(["--format", "markdown", "before=98:438.97959:6.6564899", "after=98:370.81633:12.57337"], capsys)
    assert rc == 0
    assert "| after | before | mean | -15.5% |" in out  # decimals as the interval supports (issue 10)
    assert "**warning:** summary statistics only" in out


def test_csv(files, capsys):
    rc, out, _ = run(
        ["--format", "csv", "--threshold", "1%", str(files / "before.txt"), str(files / "same.txt")], capsys
    )
    assert rc == 0
    rows = list(csv.DictReader(io.StringIO(out)))
    assert len(rows) == 1 and rows[0]["center"] == "auto"
    assert rows[0]["verdict"] in ("equivalent", "no difference proven")
    assert float(rows[0]["ci_low_pct"]) < float(rows[0]["ci_high_pct"])


def test_options_reach_the_analysis(files, capsys):
    rc, out, _ = run(
        [
            "--format",
            "json",
            "--center",
            "mean",
            "--confidence",
            "99",
            "--higher-is-better",
            "all",
            "--outliers",
            "tukey",
            "--seed",
            "7",
            str(files / "before.txt"),
            str(files / "after.txt"),
        ],
        capsys,
    )
    c = json.loads(out)["comparisons"][0]
    assert c["center"] == "mean" and c["confidence"] == 99.0 and c["higher_is_better"]
    assert c["verdict"] == "slower" and c["outliers"] == "tukey" and c["seed"] == 7
    assert any(n["code"] == "outliers-dropped" for n in c["notes"])


def test_column_and_delimiter(tmp_path, capsys):
    a = tmp_path / "a.csv"
    b = tmp_path / "b.csv"
    a.write_text("".join(f"{i};{100 + (i % 7)}\n" for i in range(30)))
    b.write_text("".join(f"{i};{110 + (i % 7)}\n" for i in range(30)))
    rc, out, _ = run(["--format", "json", "-C", "2", "-d", ";", str(a), str(b)], capsys)
    assert rc == 0
    c = json.loads(out)["comparisons"][0]
    assert c["summaries"][0]["median"] == 103.0 and c["verdict"] == "slower"


def test_stored_variant(monkeypatch, capsys):
    import abstat.store

    seen = {}

    def fake(ref, store_path, metric="wall", where=None):
        seen[ref] = (store_path, metric)
        seen["where"] = where
        factor = 1.0 if ref.endswith(":old") else 0.9
        return [[1000.0 * factor + i for i in range(10)] for _ in range(3)] if ref.startswith("exp:") else None

    monkeypatch.setattr(abstat.store, "resolve_variant", fake)
    rc, out, _ = run(["--format", "json", "--store", "x.db", "--metric", "cycles", "exp:old", "exp:new"], capsys)
    assert rc == 0 and seen["exp:old"] == ("x.db", "cycles") and not seen["where"]
    c = json.loads(out)["comparisons"][0]
    assert c["unit"] == "runs" and c["runs"] == [3, 3]


@pytest.mark.parametrize(
    "content,expected",
    [
        (b"1\n2\nabc\n4\n", ":3: "),
        (b"1\n2\nnan\n", ":3: "),
        (b"", "no samples"),
        (b"\x00\x01\x02binary", ""),
        ("1\n2\n3\n".encode("utf-16"), ""),
    ],
)
def test_bad_files_one_line_exit_2(tmp_path, capsys, content, expected, files):
    bad = tmp_path / "bad.txt"
    bad.write_bytes(content)
    rc, out, err = run([str(files / "before.txt"), str(bad)], capsys)
    assert rc == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith("abstat compare: ") and str(bad) in err
    assert expected in err
    assert "Traceback" not in err


@pytest.mark.parametrize(
    "args,needle",
    [
        (["missing.txt", "other.txt"], "missing.txt"),
        (["only.txt"], "at least two"),
        (["--confidence", "100", "a", "b"], "confidence"),
        (["--center", "mode", "a", "b"], "center"),
        (["--threshold", "x", "a", "b"], "percentage"),
        (["a=1:2:3", "b=5:1:1"], "n >= 2"),
        (["a=runs/none-*.txt", "b=5:1:1"], "no file matches"),
        (["a=5:1:1", "a=5:2:1"], "given twice"),
        (["a=5:1:-1", "b=5:2:1"], ""),
    ],
)
def test_usage_errors_one_line_exit_2(args, needle, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    rc, out, err = run(args, capsys)
    assert rc == 2 and out == ""
    assert err.count("\n") == 1 and needle in err


def test_help(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["compare", "--help"])
    assert exc.value.code == 0
    assert "--threshold" in capsys.readouterr().out
