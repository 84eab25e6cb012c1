"""``--monitor`` (the kernel's counters beside each run) and ``--cpus`` (the CPUs the measured commands get).

The counters are parsed from real files of this VM (tests/data/monitor) and checked against a reading
of the same files written here from the kernel's documented layout; end to end, a benchmark that makes
TLB shootdowns (threads of one process on two CPUs, one unmapping pages the other may cache) is
compared with one that does not, and the shootdowns are what else changed.  Benjamini-Hochberg is
checked against statsmodels, the Mann-Whitney p-values against scipy.
"""

from __future__ import annotations

import functools
import json
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest
from scipy.stats import mannwhitneyu
from support import paths
from support.cli import run_abstat

from abstat.box.runner import monitor, monitor_parse
from abstat.box.runner.executor import ProcessExecutor
from abstat.box.runner.model import Command, RunContext
from abstat.box.runner.sources import Monitor, decode_source
from abstat.comparison.monitors import benjamini_hochberg, is_monitor, other_changes
from abstat.engine.spec import ExperimentSpec, SpecError, Variant, decode

DATA = os.path.join(str(paths.DATA), "monitor")
# --cpus: never while test_run_isolate holds a CPU (that test is marked alone: it runs while no other test runs)
ROOT = str(paths.ROOT)


def _text(name):
    with open(os.path.join(DATA, name)) as handle:
        return handle.read()


_abstat = functools.partial(run_abstat, timeout=300, extra_env={"NO_COLOR": "1"})


# -- parsing -------------------------------------------------------------------------------------------


def test_interrupts_rows_are_summed_over_the_cpus():
    text = _text("interrupts.txt")
    counters = monitor_parse._per_cpu_rows(text)
    cpus = len(text.splitlines()[0].split())
    expected_device = 0
    for line in text.splitlines()[1:]:
        head, rest = line.split(":", 1)
        counts = [int(w) for w in rest.split()[:cpus]]
        if head.strip().isdigit():
            expected_device += sum(counts)
        else:
            assert counters[head.strip()] == sum(counts), head
    assert counters["device"] == expected_device
    assert {"LOC", "RES", "CAL", "TLB"} <= set(counters)


def test_softirqs_rows_are_summed_over_the_cpus():
    counters = monitor_parse._per_cpu_rows(_text("softirqs.txt"))
    for line in _text("softirqs.txt").splitlines()[1:]:
        name, rest = line.split(":")
        assert counters[name.strip()] == sum(int(w) for w in rest.split())
    assert set(counters) >= {"TIMER", "NET_RX", "SCHED", "RCU"}


def test_vmstat_keeps_the_event_counters_not_the_gauges():
    counters = monitor_parse._vmstat(_text("vmstat.txt"))
    raw = dict(line.split() for line in _text("vmstat.txt").splitlines())
    assert counters["pgfault"] == int(raw["pgfault"]) and counters["pgmajfault"] == int(raw["pgmajfault"])
    assert "nr_free_pages" in raw and "nr_free_pages" not in counters
    assert set(counters) <= monitor_parse.VMSTAT_EVENTS


def test_schedstat_sums_run_wait_and_slices():
    assert monitor_parse._schedstat(_text("schedstat.txt")) == {
        "run": 1186574281920 + 1181139683017,
        "wait": 96412353472 + 95081012016,
        "timeslices": 4016395 + 3991237,
    }


def test_unknown_and_missing_monitors_are_one_line_each(tmp_path):
    with pytest.raises(ValueError, match="unknown monitor"):
        Monitor.parse(["interrupts,ipis"])
    result = _abstat("run", "-n", "1", "--store", str(tmp_path / "s.db"), "--monitor", "ipis", "-v", "a=true")
    assert result.returncode == 2 and result.stderr.count("\n") == 1 and "ipis" in result.stderr
    if not os.path.exists("/proc/schedstat"):
        result = _abstat("run", "-n", "1", "--store", str(tmp_path / "s.db"), "--monitor", "schedstat", "-v", "a=true")
        assert result.returncode == 2 and "CONFIG_SCHEDSTATS" in result.stderr and "Traceback" not in result.stderr


def test_the_source_round_trips_and_refuses_bad_json():
    source = Monitor.parse(["interrupts,vmstat", "interrupts"])
    assert source.monitors == ("interrupts", "vmstat")
    assert decode_source(source.to_json()) == source
    for bad in (
        {"source": "monitor", "monitors": []},
        {"source": "monitor", "monitors": [3]},
        {"source": "monitor", "monitors": ["nope"]},
        {"source": "monitor", "names": ["vmstat"]},
    ):
        with pytest.raises(ValueError):
            decode_source(bad)


def test_a_collector_stores_differences_one_value_per_run():
    collector = monitor.MonitorCollector(("interrupts", "softirqs", "vmstat"))
    executor = ProcessExecutor(collectors=[collector], subreaper=False, cgroups=False)
    try:
        measured = executor.measure(Command(f"{sys.executable} -c pass", False), RunContext("a", 0), timeout=60)
    finally:
        executor.close()
    names = [m for m in measured.values if is_monitor(m)]
    assert "monitor.interrupts.LOC" in names and "monitor.vmstat.pgfault" in names
    assert all(len(measured.values[m]) == 1 and measured.values[m][0] >= 0 for m in names)
    assert measured.values["monitor.vmstat.pgfault"][0] > 0  # a Python start faults pages in


# -- what else changed -------------------------------------------------------------------------------


def test_benjamini_hochberg_matches_statsmodels():
    from statsmodels.stats.multitest import multipletests

    rng = np.random.default_rng(3)
    for size in (1, 2, 7, 40):
        p = rng.uniform(size=size) ** 3
        assert np.allclose(benjamini_hochberg(p), multipletests(p, method="fdr_bh")[1])


def test_other_changes_tests_each_counter_with_mann_whitney_and_skips_constants():
    rng = np.random.default_rng(5)
    base, moved = rng.poisson(3, 30), rng.poisson(12, 30)
    samples = {
        "monitor.interrupts.TLB": {"a": base, "b": moved},
        "monitor.interrupts.NMI": {"a": [0] * 30, "b": [0] * 30},
        "monitor.vmstat.pgfault": {"a": rng.poisson(500, 30), "b": rng.poisson(500, 30)},
        "wall": {"a": rng.normal(1, 0.1, 30), "b": rng.normal(2, 0.1, 30)},
    }
    result = other_changes(samples, "a")
    assert result.tested == 2  # NMI constant, wall not a monitor
    assert [row.metric for row in result.moved] == ["monitor.interrupts.TLB"]
    row = result.moved[0]
    assert row.p_value == pytest.approx(mannwhitneyu(moved, base, method="asymptotic").pvalue)
    assert row.direction == "up" and row.candidate_median == np.median(moved)


def test_other_changes_holds_its_false_discovery_rate_on_null_counters():
    rng = np.random.default_rng(11)
    trials, any_listed = 300, 0
    for _ in range(trials):  # 25 counters, none moved: BH at 5% lists one in about 5% of experiments
        samples = {
            f"monitor.vmstat.c{i}": {
                "a": rng.poisson(rng.uniform(0.5, 50), 20),
                "b": rng.poisson(rng.uniform(0.5, 50), 20),
            }
            for i in range(0)
        }
        lam = rng.uniform(0.5, 50, 25)
        samples = {
            f"monitor.vmstat.c{i}": {"a": rng.poisson(lam[i], 20), "b": rng.poisson(lam[i], 20)} for i in range(25)
        }
        any_listed += bool(other_changes(samples, "a").moved)
    assert any_listed / trials <= 0.08


# -- --cpus --------------------------------------------------------------------------------------------

needs_two_cpus = pytest.mark.skipif(
    len(os.sched_getaffinity(0)) < 2 or not {0, 1} <= os.sched_getaffinity(0), reason="needs CPUs 0 and 1"
)

AFFINITY = r"""
import json, subprocess
own = open('/proc/self/status').read().split('Cpus_allowed_list:')[1].split()[0]
child = subprocess.run(['sh', '-c', 'grep Cpus_allowed_list /proc/self/status'], capture_output=True,
                       text=True).stdout.split()[-1]
print(json.dumps({"own_is_cpu": int(own == "%s"), "child_is_cpu": int(child == "%s")}))
"""


@needs_two_cpus
def test_the_measured_command_and_its_children_see_only_the_cpus(tmp_path):
    cpu = str(max(os.sched_getaffinity(0)))
    script = tmp_path / "affinity.py"
    script.write_text(AFFINITY % (cpu, cpu))
    store = str(tmp_path / "s.db")
    result = _abstat(
        "run",
        "-n",
        "3",
        "--store",
        store,
        "--cpus",
        cpu,
        "--no-progress",
        "--format",
        "json",
        "-v",
        f"a={sys.executable} {script}",
    )
    assert result.returncode == 0, result.stderr
    exported = _abstat("export", "--store", store, "--format", "json")
    rows = json.loads(exported.stdout)
    rows = rows if isinstance(rows, list) else rows.get("samples", rows)
    values = {(r["metric"], r["value"]) for r in rows if r["metric"] in ("own_is_cpu", "child_is_cpu")}
    assert values == {("own_is_cpu", 1), ("child_is_cpu", 1)}


@needs_two_cpus
def test_abstat_itself_gets_its_cpus_back_after_each_run():
    before = os.sched_getaffinity(0)
    executor = ProcessExecutor(subreaper=False, cgroups=False, cpus=[min(before)])
    try:
        measured = executor.measure(Command("true", False), RunContext("a", 0), timeout=30)
    finally:
        executor.close()
    assert measured.ok and os.sched_getaffinity(0) == before


def test_cpus_are_checked_as_options_and_as_data(tmp_path):
    store = str(tmp_path / "s.db")
    for bad, words in (
        ("1-0", "expected a CPU list"),
        ("x", "expected a CPU list"),
        ("99999", "CPUs 0 to 65535"),
        (str(max(os.sched_getaffinity(0)) + 1), "not one this machine lets abstat use"),
    ):
        result = _abstat("run", "-n", "1", "--store", store, "--cpus", bad, "-v", "a=true")
        assert result.returncode == 2 and words in result.stderr and result.stderr.count("\n") == 1, result.stderr
    spec = ExperimentSpec((Variant("a", "true"),), cpus=(3, 1))
    assert spec.cpus == (1, 3) and decode(spec.to_json()).cpus == (1, 3) and spec.to_json()["abstat_spec"] == 2
    assert ExperimentSpec((Variant("a", "true"),)).to_json()["abstat_spec"] == 1
    with pytest.raises(SpecError, match="version 2"):
        decode({"abstat_spec": 1, "variants": [{"name": "a", "command": "true"}], "cpus": [0]})
    with pytest.raises(SpecError, match="listed twice"):
        ExperimentSpec((Variant("a", "true"),), cpus=(1, 1))
    assert decode({"abstat_spec": 1, "variants": [{"name": "a", "command": "true"}]}).cpus == ()


# -- end to end: TLB shootdowns -----------------------------------------------------------------------

SHOOTDOWN = r"""
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/mman.h>
static atomic_int started, stop;
static void pin(int cpu) { cpu_set_t set; CPU_ZERO(&set); CPU_SET(cpu, &set); sched_setaffinity(0, sizeof set, &set); }
static void *spin(void *arg) { pin(1); atomic_store(&started, 1); while (!atomic_load(&stop)) ; return arg; }
int main(int argc, char **argv) {
    int threads = atoi(argv[1]), rounds = 20000;
    pthread_t other;
    pin(0);
    if (threads > 1) { pthread_create(&other, 0, spin, 0); while (!atomic_load(&started)) sched_yield(); }
    for (int i = 0; i < rounds; i++) {
        char *p = mmap(0, 1 << 14, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        for (int j = 0; j < (1 << 14); j += 4096) p[j] = 1;
        munmap(p, 1 << 14);
    }
    atomic_store(&stop, 1);
    if (threads > 1) pthread_join(other, 0);
    return 0;
}
"""


@needs_two_cpus
@pytest.mark.alone  # its two threads need both CPUs at once to send each other shootdowns
@pytest.mark.skipif(shutil.which("cc") is None, reason="needs a C compiler")
@pytest.mark.skipif(not os.path.exists("/proc/interrupts"), reason="needs /proc/interrupts")
def test_tlb_shootdowns_are_what_else_changed(tmp_path):
    source = tmp_path / "shootdown.c"
    source.write_text(SHOOTDOWN)
    binary = tmp_path / "shootdown"
    subprocess.run(["cc", "-O2", "-pthread", "-o", str(binary), str(source)], check=True)
    store = str(tmp_path / "s.db")
    result = _abstat(
        "run",
        "-n",
        "8",
        "--store",
        store,
        "--monitor",
        "interrupts",
        "--no-progress",
        "--experiment",
        "tlb",
        "-v",
        f"one={binary} 1",
        "-v",
        f"two={binary} 2",
    )
    assert result.returncode == 0, result.stderr
    main_table, _, below = result.stdout.partition("what else changed:")
    assert "monitor." not in main_table and "monitor.interrupts.TLB" in below  # never in the main family
    report = _abstat("report", "--store", store)
    assert report.returncode == 0
    assert "monitor.interrupts.TLB" in report.stdout.partition("what else changed:")[2]
    from abstat.store import open_store

    store_handle = open_store(store)
    try:
        groups = store_handle.groups_by_metric("tlb")
    finally:
        store_handle.close()
    samples = {
        metric: {variant: [v for run in runs for v in run] for variant, runs in by.items()}
        for metric, by in groups.items()
        if is_monitor(metric)
    }
    tlb = samples["monitor.interrupts.TLB"]
    assert np.median(tlb["two"]) > 10 * max(1.0, np.median(tlb["one"]))  # 20,000 unmaps while a thread runs on CPU 1
    moved = {row.metric for row in other_changes(samples, "one").moved}
    assert "monitor.interrupts.TLB" in moved


# -- perf: multiplexing and groups ---------------------------------------------------------------------

# perf stat -x, lines in the layout of tools/perf/Documentation/perf-stat.txt ("CSV FORMAT": value, unit,
# event, counter run time, percentage of measurement time, metric value, metric unit), as a machine with
# four counters prints six hardware events: the last four were scheduled 66.67% of the time.
MULTIPLEXED = """\
1.02,msec,task-clock,1020345,100.00,0.921,CPUs utilized
2961234,,cycles,680230,66.67,2.902,GHz
3950112,,instructions,680230,66.67,1.33,insn per cycle
12034,,cache-misses,680119,66.66,,
<not supported>,,branch-misses,0,100.00,,
"""


def test_perf_multiplexing_is_read_and_said():
    from abstat.box.runner import perf as perf_mod

    values, units, missing, running = perf_mod.parse_perf_csv_running(MULTIPLEXED)
    assert values["cycles"] == 2961234 and units["task-clock"] == "msec" and missing == ["branch-misses"]
    assert running == {"task-clock": 100.0, "cycles": 66.67, "instructions": 66.67, "cache-misses": 66.66}
    note = perf_mod.multiplexing_note(running)
    assert note.startswith("perf: multiplexed: cache-misses 66.7%, cycles 66.7%, instructions 66.7% of the run")
    assert perf_mod.multiplexing_note({"task-clock": 100.0}) is None
    assert perf_mod.parse_perf_csv(MULTIPLEXED)[0] == values  # the three-value form is unchanged


def test_perf_event_lists_keep_groups_and_pmu_terms():
    from abstat.box.runner import perf as perf_mod
    from abstat.box.runner.sources import Perf

    text = "{cycles,instructions}:u,cpu/event=0x3c,umask=0x0/,page-faults"
    events = perf_mod.split_events(text)
    assert events == ["{cycles,instructions}:u", "cpu/event=0x3c,umask=0x0/", "page-faults"]
    assert perf_mod.group_members(events[0]) == ["cycles", "instructions"]
    assert Perf.from_json({"source": "perf", "events": events}).events == tuple(events)
    with pytest.raises(ValueError):
        Perf.from_json({"source": "perf", "events": ["{cycles;rm -rf /}"]})


def test_a_run_counted_in_part_carries_the_note(tmp_path):
    from abstat.box.runner import perf as perf_mod

    fake = tmp_path / "perf"  # writes what a multiplexing perf stat writes, then runs the command
    fake.write_text('#!/bin/sh\nout="$4"\nshift 7\ncat > "$out" <<\'X\'\n' + MULTIPLEXED + 'X\nexec "$@"\n')
    fake.chmod(0o755)
    support = perf_mod.PerfSupport(str(fake), ["task-clock", "cycles", "instructions", "cache-misses"])
    executor = ProcessExecutor(perf=support, subreaper=False, cgroups=False)
    try:
        measured = executor.measure(Command("true", False), RunContext("a", 0), timeout=30)
    finally:
        executor.close()
    assert measured.ok and measured.values["cycles"] == [2961234.0]
    assert any(note.startswith("perf: multiplexed: cache-misses 66.7%") for note in measured.notes)


def test_what_else_changed_is_one_caption_and_a_row_per_counter():
    from abstat.render.monitors import as_json, caption, lines

    rng = np.random.default_rng(2)
    samples = {
        "monitor.interrupts.TLB": {"one": rng.poisson(3, 20), "two": rng.poisson(20000, 20)},
        "monitor.vmstat.pg\x1b[31mfault": {"one": rng.poisson(9, 20), "two": rng.poisson(90, 20)},
        "monitor.softirqs.RCU": {"one": rng.poisson(50, 20), "two": rng.poisson(50, 20)},
    }
    changes = other_changes(samples, "one")
    text = lines(changes)
    assert text[0] == caption(changes)
    assert text[0].startswith("what else changed: 2 of the 3 monitor counters that varied moved")
    assert len(text) == 2 + 2 and "\x1b" not in "".join(text)  # caption, header, two rows; data escaped
    assert any("monitor.interrupts.TLB" in line and "two vs one" in line for line in text)
    document = as_json(changes)
    assert document["tested"] == 3 and {row["metric"] for row in document["moved"]} == set(
        row.metric for row in changes.moved
    )
    assert lines(other_changes({}, "one")) == []
    none = other_changes({"monitor.softirqs.RCU": samples["monitor.softirqs.RCU"]}, "one")
    assert lines(none) == [
        "what else changed: none of the 1 monitor counter that varied moved (Benjamini-Hochberg, 5% false discoveries)"
    ]


@pytest.mark.parametrize("name", ["interrupts", "softirqs", "vmstat", "schedstat"])
def test_differences_from_the_changed_lines_are_those_of_whole_parses(name):
    """The collector parses only the lines that changed; a brute-force difference of two whole parses is the
    reference, over readings whose counters moved (or wrapped) on random lines."""
    rng = np.random.default_rng(11)
    text = _text("softirqs.txt" if name == "softirqs" else f"{name}.txt")
    for _ in range(50):
        lines = text.split("\n")
        for index in rng.choice(np.arange(1, len(lines)), size=int(rng.integers(0, 6)), replace=False):
            words = lines[index].split(" ")
            spots = [i for i, word in enumerate(words) if word.isdigit()]
            if spots:
                spot = spots[int(rng.integers(len(spots)))]
                words[spot] = str(max(0, int(words[spot]) + int(rng.choice([-1, 3]) * rng.integers(1, 5000))))
            lines[index] = " ".join(words)
        after = "\n".join(lines)
        old, new = monitor_parse._PARSERS[name](text), monitor_parse._PARSERS[name](after)
        expected = {key: new[key] - old[key] for key in new if key in old and new[key] >= old[key]}
        assert monitor.differences(name, text.encode(), after.encode()) == expected
