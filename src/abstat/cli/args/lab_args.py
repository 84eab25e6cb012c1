"""The lab's options: hosts, boots and checks -> :class:`~abstat.engine.spec.Lab` (``abstat run --host``).

A new lab option (a lease on the boxes, say) is added here and to
:class:`~abstat.engine.spec.Lab`; ``run.py`` does not change.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Sequence
from typing import Any

from abstat.engine.spec import DEFAULT_BOOT_TIMEOUT_S, NAME_CHARS, ExperimentSpec as Spec, Host, Lab
from abstat.errors import UsageError

OPTIONS = ("host", "boot", "check", "boots", "boot_timeout")


def add_lab_options(parser: argparse.ArgumentParser) -> None:
    lab = parser.add_argument_group("lab: several machines and boots, over ssh (docs/lab.md)")
    lab.add_argument(
        "--host",
        action="append",
        default=[],
        metavar="NAME|LABEL=DEST",
        help="run on this ssh destination (repeatable; in parallel; runs labelled host=NAME)",
    )
    lab.add_argument(
        "--boot",
        action="append",
        default=[],
        metavar="VARIANT=COMMAND",
        help="the command that boots the host into VARIANT (e.g. grub-reboot X && reboot)",
    )
    lab.add_argument(
        "--check",
        action="append",
        default=[],
        metavar="VARIANT=COMMAND",
        help="must exit 0 on the host once booted into VARIANT, or the boot is refused",
    )
    lab.add_argument("--boots", type=int, default=None, metavar="K", help="boots per variant (default 1)")
    lab.add_argument(
        "--boot-timeout",
        type=float,
        default=None,
        metavar="S",
        help="wait at most S seconds for a host to come back (default 600)",
    )
    lab.add_argument(
        "--no-wait",
        action="store_true",
        help="a host leased to another experiment stops at once, naming the holder (default: wait)",
    )
    lab.add_argument(
        "--resume",
        metavar="EXPERIMENT",
        help="continue a --host experiment where it stopped (stored boots are not repeated); "
        "shows the stored commands and runs them only with --yes",
    )
    lab.add_argument(
        "--yes",
        action="store_true",
        help="with --resume or --spec: run the commands it shows (a store or a file may come from elsewhere)",
    )


def parse_hosts(specs: Sequence[str]) -> tuple[Host, ...]:
    hosts: list[Host] = []
    for spec in specs:
        label, sep, destination = spec.partition("=")
        if not sep:
            label, destination = spec, spec
        label, destination = label.strip(), destination.strip()
        if not destination or destination.startswith("-") or any(c.isspace() for c in destination):
            raise UsageError(f"--host {spec!r}: expected an ssh destination, NAME or LABEL=DESTINATION")
        if not label or not set(label) <= NAME_CHARS | {"@"} or label.startswith("-"):
            raise UsageError(
                f"--host {spec!r}: the label must be letters, digits or '_.+-@' (give one: --host LABEL=DESTINATION)"
            )
        if any(h.label == label for h in hosts):
            raise UsageError(f"--host {spec!r}: host label {label!r} given twice")
        hosts.append(Host(label, destination))
    return tuple(hosts)


def _per_variant(specs: Sequence[str], option: str, names: list[str]) -> dict[str, str]:
    found: dict[str, str] = {}
    for spec in specs:
        name, sep, command = spec.partition("=")
        if not sep or not command.strip():
            raise UsageError(f"{option} {spec!r}: expected VARIANT=COMMAND")
        if name not in names:
            raise UsageError(f"{option} {spec!r}: no variant {name!r} (variants: {', '.join(names)})")
        if name in found:
            raise UsageError(f"{option} {name}=...: given twice")
        found[name] = command
    return found


def lab_from_args(args: argparse.Namespace, names: list[str], labels: dict[str, str]) -> Lab | None:
    """The lab the options describe (None without --host), checked in the options' words."""
    hosts = parse_hosts(args.host)
    if not hosts:
        if args.boot or args.check or (args.boots, args.boot_timeout) != (None, None) or getattr(args, "no_wait", 0):
            raise UsageError(
                "--boot, --check, --boots, --boot-timeout and --no-wait need --host: abstat boots test "
                "boxes over ssh, never this machine"
            )
        return None
    boot = _per_variant(args.boot, "--boot", names)
    check = _per_variant(args.check, "--check", names)
    _check_boots(args, names, boot, check)
    timeout = DEFAULT_BOOT_TIMEOUT_S if args.boot_timeout is None else args.boot_timeout
    if not (timeout > 0 and math.isfinite(timeout)):
        raise UsageError("--boot-timeout must be a positive number of seconds")
    if args.baseline is not None and args.baseline not in names:
        raise UsageError(f"--baseline {args.baseline!r} is not one of the variants")
    if "host" in labels:
        raise UsageError(
            "--label host=...: with --host, the host label is the host's name (rename with --host LABEL=DESTINATION)"
        )
    return Lab(hosts, boot, check, 1 if args.boots is None else args.boots, timeout)


def _check_boots(args: argparse.Namespace, names: list[str], boot: dict[str, str], check: dict[str, str]) -> None:
    """--boot for every variant or none, --check and --boots only with --boot."""
    if boot and set(boot) != set(names):
        raise UsageError(
            f"with --boot, give one for every variant (missing: {', '.join(v for v in names if v not in boot)})"
        )
    if check and not boot:
        raise UsageError("--check needs --boot (it checks the boot of a variant)")
    if args.boots is not None and not boot:
        raise UsageError("--boots needs --boot VARIANT=COMMAND")
    if args.boots is not None and args.boots < 1:
        raise UsageError("--boots must be at least 1")


def stored_commands(spec: Spec) -> list[str]:
    """What ``--resume`` would run, one line each (the caller escapes them): a store may have been
    imported or shared, and nothing read from it is run before the user has seen it."""
    from abstat.engine.stored import stored_commands as lines

    return lines(spec)


def lease_hooks(args: argparse.Namespace) -> Any:
    """The host hooks of ``--no-wait`` (None: the engine's default lease, which waits)."""
    if not getattr(args, "no_wait", False):
        return None
    from abstat.lab.lease import BoxLease

    return lambda host: BoxLease(wait=False)
