"""Errors that reach the user as one line and exit status 2.

Library code raises :class:`InputError` (bad input: a file, a line, a
value) or :class:`UsageError` (bad options); the CLI prints ``str(err)``
prefixed with ``abstat:`` and exits with status 2.  No traceback is ever
shown for these.
"""


class AbstatError(Exception):
    """Base class of every error abstat reports to the user."""

    exit_status = 2


class InputError(AbstatError):
    """Bad input data: names the file and, where known, the line."""

    def __init__(self, message: str, path: str | None = None, line: int | None = None) -> None:
        self.message = message
        self.path = path
        self.line = line
        super().__init__(self.__str__())

    def __str__(self) -> str:
        where = ""
        if self.path is not None:
            where = f"{self.path}:{self.line}: " if self.line is not None else f"{self.path}: "
        return f"{where}{self.message}"


class UsageError(AbstatError):
    """Bad command-line usage."""
