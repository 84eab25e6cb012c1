"""An isolation record of ``run --isolate`` on cgroup v2 (abstat.box.partition) is read as untrusted input too:
only the one field abstat writes for v2 (``cgroup2.enabled_cpuset``, a boolean) is accepted beside v1's."""

from __future__ import annotations

import pytest

from abstat.box.isolate_record import _checked

MOUNT = "/sys/fs/cgroup"
GOOD = {
    "pid": 4242,
    "mount": MOUNT,
    "sets": [f"{MOUNT}/abstat.isolated-4242"],
    "irqs": {"/proc/irq/9/smp_affinity_list": "0-1", "/proc/irq/default_smp_affinity": "3"},
}


@pytest.mark.parametrize("version2", [None, {}, {"enabled_cpuset": True}, {"enabled_cpuset": False}])
def test_a_record_of_either_version_is_accepted(version2):
    state = dict(GOOD) if version2 is None else {**GOOD, "cgroup2": version2}
    assert _checked(state, MOUNT) is None


@pytest.mark.parametrize(
    "version2",
    [
        [],
        "yes",
        {"enabled_cpuset": "true"},
        {"enabled_cpuset": 1},
        {"enabled_cpuset": True, "command": "rm -rf /"},
        {"subtree": "+cpuset"},
    ],
)
def test_anything_else_in_the_v2_field_refuses_the_record(version2):
    assert _checked({**GOOD, "cgroup2": version2}, MOUNT) == "not an isolation record"


def test_a_v2_record_names_only_abstats_partition_at_the_top():
    for directory in (f"{MOUNT}/system.slice", f"{MOUNT}/abstat.isolated-4242/../init.scope", "/etc"):
        state = {**GOOD, "cgroup2": {"enabled_cpuset": True}, "sets": [directory]}
        assert "is not one abstat makes" in (_checked(state, MOUNT) or "")
    assert "this machine's cpuset hierarchy" in (_checked(GOOD, "/sys/fs/cgroup/cpuset") or "")
