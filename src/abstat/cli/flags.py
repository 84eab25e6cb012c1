"""The flag that sets each library field, to name it in an error (:meth:`abstat.errors.AbstatError.named`)
or in a warning or a note the command shows (:class:`abstat.errors.naming`).

A field is called ``--FIELD`` (underscores as dashes) unless named here, per command or for all.  The advice
of a warning may name an option the command showing it lacks (or lacks that choice of): it then names the
command that has it (:data:`ELSEWHERE`).
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (start-up: every command names its flags)
if TYPE_CHECKING:
    from collections.abc import Callable

EVERY: dict[str, str] = {
    "runs": "-n",
    "metrics": "--metric",
    "variants": "-v",
}
BY_COMMAND: dict[str, dict[str, str]] = {
    "noise": {"metrics": "--report"},
}
# Advice about reading the data again another way: the command whose option it is.
_REPORT = {
    "outliers": "abstat report --outliers",
    "center": "abstat report --center",
    "format": "abstat report --format",  # --format html: a report's
    "unit": "abstat compare --unit",  # a plain file's unit
}
_HISTORY = {
    field: "abstat history --" + field.replace("_", "-")
    for field in ("max_pvalue", "min_magnitude", "min_change", "min_segment", "no_drift_check")
}
ELSEWHERE: dict[str, dict[str, str]] = {
    "compare": {"format": _REPORT["format"]},
    "report": {"unit": _REPORT["unit"]},
    "show": _REPORT,
    "run": _REPORT,
    "publish": {**_REPORT, **_HISTORY},
}


def namer(command: str, *, advice: bool = False) -> Callable[[str], str]:
    """``field -> flag`` for ``abstat COMMAND``; ``advice``: in the warnings and notes it shows."""
    own = {**BY_COMMAND.get(command, {}), **(ELSEWHERE.get(command, {}) if advice else {})}

    def flag(field: str) -> str:
        return own.get(field) or EVERY.get(field) or "--" + field.replace("_", "-")

    return flag
