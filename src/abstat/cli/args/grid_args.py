"""``abstat run -L/--parameter-list NAME VALUES``: a parameter scan's grid, hyperfine's spelling.

``-L size 1,10,100`` runs every variant at each value, ``{size}`` replaced
in its command and the hooks; repeated, ``-L`` makes the grid of every
combination (:mod:`abstat.engine.grid`).
"""

from __future__ import annotations

import argparse

from abstat.engine.parts import NAME_CHARS
from abstat.errors import UsageError


def add_grid_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("parameter scan")
    group.add_argument(
        "-L",
        "--parameter-list",
        nargs=2,
        action="append",
        default=[],
        metavar=("NAME", "VALUES"),
        help="run every variant at each of these comma-separated values, {NAME} replaced in its "
        "command and the hooks; repeat for a grid (stored as labels NAME=VALUE)",
    )


def parameters_from_args(args: argparse.Namespace) -> dict[str, tuple[str, ...]]:
    """The grid of the ``-L`` options (name -> values), checked in the options' words."""
    parameters: dict[str, tuple[str, ...]] = {}
    for name, text in getattr(args, "parameter_list", None) or []:
        if not name or not set(name) <= NAME_CHARS:
            raise UsageError(f"-L {name!r}: a parameter's name is letters, digits and '_.+-'")
        if name in parameters:
            raise UsageError(f"-L {name}: given twice (list every value in one -L {name} A,B,C)")
        values = tuple(text.split(","))  # the specification checks them as text (UTF-8, length)
        if any(not value.strip() for value in values):
            raise UsageError(f"-L {name} {text!r}: an empty value (VALUES are separated by commas)")
        parameters[name] = values
    if parameters and getattr(args, "until_decided", False):
        raise UsageError("-L: a parameter scan cannot stop when decided yet (--until-decided)")
    return parameters
