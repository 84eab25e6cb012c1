"""Checks of the kernel and the machine: IRQs, ASLR, THP, NMI watchdog, swap,
load, perf counters, hypervisor."""

from __future__ import annotations

import os

from abstat.box.doctor.base import COUNTERS, OK, TIME, WARN, Change, Check, Context, Finding


class IRQBalance(Check):
    name = "irqbalance"

    def inspect(self, context: Context) -> Finding:
        proc = context.path("/proc")
        try:
            entries = [e for e in os.listdir(proc) if e.isdigit()]
        except OSError:
            return self.unavailable("/proc cannot be listed")
        running = [pid for pid in entries if (context.read(f"/proc/{pid}/comm") or "") == "irqbalance"]
        if not running:
            return self.finding(OK, f"no irqbalance process among {len(entries)} processes")
        return self.finding(
            WARN,
            f"irqbalance running (pid {', '.join(running)}): it moves interrupts onto"
            " any CPU, the benchmark's included, while it runs",
            "stop it while measuring: sudo systemctl stop irqbalance (abstat doctor --tune)",
            [Change(command=["systemctl", "stop", "irqbalance"], undo_command=["systemctl", "start", "irqbalance"])],
        )


class ASLR(Check):
    name = "aslr"

    def inspect(self, context: Context) -> Finding:
        value = context.read("/proc/sys/kernel/randomize_va_space")
        if value is None:
            return self.unavailable("/proc/sys/kernel/randomize_va_space cannot be read")
        meaning = {"0": "disabled", "1": "stack, mmap and vDSO randomized", "2": "full (heap too)"}.get(value, "?")
        if value != "0":
            return self.finding(
                OK,
                f"randomize_va_space = {value}: {meaning}; each run gets another memory"
                " layout, so layout luck averages out over runs",
            )
        return self.finding(
            WARN,
            "randomize_va_space = 0: every run has the same memory layout, so one build's"
            " lucky or unlucky layout looks like a real change (Mytkowicz et al., 2009)",
            "echo 2 | sudo tee /proc/sys/kernel/randomize_va_space",
        )


class TransparentHugePages(Check):
    name = "transparent-hugepages"

    def inspect(self, context: Context) -> Finding:
        path = "/sys/kernel/mm/transparent_hugepage/enabled"
        value = context.read(path)
        if value is None:
            return self.unavailable(f"no {path} (kernel without transparent huge pages)")
        chosen = value[value.find("[") + 1 : value.find("]")] if "[" in value else value
        defrag = context.read("/sys/kernel/mm/transparent_hugepage/defrag") or ""
        evidence = f"enabled: {value}" + (f"; defrag: {defrag}" if defrag else "")
        if chosen != "always":
            return self.finding(OK, evidence)
        return self.finding(
            WARN,
            evidence + ": whether a run gets huge pages (and khugepaged's compaction) varies from run to run",
            f"echo madvise | sudo tee {path} (abstat doctor --tune)",
            [Change(context.path(path), "madvise")],
        )


class NMIWatchdog(Check):
    name = "nmi-watchdog"
    matters_for = (TIME, COUNTERS)

    def inspect(self, context: Context) -> Finding:
        path = "/proc/sys/kernel/nmi_watchdog"
        value = context.read(path)
        if value is None:
            return self.unavailable(f"no {path} (kernel without the hard-lockup detector)")
        if value == "0":
            return self.finding(OK, "nmi_watchdog = 0")
        return self.finding(
            WARN,
            f"nmi_watchdog = {value}: a periodic NMI on every CPU, and it holds one"
            " hardware counter that perf stat then lacks",
            f"echo 0 | sudo tee {path} (abstat doctor --tune)",
            [Change(context.path(path), "0")],
        )


def _vmstat(text: str | None) -> dict[str, int]:
    values = {}
    for line in (text or "").splitlines():
        key, _, value = line.partition(" ")
        if value.strip().isdigit():
            values[key] = int(value)
    return values


class Swap(Check):
    name = "swap"

    def inspect(self, context: Context) -> Finding:
        before, after = context.sampled()
        first, second = _vmstat(before["/proc/vmstat"]), _vmstat(after["/proc/vmstat"])
        if "pswpin" not in second:
            return self.unavailable("/proc/vmstat has no pswpin/pswpout counters")
        moved = {key: second[key] - first.get(key, second[key]) for key in ("pswpin", "pswpout")}
        meminfo = {}
        for line in (context.read("/proc/meminfo") or "").splitlines():
            key, _, value = line.partition(":")
            meminfo[key] = value.strip()
        evidence = (
            f"swap total {meminfo.get('SwapTotal', '?')}, free {meminfo.get('SwapFree', '?')};"
            f" pages swapped in/out since boot {second['pswpin']}/{second['pswpout']}"
        )
        if context.interval > 0 and not context.root:
            evidence += f", during {context.interval:g} s: {moved['pswpin']}/{moved['pswpout']}"
        if moved["pswpin"] or moved["pswpout"]:
            return self.finding(
                WARN,
                evidence + ": the machine is swapping now",
                "free memory (stop other work) or add RAM: swapping runs wait for the disk",
            )
        return self.finding(OK, evidence)


class Load(Check):
    name = "load"

    def inspect(self, context: Context) -> Finding:
        text = context.read("/proc/loadavg")
        if text is None:
            return self.unavailable("/proc/loadavg cannot be read")
        fields = text.split()
        one = float(fields[0])
        cpus = len(context.online_cpus()) or os.cpu_count() or 1
        evidence = f"load average {' '.join(fields[:3])} on {cpus} CPUs (running/total tasks {fields[3]})"
        if one < max(0.5, 0.1 * cpus):
            return self.finding(OK, evidence)
        return self.finding(
            WARN,
            evidence + ": other work competes for the CPUs, caches and memory bandwidth",
            "measure on an otherwise idle machine (see top or ps -eo pcpu,comm --sort=-pcpu)",
        )


_FIX_PARANOID = "echo 1 | sudo tee /proc/sys/kernel/perf_event_paranoid (or count as root)"


class PerfCounters(Check):
    name = "perf-counters"
    matters_for = (COUNTERS,)

    def inspect(self, context: Context) -> Finding:
        paranoid = context.read("/proc/sys/kernel/perf_event_paranoid")
        if paranoid is None:
            return self.unavailable("no /proc/sys/kernel/perf_event_paranoid: kernel without perf events")
        pmus = [p.rsplit("/", 1)[-1] for p in context.glob("/sys/bus/event_source/devices/*")]
        cores = [p for p in pmus if p in ("cpu", "cpu_core", "cpu_atom") or p.startswith("armv")]
        evidence = f"perf_event_paranoid = {paranoid}; PMUs: {', '.join(pmus) or 'none'}"
        if context.probe_counters is not None:
            return self._probed(context, context.probe_counters(), evidence, paranoid, bool(cores))
        if not cores:
            return self.finding(
                WARN,
                evidence + ": no hardware PMU, so cycles and instructions cannot be counted",
                "count on bare metal, or give the VM a PMU (e.g. QEMU -cpu host,pmu=on)",
            )
        if paranoid.lstrip("-").isdigit() and int(paranoid) > 2:
            return self.finding(
                WARN,
                evidence + ": only root may count (perf_event_paranoid above 2)",
                _FIX_PARANOID,
                [Change(context.path("/proc/sys/kernel/perf_event_paranoid"), "2")],
            )
        return self.finding(OK, evidence + " (perf stat not tried)")

    def _probed(
        self, context: Context, probe: tuple[bool, str], evidence: str, paranoid: str, has_pmu: bool
    ) -> Finding:
        """The finding when ``perf stat`` was tried: it counted, or why not (no PMU, or paranoid too high)."""
        works, detail = probe
        evidence += f"; perf stat: {detail}"
        if works:
            return self.finding(OK, evidence)
        if not has_pmu:
            return self.finding(
                WARN,
                evidence if "PMU" in detail else evidence + ": no hardware PMU",
                "count on bare metal, or give the VM a PMU (e.g. QEMU -cpu host,pmu=on)",
            )
        return self.finding(
            WARN,
            evidence,
            _FIX_PARANOID,
            [Change(context.path("/proc/sys/kernel/perf_event_paranoid"), "1")]
            if paranoid.lstrip("-").isdigit() and int(paranoid) > 1
            else [],
        )


class Hypervisor(Check):
    name = "hypervisor"
    matters_for = (TIME, COUNTERS)

    def inspect(self, context: Context) -> Finding:
        cpuinfo = context.read("/proc/cpuinfo")
        if cpuinfo is None:
            return self.unavailable("/proc/cpuinfo cannot be read")
        flag = any(line.startswith("flags") and " hypervisor" in line for line in cpuinfo.splitlines())
        x86 = any(line.startswith("flags") for line in cpuinfo.splitlines())
        kind = _guest_kind(context, flag)
        steal = _steal_share(context)
        if kind is None and not flag:
            return self._bare_metal(context, x86)
        evidence = f"running under a hypervisor: {kind or 'unknown'}"
        if steal is not None:
            evidence += f"; steal time {steal:.1%} of CPU time since boot"
        return self.finding(
            WARN,
            evidence + ": other guests and the host share the CPUs, caches and memory",
            "pin the guest's vCPUs to dedicated host CPUs, or measure on bare metal;"
            " compare only runs from the same host",
        )

    def _bare_metal(self, context: Context, x86: bool) -> Finding:
        """No hypervisor found: bare metal where the CPU flags or /sys/hypervisor would have told."""
        if not x86 and not context.exists("/sys/hypervisor/type"):
            return self.unavailable(
                "no CPU hypervisor flag on this architecture and no /sys/hypervisor:"
                " cannot tell bare metal from a guest"
            )
        return self.finding(OK, "bare metal (no hypervisor CPU flag, no /sys/hypervisor)")


def _guest_kind(context: Context, cpu_flag: bool) -> str | None:
    """The hypervisor the machine record names (its DMI names, /sys/hypervisor, or its paravirtual clock)."""
    from abstat.box.machine import hypervisor

    return hypervisor(context.root, cpu_flag)["hypervisor_type"]


def _steal_share(context: Context) -> float | None:
    for line in (context.read("/proc/stat") or "").splitlines():
        if line.startswith("cpu "):
            fields = [int(f) for f in line.split()[1:] if f.isdigit()]
            total = sum(fields[:8])
            if len(fields) >= 8 and total:
                return fields[7] / total
    return None
