"""One report, one story (attack18 L2, label34's leftovers): the HTML page says why a cell has no p-value
in the words the text footnote and the JSON give (a negative baseline: the relative change is undefined,
the difference is given), the e-mail says what its change computes as the other formats' captions do,
within 72 columns, and CSV's method column says ties were spread exactly where the caption does."""

from __future__ import annotations

import csv
import html
import io
import json
import re

import numpy as np
from scipy import stats

from abstat.cli import main as cli_main
from abstat.render import escape

SPREAD_CAPTION = "after spreading tied values over their grid cells"
SPREAD_METHOD = "tied values read as spread evenly over their grid cells"


def _write(path, values) -> str:
    path.write_text("".join(f"{float(v)!r}\n" for v in values))
    return str(path)


def _report(capsys, *args: str) -> str:
    assert cli_main(["report", *args]) == 0
    return capsys.readouterr().out


def test_negative_baseline_html_says_the_reason_the_other_formats_give(tmp_path, capsys):
    rng = np.random.default_rng(18)
    before, after = rng.normal(-10, 0.4, 20), rng.normal(-12, 0.4, 20)
    files = [_write(tmp_path / "neg-before.txt", before), _write(tmp_path / "neg-after.txt", after)]
    document = json.loads(_report(capsys, *files, "--format", "json"))
    (cell,) = [c for c in document["rows"][0]["cells"].values() if "comparison" in c]
    assert cell["comparison"]["p_value"] is None and cell["comparison"]["verdict"] == "cannot judge"
    (why,) = [m["message"] for m in cell["messages"] if m["code"] == "cannot-judge"]
    # the difference the reason gives is Welch's, as scipy computes it (4 significant digits printed)
    shown = re.search(r"relative change is undefined; the difference of the means is (\S+) \[(\S+), (\S+)\]", why)
    assert shown, why
    welch = stats.ttest_ind(after, before, equal_var=False)
    interval = welch.confidence_interval(0.95)
    expected = (after.mean() - before.mean(), interval.low, interval.high)
    assert np.allclose([float(x) for x in shown.groups()], expected, rtol=5e-4, atol=0)

    text = _report(capsys, *files)
    assert why in text
    assert escape.markdown(why) in _report(capsys, *files, "--format", "markdown")
    page = html.unescape(_report(capsys, *files, "--format", "html"))
    assert "nothing to tell the sides apart" not in page
    assert f"no p-value: {why}</p>" in page
    assert page.count(why) == 2  # the page's warnings and the cell's comparison line, not a third time


def _grid_and_smooth(tmp_path) -> list[str]:
    """Two hosts: one tied to a grid of 20 (its ties are spread), one untied."""
    rng = np.random.default_rng(34)
    files = []
    for host, tied in (("tied", True), ("smooth", False)):
        for variant, centre in (("before", 1000.0), ("after", 950.0)):
            values = rng.normal(centre, 30, 30)
            values = np.round(values / 20) * 20 if tied else values
            files.append(_write(tmp_path / f"{host}-{variant}", values))
    return files


def test_email_says_what_the_change_computes_as_the_captions_do(tmp_path, capsys):
    files = [*_grid_and_smooth(tmp_path), "--pattern", "{host}-{variant}"]
    document = json.loads(_report(capsys, *files, "--format", "json"))
    labels = {
        "/".join(row["labels"].values()): c["comparison"]["detail"]["estimand_label"]
        for row in document["rows"]
        for c in row["cells"].values()
        if "comparison" in c
    }
    assert labels == {
        "tied": f"Hodges-Lehmann ratio (median of the candidate/baseline ratios {SPREAD_CAPTION})",
        "smooth": "Hodges-Lehmann ratio (median of the candidate/baseline ratios)",
    }
    text = _report(capsys, *files)
    assert all(label in text for label in labels.values())
    email = _report(capsys, *files, "--format", "email")
    assert max(len(line) for line in email.splitlines()) <= 72
    said = " ".join(email.split())  # the wrapped lines joined again
    assert (
        f"Hodges-Lehmann ratio: median of the candidate/baseline ratios {SPREAD_CAPTION} (tied); "
        "median of the candidate/baseline ratios (smooth)." in said
    ), email
    one = _report(capsys, *files[:2], *files[4:], "--format", "email")  # the tied host alone: no cells named
    assert f"Hodges-Lehmann ratio: median of the candidate/baseline ratios {SPREAD_CAPTION}." in " ".join(one.split())


def test_csv_method_says_ties_were_spread_where_the_caption_does(tmp_path, capsys):
    files = [*_grid_and_smooth(tmp_path), "--pattern", "{host}-{variant}"]
    document = json.loads(_report(capsys, *files, "--format", "json"))
    captions = {
        row["labels"]["host"]: c["comparison"]["detail"]["estimand_label"]
        for row in document["rows"]
        for c in row["cells"].values()
        if "comparison" in c
    }
    written = csv.DictReader(io.StringIO(_report(capsys, *files, "--format", "csv")))
    rows = [r for r in written if r["kind"] == "cell" and r["method"]]
    assert sorted(r["host"] for r in rows) == ["smooth", "tied"]
    for row in rows:
        assert (SPREAD_METHOD in row["method"]) == (SPREAD_CAPTION in captions[row["host"]]), row
    assert any(SPREAD_METHOD in r["method"] for r in rows) and not all(SPREAD_METHOD in r["method"] for r in rows)
    # compare's CSV and JSON of the same pair agree too
    for host in ("tied", "smooth"):
        pair = [str(tmp_path / f"{host}-before"), str(tmp_path / f"{host}-after")]
        assert cli_main(["compare", *pair, "--format", "csv"]) == 0
        (row,) = csv.DictReader(io.StringIO(capsys.readouterr().out))
        assert cli_main(["compare", *pair, "--format", "json"]) == 0
        label = json.loads(capsys.readouterr().out)["comparisons"][0]["estimand_label"]
        assert (SPREAD_METHOD in row["method"]) == (SPREAD_CAPTION in label) == (host == "tied")
