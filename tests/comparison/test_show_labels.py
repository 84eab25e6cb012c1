"""``abstat show``: invocations with different labels are different configurations, not runs of one."""

from __future__ import annotations

import json
import time

from abstat.comparison import compare
from abstat.store import open_store
from support.cli import run_abstat as abstat

MACHINE = {"hostname": "lab", "boot_id": "boot-1", "microcode": "0xa0011d1"}
# hc on milan: after is 10% faster; on naples: after is 10% slower.  Pooled,
# the two would cancel out into "no difference" -- the wrong answer twice.
DATA = {
    "milan": {
        "before": [440.0, 436.0, 452.0, 444.0, 438.0, 446.0],
        "after": [396.0, 392.0, 404.0, 400.0, 394.0, 402.0],
    },
    "naples": {
        "before": [400.0, 396.0, 404.0, 402.0, 398.0, 406.0],
        "after": [440.0, 436.0, 446.0, 442.0, 438.0, 444.0],
    },
}


def add(store, invocation, variant, values, status="ok"):
    for i, v in enumerate(values):
        store.add_run(
            invocation,
            variant=variant,
            command=f"./hc-{variant}",
            iteration=i,
            position=i,
            status=status,
            exit_code=0 if status == "ok" else 1,
            started_at=time.time(),
            wall=v,
            values={"cycles": [v]},
            units={"cycles": "cycles"},
        )


def make_store(tmp_path, hosts=("milan", "naples")):
    path = str(tmp_path / "s.db")
    with open_store(path) as store:
        for host in hosts:
            inv = store.start_invocation("hc", MACHINE, labels={"host": host}, variants=["before", "after"])
            add(store, inv, "before", DATA[host]["before"])
            add(store, inv, "after", DATA[host]["after"])
            if host == "naples":
                add(store, inv, "after", [9999.0], status="failed")
            store.finish_invocation(inv, "complete")
    return path


def test_one_comparison_per_label_configuration(tmp_path):
    path = make_store(tmp_path)
    done = abstat("show", "hc", "--store", path, "--format", "json")
    assert done.returncode == 0, done.stderr
    document = json.loads(done.stdout)
    assert document["experiment"] == "hc"
    blocks = document["configurations"]
    assert [b["labels"] for b in blocks] == [{"host": "milan"}, {"host": "naples"}]
    for block in blocks:
        host = block["labels"]["host"]
        [got] = block["metrics"]["cycles"]["comparisons"]["comparisons"]
        reference = compare(DATA[host]["before"], DATA[host]["after"])  # this host's runs only
        assert got["n"] == [6, 6]
        assert got["delta_pct"] == reference.delta_pct
        assert got["verdict"] == reference.verdict
    assert blocks[0]["metrics"]["cycles"]["comparisons"]["comparisons"][0]["delta_pct"] < -5
    assert blocks[1]["metrics"]["cycles"]["comparisons"]["comparisons"][0]["delta_pct"] > 5

    text = abstat("show", "hc", "--store", path)
    assert text.returncode == 0, text.stderr
    lines = text.stdout.splitlines()
    milan, naples = lines.index("configuration host=milan"), lines.index("configuration host=naples")
    assert milan < naples
    assert "hc: cycles (cycles)" in lines[milan:naples] and "hc: cycles (cycles)" in lines[naples:]
    assert "[host=milan]" in text.stdout and "[host=naples]" in text.stdout  # both invocations listed

    csv_lines = abstat("show", "hc", "--store", path, "--format", "csv").stdout.splitlines()
    assert csv_lines[0].startswith("host,metric,") and len(csv_lines) == 3
    assert [line.split(",")[0] for line in csv_lines[1:]] == ["milan", "naples"]


def test_where_chooses_one_configuration(tmp_path):
    path = make_store(tmp_path)
    done = abstat("show", "hc", "--store", path, "--where", "host=naples", "--format", "json")
    assert done.returncode == 0, done.stderr
    document = json.loads(done.stdout)
    [got] = document["metrics"]["cycles"]["comparisons"]["comparisons"]
    naples = compare(DATA["naples"]["before"], DATA["naples"]["after"])
    assert got["n"] == [6, 6] and got["delta_pct"] == naples.delta_pct
    text = abstat("show", "hc", "--store", path, "--where", "host=naples").stdout
    assert "[host=naples]" in text and "[host=milan]" not in text and "configuration" not in text
    assert "failed runs (not used):" in text
    assert "failed runs" not in abstat("show", "hc", "--store", path, "--where", "host=milan").stdout
    both = json.loads(abstat("show", "hc", "--store", path, "--where", "host=milan,naples", "--format", "json").stdout)
    assert len(both["configurations"]) == 2
    missing = abstat("show", "hc", "--store", path, "--where", "host=rome")
    assert missing.returncode == 2 and len(missing.stderr.splitlines()) == 1
    assert "no successful runs with host=rome" in missing.stderr
    bad = abstat("show", "hc", "--store", path, "--where", "host")
    assert bad.returncode == 2 and "KEY=VALUE" in bad.stderr
    refused = abstat("show", "hc", "--store", path, "--where", "metric=cycles")
    assert refused.returncode == 2 and "--metric" in refused.stderr


def test_one_configuration_is_shown_as_before(tmp_path):
    path = make_store(tmp_path, hosts=("milan",))
    document = json.loads(abstat("show", "hc", "--store", path, "--format", "json").stdout)
    assert "configurations" not in document and document["baseline"] == "before"
    assert "configuration " not in abstat("show", "hc", "--store", path).stdout


def test_repeated_runs_of_one_configuration_stay_pooled_as_run_groups(tmp_path):
    path = str(tmp_path / "s.db")
    with open_store(path) as store:
        for boot in ("boot-1", "boot-2"):
            inv = store.start_invocation("hc", dict(MACHINE, boot_id=boot), labels={"host": "milan"})
            add(store, inv, "before", DATA["milan"]["before"])
            add(store, inv, "after", DATA["milan"]["after"])
    document = json.loads(abstat("show", "hc", "--store", path, "--format", "json").stdout)
    [got] = document["metrics"]["cycles"]["comparisons"]["comparisons"]
    assert got["n"] == [12, 12]
