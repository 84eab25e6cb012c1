"""``abstat import JOURNAL`` reads the journal line by line and stops at the first bad run (attack19 F4).

It read the whole file, split it and parsed every line before checking the first run: a journal of a valid
header and 100 MB of bad runs took 1.4 GB before the error naming line 2.  Now the memory a bad journal takes is
that of a line, measured with tracemalloc against the journal's size; and the runs of a good one still all go in.
"""

from __future__ import annotations

import tracemalloc

import pytest

from abstat.errors import InputError
from abstat.store import journal, open_store
from support.store_runs import journal_run

MACHINE = {"hostname": "h", "boot_id": "b"}


def _write(path, running, *lines: bytes) -> None:
    """A journal of ``running``'s header, run 0, then ``lines`` as they are."""
    with open(path, "wb") as handle:
        handle.write(journal.header(running.uid, running.experiment))
        handle.write(journal.run_line(journal_run(0)))
        handle.writelines(lines)


def test_a_bad_run_is_found_at_its_line_with_the_memory_of_a_line(tmp_path):
    store_path = str(tmp_path / "s.db")
    path = tmp_path / "j.jsonl"
    bad = b'{"uid":"u","a":[1,2,3,4,5,6,7,8,9,0,1,2,3,4,5,6,7,8,9,0]}\n'
    with open_store(store_path) as store:
        running = store.start_invocation("e", MACHINE, variants=["a"])
        with open(path, "wb") as handle:
            handle.write(journal.header(running.uid, running.experiment))
            handle.write(journal.run_line(journal_run(0)))
            handle.write(bad * ((8 << 20) // len(bad)))  # 8 MiB of runs with unknown fields
        tracemalloc.start()
        try:
            with pytest.raises(InputError, match=r"j.jsonl:3: not a run of the journal"):
                journal.replay(str(path), store)
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        assert store.db.execute("SELECT COUNT(*) FROM runs").fetchone()[0] == 0  # nothing added
    assert peak < (1 << 20), peak  # the journal is 8 MiB; reading it all took ~14 times that


def test_a_good_journal_with_a_damaged_line_and_a_cut_last_line_still_goes_in(tmp_path):
    store_path = str(tmp_path / "s.db")
    path = tmp_path / "j.jsonl"
    with open_store(store_path) as store:
        running = store.start_invocation("e", MACHINE, variants=["a"])
        _write(
            path,
            running,
            b"{not json\n",
            journal.run_line(journal_run(1)) * 2,  # the same run twice: added once
            journal.run_line(journal_run(2))[:-5],  # cut by a crash
        )
        assert journal.replay(str(path), store) == (2, 1, [3])
        assert store.db.execute("SELECT COUNT(*) FROM runs").fetchone()[0] == 2


def test_an_overlong_line_is_damaged_and_never_held_whole(tmp_path, monkeypatch):
    """A line longer than a run can be (journal.MAX_LINE_BYTES, lowered here to 1 MiB) is one damaged line,
    skipped a chunk at a time: the runs around it go in, and the memory taken is far below the line's size
    (it was read whole, up to the journal's 1 GiB cap, before being found damaged)."""
    monkeypatch.setattr(journal, "MAX_LINE_BYTES", 1 << 20)
    store_path = str(tmp_path / "s.db")
    path = tmp_path / "j.jsonl"
    with open_store(store_path) as store:
        running = store.start_invocation("e", MACHINE, variants=["a"])
        _write(
            path,
            running,
            b'{"uid":"' + b"x" * (24 << 20) + b'"}\n',  # 24 MiB in one line
            journal.run_line(journal_run(1)),
            b"y" * (8 << 20),  # and an overlong last line without its newline
        )
        tracemalloc.start()
        try:
            assert journal.replay(str(path), store) == (2, 0, [3])
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        assert store.db.execute("SELECT COUNT(*) FROM runs").fetchone()[0] == 2
    assert peak < (8 << 20), peak  # a few times the cap; the line is 24 MiB


def test_a_line_of_many_small_objects_is_damaged_without_being_parsed(tmp_path, monkeypatch):
    """attack20 A8: a 30 MB line of ``{},`` took 780 MB when parsed (26 times its size); a run holds a few
    containers and strings per metric, so a line with more than journal.MAX_ITEMS (lowered here) is damaged
    and never parsed.  A run line of many numbers is still read."""
    monkeypatch.setattr(journal, "MAX_ITEMS", 10_000)
    many = journal_run(2)
    many["values"] = {"t": [float(i) for i in range(200_000)]}  # 200,000 numbers: a few items
    peaks = []
    for name, bad in (("objects", b'{"uid":"u","x":[' + b"{}," * 1_000_000 + b"{}]}\n"), ("numbers", b"")):
        path = tmp_path / f"{name}.jsonl"
        with open_store(str(tmp_path / f"{name}.db")) as store:
            running = store.start_invocation("e", MACHINE, variants=["a"])
            _write(path, running, bad or journal.run_line(many))
            tracemalloc.start()
            try:
                replayed = journal.replay(str(path), store)
                peaks.append(tracemalloc.get_traced_memory()[1])
            finally:
                tracemalloc.stop()
            samples = store.db.execute("SELECT COUNT(*) FROM samples").fetchone()[0]
        if name == "objects":
            assert replayed == (1, 0, [3]) and peaks[0] < (8 << 20), (replayed, peaks)  # 3 MB line; parsed: ~75 MB
        else:
            assert replayed == (2, 0, []) and samples > 200_000, replayed
