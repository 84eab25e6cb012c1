"""The "(step)" mark and its footnote ("medians in grid steps: one step from agreeing with the change")
only when a median one grid step from the candidate's would agree with the change: inside its interval
and not moving against it.  Integer medians several steps apart that move against the change are said
as the JSON says it ("against the change": shapes differ), not as one step from agreeing (newcomer22's
item 6: ``ivcsw 95 -> 86 +2% [-20, +71]`` was footnoted "one step from agreeing")."""

from __future__ import annotations

import json

import pytest

from abstat.comparison.centres import within_step
from abstat.readers.sampleset import SampleSet
from abstat.report import api


def _report(before: list[int], after: list[int]) -> tuple[dict, str]:
    sets = [
        SampleSet(labels={"variant": name}, runs=[[float(v) for v in values]], source=f"{name}.txt")
        for name, values in (("before", before), ("after", after))
    ]
    report = api.build(sets)
    return json.loads(api.render(report, "json"))["rows"][0]["cells"], api.render(report, "text")


def test_medians_six_steps_against_the_change_are_not_one_step_from_agreeing():
    cells, text = _report([83, 84, 99, 99, 99, 106], [88, 90, 93, 115, 131, 134])
    assert (cells["before"]["center"], cells["after"]["center"]) == (99, 93)  # 6 steps of 1 down
    comparison = cells["after"]["comparison"]
    assert comparison["delta_pct"] > 0  # ... while the change is up
    (message,) = [m for m in cells["after"]["messages"] if m["code"].startswith("medians-")]
    assert "against the change" in message["message"]
    assert message["code"] == "medians-disagree"
    assert "one step from agreeing" not in text and "(step)" not in text
    assert "the medians do not move as the change" in text


@pytest.mark.parametrize(
    "before, after, step, ci_pct, delta_pct, one_step",
    [
        (499, 501, 2, (-1.2, 0.8), -0.2, True),  # one step down is no move: agrees
        (499, 501, 1, (-1.2, 0.8), -0.2, False),  # two steps up against a decrease
        (95, 86, 1, (-20.0, 71.0), 2.0, False),  # newcomer22's ivcsw: 9 steps against the change
        (100, 96, 1, (-3.0, 5.0), 1.0, False),  # outside the interval and against the change
        (100, 96, 1, (-3.0, 5.0), -1.0, True),  # one step to 97: inside, in the change's direction
        (100, 110, 5, (1.0, 4.0), 2.0, False),  # two steps beyond the interval
    ],
)
def test_within_step_is_one_step_from_agreeing(before, after, step, ci_pct, delta_pct, one_step):
    assert within_step(before, after, step, ci_pct, delta_pct) == one_step
