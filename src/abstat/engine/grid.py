"""A parameter scan: the grid of ``-L NAME VALUES``, and how it becomes the runner's schedule.

A grid point is one value of every parameter (hyperfine's ``-L``; several
make the product).  Each variant runs at each point with ``{NAME}``
replaced by the point's value in its command and in the hooks.  Every
(variant, point) is one variant of the runner's schedule
(:func:`schedule_entries`), so the counterbalanced interleaving covers the
whole grid: each block runs every variant at every point once.  Each point's
runs are stored in an invocation of their own, labelled with the point's
values (``size=10``), under the variant's own name: a grid is stored as a
lab's hosts are, and ``abstat report --rows size`` shows it.

Placeholders are checked when the specification is built: a ``{NAME}``
that is not a parameter (outside ``${NAME}``, the shell's) and a parameter
used nowhere are refused, one line naming them.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from abstat.engine.parts import HOOKS, SpecError

if TYPE_CHECKING:
    from abstat.engine.spec import ExperimentSpec

# {NAME}, not ${NAME} (the shell's); NAME as a parameter's name may be
_PLACEHOLDER = re.compile(r"(?<!\$)\{([A-Za-z0-9_.+-]+)\}")


@dataclass(frozen=True)
class Entry:
    """One variant at one grid point: a variant of the runner's schedule."""

    name: str  # the runner's name for it: ``before [size=10]``
    variant: str  # the variant's own name (what is stored)
    point: int  # the grid point's index in :func:`grid_points`
    command: str  # the variant's command with the point's values
    hooks: dict[str, str]  # kind -> the hook's command with the point's values


def grid_size(parameters: Mapping[str, tuple[str, ...]]) -> int:
    size = 1
    for values in parameters.values():
        size *= len(values)
    return size


def grid_points(spec: ExperimentSpec) -> list[dict[str, str]]:
    """Every point of the grid (name -> value), the first parameter varying slowest; ``[{}]`` without one."""
    names = list(spec.parameters)
    return [dict(zip(names, values, strict=True)) for values in itertools.product(*spec.parameters.values())]


def substitute(text: str, point: Mapping[str, str]) -> str:
    """``text`` with every ``{NAME}`` of the point replaced by its value (others left as they are)."""
    return _PLACEHOLDER.sub(lambda m: point.get(m.group(1), m.group(0)), text)


def point_text(point: Mapping[str, str]) -> str:
    """``size=10,threads=2``: a point as its labels read."""
    return ",".join(f"{name}={value}" for name, value in point.items())


def check_placeholders(spec: ExperimentSpec) -> None:
    """Refuse a ``{NAME}`` that is no parameter, and a parameter no command or hook uses."""
    texts = [(f"variant {v.name!r} command", v.command) for v in spec.variants]
    texts += [(f"hooks.{kind}", text) for kind, text in spec.hooks.items().items()]
    used: set[str] = set()
    for where, text in texts:
        for name in _PLACEHOLDER.findall(text):
            if name not in spec.parameters:
                raise SpecError(
                    where,
                    f"{{{name}}} is not a parameter (parameters: {', '.join(spec.parameters)}); "
                    f"write ${{{name}}} for the shell's variable",
                )
            used.add(name)
    unused = [name for name in spec.parameters if name not in used]
    if unused:
        raise SpecError(f"parameters[{unused[0]!r}]", f"{{{unused[0]}}} appears in no command or hook")


def schedule_entries(spec: ExperimentSpec) -> list[Entry]:
    """The runner's variants: each variant at each point (just the variants without parameters)."""
    hooks = spec.hooks.items()
    if not spec.parameters:
        return [Entry(v.name, v.name, 0, v.command, dict(hooks)) for v in spec.variants]
    entries: list[Entry] = []
    taken: set[str] = set()
    for index, point in enumerate(grid_points(spec)):
        for variant in spec.variants:
            name = f"{variant.name} [{point_text(point)}]"
            if name in taken:  # values holding ',' or '=' can spell another point
                name = f"{variant.name} [point {index + 1}]"
            taken.add(name)
            entries.append(
                Entry(
                    name,
                    variant.name,
                    index,
                    substitute(variant.command, point),
                    {kind: substitute(text, point) for kind, text in hooks.items() if kind in HOOKS},
                )
            )
    return entries
