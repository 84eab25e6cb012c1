"""``abstat testbox``'s parts that need no QEMU: the initramfs archive (read back by the real
``cpio``), what a box may ask at shutdown, QEMU's command line, the lab's ssh hook, bad options."""

from __future__ import annotations

import io
import json
import os
import shutil
import stat
import subprocess
import sys

import pytest

from abstat.lab.testbox import paths
from abstat.lab.testbox.cpio import CpioWriter
from abstat.lab.testbox.qemu import Entry, Settings, argv, cmdline, parse_control
from support import paths as support_paths

TESTS = str(support_paths.TESTS)
SRC = os.path.join(os.path.dirname(TESTS), "src")


@pytest.mark.skipif(shutil.which("cpio") is None, reason="needs cpio(1) as the reference reader")
def test_cpio_archive_reads_back_with_the_real_cpio(tmp_path):
    out = io.BytesIO()
    archive = CpioWriter(out)
    archive.directory("bin")
    archive.device("dev/console", stat.S_IFCHR | 0o600, 5, 1)
    files = {"init": b"#!/bin/sh\necho hi\n", "bin/odd": b"x" * 4093, "empty": b""}
    for name, data in files.items():
        archive.file(name, data, 0o755)
    archive.close()
    listing = subprocess.run(["cpio", "-t", "-v", "--quiet"], input=out.getvalue(), capture_output=True, check=True)
    lines = listing.stdout.decode().splitlines()
    assert [line.split()[-1] for line in lines] == ["bin", "dev/console", "init", "bin/odd", "empty"]
    assert lines[1].startswith("crw-------") and "5," in lines[1]
    subprocess.run(
        ["cpio", "-i", "-d", "--quiet", "--no-absolute-filenames"],
        input=out.getvalue(),
        cwd=tmp_path,
        check=True,
        capture_output=True,
    )
    for name, data in files.items():
        assert (tmp_path / name).read_bytes() == data


def test_the_next_boot_is_what_the_box_chose_once_and_nothing_else():
    assert parse_control("") == ("reset", None)  # a panic, reboot -f: the default entry
    assert parse_control("action=poweroff\nend\n") == ("poweroff", None)
    chosen = parse_control("action=reboot\nkernel=default\nappend=pti=off mitigations=off\nend\n")
    assert chosen == ("reboot", Entry("default", "pti=off mitigations=off"))
    # a kernel the box was not started with, or a command line with control bytes: ignored
    assert parse_control("action=reboot\nkernel=/etc/passwd\nappend=a\x1bb\nend\n") == ("reboot", None)
    assert parse_control("action=reboot\nappend=" + "x" * 2000 + "\n") == ("reboot", None)
    # a later shutdown's lines replace an earlier one's
    assert parse_control("action=reboot\nappend=pti=on\naction=reboot\n") == ("reboot", None)


def _settings(name: str = "tb1") -> Settings:
    return Settings(
        name,
        "/img",
        "/img/vmlinuz",
        "/img/initrd.img",
        "/img/vmlinuz",
        "/img/initrd.img",
        cpu="Skylake-Server",
        smp=2,
        memory="2G",
        port=40022,
        append="isolcpus=1",
    )


def test_qemu_listens_on_loopback_only_and_boots_the_chosen_entry():
    command = argv(_settings(), "/boxes/a,b", Entry("default", "pti=on"))
    netdev = command[command.index("-netdev") + 1]
    assert netdev == "user,id=net0,restrict=on,hostfwd=tcp:127.0.0.1:40022-:22"
    assert (
        command[command.index("-append") + 1]
        == "console=ttyS0 quiet panic=1 cryptomgr.notests testbox.name=tb1 isolcpus=1 pti=on"
    )
    assert command[command.index("-drive") + 1].startswith("file=/boxes/a,,b/disk.qcow2,")  # commas doubled
    assert command[command.index("-cpu") + 1] == "Skylake-Server" and command[command.index("-smp") + 1] == "2"
    assert "-no-reboot" in command and command[command.index("-accel") + 1] == "tcg,thread=single"
    for accel, option in (("mttcg", "tcg,thread=multi"), ("kvm", "kvm")):  # as QEMU spells them
        settings = _settings()
        settings.accel = accel
        assert argv(settings, "/boxes/a,b", Entry())[command.index("-accel") + 1] == option
    assert cmdline(_settings(), Entry()) == "console=ttyS0 quiet panic=1 cryptomgr.notests testbox.name=tb1 isolcpus=1"


def test_an_icount_box_is_tcg_on_one_thread_whose_clock_counts_instructions():
    """``--accel icount``: QEMU's ``-icount shift=3,sleep=on`` (``sleep=on``: an idle guest's clock follows the host's;
    with ``sleep=off`` sshd dropped the host's connections during the key exchange), one TCG thread."""
    settings = _settings()
    settings.accel = "icount"
    command = argv(settings, "/boxes/a,b", Entry())
    assert command[command.index("-accel") + 1] == "tcg,thread=single"
    assert command[command.index("-icount") + 1] == "shift=3,sleep=on"
    assert "-icount" not in argv(_settings(), "/boxes/a,b", Entry())


def test_runs_on_a_box_whose_clock_counts_instructions_say_so(tmp_path, monkeypatch):
    """The machine record stored for a run on an icount box carries ``testbox_clock`` (read on this side from the
    box's record; the guest cannot know), and the run says so once; any other box, a real host, or a damaged or
    linked record: nothing."""
    from abstat.engine.hosts import _with_clock

    monkeypatch.setenv(paths.BOXES_ENV, str(tmp_path))
    (tmp_path / "tb1").mkdir()
    (tmp_path / "tb1" / "box.json").write_text(json.dumps({"accel": "icount"}))
    assert paths.clock_of("tb1") is None  # not up (no ssh configuration)
    (tmp_path / "tb1" / "ssh_config").write_text("Host tb1\n")
    assert paths.clock_of("tb1") == "instructions"
    assert _with_clock({"kernel": "6.1"}, "tb1") == {"kernel": "6.1", "testbox_clock": "instructions"}
    assert _with_clock({"kernel": "6.1"}, "root@tb1") == {"kernel": "6.1"}
    for record in (json.dumps({"accel": "tcg"}), "[1]", "{"):
        (tmp_path / "tb1" / "box.json").write_text(record)
        assert paths.clock_of("tb1") is None
    (tmp_path / "tb1" / "box.json").unlink()
    (tmp_path / "elsewhere.json").write_text(json.dumps({"accel": "icount"}))
    os.symlink(tmp_path / "elsewhere.json", tmp_path / "tb1" / "box.json")
    assert paths.clock_of("tb1") is None


def test_the_lab_reaches_a_box_only_when_it_is_one(tmp_path, monkeypatch):
    monkeypatch.setenv(paths.BOXES_ENV, str(tmp_path))
    (tmp_path / "tb1").mkdir()
    assert paths.ssh_options("tb1") == []  # no ssh_config: not up
    (tmp_path / "tb1" / "ssh_config").write_text("Host tb1\n")
    assert paths.ssh_options("tb1") == ["-F", str(tmp_path / "tb1" / "ssh_config")]
    for destination in ("root@tb1", "tb1.example", "../tb1", "-oProxyCommand=x", ""):
        assert paths.ssh_options(destination) == []
    os.symlink(tmp_path / "tb1" / "ssh_config", tmp_path / "tb1" / "link")
    (tmp_path / "tb2").mkdir()
    os.symlink(tmp_path / "tb1" / "ssh_config", tmp_path / "tb2" / "ssh_config")
    assert paths.ssh_options("tb2") == []  # a link is not followed
    from abstat.lab.ssh import SshHost

    host = SshHost("tb1", "tb1", str(tmp_path))
    assert host.command_argv("true")[1:3] == ["-F", str(tmp_path / "tb1" / "ssh_config")]
    assert "-F" not in SshHost("other", "other", str(tmp_path)).command_argv("true")


def test_the_lab_waits_for_a_box_to_announce_a_new_boot_only_when_its_image_announces(tmp_path, monkeypatch):
    """``paths.announced``: the last ``ready=`` line of the box's control port names a boot other than the one
    the lab saw before its reboot; None (ssh decides, as for any host) for a box of an image that does not
    write the line, for a destination that is no box of this user's, and for a box without a control log."""
    monkeypatch.setenv(paths.BOXES_ENV, str(tmp_path))
    image = tmp_path / "image"
    image.mkdir()
    box = tmp_path / "tb1"
    box.mkdir()
    (box / "ssh_config").write_text("Host tb1\n")
    (box / "box.json").write_text(json.dumps({"image": str(image)}))
    old, new = "0f3a57c6-1b0e-4b7e-9a59-a0a4c1e2d3f4", "8d2c1f00-5a6b-4c3d-8e9f-0123456789ab"
    (box / "control.log").write_text(f"ready={old} 9.41\naction=reboot\nend\n")
    assert paths.announced("tb1", old) is None  # an image without the ready line: only ssh can tell
    (image / paths.READY_MARK).write_text("")
    assert paths.announced("tb1", old) is False  # still the boot before the reboot
    assert paths.announced("tb1", None) is True
    (box / "control.log").write_text("")  # QEMU started again: nothing said yet
    assert paths.announced("tb1", None) is False
    # a kexec boot appends to the log: its last line counts, after far more than the bytes read back
    (box / "control.log").write_text(f"ready={old} 9.41\n" * 1000 + f"ready={new} 12.5\n")
    assert paths.announced("tb1", old) is True and paths.announced("tb1", new) is False
    assert paths.announced_boot("tb1") == new  # the lab takes it as the new boot's id (no ssh session for it)
    (box / "control.log").write_text(f"ready={new}\x1b[2J 1\nready=../../etc 2\n")  # not a boot id line
    assert paths.announced("tb1", old) is False
    assert paths.announced("root@tb1", old) is None and paths.announced("tb2", old) is None
    assert paths.announced_boot("tb1") == ""
    (box / "control.log").unlink()
    assert paths.announced("tb1", old) is None and paths.announced_boot("tb1") is None


def test_a_chosen_entry_that_did_not_come_up_is_said_and_not_booted_again(tmp_path, monkeypatch):
    """The supervisor notes a chosen entry (GRUB-like, not the default) whose boot ended in a reset before its sshd
    listened (a panic), after which the default entry boots; the lab reads it (``paths.fell_back``) while the box
    is still in that default boot: not after a kexec since (a second ready line), not for a box of an image that
    does not announce, nor for any other destination."""
    from abstat.lab.testbox.supervisor import _fell_back

    settings = Settings("tb1", "img", "k", "i", "k", "i")
    broken = Entry("default", "pti=on rdinit=/none")
    assert _fell_back(settings, broken, "") == cmdline(settings, broken)  # a panic: it said nothing
    assert _fell_back(settings, broken, "ready=0f3a57c6-1b0e-4b7e-9a59-a0a4c1e2d3f4 3.1\n") is None  # it came up
    assert _fell_back(settings, Entry(), "") is None  # the default entry itself: nothing to fall back from
    assert _fell_back(settings, broken, "action=reboot\nend\n") is None  # a reboot it asked for
    assert _fell_back(settings, broken, "action=reboot\nappend=pti=off\nend\n") is None
    monkeypatch.setenv(paths.BOXES_ENV, str(tmp_path))
    image, box = tmp_path / "image", tmp_path / "tb1"
    image.mkdir()
    box.mkdir()
    (image / paths.READY_MARK).write_text("")
    (box / "ssh_config").write_text("Host tb1\n")
    (box / "box.json").write_text(json.dumps({"image": str(image)}))
    old, new = "0f3a57c6-1b0e-4b7e-9a59-a0a4c1e2d3f4", "8d2c1f00-5a6b-4c3d-8e9f-0123456789ab"
    line = "console=ttyS0 testbox.name=tb1 pti=on rdinit=/none"
    (box / "state.json").write_text(json.dumps({"state": "running", "boots": 3, "fell_back": line}))
    (box / "control.log").write_text(f"ready={old} 8.0\n")
    assert paths.fell_back("tb1") == line
    assert paths.fell_back("root@tb1") is None and paths.fell_back("tb2") is None
    (box / "control.log").write_text(f"ready={old} 8.0\nready={new} 19.5\n")  # kexec'd since: another boot
    assert paths.fell_back("tb1") is None
    (box / "control.log").write_text(f"ready={old} 8.0\n")
    for state in ({"state": "running", "fell_back": None}, {"state": "running"}, {"fell_back": 3}, ["x"]):
        (box / "state.json").write_text(json.dumps(state))
        assert paths.fell_back("tb1") is None
    (box / "state.json").write_text(json.dumps({"state": "running", "fell_back": line}))
    (image / paths.READY_MARK).unlink()  # an image that does not announce: nothing known of its boots
    assert paths.fell_back("tb1") is None


def test_the_lab_is_told_at_once_when_a_box_is_down(tmp_path, monkeypatch):
    """A box whose supervisor ended with QEMU killed (lost), powered off or failed will not answer again by
    itself: the lab stops waiting; a box between two boots, or not a box, is waited for."""
    import json

    from abstat.lab.host import HostFailed, _raise_if_gone

    monkeypatch.setenv(paths.BOXES_ENV, str(tmp_path))
    box = tmp_path / "tb1"
    box.mkdir()
    (box / "ssh_config").write_text("Host tb1\n")
    for state, reason in (
        ("lost", "its QEMU was killed"),
        ("stopped", "it powered off"),
        ("failed", "its QEMU could not run"),
    ):
        (box / "state.json").write_text(json.dumps({"state": state, "boots": 3}))
        assert paths.gone("tb1") == f"the test box tb1 is down ({reason}; abstat testbox up tb1)"
        with pytest.raises(HostFailed, match=rf"^did not come back: the test box tb1 is down \({reason};"):
            _raise_if_gone("tb1", "did not come back")
    (box / "supervisor.pid").write_text("1\n")  # a supervisor (starting again): not down
    assert paths.gone("tb1") is None
    (box / "supervisor.pid").unlink()
    for text in ('{"state": "booting"}', '{"state": "running"}', "[]", "not json"):
        (box / "state.json").write_text(text)
        assert paths.gone("tb1") is None
    (box / "state.json").write_text('{"state": "lost"}')
    assert paths.gone("root@tb1") is None and paths.gone("tb2") is None  # not a box of this user's
    _raise_if_gone("tb2", "did not come back")


@pytest.mark.parametrize(
    "options, message",
    [
        (["up", "9bad"], "invalid test box name '9bad'"),
        (["up", "tb1", "--smp", "0"], "invalid --smp 0"),
        (["up", "tb1", "--memory", "lots"], "invalid --memory 'lots'"),
        (["up", "tb1", "--cpu", "max;reboot"], "invalid --cpu 'max;reboot'"),
        (["up", "tb1", "--accel", "tcg,tb-size=1"], "argument --accel: invalid choice"),
        (["up", "tb1", "--kernel", "/nonexistent/bzImage"], "--kernel /nonexistent/bzImage: no such file"),
        (["down", "nobox"], "no test box 'nobox'"),
    ],
)
def test_bad_input_is_one_line_and_status_2(tmp_path, options, message):
    env = {
        **os.environ,
        "PYTHONPATH": SRC,
        paths.BOXES_ENV: str(tmp_path / "boxes"),
        paths.ROOT_ENV: str(tmp_path / "cache"),
        "PATH": os.environ.get("PATH", "") or "/usr/bin:/bin",
    }
    done = subprocess.run(
        [sys.executable, "-m", "abstat", "testbox", *options], capture_output=True, text=True, env=env, timeout=120
    )
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.count("\n") == 1 and message in done.stderr, done.stderr
    assert not os.path.exists(tmp_path / "boxes" / "tb1")  # nothing made for a refused box


def test_list_without_boxes(tmp_path):
    env = {**os.environ, "PYTHONPATH": SRC, paths.BOXES_ENV: str(tmp_path)}
    done = subprocess.run(
        [sys.executable, "-m", "abstat", "testbox", "list"], capture_output=True, text=True, env=env, timeout=120
    )
    assert done.returncode == 0 and done.stdout == "no test boxes\n"


def test_a_kept_resolution_is_used_only_while_apt_state_is_unchanged(tmp_path):
    """The image's packages as apt-get resolved them are kept under a key of apt's state: a file of it that
    changes (an ``apt-get update`` rewrites a list), or another set of packages asked for, is another key;
    a kept answer that is not a list of safe names and versions is not used."""
    import re
    import time

    from abstat.lab.testbox import resolved

    lists = tmp_path / "lists"
    lists.mkdir()
    (lists / "deb.debian.org_Packages").write_text("Package: a\n")
    roots = (str(lists),)
    key = resolved.fingerprint(("a",), roots)
    assert resolved.fingerprint(("a",), roots) == key and resolved.fingerprint(("a", "b"), roots) != key
    cache = tmp_path / "cache"
    cache.mkdir()
    name, version = re.compile(r"[a-z0-9][a-z0-9+.-]*"), re.compile(r"[A-Za-z0-9.+~:-]+")
    assert resolved.load(str(cache), key, name, version) is None
    resolved.store(str(cache), key, [("a", "1.0-1"), ("linux-image-cloud-amd64", "6.1.1-1")])
    assert resolved.load(str(cache), key, name, version) == [("a", "1.0-1"), ("linux-image-cloud-amd64", "6.1.1-1")]
    later = time.time() + 5
    (lists / "deb.debian.org_Packages").write_text("Package: a\nVersion: 1.0-2\n")
    os.utime(lists / "deb.debian.org_Packages", (later, later))
    assert resolved.fingerprint(("a",), roots) != key  # the list changed: resolved again
    for kept in ({"key": key, "packages": [["a; rm -rf /", "1"]]}, {"key": key, "packages": "a"}, [key]):
        (cache / resolved.FILE).write_text(json.dumps(kept))
        assert resolved.load(str(cache), key, name, version) is None
    assert not [entry for entry in os.listdir(cache) if entry.startswith(".resolved-")]  # no temporary file left
