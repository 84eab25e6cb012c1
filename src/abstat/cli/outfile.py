"""Writing an output file (``-o FILE``) safely.

* A regular file (or a new path) is written to a temporary file in the same
  directory, flushed to disk and renamed over it: readers see the old file
  or the new one, never half of one, and an export that fails half-way
  leaves the old file whole.  The file keeps its permission bits.
* A symbolic link is followed: the file it points to is replaced the same
  way, and the link stays.
* Anything else (``/dev/null``, ``/dev/stdout``, a FIFO, a terminal) is
  written through, never replaced: renaming over ``/dev/null`` as root
  would replace the device.
* A SQLite database (a result store, or its write-ahead log) is never
  replaced: ``-o abstat.db`` is refused, the runs recorded there stay.
* Nor is one of the command's own inputs (``report old.txt new.txt -o
  old.txt``, a link to one, a file inside an input directory): the
  command names them (``inputs``) and the output is refused before any work.
* Every write, the flush and the close are checked.  On failure (a full
  disk, ``/dev/full``) no partial file is left where a regular file was
  asked for, and the error is one line naming the file
  (:class:`abstat.errors.InputError`, exit status 2).
"""

from __future__ import annotations

import os
import stat
import tempfile
from collections.abc import Callable, Iterable, Iterator
from typing import TextIO

from abstat.errors import InputError


def check_output(path: str, inputs: Iterable[str | None] = ()) -> tuple[str, int | None]:
    """Refuse an ``-o`` target that must not be written (a directory, a SQLite database, one of the
    command's ``inputs``: files, ``LABEL=FILE``, globs, directories) before any work is done; returns
    the real target and its mode (None: it does not exist yet)."""
    target = os.path.realpath(path)  # through symbolic links (a dangling one: its target is created)
    try:
        mode = os.stat(target).st_mode
    except FileNotFoundError:
        mode = None
    except OSError as err:
        raise InputError(f"cannot write: {err.strerror or err}", path=path) from None
    if mode is not None and stat.S_ISDIR(mode):
        raise InputError("cannot write: is a directory", path=path)
    if mode is not None and stat.S_ISREG(mode) and is_database(target):
        raise InputError(
            "will not replace a SQLite database (a result store?) with the output; choose another -o FILE", path=path
        )
    if mode is not None:
        _refuse_inputs(path, target, inputs)
    return target, mode


def _refuse_inputs(path: str, target: str, inputs: Iterable[str | None]) -> None:
    for given in inputs:
        for candidate in _paths_of(given):
            if _holds(candidate, target):
                shown = (
                    f" (in {candidate})" if os.path.isdir(candidate) else "" if candidate == path else f" ({candidate})"
                )
                raise InputError(
                    f"is an input of this command{shown}: the output would replace it; choose another -o FILE",
                    path=path,
                )


def _paths_of(given: str | None) -> Iterator[str]:
    """The files an input argument may name: itself, the FILE of ``LABEL=FILE``, what a glob matches."""
    if not given or given == "-":
        return
    import glob

    for text in (given, given.partition("=")[2]) if "=" in given else (given,):
        if text:
            yield text
            if any(c in text for c in "*?["):
                yield from glob.glob(text)


def _holds(candidate: str, target: str) -> bool:
    """Whether ``candidate`` is the file ``target`` (through links), or a directory it lies in."""
    try:
        if os.path.isdir(candidate):
            return os.path.commonpath([os.path.realpath(candidate), target]) == os.path.realpath(candidate)
        return os.path.samefile(candidate, target)
    except (OSError, ValueError):
        return False


def write_output(
    path: str, write: Callable[[TextIO], object], *, newline: str | None = None, inputs: Iterable[str | None] = ()
) -> None:
    """Call ``write(handle)`` with a UTF-8 text handle whose contents end up in ``path`` (not one of
    ``inputs``: :func:`check_output`)."""
    target, mode = check_output(path, inputs)
    if mode is None or stat.S_ISREG(mode):
        _replace_regular(path, target, mode, write, newline)
    else:
        _write_through(path, write, newline)


# A SQLite file, and its write-ahead log: `-o abstat.db` would replace every recorded run.
_DATABASE_MAGIC = (b"SQLite format 3\x00", b"\x37\x7f\x06\x82", b"\x37\x7f\x06\x83")


def is_database(target: str) -> bool:
    """Whether ``target`` begins as a SQLite database or its write-ahead log does."""
    try:
        with open(target, "rb") as handle:
            head = handle.read(16)
    except OSError:
        return False
    return head.startswith(_DATABASE_MAGIC)


def _failure(path: str, err: OSError) -> InputError:
    return InputError(f"cannot write: {err.strerror or err}", path=path)


def _write_through(path: str, write: Callable[[TextIO], object], newline: str | None) -> None:
    try:
        handle = open(path, "w", encoding="utf-8", newline=newline)
    except OSError as err:
        raise _failure(path, err) from None
    try:
        with handle:
            write(handle)
            handle.flush()
    except OSError as err:
        raise _failure(path, err) from None


def _replace_regular(
    path: str, target: str, mode: int | None, write: Callable[[TextIO], object], newline: str | None
) -> None:
    directory = os.path.dirname(target) or "."
    try:
        fd, temporary = tempfile.mkstemp(prefix=".abstat-", suffix=".tmp", dir=directory)
    except OSError as err:
        raise _failure(path, err) from None
    try:
        if mode is not None:
            os.fchmod(fd, stat.S_IMODE(mode))
        else:
            umask = os.umask(0)
            os.umask(umask)
            os.fchmod(fd, 0o666 & ~umask)
        with os.fdopen(fd, "w", encoding="utf-8", newline=newline) as handle:
            write(handle)
            handle.flush()
            os.fsync(handle.fileno())  # a full disk shows here at the latest, not after the rename
        os.replace(temporary, target)
    except OSError as err:
        raise _failure(path, err) from None
    finally:
        try:
            os.unlink(temporary)
        except FileNotFoundError:
            pass
