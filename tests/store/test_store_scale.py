"""The store at the size of a team's nightly history: what the linear readers
return is what the pairwise and row-by-row code returned (independent,
brute-force references here), and no reader re-reads per row or per pair."""

from __future__ import annotations

import itertools
import random

import pytest

from abstat.box.machine import differing_fields, differing_fields_between
from abstat.store import open_store

VULNERABILITIES = (
    {"mds": "Mitigation: Clear CPU buffers", "spectre_v2": "Mitigation: Retpolines"},
    {"mds": "Vulnerable", "spectre_v2": "Mitigation: Retpolines"},
    {"mds": "Vulnerable", "spectre_v2": "Vulnerable", "retbleed": "Not affected"},
    None,
    "unknown",
)


def _record(rng: random.Random) -> dict:
    record = {
        "hostname": rng.choice(["milan", "milan", "naples"]),
        "boot_id": f"boot-{rng.randrange(40)}",
        "cpu_model": "AMD EPYC",
        "microcode": rng.choice(["0xa0011d1", "0xa0011d1", "0xa0011d5"]),
        "cpus": rng.choice([64, 64, 64.0, 128]),
        "governor": rng.choice([None, "performance"]),
        "vulnerabilities": rng.choice(VULNERABILITIES),
        "loadavg": [rng.random()],
    }
    if rng.random() < 0.2:
        del record["governor"]  # missing: as None
    return record


def _pairwise(first: list, second: list) -> list[str]:
    """The union of differing_fields over every pair, mitigations merged into one entry."""
    names: list[str] = []
    changed: set[str] = set()
    for a, b in itertools.product(first, second):
        for name in differing_fields(a, b):
            if name.startswith("mitigations ("):
                changed.update(name[len("mitigations (") : -1].split(", "))
            elif name not in names:
                names.append(name)
    if changed:
        names.append(f"mitigations ({', '.join(sorted(changed))})")
    order = ["host", "boot", "CPU model", "microcode", "CPUs", "mitigations", "governor"]
    return sorted(names, key=lambda n: (order.index(n.split(" (")[0]), n != "mitigations"))


@pytest.mark.parametrize("seed", range(40))
def test_differing_fields_between_is_the_union_over_every_pair(seed: int) -> None:
    rng = random.Random(seed)
    first = [_record(rng) for _ in range(rng.randrange(0, 6))] + [{}] * rng.randrange(2)
    second = [_record(rng) for _ in range(rng.randrange(0, 6))]
    if rng.random() < 0.3:  # one configuration on both sides: nothing differs
        second = [dict(r, loadavg=[9.0]) for r in first]
    assert differing_fields_between(first, second) == _pairwise(first, second)


def test_differing_fields_between_is_linear_in_the_records() -> None:
    import time

    def cost(n: int) -> float:
        first = [{"hostname": "h", "boot_id": f"b{i}", "microcode": "1"} for i in range(n)]
        second = [{"hostname": "h", "boot_id": f"c{i}", "microcode": "1"} for i in range(n)]
        start = time.process_time()
        assert differing_fields_between(first, second) == ["boot"]
        return time.process_time() - start

    # 10^8 pairs at 10^4 records each: the pairwise loop took minutes, the distinct values take milliseconds
    assert cost(10_000) < 2.0


def _fill(path: str) -> list[int]:
    ids = []
    with open_store(path) as store:
        for night in range(4):
            labels = {"host": "milan"} if night % 2 else {}
            inv = store.start_invocation(
                "nightly", {"hostname": "milan", "boot_id": f"boot-{night // 2}"}, labels=labels, variants=["a", "b"]
            )
            ids.append(inv.id)
            for position in range(6):
                variant = "ab"[position % 2]
                command = "./a" if variant == "a" or night < 2 else "./b-new"
                notes = ["peak RSS not recorded"] if position % 3 == 0 else (["x", "y"] if position == 4 else [])
                store.add_run(
                    inv,
                    variant=variant,
                    command=command,
                    iteration=position // 2,
                    position=position,
                    status="ok" if position != 5 or night else "failed",
                    exit_code=0,
                    started_at=0.0,
                    wall=1.0,
                    values={"wall": [night + position / 10], "cycles": [1.0 * position, 2.0]},
                    notes=notes,
                )
            store.finish_invocation(inv, "complete")
    return ids


def test_readers_agree_with_a_row_by_row_reading(tmp_path) -> None:
    import json
    import sqlite3

    path = str(tmp_path / "s.db")
    ids = _fill(path)
    db = sqlite3.connect(path)
    rows = db.execute(
        "SELECT s.metric, v.name, r.invocation_id, s.value, r.notes, r.command, r.id FROM samples s"
        " JOIN runs r ON r.id = s.run_id JOIN variants v ON v.id = r.variant_id WHERE r.status = 'ok'"
        " ORDER BY s.metric, v.id, r.invocation_id, r.position, s.idx"
    ).fetchall()
    expected: dict = {}
    for metric, variant, invocation, value, *_ in rows:
        expected.setdefault(metric, {}).setdefault(variant, {}).setdefault(invocation, []).append(value)
    with open_store(path, create=False) as store:
        groups = store.groups_by_metric("nightly")
        assert groups == {m: {v: list(g.values()) for v, g in by.items()} for m, by in expected.items()}
        assert list(groups) == ["cycles", "wall"]
        chosen = store.groups_by_metric("nightly", invocations=ids[1:3])
        assert [len(g) for g in chosen["wall"].values()] == [2, 2]
        notes: dict[str, int] = {}
        for run_id, text in db.execute(
            "SELECT id, notes FROM runs WHERE status = 'ok' AND notes IS NOT NULL ORDER BY id"
        ):
            for note in json.loads(text):
                notes[note] = notes.get(note, 0) + 1
        assert store.run_notes("nightly") == [{"note": n, "runs": c} for n, c in notes.items()]
        assert store.variant_commands("nightly") == {"a": ["./a"], "b": ["./a", "./b-new"]}
        assert store.variant_commands("nightly", ids[:2]) == {"a": ["./a"], "b": ["./a"]}
        assert store.invocation_ids("nightly", {"host": "milan"}) == [ids[1], ids[3]]
        assert store.invocation_ids("nightly", {}) == [ids[0], ids[2]]
        records = store.machine_records_by_variant("nightly", invocations=ids[:2])
        assert [r["boot_id"] for r in records["a"]] == ["boot-0", "boot-0"]
        assert store.has_metric("nightly", "a", "cycles") and not store.has_metric("nightly", "a", "nope")


def test_long_lists_of_invocations_are_one_parameter(tmp_path) -> None:
    """SQLite refuses more than 32,766 parameters in a statement: a selection of
    10^5 invocations must still read (one JSON parameter)."""
    path = str(tmp_path / "s.db")
    ids = _fill(path)
    with open_store(path, create=False) as store:
        many = ids + list(range(10**6, 10**6 + 100_000))
        assert store.groups_by_metric("nightly", invocations=many) == store.groups_by_metric("nightly")
        assert store.run_notes("nightly", many) == store.run_notes("nightly")
        assert store.variant_commands("nightly", many) == store.variant_commands("nightly")


def test_the_end_of_run_report_pools_the_latest_invocations_and_says_so(tmp_path, monkeypatch) -> None:
    import json

    from abstat.render import run_report

    path = str(tmp_path / "s.db")
    with open_store(path) as store:
        for night in range(12):
            inv = store.start_invocation("nightly", {"hostname": "h", "boot_id": f"b{night}"}, variants=["a", "b"])
            for position in range(10):
                variant = "ab"[position % 2]
                store.add_run(
                    inv,
                    variant=variant,
                    command=f"./{variant}",
                    iteration=position // 2,
                    position=position,
                    status="ok",
                    exit_code=0,
                    started_at=0.0,
                    wall=1.0,
                    values={"wall": [1.0 + night + (0.1 if variant == "b" else 0.0) + position / 100]},
                )
            store.finish_invocation(inv, "complete")
    monkeypatch.setattr(run_report, "RECENT_RUNS", 35)
    with open_store(path, create=False) as store:
        ids = store.invocation_ids("nightly", {})
        assert run_report.recent_invocations(store, ids, budget=35) == ids[-3:]
        assert run_report.recent_invocations(store, ids, budget=5) == ids[-1:]  # at least the latest
        assert run_report.recent_invocations(store, ids, budget=10**6) == ids
        text = run_report.comparison_report(store, "nightly", labels={})
        assert "compared the latest 3 of the 12 invocations with these labels" in text
        assert "abstat show nightly compares every one" in text
        document = json.loads(run_report.comparison_report(store, "nightly", labels={}, fmt="json"))
        assert document["invocations"] == {"compared": 3, "stored": 12}
        whole = run_report.comparison_report(store, "nightly")  # abstat show: every invocation
        assert "compared the latest" not in whole
        # the window's comparison is the comparison of those invocations alone
        alone = run_report.comparison_report(store, "nightly", invocations=ids[-3:], fmt="json")
        document.pop("invocations")
        assert document == json.loads(alone)


def _history_store(path: str, revisions: int, seed: int = 3) -> list[int]:
    """A history experiment: one invocation per revision (labelled ``rev``), each its own machine
    record; from a third of the history on, each revision's first run runs another command."""
    rng = random.Random(seed)
    ids = []
    with open_store(path) as store:
        for index in range(revisions):
            record = {
                "hostname": "milan",
                "boot_id": f"boot-{index // 3}",
                "loadavg": [rng.random()],
                "doctor": {"load": {"evidence": f"load {rng.random():.2f}"}, "governor": {"ok": True}},
                "vulnerabilities": dict(VULNERABILITIES[0]),
            }
            inv = store.start_invocation("hist", record, labels={"rev": f"r{index:04d}"}, variants=["a"])
            ids.append(inv.id)
            for position in range(3):
                command = "./bench" if index < revisions // 3 or position else "./bench --new"
                store.add_run(
                    inv,
                    variant="a",
                    command=command,
                    iteration=position,
                    position=position,
                    status="ok",
                    exit_code=0,
                    started_at=0.0,
                    wall=1.0,
                    values={"wall": [rng.random()], "cycles": [float(rng.randrange(9))]},
                )
            store.finish_invocation(inv, "complete")
    return ids


def _commands_by_scan(rows: list, invocations: list | None) -> dict[str, list[str]]:
    """variant -> commands, first run first: the definition, by a scan of every row."""
    firsts: dict[tuple, int] = {}
    for invocation, variant_id, variant, command, run_id in rows:
        if invocations is None or invocation in invocations:
            key = (variant_id, variant, command)
            firsts[key] = min(firsts.get(key, run_id), run_id)
    found: dict[str, list[str]] = {}
    for (_, variant, command), _ in sorted(firsts.items(), key=lambda item: (item[0][0], item[1])):
        found.setdefault(variant, []).append(command)
    return found


@pytest.mark.parametrize("seed", range(20))
def test_command_rows_indexed_by_invocation_answer_as_a_scan_of_every_row(seed: int) -> None:
    from abstat.store.read_runs import CommandRows, commands_of

    rng = random.Random(seed)
    rows = [
        (rng.randrange(8), v, "ab"[v], rng.choice(["./x", "./y", "./z"]), rng.randrange(1000))
        for v in (0, 1)
        for _ in range(rng.randrange(0, 12))
    ]
    answers = CommandRows(rows)
    for invocations in (None, [], rng.sample(range(10), 3), [5, 5, 1], list(range(8))):
        expected = _commands_by_scan(rows, invocations)
        assert answers.variant_commands("e", invocations) == expected
        assert commands_of(rows, invocations) == expected


def test_a_history_experiment_reads_as_the_database_holds_it(tmp_path) -> None:
    import json
    import sqlite3

    from abstat.readers.sampleset import from_store_set
    from abstat.report.stored_runs import add_run_details

    path = str(tmp_path / "h.db")
    ids = _history_store(path, 12)
    texts = dict(sqlite3.connect(path).execute("SELECT id, machine FROM invocations").fetchall())
    with open_store(path, create=False) as store:
        sets = list(store.sample_sets({"experiment": "hist"}))
        bare = list(store.sample_sets({"experiment": "hist"}, machines=False))
        assert store.variant_commands("hist", ids[:2]) == {"a": ["./bench"]}
        assert store.variant_commands("hist", ids[4:6]) == {"a": ["./bench --new", "./bench"]}
    assert len(sets) == 24 and [s.labels for s in bare] == [s.labels for s in sets]
    assert all(s.machine == json.loads(texts[s.invocations[-1]]) for s in sets)  # each its own record
    assert all(s.machine == {} for s in bare)
    by_invocation = {s.invocations[-1]: s.machine for s in sets}
    assert by_invocation[ids[0]]["vulnerabilities"] is by_invocation[ids[5]]["vulnerabilities"]  # shared
    pairs = [(s, from_store_set(s)) for s in sets]
    add_run_details(path, pairs)
    differ = [s.labels["rev"] for s, mine in pairs if any("ran different commands" in n for n in mine.notes)]
    assert sorted(set(differ)) == [f"r{i:04d}" for i in range(4, 12)]  # the revisions that ran both commands


def test_shared_keeps_the_value_and_reuses_what_did_not_change() -> None:
    from abstat.store.read_runs import shared

    old = {"a": {"b": [1, 2], "c": "x"}, "d": 1, "e": [3]}
    new = {"a": {"b": [1, 2], "c": "y"}, "d": 1.0, "e": [3], "f": None}
    result = shared(new, old)
    assert result == new and result["a"]["b"] is old["a"]["b"] and result["e"] is old["e"]
    assert type(result["d"]) is float  # equal but not the same type: not replaced
    assert shared(old, None) is old and shared(dict(old), old) is old
