"""Stored sets share what they hold alike (``extra`` of one command, the empty record of a set read
without machine records): a history experiment's 10^5 revisions x metrics sets each held their own.
Nothing is changed in place: each set's exit codes (``--format hyperfine``) are its own, whatever
the sets beside it, and a later read starts from fresh objects."""

from __future__ import annotations

import pytest

from abstat.report.inputs import load_store

store_api = pytest.importorskip("abstat.store")

COMMANDS = {"a": "./a --fast", "b": "./b"}


def make_store(path: str) -> dict[tuple[str, str], list[float]]:
    """Two invocations (revisions) of variants a and b, metrics wall and cycles, one failed run of b;
    the values each (variant, metric) kept, in the order they ran."""
    kept: dict[tuple[str, str], list[float]] = {}
    with store_api.open_store(path) as store:
        for boot in range(2):
            inv = store.start_invocation(
                "nightly",
                {"hostname": "vm"},
                argv=["abstat", "run"],
                labels={"rev": f"r{boot}"},
                variants=list(COMMANDS),
            )
            for position, variant in enumerate(COMMANDS):
                for iteration in range(3):
                    failed = (variant, iteration, boot) == ("b", 1, 1)
                    wall = 0.5 + position + iteration / 10 + boot / 100
                    cycles = float(1000 * (position + 1) + 10 * iteration + boot)
                    store.add_run(
                        inv,
                        variant=variant,
                        command=COMMANDS[variant],
                        iteration=iteration,
                        position=position,
                        status="failed" if failed else "ok",
                        exit_code=3 if failed else 0,
                        started_at=0.0,
                        wall=wall,
                        values={} if failed else {"wall": [wall], "cycles": [cycles]},
                        units={"wall": "s"},
                    )
                    if not failed:
                        kept.setdefault((variant, "wall"), []).append(wall)
                        kept.setdefault((variant, "cycles"), []).append(cycles)
            store.finish_invocation(inv, "ok")
    return kept


def _key(sample_set) -> tuple[str, str]:
    return sample_set.labels["variant"], sample_set.labels["metric"]


def test_sets_share_their_commands_extra_and_their_empty_record(tmp_path) -> None:
    db = str(tmp_path / "s.db")
    make_store(db)
    sets = load_store(db, machines=False)
    assert len(sets) == 8  # 2 revisions x 2 variants x 2 metrics
    for sample_set in sets:
        assert sample_set.extra == {"command": COMMANDS[sample_set.labels["variant"]]}
        assert sample_set.machine == {}
    for variant in COMMANDS:
        assert len({id(s.extra) for s in sets if s.labels["variant"] == variant}) == 1
    assert len({id(s.machine) for s in sets}) == 1
    again = load_store(db, machines=False)  # a later read: the same content
    assert [s.extra for s in again] == [s.extra for s in sets]


def test_each_sets_exit_codes_are_its_own(tmp_path) -> None:
    db = str(tmp_path / "s.db")
    kept = make_store(db)
    shared = load_store(db, machines=False)  # read first, in the same process
    sets = load_store(db, exit_codes=True)
    by_key: dict[tuple[str, str], list] = {}
    for sample_set in sets:
        by_key.setdefault(_key(sample_set), []).append(sample_set)
    for (variant, metric), found in by_key.items():
        values = [v for s in found for run in s.runs for v in run]
        assert values == kept[(variant, metric)]
        for sample_set in found:
            extra = sample_set.extra
            assert extra["command"] == COMMANDS[variant]
            ran = [v for run in sample_set.runs for v in run]
            failed = variant == "b" and metric == "wall" and sample_set.labels["rev"] == "r1"
            # wall keeps the failed run's wall time and code, as hyperfine -i; other metrics only the ok runs
            assert extra["all_values"] == (sorted([*ran, 1.6 + 0.01]) if failed else ran)
            assert extra["exit_codes"] == ([0, 3, 0] if failed else [0] * len(ran))
    assert len({id(s.extra) for s in sets}) == len(sets)
    assert all(set(s.extra) == {"command"} for s in shared)  # the earlier sets untouched
