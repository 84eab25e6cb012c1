"""attack21 B7: with ``--threshold`` the text, Markdown and e-mail tables starred an equivalent cell (-0.8%
[-1.3, -0.3] inside ±2%) like a +9.6% regression and never named the threshold, while CSV, JSON and HTML
said "equivalent".  Every format's mark now follows the cell's verdict."""

from __future__ import annotations

import csv
import io

import numpy as np
from support.cli import run_abstat as abstat


def _files(tmp_path) -> list[str]:
    rng = np.random.default_rng(5)
    shapes = {"p": (100, 110), "s": (100, 99.2), "q": (100, 101.2)}  # proven, equivalent, inside but not proven
    names = []
    for bench, (base, new) in shapes.items():
        for variant, mean in (("base", base), ("new", new)):
            name = f"{bench}-{variant}.txt"
            np.savetxt(tmp_path / name, rng.normal(mean, 1, 15))
            names.append(name)
    return names


def _marks(text: str) -> dict[str, str]:
    rows = {}
    for line in text.splitlines():
        words = line.replace("|", " ").replace("\\", "").split()
        if words and words[0] in ("p", "s", "q"):
            rows[words[0]] = words[-1] if words[-1] in ("*", "~") else ""
    return rows


def test_every_format_marks_as_the_verdicts_say(tmp_path):
    files = _files(tmp_path)
    args = ("report", "--pattern", "{bench}-{variant}", "--threshold", "2", *files)
    table = abstat(*args, "--format", "csv", cwd=str(tmp_path))
    assert table.returncode == 0, table.stderr
    verdicts = {r["bench"]: r["verdict"] for r in csv.DictReader(io.StringIO(table.stdout)) if r["verdict"]}
    assert verdicts["p"] == "slower" and verdicts["s"] == "equivalent"
    expected = {b: {"slower": "*", "faster": "*", "equivalent": "~"}.get(v, "") for b, v in verdicts.items()}
    for fmt in ("text", "markdown", "email"):
        out = abstat(*args, "--format", fmt, cwd=str(tmp_path))
        assert out.returncode == 0, out.stderr
        assert _marks(out.stdout) == expected, (fmt, out.stdout)
        assert "threshold ±2%" in " ".join(out.stdout.split()), (fmt, out.stdout)
