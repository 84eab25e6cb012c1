"""Issue 36, item 5: ``publish`` never follows a link planted in its directory, and removes only pages
it wrote; its manifest is read bounded; two publishes at once both finish."""

from __future__ import annotations

import json
import os
import threading

import pytest

from abstat.errors import InputError
from abstat.render.site.site import MANIFEST, publish
from abstat.store import open_store


def _store(path: str, names: tuple[str, ...] = ("a",)) -> str:
    with open_store(path) as store:
        for name in names:
            invocation = store.start_invocation(name, {"hostname": "h"}, variants=["x"])
            for i in range(3):
                store.add_run(
                    invocation,
                    variant="x",
                    command="true",
                    iteration=i,
                    position=i,
                    status="ok",
                    exit_code=0,
                    started_at=1.0 + i,
                    wall=0.01,
                    values={"wall": [0.01 + i / 1000]},
                    units={"wall": "s"},
                )
            store.finish_invocation(invocation, "complete")
    return path


def test_a_link_planted_at_a_temporary_name_or_a_page_is_not_followed(tmp_path):
    store, site = _store(str(tmp_path / "s.db")), tmp_path / "site"
    site.mkdir()
    victim = tmp_path / "victim"
    victim.write_text("victim\n")
    for planted in ("index.html.tmp", "regressions.html", MANIFEST + ".tmp"):
        (site / planted).symlink_to(victim)
    publish(store, str(site))
    assert victim.read_text() == "victim\n"
    assert (site / "regressions.html").is_file() and not (site / "regressions.html").is_symlink()


def test_a_linked_experiments_directory_is_refused_and_nothing_outside_is_written_or_removed(tmp_path):
    store, site, outside = _store(str(tmp_path / "s.db")), tmp_path / "site", tmp_path / "outside"
    site.mkdir()
    outside.mkdir()
    (outside / "keep.html").write_text("keep\n")
    (site / "experiments").symlink_to(outside)
    forged = {"experiments": {"gone": {"fingerprint": "x", "entry": {}, "pages": ["experiments/keep.html"]}}}
    (site / MANIFEST).write_text(json.dumps(forged))
    with pytest.raises(InputError, match="publish follows no link"):
        publish(store, str(site))
    assert os.listdir(outside) == ["keep.html"] and (outside / "keep.html").read_text() == "keep\n"


def test_a_forged_manifest_removes_only_pages_of_the_site(tmp_path):
    store, site = _store(str(tmp_path / "s.db")), tmp_path / "site"
    publish(store, str(site))
    victim = tmp_path / "victim.html"
    victim.write_text("victim\n")
    (site / "series").mkdir()
    (site / "series" / "link.html").symlink_to(site / "index.html")
    (site / "experiments" / "notes.txt").write_text("mine\n")
    names = [
        str(victim),
        "../victim.html",
        "experiments/../../victim.html",
        "experiments/notes.txt",
        "series/link.html",
        "index.html",
    ]
    forged = {"experiments": {"gone": {"fingerprint": "x", "entry": {}, "pages": names}}}
    (site / MANIFEST).write_text(json.dumps(forged))
    done = publish(store, str(site))
    assert victim.read_text() == "victim\n" and (site / "experiments" / "notes.txt").exists()
    assert (site / "series" / "link.html").is_symlink() and (site / "index.html").is_file()
    assert done.removed == []


@pytest.mark.parametrize("hostile", ["fifo", "zero", "deep"])
def test_a_hostile_manifest_is_no_manifest(tmp_path, hostile):
    store, site = _store(str(tmp_path / "s.db")), tmp_path / "site"
    site.mkdir()
    if hostile == "fifo":
        os.mkfifo(site / MANIFEST)
    elif hostile == "zero":
        (site / MANIFEST).symlink_to("/dev/zero")
    else:
        (site / MANIFEST).write_text("[" * 100_000 + "]" * 100_000)
    result: list[object] = []
    worker = threading.Thread(target=lambda: result.append(publish(store, str(site))), daemon=True)
    worker.start()
    worker.join(120)
    assert result, "publish hung on the manifest"
    assert (site / "index.html").is_file()


def test_two_publishes_at_once_both_finish(tmp_path):
    store, site = _store(str(tmp_path / "s.db"), tuple(f"e{i}" for i in range(6))), tmp_path / "site"
    errors: list[BaseException] = []

    def one() -> None:
        try:
            for _ in range(3):
                publish(store, str(site), full=True)
        except BaseException as err:  # noqa: BLE001 - any failure is the finding
            errors.append(err)

    workers = [threading.Thread(target=one) for _ in range(2)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(300)
    assert errors == []
    assert not [name for name in os.listdir(site) if name.endswith(".tmp")]
