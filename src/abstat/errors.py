"""Errors that reach the user as one line and exit status 2.

Library code raises :class:`InputError` (bad input: a file, a line, a
value) or :class:`UsageError` (bad options); the CLI prints ``str(err)``
prefixed with ``abstat:`` and exits with status 2.  No traceback is ever
shown for these.

An error about a field (a parameter of a library function, a field of a
specification) names it as ``{field}`` in its message and lists it in
``fields``: ``str(err)`` names the field itself, and the CLI, which knows
the flag that set it, prints :meth:`AbstatError.named` with the flag's name.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (start-up, issue 42)
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence


def _same(field: str) -> str:
    return field


def fill(message: str, fields: Sequence[str], name: Callable[[str], str] = _same) -> str:
    """``message`` with each ``{field}`` of ``fields`` replaced by ``name(field)``."""
    for field in fields:
        message = message.replace("{" + field + "}", name(field))
    return message


class AbstatError(Exception):
    """Base class of every error abstat reports to the user."""

    exit_status = 2

    def __init__(self, message: str = "", *, fields: Sequence[str] = ()) -> None:
        self.message = message
        self.fields = tuple(fields)
        super().__init__(self.named())

    def named(self, name: Callable[[str], str] = _same) -> str:
        """The message, each field called ``name(field)`` (the CLI: the flag that set it)."""
        return fill(self.message, self.fields, name)

    def template(self) -> str:
        """The whole message with its fields still ``{field}``: to wrap it in another error with ``fields``."""
        return self.named(lambda field: "{" + field + "}")

    def __str__(self) -> str:
        return self.named()


class InputError(AbstatError):
    """Bad input data: names the file and, where known, the line."""

    def __init__(
        self, message: str, path: str | None = None, line: int | None = None, *, fields: Sequence[str] = ()
    ) -> None:
        self.path = path
        self.line = line
        super().__init__(message, fields=fields)

    def named(self, name: Callable[[str], str] = _same) -> str:
        where = ""
        if self.path is not None:
            where = f"{self.path}:{self.line}: " if self.line is not None else f"{self.path}: "
        return f"{where}{fill(self.message, self.fields, name)}"


class UsageError(AbstatError):
    """Bad command-line usage."""


def usage_error(err: ValueError) -> UsageError:
    """A ValueError with the user's message as a :class:`UsageError`, keeping the fields it names
    (the box's ``FieldError``: ``message`` and ``fields``)."""
    return UsageError(getattr(err, "message", str(err)), fields=getattr(err, "fields", ()))
