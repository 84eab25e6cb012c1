"""Boot and reboot times of an ``abstat testbox``: TCG (one thread, and one per CPU), and KVM where it boots one.

    python benchmarks/testbox_boot.py [--reboots 3] [--engine-boots 4] [--accels tcg,mttcg,icount,kvm]

For each accelerator (TCG with one host thread for every guest CPU, the default; TCG with a thread per guest
CPU, QEMU's own default; TCG whose clock counts instructions, ``icount``; KVM where it boots a guest kernel
here): ``abstat testbox up`` until ssh answers (the cold boot, the image already built: it is built first,
and not timed), then ``--reboots`` rounds of a ``kexec`` reboot
(``kexec -l /boot/vmlinuz ... --reuse-cmdline --append=... && kexec -e``), the same with ``kexec -i``
(no purgatory SHA-256 of the loaded kernel, as the tests boot) and a GRUB-like one
(``testbox-next-boot ARGS && reboot``: QEMU starts again), each timed from the command to the
first ssh answer with a new boot id.  Prints the medians and each reboot's ratio to the cold boot
measured in the same run (the anchor), and where a reboot's time goes: until the new kernel starts
(the command, the shutdown, QEMU's restart or kexec, the decompressor), until its sshd listens (the
guest's uptime then, which the box writes on its control port), until ssh answers; and the CPU time QEMU
spent (its processes are the box supervisor's children: what the supervisor waited for, plus the running
QEMU's own), which a loaded host does not inflate as it does wall time.  Boxes live in a temporary directory
and are removed.

``--engine-boots N`` (default 4; 0: not measured): then N boots of ``abstat run --boots`` on the TCG box as the
tests make them (GRUB-like, a ``--check``, one run of a trivial benchmark per boot), counted per boot: the ssh
processes abstat started (through ``$ABSTAT_SSH_COMMAND``, a wrapper that tallies them: master connections, and
sessions whose remote command starts Python on the box: the lease's and the runner's), and QEMU's CPU time.
"""

from __future__ import annotations

import argparse
import collections
import os
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "src"))

from abstat.lab.testbox import box, paths  # noqa: E402
from abstat.lab.testbox.image import ensure_image  # noqa: E402
from abstat.lab.testbox.paths import BOXES_ENV  # noqa: E402
from abstat.lab.testbox.probe import kvm_boots  # noqa: E402

KEXEC = (
    "kexec {checks}-l /boot/vmlinuz --initrd=/boot/initrd.img --reuse-cmdline --append=bench={n} "
    "&& {{ (sleep 0.2; kexec -e) >/dev/null 2>&1 </dev/null & }}"
)
GRUB = "testbox-next-boot bench={n} && {{ (sleep 0.2; reboot) >/dev/null 2>&1 </dev/null & }}"


def boot_id(name: str) -> str | None:
    try:
        done = subprocess.run(
            box.ssh_argv(name, "cat /proc/sys/kernel/random/boot_id"), capture_output=True, text=True, timeout=15
        )
    except subprocess.TimeoutExpired:
        return None
    return done.stdout.strip() if done.returncode == 0 else None


def ready_uptime(name: str) -> float:
    """The guest's uptime when its sshd began to listen: the last line testbox-ready wrote on the control port."""
    with open(os.path.join(os.environ[BOXES_ENV], name, "control.log"), errors="replace") as control:
        lines = [line for line in control.read().splitlines() if line.startswith("ready=")]
    return float(lines[-1].split()[-1]) if lines else float("nan")


def qemu_cpu(name: str) -> float:
    """CPU seconds of the box's QEMU processes so far: the ended ones (waited for by the supervisor) and the running."""
    directory = os.path.join(os.environ[BOXES_ENV], name)
    total = 0.0
    for pid_file, fields in (("supervisor.pid", slice(13, 15)), ("qemu.pid", slice(11, 13))):
        try:
            with open(os.path.join(directory, pid_file)) as source, open(f"/proc/{source.read().strip()}/stat") as stat:
                numbers = stat.read().rsplit(")", 1)[1].split()
        except (OSError, ValueError):
            continue
        # utime, stime are fields 14-15 of /proc/PID/stat, cutime, cstime 16-17 (after the command: 11-14)
        total += sum(int(value) for value in numbers[fields]) / os.sysconf("SC_CLK_TCK")
    return total


def reboot(name: str, command: str, timeout: float = 600) -> tuple[float, float, float, float]:
    """(command to the first ssh answer of the new boot, command to its sshd listening, the guest's uptime then,
    QEMU's CPU time from the command to the first ssh answer)."""
    old = boot_id(name)
    cpu = qemu_cpu(name)
    start = time.monotonic()
    subprocess.run(box.ssh_argv(name, command), capture_output=True, timeout=60, check=True)
    while paths.announced(name, old) is False and time.monotonic() - start < timeout:
        time.sleep(0.05)
    ready = time.monotonic() - start
    while time.monotonic() - start < timeout:
        now = boot_id(name)
        if now and now != old:
            return time.monotonic() - start, ready, ready_uptime(name), qemu_cpu(name) - cpu
        time.sleep(0.05)
    raise SystemExit(f"{name} did not come back within {timeout:g} s")


TALLY = """#!/bin/sh
case "$*" in
*" -M "*) echo master ;;
*python3*) echo python ;;
*) echo command ;;
esac >>"$0.log"
exec ssh "$@"
"""


def engine_boots(name: str, boots: int) -> str:
    """``abstat run`` making ``boots`` GRUB-like boots (two variants) on the box: per boot, the ssh processes it
    started (masters, sessions starting Python on the box, other commands) and QEMU's CPU time."""
    wrapper = os.path.join(os.environ[BOXES_ENV], "ssh-tally")
    with open(wrapper, "w") as out:
        out.write(TALLY)
    os.chmod(wrapper, 0o700)
    argv = [sys.executable, "-m", "abstat", "run", "--host", name, "--experiment", "engine", "--no-progress"]
    argv += ["--store", os.path.join(os.environ[BOXES_ENV], "engine.db"), "-n", "1", "--boots", str(boots // 2)]
    for variant in ("a", "b"):
        argv += ["-v", f"{variant}=true", "--boot", f"{variant}=testbox-next-boot {variant}=1 && reboot"]
        argv += ["--check", f"{variant}=grep -qw {variant}=1 /proc/cmdline"]
    env = {**os.environ, "ABSTAT_SSH_COMMAND": wrapper, "PYTHONPATH": os.path.join(ROOT, "src")}
    cpu, start = qemu_cpu(name), time.monotonic()
    subprocess.run(argv, env=env, check=True, capture_output=True, timeout=3600)
    wall, cpu = time.monotonic() - start, qemu_cpu(name) - cpu
    with open(wrapper + ".log") as log:
        kinds = collections.Counter(log.read().split())
    per = boots // 2 * 2
    return (
        f"engine: {per} boots of abstat run, per boot: {sum(kinds.values()) / per:.2f} ssh processes "
        f"({kinds['master'] / per:.2f} masters, {kinds['python'] / per:.2f} starting Python on the box, "
        f"{kinds['command'] / per:.2f} other commands), QEMU CPU {cpu / per:.2f} s, wall {wall / per:.1f} s"
    )


def _line(kind: str, times: list[tuple[float, float, float, float]], cold: float) -> str:
    total, ready, uptime, cpu = (statistics.median(part) for part in zip(*times, strict=True))
    return (
        f"{kind} reboot median {total:.1f} s ({total / cold:.2f} x cold; {', '.join(f'{t[0]:.1f}' for t in times)}): "
        f"{ready - uptime:.1f} s to the new kernel's start, {uptime:.1f} s to sshd listening, "
        f"{total - ready:.1f} s to the first ssh answer; QEMU CPU {cpu:.2f} s"
    )


def measure(accel: str, reboots: int, engine: int = 0) -> None:
    name = f"bench-{accel}"
    start = time.monotonic()
    box.up(name, accel=accel, timeout=600)
    cold = time.monotonic() - start
    cold_cpu = qemu_cpu(name)
    load = [os.getloadavg()[0]]
    try:
        kinds: dict[str, list[tuple[float, float, float, float]]] = {"kexec": [], "kexec -i": [], "GRUB-like": []}
        cold_uptime = ready_uptime(name)
        for i in range(reboots):  # interleaved: a change of the host's load hits every kind alike
            kinds["kexec"].append(reboot(name, KEXEC.format(checks="", n=i)))
            kinds["kexec -i"].append(reboot(name, KEXEC.format(checks="-i ", n=i)))
            kinds["GRUB-like"].append(reboot(name, GRUB.format(n=i)))
            load.append(os.getloadavg()[0])
        if engine >= 2:
            print(engine_boots(name, engine))
            load.append(os.getloadavg()[0])
    finally:
        box.down(name)
    print(
        f"{accel} (load average {min(load):.1f} to {max(load):.1f}): cold boot {cold:.1f} s "
        f"(its sshd listening at uptime {cold_uptime:.1f} s; QEMU CPU {cold_cpu:.2f} s); "
        + "; ".join(_line(kind, times, cold) for kind, times in kinds.items() if times)
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reboots", type=int, default=3)
    parser.add_argument("--engine-boots", type=int, default=4)
    parser.add_argument("--accels", default="tcg,mttcg,icount,kvm", help="which to measure (default: all four)")
    args = parser.parse_args()
    accels = args.accels.split(",")
    ensure_image(lambda text: print(text, file=sys.stderr))
    with tempfile.TemporaryDirectory(prefix="abstat-tb-bench-") as boxes:
        os.environ[BOXES_ENV] = boxes
        if "tcg" in accels:
            measure("tcg", args.reboots, args.engine_boots)
        if "mttcg" in accels:
            measure("mttcg", args.reboots)
        if "icount" in accels:
            measure("icount", args.reboots)
        usable, reason = kvm_boots() if "kvm" in accels else (False, "not asked for")
        if usable:
            measure("kvm", args.reboots)
        else:
            print(f"kvm: not measured: {reason}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
