"""Checks of the CPUs: frequency governor, turbo, SMT, isolation, C-states, throttling."""

from __future__ import annotations

from abstat.box.doctor.base import (
    COUNTERS,
    OK,
    TIME,
    WARN,
    Change,
    Check,
    Context,
    Finding,
    format_cpu_list,
    parse_cpu_list,
)

CPU = "/sys/devices/system/cpu"
DEEP_LATENCY_US = 10  # idle states slower to leave than this are "deep"


def _grouped(values: dict[int, str]) -> str:
    """{0: "a", 1: "a", 2: "b"} -> "cpu0-1: a; cpu2: b"."""
    by_value: dict[str, list[int]] = {}
    for cpu, value in values.items():
        by_value.setdefault(value, []).append(cpu)
    return "; ".join(f"cpu{format_cpu_list(cpus)}: {value}" for value, cpus in by_value.items())


def _mhz(khz: str | None) -> str:
    return f"{int(khz) / 1000:g} MHz" if khz and khz.isdigit() else "?"


class Governor(Check):
    name = "cpu-governor"

    def inspect(self, context: Context) -> Finding:
        cpus = context.benchmark_cpus()
        governors = {}
        for cpu in cpus:
            value = context.read(f"{CPU}/cpu{cpu}/cpufreq/scaling_governor")
            if value is not None:
                governors[cpu] = value
        if not governors:
            return self.unavailable(
                f"no {CPU}/cpu*/cpufreq: the kernel exposes no frequency scaling"
                " (usual in a virtual machine; the host decides the frequency)"
            )
        first = min(governors)
        base = f"{CPU}/cpu{first}/cpufreq"
        driver = context.read(f"{base}/scaling_driver")
        limits = (
            f"; cpu{first} scaling {_mhz(context.read(f'{base}/scaling_min_freq'))}"
            f"-{_mhz(context.read(f'{base}/scaling_max_freq'))} of hardware"
            f" {_mhz(context.read(f'{base}/cpuinfo_min_freq'))}-{_mhz(context.read(f'{base}/cpuinfo_max_freq'))}"
        )
        evidence = _grouped(governors) + (f" ({driver})" if driver else "") + limits
        slow = [cpu for cpu, governor in governors.items() if governor != "performance"]
        if not slow:
            return self.finding(OK, evidence)
        changes = [
            Change(context.path(f"{CPU}/cpu{cpu}/cpufreq/scaling_governor"), "performance") for cpu in sorted(governors)
        ]
        return self.finding(
            WARN,
            evidence,
            "use the performance governor: cpupower frequency-set -g performance (or abstat doctor --tune)",
            changes,
        )


class Turbo(Check):
    name = "turbo"

    def inspect(self, context: Context) -> Finding:
        no_turbo = context.read(f"{CPU}/intel_pstate/no_turbo")
        if no_turbo is not None:
            path, on, off, source = f"{CPU}/intel_pstate/no_turbo", "0", "1", "intel_pstate/no_turbo"
            enabled = no_turbo != "1"
        else:
            boost = context.read(f"{CPU}/cpufreq/boost")
            if boost is None:
                return self.unavailable(
                    f"neither {CPU}/intel_pstate/no_turbo nor {CPU}/cpufreq/boost exists:"
                    " turbo cannot be seen from here (a VM, or a driver without boost control)"
                )
            path, on, off, source = f"{CPU}/cpufreq/boost", "1", "0", "cpufreq/boost"
            enabled = boost == "1"
        value = on if enabled else off
        if not enabled:
            return self.finding(OK, f"turbo off ({source} = {value})")
        return self.finding(
            WARN,
            f"turbo on ({source} = {value}): the clock follows temperature, power and the other cores' load",
            f"disable it: echo {off} | sudo tee {path} (or abstat doctor --tune)",
            [Change(context.path(path), off)],
        )


class SMT(Check):
    name = "smt"
    matters_for = (TIME, COUNTERS)

    def inspect(self, context: Context) -> Finding:
        control = context.read(f"{CPU}/smt/control")
        active = context.read(f"{CPU}/smt/active")
        cpus = context.benchmark_cpus()
        siblings = _siblings(context, cpus)
        if control is None and active is None and not siblings:
            return self.unavailable(f"no {CPU}/smt and no topology/thread_siblings_list")
        if control in ("notsupported", "notimplemented") or active == "0" or (siblings and not any(siblings.values())):
            state = f"smt/control = {control}" if control else "no CPU has a sibling thread"
            return self.finding(OK, f"SMT off ({state}, smt/active = {active})" if active else f"SMT off ({state})")
        return self.finding(
            WARN,
            _smt_evidence(context, cpus, siblings, control, active),
            "a busy sibling thread shares the core's caches and pipeline: keep the siblings of the"
            " benchmark's CPUs idle (isolcpus), or echo off | sudo tee /sys/devices/system/cpu/smt/control",
        )


def _siblings(context: Context, cpus: list[int]) -> dict[int, list[int]]:
    """Each benchmark CPU's sibling threads (those the kernel lists)."""
    siblings: dict[int, list[int]] = {}
    for cpu in cpus:
        found = parse_cpu_list(context.read(f"{CPU}/cpu{cpu}/topology/thread_siblings_list"))
        if found:
            siblings[cpu] = [s for s in found if s != cpu]
    return siblings


def _smt_evidence(
    context: Context, cpus: list[int], siblings: dict[int, list[int]], control: str | None, active: str | None
) -> str:
    outside = sorted({s for sib in siblings.values() for s in sib if s not in cpus})
    busy = _busy_fraction(context, outside)
    evidence = f"SMT on (smt/control = {control}, smt/active = {active})"
    if siblings:
        pairs = ", ".join(f"cpu{cpu}+{format_cpu_list(sib)}" for cpu, sib in siblings.items() if sib)
        evidence += f"; siblings of the benchmark's CPUs: {pairs}"
    if busy:
        evidence += (
            "; sibling threads busy "
            + ", ".join(f"cpu{cpu} {share:.0%}" for cpu, share in busy.items())
            + f" over {context.interval:g} s"
        )
    elif outside:
        evidence += f"; siblings outside the benchmark's CPUs: cpu{format_cpu_list(outside)}"
    return evidence


def _busy_fraction(context: Context, cpus: list[int]) -> dict[int, float]:
    """Share of non-idle time of each CPU between the two /proc/stat snapshots."""
    before, after = context.sampled()
    first, second = _cpu_times(before["/proc/stat"]), _cpu_times(after["/proc/stat"])
    busy: dict[int, float] = {}
    for cpu in cpus:
        if cpu in first and cpu in second:
            deltas = [b - a for a, b in zip(first[cpu], second[cpu])]
            total = sum(deltas[:8])
            if total > 0:
                idle = deltas[3] + (deltas[4] if len(deltas) > 4 else 0)
                busy[cpu] = 1 - idle / total
    return busy


def _cpu_times(text: str | None) -> dict[int, list[int]]:
    times: dict[int, list[int]] = {}
    for line in (text or "").splitlines():
        name, *fields = line.split()
        if name.startswith("cpu") and name[3:].isdigit():
            times[int(name[3:])] = [int(f) for f in fields if f.isdigit()]
    return times


class Isolation(Check):
    name = "cpu-isolation"

    def inspect(self, context: Context) -> Finding:
        cmdline = context.read("/proc/cmdline")
        isolated_text = context.read(f"{CPU}/isolated")
        if isolated_text is None and cmdline is None:
            return self.unavailable(f"neither {CPU}/isolated nor /proc/cmdline can be read")
        isolated, nohz, rcu, evidence = _isolated_sets(context, cmdline, isolated_text)
        cpus = context.benchmark_cpus()
        evidence += f"; benchmark CPUs: {format_cpu_list(cpus)}" + _sharing(context, cpus) + _held(context)
        if cpus and set(cpus) <= set(isolated) and set(cpus) <= set(nohz) and set(cpus) <= set(rcu):
            return self.finding(OK, evidence)
        return self.finding(
            WARN,
            evidence,
            "boot with isolcpus=LIST nohz_full=LIST rcu_nocbs=LIST and run the benchmark there"
            " (taskset -c LIST): the scheduler, timer ticks and RCU callbacks then leave it alone",
        )


def _isolated_sets(
    context: Context, cmdline: str | None, isolated_text: str | None
) -> tuple[list[int], list[int], list[int], str]:
    """The CPUs in isolcpus, nohz_full and rcu_nocbs, and the evidence naming them."""
    parameters = dict(word.partition("=")[::2] for word in (cmdline or "").split())
    isolated = parse_cpu_list(isolated_text) or []
    nohz_text = context.read(f"{CPU}/nohz_full")
    nohz = (parse_cpu_list(nohz_text) if nohz_text and nohz_text != "(null)" else []) or []
    rcu = parse_cpu_list(parameters.get("rcu_nocbs", "")) or []
    evidence = (
        f"isolcpus: {format_cpu_list(isolated)}; nohz_full: {format_cpu_list(nohz)}"
        f"{'' if nohz_text is not None else ' (kernel without NO_HZ_FULL)'}; rcu_nocbs: {format_cpu_list(rcu)}"
    )
    return isolated, nohz, rcu, evidence


def _sharing(context: Context, cpus: list[int]) -> str:
    """Which other CPUs share a core (SMT siblings) with the benchmark's, when any do."""
    pairs = []
    for cpu in cpus:
        siblings = parse_cpu_list(context.read(f"{CPU}/cpu{cpu}/topology/thread_siblings_list") or "") or []
        others = sorted(set(siblings) - {cpu})
        if others:
            pairs.append(f"{cpu} with {format_cpu_list(others)}")
    return f"; sharing a core: {', '.join(pairs)}" if pairs else ""


def _held(context: Context) -> str:
    """The CPUs an ``abstat run --isolate`` holds now (its cpusets at the top of the v1 or v2 hierarchy)."""
    held = []
    for path in context.glob("/sys/fs/cgroup/cpuset/abstat.isolated-*") + context.glob(
        "/sys/fs/cgroup/abstat.isolated-*"
    ):
        cpus = context.read(f"{path}/cpuset.cpus")
        if cpus:
            held.append(f"{cpus} (run {path.rsplit('-', 1)[-1]})")
    return f"; held by abstat run --isolate: {', '.join(held)}" if held else ""


class CStates(Check):
    name = "c-states"

    def inspect(self, context: Context) -> Finding:
        cpus = context.benchmark_cpus() or [0]
        states = context.glob(f"{CPU}/cpu{cpus[0]}/cpuidle/state[0-9]*")
        driver = context.read(f"{CPU}/cpuidle/current_driver")
        if not states:
            why = f"no {CPU}/cpu{cpus[0]}/cpuidle" + (f" (idle driver {driver})" if driver else "")
            return self.unavailable(why + ": idle states are not exposed (a VM idles with halt)")
        described, deep = _idle_states(context, states)
        evidence = f"cpu{cpus[0]} idle states ({driver or 'driver unknown'}): " + ", ".join(described)
        if not deep:
            return self.finding(OK, evidence)
        changes = _disable_deep(context, cpus, deep)
        worst = max(latency for _, _, latency in deep)
        return self.finding(
            WARN,
            evidence + f"; deep states enabled (exit latency up to {worst} us)",
            "disable states deeper than 10 us on the benchmark's CPUs (abstat doctor --tune),"
            " or boot with intel_idle.max_cstate=1 / processor.max_cstate=1",
            changes,
        )


def _idle_states(context: Context, states: list[str]) -> tuple[list[str], list[tuple[str, str, int]]]:
    """Each idle state described (name, exit latency, disabled), and the enabled deep ones (state, name, latency)."""
    deep = []
    described = []
    for state in states:
        name = context.read(f"{state}/name") or state.rsplit("/", 1)[-1]
        latency = context.read(f"{state}/latency")
        disabled = context.read(f"{state}/disable") == "1"
        described.append(f"{name} {latency} us" + (" (disabled)" if disabled else ""))
        if latency and latency.isdigit() and int(latency) > DEEP_LATENCY_US and not disabled:
            deep.append((state.rsplit("/", 1)[-1], name, int(latency)))
    return described, deep


def _disable_deep(context: Context, cpus: list[int], deep: list[tuple[str, str, int]]) -> list[Change]:
    """Disabling each deep state on each benchmark CPU that exposes it."""
    return [
        Change(context.path(f"{CPU}/cpu{cpu}/cpuidle/{state}/disable"), "1")
        for cpu in cpus
        for state, _, _ in deep
        if context.exists(f"{CPU}/cpu{cpu}/cpuidle/{state}/disable")
    ]


class Thermal(Check):
    name = "thermal-throttle"

    def inspect(self, context: Context) -> Finding:
        counters = context.glob(f"{CPU}/cpu[0-9]*/thermal_throttle/*_throttle_count")
        if not counters:
            return self.unavailable(
                f"no {CPU}/cpu*/thermal_throttle: the CPU or kernel exposes no throttle counters (AMD, most VMs)"
            )
        counts = {}
        for path in counters:
            value = context.read(path)
            if value and value.isdigit() and int(value):
                cpu, kind = path.split("/")[5], path.rsplit("/", 1)[-1].split("_")[0]
                counts[f"{cpu} {kind}"] = int(value)
        if not counts:
            return self.finding(OK, f"no throttling since boot ({len(counters)} counters read)")
        shown = ", ".join(f"{key} {value}" for key, value in list(counts.items())[:6])
        return self.finding(
            WARN,
            f"throttled since boot: {shown}" + (" ..." if len(counts) > 6 else ""),
            "improve cooling or lower the load: a throttled CPU runs slower for a while",
        )
