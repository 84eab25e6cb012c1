"""``abstat testbox``: local QEMU test boxes booting a real Debian kernel (docs/lab.md).

abstat testbox up NAME [--kernel FILE [--initrd FILE]] [--cpu MODEL] [--smp N] [--memory SIZE]
abstat testbox down NAME
abstat testbox list
"""

from __future__ import annotations

import argparse
import json
import sys

from abstat.cli.args import ArgumentParser, add_format
from abstat.errors import UsageError


def build_parser() -> ArgumentParser:
    parser = ArgumentParser(
        prog="abstat testbox",
        description="Local test boxes: QEMU guests booting a real Debian kernel (python3, sshd, kexec-tools, bpftrace"
        " inside), reached over ssh on 127.0.0.1 as --host NAME by every command.",
        examples=("abstat testbox up tb1 --smp 2", "abstat testbox list", "abstat testbox down tb1"),
        epilog="Then --host tb1 in abstat run, doctor, noise, bisect. Exit status: 0; 2 when a box cannot be built,"
        " started, reached or stopped.",
    )
    actions = parser.add_subparsers(dest="action", metavar="{up,down,list}", help="what to do")
    start = actions.add_parser("up", help="start a box (built and made first when needed); wait until ssh reaches it")
    start.add_argument("name", help="the box's name (a letter, then letters, digits, - or _): --host NAME")
    start.add_argument("--kernel", metavar="FILE", help="boot this kernel (bzImage) instead of Debian's")
    start.add_argument(
        "--initrd",
        metavar="FILE",
        help="with --kernel: its initramfs (default: none; it must then"
        " have virtio-blk, virtio-net and ext4 built in, or be given the image's)",
    )
    start.add_argument("--cpu", default="max", metavar="MODEL", help="QEMU CPU model (default max)")
    start.add_argument("--smp", type=int, default=1, metavar="N", help="CPUs (default 1)")
    start.add_argument("--memory", default="1024M", metavar="SIZE", help="memory (default 1024M)")
    start.add_argument(
        "--accel",
        choices=("tcg", "mttcg", "icount", "kvm", "auto"),
        default="tcg",
        help="tcg (default: one host thread runs every guest CPU, the least CPU time), mttcg (a host thread per"
        " guest CPU: faster on an idle host), icount (tcg whose clock counts instructions: cycle counts that do not"
        " move with the host's load), kvm, or auto: kvm when it boots a guest kernel here (a probe boot)",
    )
    start.add_argument("--append", default="", metavar="ARGS", help="add these to the kernel command line")
    start.add_argument(
        "--timeout", type=float, default=300, metavar="SECONDS", help="how long to wait for ssh (default 300)"
    )
    stop = actions.add_parser("down", help="stop a box and remove it (disk, keys, sockets)")
    stop.add_argument("name")
    listing = actions.add_parser("list", help="the boxes, their state and ssh port")
    add_format(listing, ("text", "json"), default="text")
    return parser


def main(argv: list[str]) -> int:
    from abstat.render.escape import terminal
    from abstat.lab.testbox import box

    args = build_parser().parse_args(argv)
    if args.action is None:
        raise UsageError("give an action: up, down or list")
    if args.action == "list":
        boxes = box.list_boxes()
        _list(args, boxes, terminal)
        damaged = [item for item in boxes if item.state == "damaged"]
        for item in damaged:
            print(f"abstat testbox: {terminal(item.cmdline)}", file=sys.stderr)
        return 2 if damaged else 0
    if args.action == "down":
        box.down(args.name)
        print(f"test box {args.name} is down")
        return 0
    accel = _accel(args)
    found = box.up(
        args.name,
        kernel=args.kernel,
        initrd=args.initrd,
        cpu=args.cpu,
        smp=args.smp,
        memory=args.memory,
        accel=accel,
        append=args.append,
        timeout=args.timeout,
        progress=lambda text: print(terminal(text), file=sys.stderr),
    )
    print(
        f"test box {found.name} is up: ssh port {found.port} on 127.0.0.1, {found.accel}, -cpu {found.cpu}, "
        f"{found.smp} CPU, {found.memory}; use --host {found.name}"
    )
    return 0


def _accel(args: argparse.Namespace) -> str:
    if args.accel != "auto":
        return args.accel
    from abstat.lab.testbox.probe import kvm_boots

    usable, reason = kvm_boots()
    print(f"kvm: {'boots a guest kernel' if usable else reason}; using {'kvm' if usable else 'tcg'}", file=sys.stderr)
    return "kvm" if usable else "tcg"


def _list(args: argparse.Namespace, boxes: list, terminal) -> int:
    if args.format == "json":
        print(json.dumps([vars(item) for item in boxes], indent=1))
        return 0
    if not boxes:
        print("no test boxes")
        return 0
    print(
        f"{'name':<16} {'state':<9} {'port':>6} {'accel':<5} {'cpu':<16} {'smp':>3} {'memory':>7} {'boots':>5}  cmdline"
    )
    for item in boxes:
        print(
            terminal(
                f"{item.name:<16} {item.state:<9} {item.port:>6} {item.accel:<5} {item.cpu:<16} {item.smp:>3} "
                f"{item.memory:>7} {item.boots:>5}  {item.cmdline}"
            )
        )
    return 0
