"""``abstat run --spec FILE``: the specification in a file, read as untrusted input.

A specification written by someone else is data (docs/security.md): what it would run (its commands,
hooks, background, boots and checks, the metric sources that start a program) and the store it writes
to are listed, as ``run --resume`` lists a stored experiment, and run only with ``--yes``."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from abstat.errors import InputError, UsageError


def read_spec_file(args: argparse.Namespace) -> Any:
    """The specification in ``args.spec``; ``--store`` wins over its store.  Unless ``--yes`` (or only
    ``--print-spec``), its commands and store are listed on stderr and UsageError asks for ``--yes``."""
    from abstat.engine.spec import loads
    from abstat.readers.text import read_bytes
    from abstat.store import resolve_store_path

    try:  # bounded: --spec /dev/zero is one line
        text = read_bytes(args.spec, limit=16 << 20).decode("utf-8")
    except (InputError, UnicodeDecodeError) as err:
        why = err.message.removeprefix("cannot open: ") if isinstance(err, InputError) else err
        raise InputError(f"cannot read the specification: {why}", path=args.spec) from None
    spec = loads(text, source=args.spec)
    args.named_store = spec.store  # what --print-spec shows when --store does not choose another
    spec = spec.replace(store=resolve_store_path(args.store or spec.store))
    if not (args.yes or args.print_spec):
        sys.stderr.writelines(_listed(spec, args))
        raise UsageError(
            f"--spec {args.spec!r} runs the commands above and writes to its store; check them, then add --yes"
        )
    return spec


def _listed(spec: Any, args: argparse.Namespace) -> list[str]:
    """The lines ``--resume`` shows for ``spec``, then the store it writes to (its password hidden)."""
    from abstat.cli.args.lab_args import stored_commands
    from abstat.render import escape
    from abstat.store import display_name

    if args.store:
        chosen = ""
    elif getattr(args, "named_store", None):
        chosen = " (named by the file; --store chooses another)"
    else:
        chosen = " (the file names none: the default, $ABSTAT_STORE, else ./abstat.db; --store chooses another)"
    lines = [*stored_commands(spec), f"writes to the store {display_name(spec.store)}{chosen}"]
    return [escape.terminal(line) + "\n" for line in lines]
