"""Diagnostics attached to results as values (never printed by the library).

A :class:`StatWarning` has a stable machine-readable ``code`` (documented in
``docs/json.md``), a one-line human ``message`` and, where it concerns one
variant, that variant's name.  ``Warning`` is an alias kept for the agreed
interface (``abstat.stats.warnings.Warning``).

A message about a field (an option the user can change) names it as the
library's errors do: ``{field}`` in the text, listed in ``fields``; ``message``
calls it by the flag of the command running (:func:`abstat.errors.field_name`),
:meth:`StatWarning.named` as any caller says.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from abstat.errors import field_name, fill
from abstat.fastdataclass import dataclass


@dataclass(frozen=True, init=False)
class StatWarning:
    code: str
    template: str  # the message, each field of ``fields`` still ``{field}``
    variant: str | None = None
    fields: tuple[str, ...] = ()

    def __init__(self, code: str, message: str, variant: str | None = None, *, fields: Sequence[str] = ()) -> None:
        object.__setattr__(self, "code", code)
        object.__setattr__(self, "template", message)
        object.__setattr__(self, "variant", variant)
        object.__setattr__(self, "fields", tuple(fields))

    @property
    def message(self) -> str:
        """The one-line message, each field called by the flag of the command running."""
        return self.named(field_name)

    def named(self, name: Callable[[str], str]) -> str:
        """The message, each field called ``name(field)``."""
        return fill(self.template, self.fields, name)

    def to_dict(self) -> dict[str, str | None]:
        return {"code": self.code, "message": self.message, "variant": self.variant}


Warning = StatWarning  # noqa: A001 - the agreed public name
