"""``abstat run --host ...``: the options, checked, and the lab's schedules.

Nothing here runs anything: :func:`lab_plan` turns parsed options into a
:class:`LabPlan`; :func:`boot_order` and :func:`block_slots` are the seeded
schedules (which boot comes when on each host, which run when in a boot).
"""
from __future__ import annotations

import argparse
import math
import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from abstat.errors import UsageError

DEFAULT_BOOT_TIMEOUT_S = 600.0
_NAME_CHARS = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.+-@")


@dataclass(frozen=True)
class HostSpec:
    label: str         # the value of the host=... label
    destination: str   # what ssh is given


@dataclass
class LabPlan:
    """Everything the lab needs to run (and resume) one experiment."""

    experiment: str
    hosts: list[HostSpec]
    variants: dict[str, str]                   # name -> measured command
    runs: int
    warmup: int
    order: str
    seed: int
    boot: dict[str, str] = field(default_factory=dict)   # variant -> boot command
    check: dict[str, str] = field(default_factory=dict)  # variant -> check command
    boots: int = 1
    boot_timeout: float = DEFAULT_BOOT_TIMEOUT_S
    labels: dict[str, str] = field(default_factory=dict)
    remote: dict[str, Any] = field(default_factory=dict)  # the runner's settings (shell, hooks, metrics...)

    @property
    def reboots(self) -> bool:
        return bool(self.boot)

    def boot_schedule(self, host: str) -> list[str]:
        """Variant of each boot on ``host`` (one entry, ``""``, without --boot)."""
        if not self.reboots:
            return [""]
        return boot_order(list(self.variants), self.boots, self.seed, host)

    def slots(self, host: str, boot_index: int) -> list[list[Any]]:
        """The runs of one boot: all variants interleaved, or the booted variant's."""
        variant = self.boot_schedule(host)[boot_index]
        names = [variant] if variant else list(self.variants)
        return block_slots(names, self.runs, self.warmup, self.order, f"{self.seed}:{host}:{boot_index}")


def boot_order(variants: Sequence[str], boots: int, seed: int, host: str) -> list[str]:
    """Balanced, seeded, randomized: ``boots`` rounds, each boots every variant
    once in a shuffled order (so not all "before" first, and every prefix of
    the schedule is within one boot of balanced)."""
    rng = random.Random(f"boot-order:{seed}:{host}")
    order: list[str] = []
    for _ in range(boots):
        round_ = list(variants)
        rng.shuffle(round_)
        order.extend(round_)
    return order


def block_slots(names: Sequence[str], runs: int, warmup: int, order: str, seed: str) -> list[list[Any]]:
    """``[variant, iteration, warmup, position]`` for every run of one block."""
    from abstat.runner.schedule import build_schedule

    number = random.Random(f"block:{seed}").randrange(2**31)
    slots = build_schedule(list(names), runs, warmup=warmup, order=order, seed=number)
    return [[slot.variant, slot.iteration, slot.warmup, position] for position, slot in enumerate(slots)]


def parse_hosts(specs: Sequence[str]) -> list[HostSpec]:
    hosts: list[HostSpec] = []
    for spec in specs:
        label, sep, destination = spec.partition("=")
        if not sep:
            label, destination = spec, spec
        label, destination = label.strip(), destination.strip()
        if not destination or destination.startswith("-") or any(c.isspace() for c in destination):
            raise UsageError(f"--host {spec!r}: expected an ssh destination, NAME or LABEL=DESTINATION")
        if not label or not set(label) <= _NAME_CHARS or label.startswith("-"):
            raise UsageError(f"--host {spec!r}: the label must be letters, digits or '_.+-@' "
                             "(give one: --host LABEL=DESTINATION)")
        if any(h.label == label for h in hosts):
            raise UsageError(f"--host {spec!r}: host label {label!r} given twice")
        hosts.append(HostSpec(label, destination))
    return hosts


def _per_variant(specs: Sequence[str], option: str, variants: dict[str, str]) -> dict[str, str]:
    found: dict[str, str] = {}
    for spec in specs:
        name, sep, command = spec.partition("=")
        if not sep or not command.strip():
            raise UsageError(f"{option} {spec!r}: expected VARIANT=COMMAND")
        if name not in variants:
            raise UsageError(f"{option} {spec!r}: no variant {name!r} (variants: {', '.join(variants)})")
        if name in found:
            raise UsageError(f"{option} {name}=...: given twice")
        found[name] = command
    return found


def _variants(specs: Sequence[str]) -> dict[str, str]:
    variants: dict[str, str] = {}
    for spec in specs:
        name, sep, text = spec.partition("=")
        if not sep or not name or not set(name) <= _NAME_CHARS - {"@"} or not text.strip():
            raise UsageError(f"-v {spec!r}: expected NAME=COMMAND (NAME of letters, digits, '_.+-')")
        if name in variants:
            raise UsageError(f"variant {name!r} given twice")
        variants[name] = text
    return variants


def lab_plan(args: argparse.Namespace, experiment: str, seed: int) -> LabPlan:
    """Check the lab options (and the shared ones) before anything runs."""
    from abstat.commands.run import MAX_RUNS, parse_labels
    from abstat.runner import parse_metric_pattern
    from abstat.runner import perf as perf_mod

    if not args.variant:
        raise UsageError("give at least one variant: -v NAME=COMMAND")
    variants = _variants(args.variant)
    if args.runs < 1 or args.warmup < 0 or args.runs > MAX_RUNS or args.warmup > MAX_RUNS:
        raise UsageError(f"-n must be 1 to {MAX_RUNS:,} and --warmup 0 to {MAX_RUNS:,}")
    if args.timeout is not None and not (args.timeout > 0 and math.isfinite(args.timeout)):
        raise UsageError("--timeout must be a positive number of seconds")
    if not 0 < args.confidence < 100:
        raise UsageError("--confidence must be between 0 and 100 (a percentage)")
    hosts = parse_hosts(args.host)
    if not hosts:
        raise UsageError("--boot, --check, --boots and --boot-timeout need --host: abstat boots test boxes "
                         "over ssh, never this machine")
    boot = _per_variant(args.boot, "--boot", variants)
    check = _per_variant(args.check, "--check", variants)
    if boot and set(boot) != set(variants):
        raise UsageError("with --boot, give one for every variant (missing: "
                         f"{', '.join(v for v in variants if v not in boot)})")
    if check and not boot:
        raise UsageError("--check needs --boot (it checks the boot of a variant)")
    if args.boots is not None and not boot:
        raise UsageError("--boots needs --boot VARIANT=COMMAND")
    boots = 1 if args.boots is None else args.boots
    if boots < 1:
        raise UsageError("--boots must be at least 1")
    timeout = DEFAULT_BOOT_TIMEOUT_S if args.boot_timeout is None else args.boot_timeout
    if not (timeout > 0 and math.isfinite(timeout)):
        raise UsageError("--boot-timeout must be a positive number of seconds")
    if args.baseline is not None and args.baseline not in variants:
        raise UsageError(f"--baseline {args.baseline!r} is not one of the variants")
    labels = parse_labels(args.label)
    if "host" in labels:
        raise UsageError("--label host=...: with --host, the host label is the host's name "
                         "(rename with --host LABEL=DESTINATION)")
    for spec in args.metric:
        try:
            parse_metric_pattern(spec)
        except ValueError as err:
            raise UsageError(str(err)) from None
    perf_events: list[str] = []
    if args.perf or args.perf_events:
        perf_events = [e.strip() for e in (args.perf_events or ",".join(perf_mod.DEFAULT_EVENTS)).split(",")
                       if e.strip()]
    hooks = {kind: getattr(args, kind) for kind in ("setup", "cleanup", "prepare", "conclude") if getattr(args, kind)}
    remote = {
        "shell": bool(args.shell), "timeout": args.timeout, "hooks": hooks, "background": list(args.background),
        "metrics": list(args.metric), "json_lines": not args.no_json_lines,
        "ignore_failure": bool(args.ignore_failure), "perf_events": perf_events,
    }
    return LabPlan(
        experiment=experiment, hosts=hosts, variants=variants, runs=args.runs, warmup=args.warmup,
        order=args.order, seed=seed, boot=boot, check=check, boots=boots, boot_timeout=timeout,
        labels=labels, remote=remote,
    )
