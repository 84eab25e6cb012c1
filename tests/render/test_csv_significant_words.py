"""``compare --format csv`` and ``report --format csv`` write a comparison's significance with the same words
(attack19 L4: compare's and show's CSV said ``yes``/``no`` where report's said ``true``/``false``)."""

from __future__ import annotations

import csv
import io

from support.cli import run_abstat


def _column(text: str, name: str) -> list[str]:
    rows = list(csv.DictReader(io.StringIO(text)))
    assert rows and name in rows[0], text
    return [row[name] for row in rows]


def test_compare_and_report_csv_say_significant_the_same_way(tmp_path):
    a, b, c = tmp_path / "a.txt", tmp_path / "b.txt", tmp_path / "c.txt"
    a.write_text("".join(f"{1000 + i % 7}\n" for i in range(30)))
    b.write_text("".join(f"{1100 + i % 7}\n" for i in range(30)))  # 10% slower: significant
    c.write_text("".join(f"{1000 + (i * 3) % 7}\n" for i in range(30)))  # the same values: not
    words = {}
    for other in (b, c):
        compared = run_abstat("compare", str(a), str(other), "--format", "csv", check=True).stdout
        reported = run_abstat("report", str(a), str(other), "--format", "csv", check=True).stdout
        # report's baseline row compares nothing: its cell is empty
        words[other.name] = (_column(compared, "significant"), [w for w in _column(reported, "significant") if w])
    assert words["b.txt"] == (["true"], ["true"]), words
    assert words["c.txt"] == (["false"], ["false"]), words


def test_a_file_name_that_is_not_utf8_shows_as_its_bytes_in_compare_and_report(tmp_path):
    """attack19 L3: compare showed b'b\\xff\\xfe.txt' as ``b\\udcff\\udcfe.txt``, report as ``b\\xff\\xfe``."""
    import os

    folder = os.fsencode(tmp_path)
    odd, plain = folder + b"/b\xff\xfe.txt", tmp_path / "a.txt"
    with open(odd, "wb") as handle:
        handle.write(b"".join(b"%d\n" % (1100 + i % 7) for i in range(20)))
    plain.write_text("".join(f"{1000 + i % 7}\n" for i in range(20)))
    for command in ("compare", "report"):
        shown = run_abstat(command, str(plain), os.fsdecode(odd), check=True).stdout
        assert "b\\xff\\xfe" in shown and "\\udc" not in shown and "\udcff" not in shown, (command, shown)
