"""Scheduling, hooks and failure handling with the fake executor (deterministic)."""

from __future__ import annotations

from collections import Counter

import pytest

from abstat.box.runner import (
    Command,
    ExperimentPlan,
    FakeExecutor,
    Measurement,
    RunContext,
    VariantCommand,
    build_schedule,
    run_experiment,
)


def variants(*names: str) -> list[VariantCommand]:
    return [VariantCommand(name, Command(f"./bench-{name}")) for name in names]


def test_interleaved_blocks_hold_every_variant_once_in_shuffled_order():
    slots = build_schedule(["a", "b", "c"], 20, order="interleaved", seed=7)
    assert len(slots) == 60
    blocks = [slots[i : i + 3] for i in range(0, 60, 3)]
    orders = set()
    for index, block in enumerate(blocks):
        assert sorted(s.variant for s in block) == ["a", "b", "c"]
        assert {s.iteration for s in block} == {index}
        orders.add(tuple(s.variant for s in block))
    assert len(orders) > 1  # shuffled, not a fixed rotation


def test_schedule_is_reproducible_from_its_seed():
    first = build_schedule(["a", "b"], 10, warmup=2, seed=3)
    assert first == build_schedule(["a", "b"], 10, warmup=2, seed=3)
    assert any(build_schedule(["a", "b"], 10, warmup=2, seed=s) != first for s in range(4, 10))


def test_warmups_come_first_and_are_marked():
    slots = build_schedule(["a", "b"], 3, warmup=2, order="interleaved", seed=1)
    assert [s.warmup for s in slots] == [True] * 4 + [False] * 6


def test_sequential_runs_each_variant_in_turn():
    slots = build_schedule(["a", "b"], 3, warmup=1, order="sequential")
    assert [(s.variant, s.iteration, s.warmup) for s in slots] == [
        ("a", 0, True),
        ("a", 0, False),
        ("a", 1, False),
        ("a", 2, False),
        ("b", 0, True),
        ("b", 0, False),
        ("b", 1, False),
        ("b", 2, False),
    ]


def test_random_order_runs_every_variant_n_times_with_consecutive_iterations():
    slots = build_schedule(["a", "b", "c"], 15, order="random", seed=5)
    assert Counter(s.variant for s in slots) == {"a": 15, "b": 15, "c": 15}
    for name in "abc":
        assert [s.iteration for s in slots if s.variant == name] == list(range(15))
    # not interleaved blocks: some window of 3 lacks a variant
    assert any(len({s.variant for s in slots[i : i + 3]}) < 3 for i in range(0, 45, 3))


def test_unknown_order_is_refused():
    with pytest.raises(ValueError, match="unknown order"):
        build_schedule(["a"], 1, order="roundrobin")


def test_hooks_and_background_happen_in_order_around_runs():
    fake = FakeExecutor()
    plan = ExperimentPlan(
        variants=variants("a", "b"),
        runs=2,
        warmup=1,
        order="interleaved",
        seed=0,
        setup=Command("make"),
        cleanup=Command("make clean"),
        prepare=Command("sync"),
        conclude=Command("true"),
        background=[Command("load")],
    )
    reported = []
    outcome = run_experiment(plan, fake, on_result=reported.append)
    assert outcome.completed and outcome.error is None
    log = fake.log
    assert log[:2] == [("setup", "a", -1), ("setup", "b", -1)]
    assert log[2] == ("background-start", "load")
    assert log[-3:] == [("background-stop", "load"), ("cleanup", "a", -1), ("cleanup", "b", -1)]
    middle = log[3:-3]
    # every run is bracketed by prepare and conclude for the same variant and iteration
    assert len(middle) == 3 * 6
    for i in range(0, len(middle), 3):
        prepare, run, conclude = middle[i : i + 3]
        assert prepare[0] == "prepare" and run[0] == "run" and conclude[0] == "conclude"
        assert prepare[1:] == run[1:3] == conclude[1:]
    # warm-ups are run but not reported
    assert sum(1 for e in middle if e[0] == "run" and e[3]) == 2
    assert [(r.variant, r.iteration) for r in reported] == [(e[1], e[2]) for e in middle if e[0] == "run" and not e[3]]
    assert all(not r.warmup for r in outcome.results)


def test_sequential_order_brackets_each_variant_with_setup_and_cleanup():
    fake = FakeExecutor()
    plan = ExperimentPlan(
        variants=variants("a", "b"), runs=2, order="sequential", setup=Command("s"), cleanup=Command("c")
    )
    run_experiment(plan, fake)
    assert fake.log == [
        ("setup", "a", -1),
        ("run", "a", 0, False),
        ("run", "a", 1, False),
        ("cleanup", "a", -1),
        ("setup", "b", -1),
        ("run", "b", 0, False),
        ("run", "b", 1, False),
        ("cleanup", "b", -1),
    ]


def test_failing_prepare_hook_stops_with_a_clear_message_and_still_cleans_up():
    fake = FakeExecutor(failing_hooks={"prepare": "b"})
    plan = ExperimentPlan(
        variants=variants("a", "b"),
        runs=5,
        order="sequential",
        prepare=Command("make clean"),
        cleanup=Command("c"),
        background=[Command("load")],
    )
    outcome = run_experiment(plan, fake)
    assert outcome.error is not None
    assert "--prepare hook 'make clean' failed for variant 'b', run 1" in outcome.error
    assert "fake failure" in outcome.error
    assert not any(e[0] == "run" and e[1] == "b" for e in fake.log)
    assert ("background-stop", "load") in fake.log
    assert fake.log[-1] == ("cleanup", "b", -1)
    assert len(outcome.results) == 5  # variant a's runs are kept


def test_failing_setup_stops_before_any_run():
    fake = FakeExecutor(failing_hooks={"setup": "*"})
    plan = ExperimentPlan(variants=variants("a", "b"), runs=3, setup=Command("build"))
    outcome = run_experiment(plan, fake)
    assert outcome.error and "--setup hook 'build' failed for variant 'a'" in outcome.error
    assert not any(e[0] == "run" for e in fake.log)


def _failing_third_run(context: RunContext) -> float | Measurement:
    if context.variant == "b" and context.iteration == 2 and not context.warmup:
        return Measurement("failed", 3, 0.5, notes=["exit status 3"])
    return 1.0 if context.variant == "a" else 2.0


def test_a_failed_run_stops_the_experiment_and_is_recorded_as_failed():
    fake = FakeExecutor(_failing_third_run)
    plan = ExperimentPlan(variants=variants("a", "b"), runs=10, order="sequential")
    outcome = run_experiment(plan, fake)
    assert outcome.error is not None
    assert "run 3 of variant 'b' failed: exit status 3" in outcome.error
    assert "--ignore-failure" in outcome.error
    assert [r.ok for r in outcome.results if r.variant == "b"] == [True, True, False]


def test_ignore_failure_goes_on_and_keeps_failed_runs_apart():
    fake = FakeExecutor(_failing_third_run)
    plan = ExperimentPlan(variants=variants("a", "b"), runs=10, ignore_failure=True, seed=2)
    outcome = run_experiment(plan, fake)
    assert outcome.completed
    b_runs = [r for r in outcome.results if r.variant == "b"]
    assert len(b_runs) == 10 and sum(not r.ok for r in b_runs) == 1
    assert [r.measurement.values["wall"][0] for r in b_runs if r.ok] == [2.0] * 9


def test_ctrl_c_stops_cleanly_stopping_background_and_cleaning_up():
    def behaviour(context: RunContext) -> float:
        if context.iteration == 3:
            raise KeyboardInterrupt
        return 1.0

    fake = FakeExecutor(behaviour)
    plan = ExperimentPlan(variants=variants("a", "b"), runs=10, background=[Command("load")], cleanup=Command("c"))
    outcome = run_experiment(plan, fake)
    assert outcome.interrupted and outcome.error is None
    assert len(outcome.results) in (6, 7)  # three full blocks, maybe one run of the fourth
    assert ("background-stop", "load") in fake.log
    assert fake.log[-2:] == [("cleanup", "a", -1), ("cleanup", "b", -1)]


def test_runner_store_and_machine_use_the_standard_library_only():
    import subprocess
    import sys

    code = (
        "import sys, abstat.box.runner, abstat.box.runner.perf, abstat.store, abstat.box.machine\n"
        "third = sorted({m.split('.')[0] for m in sys.modules} - set(sys.stdlib_module_names) - {'abstat'})\n"
        "print(','.join(m for m in third if not m.startswith('_')))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == ""
