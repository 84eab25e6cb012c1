"""The interleaved schedule is counterbalanced (a Williams design), checked by brute force: every
variant at every position of a block equally often (within one when the blocks are not a whole number
of designs), every ordered pair of variants adjacent equally often over whole designs; reproducible
from the seed; the order of an experiment stored before (version 1) replayed on a lab resume."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from abstat.box.runner.model import Command, VariantCommand
from abstat.box.runner.plan import ExperimentPlan
from abstat.engine.hosts import stored_schedule
from abstat.engine.parts import Host, Lab
from abstat.lab.config import block_slots, boot_order, boot_schedule, boot_slots
from abstat.box.runner.schedule import SCHEDULE_VERSION, build_schedule


def _blocks(names, runs, seed, warmup=0):
    slots = [s for s in build_schedule(names, runs, warmup=warmup, seed=seed) if not s.warmup]
    k = len(names)
    blocks = [slots[i * k : (i + 1) * k] for i in range(runs)]
    for index, block in enumerate(blocks):
        assert sorted(s.variant for s in block) == sorted(names) and {s.iteration for s in block} == {index}
    return [[s.variant for s in block] for block in blocks]


def _spread(counter, keys):
    values = [counter[key] for key in keys]
    return max(values) - min(values)


@pytest.mark.parametrize("k", [2, 3, 4, 5, 6])
def test_positions_and_carry_over_are_balanced_for_every_number_of_blocks(k):
    names = [f"v{i}" for i in range(k)]
    design = k if k % 2 == 0 else 2 * k  # rows of a Williams design: one square (k even), two (k odd)
    cells = [(name, p) for name in names for p in range(k)]
    pairs = [(a, b) for a in names for b in names if a != b]
    for runs in range(1, 41):
        for seed in (0, 1, 12345):
            blocks = _blocks(names, runs, seed)
            positions = Counter((name, p) for block in blocks for p, name in enumerate(block))
            follows = Counter((block[j], block[j + 1]) for block in blocks for j in range(k - 1))
            assert _spread(positions, cells) <= (0 if runs % k == 0 and runs % design == 0 else 1), (runs, seed)
            if runs % design == 0:  # whole designs: exact balance, carry-over included
                assert set(positions.values()) == {runs // k}
                assert set(follows.values()) == {runs * (k - 1) // (k * (k - 1))} and len(follows) == len(pairs)
            else:  # a partial design: within one at each position, near in carry-over
                assert _spread(follows, pairs) <= (1 if k % 2 == 0 else 2), (runs, seed)
            # every prefix of whole designs is balanced too (an interrupted run stays near balanced)
            done = (runs // design) * design
            head = Counter((name, p) for block in blocks[:done] for p, name in enumerate(block))
            assert not done or set(head[c] for c in cells) == {done // k}


def test_two_variants_lead_half_of_the_blocks_each():
    for runs in range(1, 41):
        for seed in range(20):
            firsts = Counter(block[0] for block in _blocks(["a", "b"], runs, seed, warmup=1))
            assert (
                sorted(firsts.values()) in ([runs // 2, runs - runs // 2], [runs])
                and abs(firsts["a"] - firsts["b"]) == runs % 2
            )


def test_the_schedule_is_seeded_and_random():
    names = ["a", "b", "c", "d"]
    assert build_schedule(names, 17, warmup=2, seed=9) == build_schedule(names, 17, warmup=2, seed=9)
    orders = {tuple(map(tuple, _blocks(names, 8, seed))) for seed in range(50)}
    assert len(orders) > 40  # rows dealt at random, variants assigned to the design at random
    firsts = {tuple(_blocks(names, 4, seed)[0]) for seed in range(200)}
    assert len(firsts) > 12  # the first block can be any of many orders, not one fixed rotation


def test_version_1_replays_the_per_block_shuffle_and_other_orders_are_unchanged():
    names = ["x", "y", "z"]
    rng = random.Random(77)
    expected = []
    for index, warm in [(i, True) for i in range(2)] + [(i, False) for i in range(5)]:
        block = list(names)
        rng.shuffle(block)
        expected += [(name, index, warm) for name in block]
    old = build_schedule(names, 5, warmup=2, seed=77, version=1)
    assert [(s.variant, s.iteration, s.warmup) for s in old] == expected
    for order in ("sequential", "random"):
        assert build_schedule(names, 9, warmup=1, order=order, seed=3) == build_schedule(
            names, 9, warmup=1, order=order, seed=3, version=1
        )
    with pytest.raises(ValueError, match="schedule version"):
        build_schedule(names, 1, version=7)


def test_boots_are_counterbalanced_and_a_version_1_plan_keeps_its_old_order():
    for boots in range(1, 13):
        order = boot_order(["before", "after"], boots, 5, "milan")
        firsts = Counter(order[i] for i in range(0, 2 * boots, 2))
        assert abs(firsts["before"] - firsts["after"]) == boots % 2
    rng = random.Random("boot-order:5:milan")
    old = []
    for _ in range(4):
        round_ = ["a", "b", "c"]
        rng.shuffle(round_)
        old += round_
    assert boot_order(["a", "b", "c"], 4, 5, "milan", 1) == old
    plan = ExperimentPlan(
        [VariantCommand(name, Command(text)) for name, text in (("a", "x"), ("b", "y"), ("c", "z"))],
        runs=3,
        warmup=1,
        order="interleaved",
        seed=5,
    )
    hosts = (Host("milan", "milan"),)
    lab = Lab(hosts, boot={"a": "k", "b": "k", "c": "k"}, boots=4)
    assert boot_schedule(plan, lab, "milan", 1) == old
    assert boot_slots(plan, lab, "milan", 2, 1) == block_slots([old[2]], 3, 1, "interleaved", "5:milan:2", 1)
    lab = Lab(hosts)
    assert boot_slots(plan, lab, "milan", 0, 1) == block_slots(["a", "b", "c"], 3, 1, "interleaved", "5:milan:0", 1)
    assert boot_slots(plan, lab, "milan", 0, 1) != block_slots(["a", "b", "c"], 3, 1, "interleaved", "5:milan:0", 2)


class _Store:
    def __init__(self, labs):
        self.labs = labs

    def invocations(self, experiment):
        return [{"settings": {"lab": lab}, "status": "complete"} for lab in self.labs]


def test_a_resume_replays_the_schedule_version_the_boots_were_stored_with():
    assert stored_schedule(_Store([{"seed": 5, "host": "m", "boot": 0}]), "e", 5) == 1  # stored before versions
    assert stored_schedule(_Store([{"seed": 5, "schedule": 2, "boot": 0}]), "e", 5) == 2
    assert stored_schedule(_Store([{"seed": 4, "boot": 0}]), "e", 5) == SCHEDULE_VERSION  # another seed's
    assert stored_schedule(_Store([]), "e", 5) == SCHEDULE_VERSION
