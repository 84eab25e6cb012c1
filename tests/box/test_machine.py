"""The machine record: parsing /proc and /sys, missing fields, differences."""

from __future__ import annotations

import json
import os

from abstat.box import machine

CPUINFO = """\
processor\t: 0
vendor_id\t: AuthenticAMD
cpu family\t: 25
model\t\t: 1
model name\t: AMD EPYC 7763 64-Core Processor
stepping\t: 1
microcode\t: 0xa0011d1
physical id\t: 0
core id\t\t: 0
flags\t\t: fpu vme hypervisor

processor\t: 1
vendor_id\t: AuthenticAMD
cpu family\t: 25
model\t\t: 1
model name\t: AMD EPYC 7763 64-Core Processor
stepping\t: 1
microcode\t: 0xa0011d1
physical id\t: 0
core id\t\t: 0
flags\t\t: fpu vme hypervisor
"""


def make_root(tmp_path, **overrides):
    files = {
        "proc/cpuinfo": CPUINFO,
        "proc/cmdline": "ro quiet mitigations=auto",
        "proc/loadavg": "0.50 0.40 0.30 1/123 4567",
        "proc/sys/kernel/osrelease": "6.1.0-13-amd64",
        "proc/sys/kernel/random/boot_id": "1111-2222",
        "sys/hypervisor/type": "xen",
        "sys/hypervisor/version/major": "4",
        "sys/hypervisor/version/minor": "17",
        "sys/hypervisor/version/extra": ".2",
        "sys/devices/system/cpu/smt/active": "1",
        "sys/devices/system/cpu/smt/control": "on",
        "sys/devices/system/cpu/vulnerabilities/spectre_v2": "Mitigation: Retpolines",
        "sys/devices/system/cpu/vulnerabilities/meltdown": "Not affected",
        "sys/devices/system/cpu/cpu0/cpufreq/scaling_governor": "performance",
        "sys/devices/system/cpu/cpu1/cpufreq/scaling_governor": "powersave",
        "sys/devices/system/cpu/cpufreq/boost": "1",
    }
    files.update(overrides)
    for rel, text in files.items():
        if text is None:
            continue
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text + "\n")
    return str(tmp_path)


def test_fields_are_read_from_proc_and_sys(tmp_path):
    record = machine.collect(make_root(tmp_path))
    assert record["cpu_model"] == "AMD EPYC 7763 64-Core Processor"
    assert (record["cpu_family"], record["cpu_model_number"], record["cpu_stepping"]) == ("25", "1", "1")
    assert record["microcode"] == "0xa0011d1"
    assert (record["cpus"], record["cores"], record["sockets"], record["smt"]) == (2, 1, 1, "on")
    assert record["kernel_release"] == "6.1.0-13-amd64"
    assert record["kernel_cmdline"] == "ro quiet mitigations=auto"
    assert (record["hypervisor_type"], record["hypervisor_version"]) == ("xen", "4.17.2")
    assert record["hypervisor_flag"] is True
    assert record["vulnerabilities"] == {"spectre_v2": "Mitigation: Retpolines", "meltdown": "Not affected"}
    assert record["governor"] == "performance (1 CPUs), powersave (1 CPUs)"
    assert record["boost"] == "on"
    assert record["loadavg"] == [0.5, 0.4, 0.3]
    assert record["boot_id"] == "1111-2222"
    json.dumps(record)  # storable as JSON


def test_unreadable_fields_are_missing_not_fatal(tmp_path):
    root = make_root(tmp_path, **{"proc/cpuinfo": "garbage without colons\x00\xff", "proc/loadavg": "not numbers"})
    for rel in ("proc/cmdline", "sys/hypervisor/type", "proc/sys/kernel/random/boot_id"):
        os.remove(os.path.join(root, rel))
    record = machine.collect(root)
    assert record["kernel_cmdline"] is None and record["boot_id"] is None
    assert record["cpu_model"] is None and record["microcode"] is None
    assert record["loadavg"] is None
    assert record["hypervisor_type"] is None  # no flag, no /sys/hypervisor, no /proc/xen
    empty = machine.collect(str(tmp_path / "nothing-here"))
    assert empty["vulnerabilities"] is None and empty["governor"] is None


def test_xen_is_recognised_from_proc_xen(tmp_path):
    root = make_root(tmp_path, **{"sys/hypervisor/type": None, "sys/hypervisor/version/major": None})
    (tmp_path / "proc/xen").mkdir()
    assert machine.collect(root)["hypervisor_type"] == "xen"


def test_this_machine_has_a_record():
    record = machine.collect()
    assert record["hostname"] and record["kernel_release"] == os.uname().release
    if os.path.exists("/proc/sys/kernel/random/boot_id"):
        assert len(record["boot_id"]) == 36


def test_differing_fields_names_what_changed(tmp_path):
    first = machine.collect(make_root(tmp_path / "a"))
    second = machine.collect(
        make_root(
            tmp_path / "b",
            **{
                "proc/sys/kernel/random/boot_id": "3333",
                "sys/devices/system/cpu/cpu1/cpufreq/scaling_governor": "performance",
                "sys/devices/system/cpu/vulnerabilities/spectre_v2": "Vulnerable",
                "proc/loadavg": "9 9 9 1/1 1",
            },
        )
    )
    assert machine.differing_fields(first, second) == ["boot", "mitigations (spectre_v2)", "governor"]
    assert machine.differing_fields(first, dict(first)) == []
    assert machine.differing_fields(first, dict(first, microcode="0xa0011d5", kernel_release="6.2")) == [
        "microcode",
        "kernel",
    ]
    assert machine.differing_fields(first, None) == []
    assert machine.differing_fields_among([first, second, dict(first, microcode="x")]) == [
        "boot",
        "mitigations (spectre_v2)",
        "governor",
        "microcode",
    ]


def test_a_guest_without_dmi_names_is_named_by_its_paravirtual_clock_as_the_doctor_names_it(tmp_path):
    # a newcomer's record said "unknown (hypervisor CPU flag set)" where `abstat doctor` said "KVM (kvm-clock)"
    clock = "sys/devices/system/clocksource/clocksource0/available_clocksource"
    root = make_root(
        tmp_path,
        **{"sys/hypervisor/type": None, "sys/hypervisor/version/major": None, clock: "kvm-clock tsc hpet acpi_pm"},
    )
    assert machine.collect(root)["hypervisor_type"] == "KVM (kvm-clock)"
    from abstat.box.doctor import Context
    from abstat.box.doctor.system import _guest_kind

    assert _guest_kind(Context(root=root), True) == "KVM (kvm-clock)"
    (tmp_path / clock).write_text("tsc hpet acpi_pm\n")
    assert machine.collect(root)["hypervisor_type"] == "unknown (hypervisor CPU flag set)"
