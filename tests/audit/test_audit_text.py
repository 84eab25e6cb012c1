"""Finding ministat reports in mail and Markdown; damaged reports; bare averages."""

from __future__ import annotations

import math

import pytest

from abstat.audit import audit_text
from abstat.audit.printed import printed
from support import paths

DATA = paths.DATA / "audit"
SEEDS = paths.DATA / "seeds"


def test_quoted_reply_with_tabs_and_two_quote_levels() -> None:
    report = audit_text((DATA / "quoted-reply.txt").read_text())
    blocks = [b for b in report.blocks if b.kind == "ministat"]
    assert [b.line for b in blocks] == [5, 18, 33]
    assert [b.command for b in blocks] == [
        "ministat -A milan-hcall-pv64-{before,after}",
        "ministat -A naples-hcall-pv32-{before,after}",
        "ministat -A skx-hcall-pv32-{before,after}",
    ]
    assert all(b.consistent is True and b.dialect == "classic" for b in blocks)
    assert blocks[1].datasets[1]["name"] == "naples-hcall-pv32-after"
    assert blocks[1].datasets[1]["avg"] == 1250.9368
    assert report.exit_status == 0


def test_markdown_with_plot_and_an_indented_n_report() -> None:
    report = audit_text((DATA / "markdown-report.md").read_text())
    plot, summary_only = report.blocks
    assert plot.line == 6 and plot.consistent is True
    assert summary_only.line == 28
    assert summary_only.consistent is None  # -n: nothing printed to check
    (comparison,) = summary_only.comparisons
    assert comparison.printed is None
    assert comparison.judgement is not None  # but re-judged from the vitals
    assert {f.code for f in comparison.findings} >= {"not_printed", "welch", "detectable_change"}
    assert report.exit_status == 0


def test_damaged_reports_are_reported_not_crashed() -> None:
    report = audit_text((DATA / "damaged.txt").read_text())
    blocks = report.blocks
    assert len(blocks) == 6
    cut_pooled, glued, cut_vitals, cut_inside, cut_percent, wrapped = blocks
    assert cut_pooled.damaged and cut_pooled.problems[0]["line"] == 11
    assert "pooled-s line" in cut_pooled.problems[0]["message"]
    # The intact lines of the damaged comparison were still checked.
    (comparison,) = cut_pooled.comparisons
    assert comparison.consistent is None
    assert {c.field for c in comparison.recomputation.checks} >= {"difference", "percent", "percent_half_width"}
    assert all(c.ok for c in comparison.recomputation.checks)
    assert glued.damaged and "glued" in glued.problems[0]["message"]
    assert cut_vitals.damaged and "cut short" in cut_vitals.problems[0]["message"]
    assert cut_inside.damaged and "shorter than the header" in cut_inside.problems[0]["message"]
    assert cut_percent.damaged
    assert not wrapped.damaged and wrapped.consistent is True
    assert wrapped.problems[0]["severity"] == "warning" and "rejoined" in wrapped.problems[0]["message"]
    assert report.exit_status == 1
    data = report.to_dict()
    assert data["counts"]["damaged_reports"] == 5


def test_every_truncation_of_a_report_is_survived() -> None:
    text = (DATA / "markdown-report.md").read_text()
    start = text.index("x before")
    end = text.index("```", start)
    block = text[start:end]
    for cut in range(1, len(block)):
        report = audit_text("Prose before.\n\n" + block[:cut] + "\n")
        for b in report.blocks:
            assert b.consistent in (True, False, None)
            for comparison in b.comparisons:
                # A cut may leave a shorter number that still parses: it is then
                # either damaged, inconsistent or (a dropped trailing zero) consistent.
                assert comparison.consistent in (True, False, None)
        report.to_dict()


def test_text_glued_after_the_last_line_of_a_report() -> None:
    text = (DATA / "markdown-report.md").read_text().replace("10.0598)", "10.0598)Cheers")
    report = audit_text(text)
    assert report.blocks[0].damaged
    assert report.exit_status == 1


def test_impossible_vitals_are_flagged() -> None:
    text = (DATA / "markdown-report.md").read_text()
    # Avg above Max.
    report = audit_text(text.replace("438.97959", "468.97959"))
    assert any(f.code == "implausible_vitals" for f in report.blocks[0].findings)
    assert report.exit_status == 1
    # A stddev larger than any sample with this range can have (range 40 -> at most 20.1).
    report = audit_text(text.replace("6.6564899", "26.564899"))
    assert any("largest possible" in f.message for f in report.blocks[0].findings)


def test_no_report_in_plain_prose() -> None:
    report = audit_text("x marks the spot\n+ and a bullet\n* another bullet\nNo numbers here.\n")
    assert report.blocks == []
    assert report.exit_status == 0


def test_averages_table_of_seed_002() -> None:
    report = audit_text((SEEDS / "002_a359c5e50bf6acc0.txt").read_text())
    (block,) = report.blocks
    assert block.kind == "averages"
    assert block.mention == "the average of 5 such builds"
    assert block.line == 36
    names = [d["name"] for d in block.datasets]
    assert names[:3] == ["Unpatched elapsed", "Unpatched user", "Unpatched system"]
    assert all(d["n"] == 5 and d["stddev"] is None for d in block.datasets)
    codes = [f.code for f in block.findings]
    assert codes == ["no_significance", "collect_instead"]
    assert "cannot be judged" in block.findings[0].message
    assert "individual results" in block.findings[1].message
    unlatched = [c for c in block.comparisons if c.candidate == "unlatched" and c.metric == "elapsed"][0]
    assert unlatched.baseline == "Unpatched"
    assert unlatched.consistent is None and unlatched.dialect is None
    assert unlatched.recomputed_values["percent"] == pytest.approx((63.39 - 66.51) / 66.51 * 100)
    assert report.exit_status == 0


def test_averages_noise_bound_matches_statsmodels() -> None:
    from statsmodels.stats.power import TTestIndPower

    report = audit_text((SEEDS / "002_a359c5e50bf6acc0.txt").read_text())
    unlatched = [c for c in report.blocks[0].comparisons if c.candidate == "unlatched" and c.metric == "elapsed"][0]
    effect = TTestIndPower().solve_power(effect_size=None, nobs1=5, alpha=0.05, power=0.8, ratio=1.0)
    bound = abs(63.39 - 66.51) / 66.51 * 100 / effect
    (note,) = [f for f in unlatched.findings if f.code == "noise_bound"]
    assert f"below {bound:.2g}% of the mean" in note.message


def test_averages_in_seed_003() -> None:
    report = audit_text((SEEDS / "003_afad3e43ed1fc47a.txt").read_text())
    five, hundred = report.blocks
    assert five.kind == hundred.kind == "averages"
    assert five.mention == "the average of 5 runs"
    assert [(d["name"], d["avg"], d["unit"]) for d in five.datasets] == [
        ("with path", 9931.0, "ns"),
        ("without patch", 11111.0, "ns"),
    ]
    (comparison,) = five.comparisons
    assert comparison.baseline == "without patch"  # named as the baseline
    assert hundred.mention == "the average of 100 runs"
    assert hundred.findings[0].code == "no_significance"


@pytest.mark.parametrize(
    "text, low, high",
    [
        ("420", 419.999995, 420.000005),
        ("438.97959", 438.979585, 438.979595),
        ("1000", 999.999995, 1000.00005),  # 999.999995.. rounds up to 1000
        ("-1e-07", -1.000000050e-07, -0.999999995e-07),
        ("0", 0.0, 0.0),
    ],
)
def test_printed_vitals_intervals(text: str, low: float, high: float) -> None:
    value = printed(text, 8)
    assert value.low == pytest.approx(low, rel=1e-15, abs=0)
    assert value.high == pytest.approx(high, rel=1e-15, abs=0)


def test_printed_interval_contains_what_prints_so() -> None:
    from hypothesis import given, settings
    from hypothesis import strategies as st

    @settings(max_examples=500, deadline=None)
    @given(
        st.floats(min_value=-1e12, max_value=1e12, allow_nan=False).filter(lambda x: x != 0), st.sampled_from([6, 8])
    )
    def check(x: float, digits: int) -> None:
        text = "%.*g" % (digits, x)
        value = printed(text, digits)
        assert value.low <= x <= value.high
        # and the interval is no wider than one unit in the last place
        assert value.high - value.low <= abs(float(text)) * 10.0 ** (1 - digits) * 1.0000001

    check()


def test_random_ministat_like_garbage_never_crashes() -> None:
    from hypothesis import given, settings
    from hypothesis import strategies as st

    pieces = [
        "x a",
        "+ b",
        "* c",
        "    N           Min           Max        Median           Avg        Stddev",
        "x   5 1 2 1.5 1.5 0.5",
        "+   5 2 3 2.5 2.5 0.5",
        "x  3 1 2",
        "+  4 0 0 0 0 0",
        "x   3 -nan nan 1 1 -nan",
        "*  12 1e308 1e308 1e308 1e308 1e308",
        "x   2 0 0 0 0 0",
        "Difference at 95.0% confidence",
        "Difference at 97.0% confidence",
        "\t-1 +/- 0.5",
        "\t-50% +/- 25%",
        "\t(Student's t, pooled s = 0.5)",
        "No difference proven at 95.0% confidence",
        "+-----+",
        "|x + |",
        "| A  |",
        "> ",
        ">>\t",
        "",
        "prose",
        "the average of 3 runs",
        "a: 1 2",
        "b: 3 4",
        "with: 5 ns",
        "without: 6 ns",
    ]

    @settings(max_examples=400, deadline=None)
    @given(st.lists(st.sampled_from(pieces), max_size=25), st.sampled_from(["", "> ", "\t", "> > "]))
    def check(lines: list[str], prefix: str) -> None:
        report = audit_text("\n".join(prefix + line for line in lines))
        report.to_dict()
        assert report.exit_status in (0, 1)

    check()


NAN_REPORT = """x data/a.txt
+ data/b.txt
    N           Min           Max        Median           Avg        Stddev
x  52     17.296055     17.296055     17.296055     17.296055 8.0124669e-07
+  51     11.050309     11.050309     11.050309     11.050309          -nan
Difference at 95.0% confidence
\t-6.24575 +/- 1.83273e-07
\t-36.1108% +/- 1.05962e-06%
\t(Student's t, pooled s = 4.74471e-07)
"""


def test_classic_nan_stddev_checks_what_it_can_and_names_the_dialect() -> None:
    # Classic ministat on constant data (conformance corpus case random_1_107):
    # its one-pass variance went negative, sqrt printed -nan, the comparison
    # went on with the negative variance.
    report = audit_text(NAN_REPORT)
    (block,) = report.blocks
    (comparison,) = block.comparisons
    assert comparison.consistent is True and comparison.dialect == "classic"
    checked = {c.field for c in comparison.recomputation.checks}
    assert checked == {"verdict", "difference", "percent"}
    data = comparison.to_dict()["recomputed"]
    assert data["half_width"] is None and data["percent_half_width"] == {"classic": None, "freebsd": None}
    # A wrong difference is still caught.
    assert audit_text(NAN_REPORT.replace("-6.24575", "-6.24585")).exit_status == 1


@pytest.mark.parametrize(
    "text,value",
    [
        ("-25.1e9993489", -math.inf),  # CI's hypothesis draw, session 13: decimal.InvalidOperation in scaleb
        ("7e400", math.inf),
        ("1e-9993489", 0.0),
        ("-3e-400", -0.0),
    ],
)
def test_printed_numbers_beyond_a_double_are_the_double_they_read_as(text: str, value: float) -> None:
    got = printed(text, 6)
    assert got.value == value == got.low == got.high and math.copysign(1, got.value) == math.copysign(1, value)
    assert float(text) == value  # Python's own reading of the text


def test_a_reply_quoting_a_mangled_exponent_is_audited_not_crashed() -> None:
    text = (
        ">\tx  98          1260          1470          1260     1276.2857     42.913483\n"
        ">\t+  95          1218          1470          1239     1250.9368     52.491298\n"
        ">\tDifference at 95.0% confidence\n"
        "> -25.1e9993489 +/- 13.5082\n"
        "> -1.98614% +/- 1.0584%\n"
        "> (Student's t, pooled s = 47.8673)\n"
    )
    header = ">\tx naples-before\n>\t+ naples-after\n>\tN           Min           Max        Median           Avg        Stddev\n"
    audit_text(header + text, source="mail")  # no exception: the line's number is judged, not crashed on
