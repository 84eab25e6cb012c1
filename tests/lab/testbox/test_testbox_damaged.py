"""attack17 #5: a box whose record is damaged (``state.json`` with ``"boots": "many"`` or ``[1]``, a ``box.json``
with ``"cpu": {...}`` or ``"port": "22"``) stopped ``abstat testbox list`` with ``internal error: ValueError`` or
``TypeError`` (exit 2), naming no file and listing no other box; ``down`` of a box that is a symbolic link was
refused as a "write error" naming no path.  Now the healthy boxes are listed, each damaged one as ``damaged``
with the file and the field; ``info`` of a damaged box is one error naming the file; ``down`` names the link.
No QEMU: the records are written by hand as ``Settings.save`` writes them."""

from __future__ import annotations

import json
import os

import pytest

from abstat.lab.testbox import box, paths

from abstat.lab.testbox.qemu import Settings
from support.cli import run_abstat as abstat

GOOD = {
    "name": "x",
    "image": "i",
    "kernel": "k",
    "initrd": "r",
    "debian_kernel": "d",
    "debian_initrd": "e",
    "port": 40022,
    "cpu": "max",
    "smp": 2,
    "memory": "1G",
    "accel": "tcg",
}
DAMAGED = {  # box name: (box.json changes, state.json, the file and the words the listing must name)
    "tb2": ({"cpu": {"a": 1}}, None, ("box.json", "'cpu' is not a string")),
    "tb3": ({"port": "22"}, None, ("box.json", "'port' is not a whole number")),
    "tb4": ({}, {"state": "lost", "boots": "many"}, ("state.json", "'boots' is not a count ('many')")),
    "tb5": ({}, {"boots": [1]}, ("state.json", "'boots' is not a count ([1])")),
    "tb6": ({"smp": True}, None, ("box.json", "'smp' is not a whole number")),
    # an accelerator QEMU's -accel would read as options of its own (session 20: passed through to QEMU)
    "tb8": ({"accel": "tcg,tb-size=1"}, None, ("box.json", "'accel' is not one of tcg, mttcg, icount, kvm")),
}


def _box(root, name, changes, state):
    directory = root / name
    directory.mkdir(mode=0o700)
    (directory / "box.json").write_text(json.dumps({**GOOD, "name": name, **changes}))
    if state is not None:
        (directory / "state.json").write_text(json.dumps(state))


@pytest.fixture
def boxes(tmp_path, monkeypatch):
    root = tmp_path / "boxes"
    root.mkdir()
    monkeypatch.setenv(paths.BOXES_ENV, str(root))
    _box(root, "tb1", {}, {"state": "lost", "boots": 3})
    for name, (changes, state, _) in DAMAGED.items():
        _box(root, name, changes, state)
    return root


def test_list_shows_the_healthy_boxes_and_names_each_damaged_record(boxes):
    done = abstat("testbox", "list", extra_env={paths.BOXES_ENV: str(boxes)})
    assert done.returncode == 2 and "internal error" not in done.stderr and "Traceback" not in done.stderr
    assert sorted(line.split()[5].strip("':") for line in done.stderr.splitlines()) == sorted(DAMAGED)
    assert all(line.startswith("abstat testbox: damaged test box '") for line in done.stderr.splitlines())
    rows = {line.split()[0]: line for line in done.stdout.splitlines()[1:]}
    assert sorted(rows) == ["tb1", *DAMAGED]
    assert rows["tb1"].split()[:5] == ["tb1", "lost", "40022", "tcg", "max"] and rows["tb1"].split()[7] == "3"
    for name, (_, _, (file, words)) in DAMAGED.items():
        assert rows[name].split()[1] == "damaged"
        assert f"{boxes / name / file}: {words}" in rows[name]
    listed = json.loads(abstat("testbox", "list", "--format", "json", extra_env={paths.BOXES_ENV: str(boxes)}).stdout)
    assert {item["name"]: item["state"] for item in listed} == {"tb1": "lost", **dict.fromkeys(DAMAGED, "damaged")}
    assert all(isinstance(item["port"], int) and isinstance(item["cpu"], str) for item in listed)


@pytest.mark.parametrize("name", sorted(DAMAGED))
def test_a_damaged_box_is_one_error_naming_its_file(boxes, name):
    file, words = DAMAGED[name][2]
    with pytest.raises(box.DamagedBox) as caught:
        box.info(name)
    assert str(caught.value) == f"damaged test box {name!r}: {boxes / name / file}: {words}"
    assert "\n" not in str(caught.value)


def test_settings_load_reads_back_what_save_wrote_and_names_a_bad_file(tmp_path):
    settings = Settings(**GOOD)
    settings.save(str(tmp_path))
    assert Settings.load(str(tmp_path)) == settings
    (tmp_path / "box.json").write_text("[1, 2]")
    with pytest.raises(ValueError, match=f"^{tmp_path / 'box.json'}: not a box record"):
        Settings.load(str(tmp_path))
    (tmp_path / "box.json").write_text(json.dumps({key: v for key, v in GOOD.items() if key != "image"}))
    with pytest.raises(ValueError, match="no 'image'"):
        Settings.load(str(tmp_path))


def test_down_refuses_a_symbolic_link_naming_it(boxes, tmp_path):
    target = tmp_path / "victim"
    target.mkdir()
    (target / "keep").write_text("data")
    os.symlink(target, boxes / "tb7")
    done = abstat("testbox", "down", "tb7", extra_env={paths.BOXES_ENV: str(boxes)})
    assert done.returncode == 2 and done.stdout == ""
    assert (
        done.stderr == f"abstat testbox: {boxes / 'tb7'} is a symbolic link, not a test box's directory: not removed\n"
    )
    assert (target / "keep").read_text() == "data" and os.path.islink(boxes / "tb7")


def test_a_record_that_is_a_device_link_or_too_large_is_named_not_read(boxes):
    """A box's records are read as untrusted: box.json linked to /dev/zero (read to the end before, without
    bound) and a state.json beyond the size limit are each one error naming the file."""
    (boxes / "tb2" / "box.json").unlink()
    os.symlink("/dev/zero", boxes / "tb2" / "box.json")
    (boxes / "tb4" / "state.json").write_text(" " * (paths.MAX_RECORD_BYTES + 1) + "{}")
    done = abstat("testbox", "list", extra_env={paths.BOXES_ENV: str(boxes)}, timeout=60)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    rows = {line.split()[0]: line for line in done.stdout.splitlines()[1:]}
    assert rows["tb2"].split()[1] == rows["tb4"].split()[1] == "damaged"
    assert f"{boxes / 'tb4' / 'state.json'}: larger than {paths.MAX_RECORD_BYTES} bytes" in rows["tb4"]
    with pytest.raises(box.DamagedBox, match="box.json"):
        box.info("tb2")
