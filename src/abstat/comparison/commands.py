"""Warnings about stored variants whose runs ran more than one command.

Runs accumulate under one experiment across invocations, so a variant's
command can change between them (``-v before=./bench-old`` one day,
``-v before=./bench-new`` the next).  That may be meant (a renamed path),
so nothing refuses; every comparison of stored runs carries a
``command-differs`` warning naming the variant and its commands.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from abstat.stats.warnings import StatWarning


def quoted(commands: Sequence[str]) -> str:
    return ", ".join(f"`{command}`" for command in commands)


def command_warnings(
    store: Any, experiment: str, invocations: Sequence[int] | None = None, name: str | None = None
) -> dict[str, StatWarning]:
    """Stored variant -> its ``command-differs`` warning, for the variants of
    ``experiment`` whose successful runs (those of ``invocations`` when given)
    ran different commands; ``name``: what to call a variant in the message
    (``{variant}`` replaced; default the variant's own name)."""
    warnings: dict[str, StatWarning] = {}
    for variant, commands in store.variant_commands(experiment, invocations).items():
        if len(commands) > 1:
            label = (name or "{variant}").format(variant=variant)
            warnings[variant] = StatWarning(
                "command-differs", f"{label}: runs of one variant ran different commands: {quoted(commands)}", label
            )
    return warnings


def experiment_command_warnings(
    store: Any, experiment: str, invocations: Sequence[int] | None = None
) -> list[StatWarning]:
    """One ``command-differs`` warning per set of commands that some variants
    of ``experiment`` share (an A/A experiment's two variants run one command)."""
    shared: dict[tuple[str, ...], list[str]] = {}  # commands -> the variants that ran them
    for variant, commands in store.variant_commands(experiment, invocations).items():
        if len(commands) > 1:
            shared.setdefault(tuple(commands), []).append(variant)
    return [
        StatWarning(
            "command-differs",
            f"{', '.join(variants)}: runs of one variant ran different commands: {quoted(commands)}",
            variants[0],
        )
        for commands, variants in shared.items()
    ]
