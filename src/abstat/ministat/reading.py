"""How ``abstat ministat`` reads its data sets: the file (or standard input) of each, by the reader that
fits it -- counted by distinct lines (:mod:`abstat.ministat.counted`), numpy's (:mod:`abstat.ministat.fast`)
or the general one (:func:`abstat.readers.text.parse_ministat`) -- with each dialect's order of opening and
reading files and its errors."""

import io
import os

from abstat.errors import InputError
from abstat.readers.text import FGETS_CHUNK, STDIN_NAME, parse_ministat, read_bytes

TYPE_CHECKING = False  # typing stays off ministat's start-up path
if TYPE_CHECKING:
    from abstat.ministat.cli import _Options

MIN_POINTS = 3
FAST_PATH_BYTES = 1 << 20  # files at least this big are tried with the numpy reader for integers and decimals
# Classic data sets of plain files from COUNTED_FROM are counted by their distinct lines (issue 42: memory below
# Debian's); from FEW_ONLY_FROM, where Debian's values alone outgrow numpy's import and numpy's reader is faster,
# only those of a few distinct lines (TSC counts: counted by searches, faster still).
COUNTED_FROM, FEW_ONLY_FROM = 1 << 17, 16 << 20
# Sets this big, read by the general reader, get numpy's statistics (below, its import costs more).
LARGE_SET = 1_000_000

_PLAIN_BYTES = frozenset(b"0123456789-.\n")  # a delimiter among them: not a plain file


def _load(data: bytes, name: str, options: "_Options", dialect: str, *, tried: bool = False):
    """One data set from the bytes of its file (*tried*: the numpy reader already declined it)."""
    from abstat.ministat.dataset import sample_set

    sample = None if tried else _counted(data, options, dialect, len(data))
    if sample is not None:
        return sample
    if len(data) >= FAST_PATH_BYTES and not tried:
        sample = _fast(data, name, options, dialect)
        if sample is not None:
            return sample
    values = parse_ministat(data, name, column=options.column, delimiters=options.delimiters, dialect=dialect)
    del data
    _check_count(len(values), name)
    if len(values) >= LARGE_SET:
        sample = _from_array(values, dialect)
        if sample is not None:
            return sample
    return sample_set(values, dialect)


def _from_array(values: list[float], dialect: str):
    """A large data set's statistics from a numpy array (8 bytes a value, not a list's 32
    and its sorted copy's 8 more); None without numpy, or with a negative zero (whose
    place among the zeros is the list sort's)."""
    try:
        import numpy as np

        from abstat.ministat.fast import array_sample_set
    except ImportError:
        return None
    array = np.array(values, dtype=np.float64)
    if bool(np.any((array == 0) & np.signbit(array))):
        return None
    values.clear()  # the caller's list: the array replaces it
    return array_sample_set(array, dialect)


def _fast(source, name: str, options: "_Options", dialect: str):
    try:
        from abstat.ministat.fast import integer_sample_set
    except ImportError:  # numpy missing: the exact pure-Python reader is used
        return None
    return integer_sample_set(source, dialect=dialect, column=options.column, delimiters=options.delimiters)


def _counted(source, options: "_Options", dialect: str, size: int):
    """A classic data set of a plain file of *size* bytes counted by its distinct lines, or None."""
    fits = dialect == "classic" and options.column == 1 and not _PLAIN_BYTES.intersection(options.delimiters)
    if not fits or size < COUNTED_FROM:
        return None
    from abstat.ministat.counted import FEW, counted_sample_set

    share = 1.0 if size >= FAST_PATH_BYTES else None
    return counted_sample_set(source, FGETS_CHUNK, share=share, most=FEW if size >= FEW_ONLY_FROM else None)


def _check_count(count: int, name: str) -> None:
    if count < MIN_POINTS:
        raise InputError(f"must contain at least {MIN_POINTS} data points (has {count})", path=name)


def _open_error(path: str, err: OSError, status: int) -> InputError:
    error = InputError(f"cannot open: {err.strerror or err}", path=path)
    error.exit_status = status
    return error


def _read_file(path: str, name: str, options: "_Options", dialect: str, handle=None):
    """Read one data set; *handle* is an already opened binary file."""
    if path == "-":
        return _load(read_bytes("-"), name, options, dialect)
    try:
        if handle is None:
            handle = open(path, "rb")  # noqa: SIM115 -- closed by the with below
        with handle:
            try:
                size = os.fstat(handle.fileno()).st_size
            except OSError:
                size = 0
            tried = size >= FAST_PATH_BYTES
            if tried:  # read in blocks; the file is read again only when both readers decline it
                sample = _counted(handle, options, dialect, size)
                if sample is None:
                    handle.seek(0)
                    sample = _fast(handle, name, options, dialect)
                if sample is not None:
                    return sample
                handle.seek(0)
            data = handle.read()
    except IsADirectoryError:
        data, tried = b"", False  # fopen() succeeds on a directory, reading it yields nothing
    except OSError as err:
        raise _open_error(path, err, 1 if dialect == "classic" else 2) from None
    return _load(data, name, options, dialect, tried=tried)


def read_datasets(options: "_Options", dialect: str) -> tuple[list, list[str]]:
    """Read every data set in order, with each dialect's error behaviour:
    classic reads file after file (a missing file is exit status 1), FreeBSD
    opens all files first (exit status 2)."""
    files = options.files
    if not files:
        return [_load(read_bytes("-"), STDIN_NAME, options, dialect)], [STDIN_NAME]
    if dialect == "classic":
        names = [STDIN_NAME if path == "-" else path for path in files]
        return [_read_file(path, name, options, dialect) for path, name in zip(files, names, strict=True)], names
    return _read_opened(options, dialect), list(files)


def _read_opened(options: "_Options", dialect: str) -> list:
    """FreeBSD's way: every file opened first, then each read (a directory reads as empty)."""
    handles: list[io.BufferedReader | None] = []  # a local annotation: never evaluated
    try:
        _open_all(options.files, handles)
        samples = []
        for path, handle in zip(options.files, handles, strict=True):
            if handle is None and path != "-":
                samples.append(_load(b"", path, options, dialect))
            else:
                samples.append(_read_file(path, path, options, dialect, handle))
        return samples
    finally:
        for handle in handles:
            if handle is not None:
                handle.close()


def _open_all(files: list[str], handles: list) -> None:
    """FreeBSD's ministat opens every file before it reads one: append each handle (None for standard input
    and directories) to *handles*, which the caller closes."""
    for path in files:
        if path == "-":
            handles.append(None)
            continue
        try:
            handles.append(open(path, "rb"))  # noqa: SIM115 -- the caller closes them
        except IsADirectoryError:
            handles.append(None)
        except OSError as err:
            raise _open_error(path, err, 2) from None
