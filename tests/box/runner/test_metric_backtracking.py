"""A ``--metric`` regex whose matching can take exponential time is refused when parsed (attack19 F9).

``^(a+)+$`` on a line of 34 ``a`` and a ``!`` keeps Python's backtracking matcher busy for hours, and the
box's runner matched it with nothing bounding the time (a stored one came back with ``run --resume``).  The
shape behind it is a repeat inside a repeat where nothing required separates the iterations: refused at
parse time from the command line and from a stored specification; patterns that need a separator are kept.
"""

from __future__ import annotations

import pytest

from abstat.box.runner import parse_metric_pattern
from abstat.box.runner.metrics import extract_regex_metrics
from abstat.box.runner.sources import RegexMetric

EXPONENTIAL = [
    r"x=^(a+)+$",
    r"x=(a*)*b",
    r"x=^(?:\w+\s?)+(\d)$",
    r"x=((\d+)*)!",
    r"x=(?:(a|b+))+c",
    r"x=(a+b?)+$",
]
KEPT = [
    r"ns=^ns ([0-9.]+)",
    r"x=^Self-IPI\s+\d+\s+(\d+)$:ns",
    r"x=((?:\d+\.)*\d+)",
    r"x=((?:\d+,)*\d+) ms",
    r"x=time: (\d+(?:\.\d+)?)",
    r"x=(\d{1,3}(?:,\d{3})*)",
    r"x=(a+)b",
]


@pytest.mark.parametrize("text", EXPONENTIAL)
def test_a_repeat_of_a_repeat_with_nothing_between_is_refused(text):
    with pytest.raises(ValueError, match="repeat inside a repeat"):
        parse_metric_pattern(text)
    name, _, pattern = text.partition("=")
    with pytest.raises(ValueError, match="repeat inside a repeat"):
        RegexMetric.from_json({"source": "regex", "name": name, "pattern": pattern, "unit": None})


@pytest.mark.parametrize("text", KEPT)
def test_patterns_with_a_separator_or_no_nesting_are_kept(text):
    parsed = parse_metric_pattern(text)
    name, _, pattern = text.partition("=")
    assert RegexMetric.from_json({"source": "regex", "name": name, "pattern": pattern, "unit": None}).name == name
    assert parsed.regex.groups >= 1


def test_kept_patterns_read_their_values_on_the_output_that_made_the_refused_ones_spin():
    output = "a" * 34 + "!\nv 12 ms\n"
    patterns = [parse_metric_pattern(r"x=((?:\d+\.)*\d+) ms"), parse_metric_pattern(r"y=^(a+)!$")]
    values, _ = extract_regex_metrics(output, patterns)
    assert values == {"x": [12.0]}
