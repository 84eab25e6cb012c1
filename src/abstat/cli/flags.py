"""The flag that sets each library field, to name it in an error (:meth:`abstat.errors.AbstatError.named`).

A field is called ``--FIELD`` (underscores as dashes) unless named here, per command or for all.
"""

from __future__ import annotations

from collections.abc import Callable

EVERY: dict[str, str] = {
    "runs": "-n",
    "metrics": "--metric",
    "variants": "-v",
}
BY_COMMAND: dict[str, dict[str, str]] = {
    "noise": {"metrics": "--report"},
}


def namer(command: str) -> Callable[[str], str]:
    """``field -> flag`` for ``abstat COMMAND``."""
    own = BY_COMMAND.get(command, {})

    def flag(field: str) -> str:
        return own.get(field) or EVERY.get(field) or "--" + field.replace("_", "-")

    return flag
