"""Errors that reach the user as one line and exit status 2.

Library code raises :class:`InputError` (bad input: a file, a line, a
value) or :class:`UsageError` (bad options); the CLI prints ``str(err)``
prefixed with ``abstat:`` and exits with status 2.  No traceback is ever
shown for these.

An error about a field (a parameter of a library function, a field of a
specification) names it as ``{field}`` in its message and lists it in
``fields``: ``str(err)`` names the field itself, and the CLI, which knows
the flag that set it, prints :meth:`AbstatError.named` with the flag's name.

A warning or a note the library returns names its fields the same way
(:class:`abstat.stats.warnings.StatWarning` ``fields``, :func:`named` for a
note's text); they are read while the command runs, so they are called as
the command running names them (:class:`naming`, set by the CLI), else by
each field's usual flag.
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


_NAMING: list[Callable[[str], str]] = []  # the command line's naming of fields, innermost last


class naming:  # noqa: N801 - used as a function: ``with naming(flag): ...``
    """Within ``with naming(flag):``, the fields warnings and notes name are called ``flag(field)``
    (the CLI: :func:`abstat.cli.flags.namer` of the command it runs)."""

    def __init__(self, name: Callable[[str], str]) -> None:
        self.name = name

    def __enter__(self) -> None:
        _NAMING.append(self.name)

    def __exit__(self, *exc: object) -> None:
        _NAMING.pop()


def field_name(field: str) -> str:
    """What a warning or a note calls ``field``: the flag of the command running (:class:`naming`), else
    the field's usual flag (``--FIELD``, as :mod:`abstat.cli.flags` names it for every command)."""
    if _NAMING:
        return _NAMING[-1](field)
    from abstat.cli.flags import namer

    return namer("")(field)


def named(message: str, *fields: str) -> str:
    """A note's ``message`` with each ``{field}`` of ``fields`` called by :func:`field_name`."""
    return fill(message, fields, field_name)


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
