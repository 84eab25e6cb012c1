"""One experiment representation from the spec to the box: the engine's :class:`ExperimentPlan` of a spec
(what a local run runs) survives its JSON form, which is what the runner on a test box gets; a request
without the newer keys still reads as before (the runner's defaults)."""

from __future__ import annotations

import json

import pytest

from abstat.box.runner.model import Command, VariantCommand
from abstat.box.runner.plan import ExperimentPlan
from abstat.box.runner.schedule import build_schedule
from abstat.box.runner.sources import JsonLines, Kmsg, Monitor, Perf, RegexMetric, Trace
from abstat.engine.parts import Hooks, Sequential, Variant
from abstat.engine.session import experiment_plan
from abstat.engine.spec import ExperimentSpec


def _spec(**changes):
    base = dict(
        variants=(Variant("before", "./bench {size} old"), Variant("after", "./bench {size} new")),
        runs=7,
        warmup=2,
        order="random",
        seed=99,
        shell=True,
        timeout=12.5,
        on_failure="continue",
        hooks=Hooks(setup="make", prepare="echo {size} > /tmp/x", conclude="sync"),
        background=("stress-ng -c 1",),
        metrics=(
            RegexMetric.parse("ops=([0-9]+):op/s"),
            JsonLines(),
            Perf(("cycles", "instructions")),
            Kmsg((RegexMetric.parse("lat=([0-9]+):us"),)),
            Trace.parse(["do_sys_open"]),
            Monitor(("interrupts",)),
        ),
        cpus=(1, 3),
        isolate=True,
        parameters={"size": ("4096", "65536")},
    )
    base.update(changes)
    return ExperimentSpec(**base)


def test_a_spec_plan_survives_its_json_form():
    plan = experiment_plan(_spec())
    document = json.loads(json.dumps(plan.to_json()))  # as it crosses ssh
    assert ExperimentPlan.from_json(document) == plan
    assert ExperimentPlan.from_json(document).schedule() == plan.schedule()


def test_the_json_form_holds_the_spec_with_its_grid_expanded():
    """The request's fields against the spec's, written out by hand."""
    document = experiment_plan(_spec()).to_json()
    assert document["variants"] == {
        "before [size=4096]": "./bench 4096 old",
        "after [size=4096]": "./bench 4096 new",
        "before [size=65536]": "./bench 65536 old",
        "after [size=65536]": "./bench 65536 new",
    }
    assert (document["runs"], document["warmup"], document["order"], document["seed"]) == (7, 2, "random", 99)
    assert (document["shell"], document["timeout"], document["ignore_failure"]) == (True, 12.5, True)
    assert document["hooks"] == {"setup": "make", "prepare": "echo {size} > /tmp/x", "conclude": "sync"}
    assert document["variant_hooks"]["after [size=65536]"] == {
        "setup": "make",
        "prepare": "echo 65536 > /tmp/x",
        "conclude": "sync",
    }
    assert document["background"] == ["stress-ng -c 1"]
    assert [source["source"] for source in document["sources"]] == [
        "regex",
        "json-lines",
        "perf",
        "kmsg",
        "trace",
        "monitor",
    ]
    assert (document["cpus"], document["isolate"], document["decide"]) == ([1, 3], True, False)
    decided = experiment_plan(_spec(parameters={}, hooks=Hooks(), sequential=Sequential(), order="interleaved"))
    assert decided.to_json()["decide"] is True and decided.to_json()["variant_hooks"] == {}


def test_the_local_run_and_the_box_schedule_the_same_runs():
    plan = experiment_plan(_spec(parameters={}, hooks=Hooks(), variants=(Variant("a", "x"), Variant("b", "y"))))
    expected = build_schedule(["a", "b"], 7, warmup=2, order="random", seed=99)
    assert plan.schedule() == expected
    assert ExperimentPlan.from_json(json.loads(json.dumps(plan.to_json()))).schedule() == expected


def test_a_request_of_variants_and_slots_alone_reads_with_the_runner_defaults():
    plan = ExperimentPlan.from_json({"variants": {"a": "true"}, "slots": [["a", 0, False, 0]]})
    assert plan.variants == [VariantCommand("a", Command("true"))]
    assert plan.sources == [JsonLines()]  # on unless json_lines is false
    assert (plan.cpus, plan.isolate, plan.decide, plan.shell, plan.hooks()) == ((), False, False, False, {})
    older = ExperimentPlan.from_json({"variants": {"a": "true"}, "metrics": ["n=([0-9]+)"], "json_lines": False})
    assert older.sources == [RegexMetric.parse("n=([0-9]+)")]


@pytest.mark.parametrize(
    ("body", "said"),
    [
        ({"variants": {"a": "x"}, "cpus": "0-3"}, "the plan's cpus must be a list of CPU numbers"),
        ({"variants": {"a": "x"}, "sources": [{"source": "nope"}]}, "unknown metric source 'nope'"),
    ],
)
def test_a_bad_request_is_one_value_error(body, said):
    with pytest.raises(ValueError, match=said):
        ExperimentPlan.from_json(body)


def test_commands_with_and_without_a_shell_have_no_json_form():
    plan = ExperimentPlan([VariantCommand("a", Command("x", shell=True))], runs=1, background=[Command("load")])
    with pytest.raises(ValueError, match="all with a shell or all without"):
        plan.to_json()
