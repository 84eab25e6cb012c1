"""``abstat ministat``: the ministat command line, byte for byte.

Options as ministat: ``-A -C column -c confidence -d delimiters -n -q -s
-w width`` (``-q`` in the freebsd dialect only), files, ``-`` or nothing for
standard input, up to seven data sets.  ``--dialect classic|freebsd`` (first
argument) or ``ABSTAT_MINISTAT_DIALECT`` chooses the dialect.

Standard output and exit status match the reference programs; errors are
one line on standard error.  Where ministat crashes (NaN or infinity in the
data, a plot width of 1) abstat reports the problem and exits with 2.
"""

import os
import sys

from abstat.errors import AbstatError
from abstat.ministat.cargs import _Usage, c_atoi, c_strtol, getopt
from abstat.ministat.reading import read_datasets
from abstat.readers.text import parse_c_double

ENV_DIALECT = "ABSTAT_MINISTAT_DIALECT"
DEFAULT_WIDTH = 74
_OPTIONS = {
    "classic": {"A": False, "C": True, "c": True, "d": True, "s": False, "n": False, "w": True},
    "freebsd": {"A": False, "C": True, "c": True, "d": True, "s": False, "n": False, "q": False, "w": True},
}
_LEVELS = (80.0, 90.0, 95.0, 98.0, 99.0, 99.5)

_USAGE_HEAD = "Usage: ministat [-C column] [-c confidence] [-d delimiter(s)] [-{flags}] [-w width] [file [file ...]]\n"
_USAGE_BODY = (
    "\tconfidence = {80%, 90%, 95%, 98%, 99%, 99.5%}\n"
    "\t-A : print statistics only. suppress the graph.\n"
    "\t-C : column number to extract (starts and defaults to 1)\n"
    '\t-d : delimiter(s) string, default to " \\t"\n'
    "\t-n : print summary statistics only, no graph/test\n"
    "{q}"
    "\t-s : print avg/median/stddev bars on separate lines\n"
    "\t-w : width of graph/test output (default 74 or terminal width)\n"
)
_Q_LINE = "\t-q : suppress printing summary-statistics headers and data-set names\n"
_ABSTAT_NOTE = (
    "abstat: --dialect classic|freebsd (first argument) or {env}=freebsd selects the dialect; default classic.\n"
)


def usage_text(dialect: str) -> str:
    freebsd = dialect == "freebsd"
    head = _USAGE_HEAD.replace("{flags}", "Anqs" if freebsd else "Ans")
    return head + _USAGE_BODY.replace("{q}", _Q_LINE if freebsd else "")


def terminal_width(stdout_fd: int = 1) -> int:
    """Plot width as ministat picks it: 74, or on a terminal ``COLUMNS``
    (if set and not empty) else the terminal's width minus 2."""
    try:
        if not os.isatty(stdout_fd):
            return DEFAULT_WIDTH
    except (OSError, ValueError):
        return DEFAULT_WIDTH
    columns = os.environ.get("COLUMNS")
    if columns:
        return c_atoi(columns)
    try:
        size = os.get_terminal_size(stdout_fd)
    except (OSError, ValueError):
        return DEFAULT_WIDTH
    if size.columns > 0:
        return size.columns - 2
    return DEFAULT_WIDTH


def _stdout_fd() -> int:
    try:
        return sys.stdout.fileno()
    except (AttributeError, OSError, ValueError):
        return -1


class _Options:
    __slots__ = ("plot", "stats", "column", "confidence", "delimiters", "separate", "quiet", "width", "files")

    def __init__(self) -> None:
        self.plot = True
        self.stats = True
        self.column = 1
        self.confidence = 95.0
        self.delimiters = b" \t"
        self.separate = False
        self.quiet = False
        self.width = DEFAULT_WIDTH
        self.files: list[str] = []


def parse_options(args: list[str], dialect: str, width: int) -> _Options:
    """Parse ministat's options exactly as the reference validates them."""
    options = _Options()
    options.width = width
    chosen = -1
    permute = dialect == "classic" and not os.environ.get("POSIXLY_CORRECT")
    for letter, value in getopt(args, _OPTIONS[dialect], permute=permute):
        if letter is None:
            options.files = value
        elif letter in _SWITCHES:
            setattr(options, *_SWITCHES[letter])
        elif letter == "c":
            chosen = _confidence_index(value, chosen)
        elif letter in _WITH_VALUE:
            _WITH_VALUE[letter](options, value)
    if chosen != -1:
        options.confidence = _LEVELS[chosen]
    if len(options.files) > 7:
        raise _Usage("Too many datasets.")
    return options


def _confidence_index(value: str, chosen: int) -> int:
    """``-c``: the index of the level in ministat's t table; as ministat, a level it lacks is refused
    only while no earlier ``-c`` chose one."""
    raw = os.fsencode(value)
    number = parse_c_double(raw) if raw else 0.0
    if number is None:
        raise _Usage("Not a floating point number")
    for index, level in enumerate(_LEVELS):
        if number == level:
            chosen = index
    if chosen == -1:
        raise _Usage("No support for confidence level")
    return chosen


def _column(options: _Options, value: str) -> None:
    column, complete = c_strtol(value)
    if not complete:
        raise _Usage("Invalid column number.")
    if column <= 0:
        raise _Usage("Column number should be positive.")
    options.column = column


def _delimiters(options: _Options, value: str) -> None:
    if not value:
        raise _Usage("Can't use empty delimiter string")
    options.delimiters = os.fsencode(value)


def _width(options: _Options, value: str) -> None:
    number, complete = c_strtol(value)
    if not complete:
        raise _Usage("Invalid width, not a number.")
    if number < 0:
        raise _Usage("Unable to move beyond left margin.")
    options.width = number


_SWITCHES = {"A": ("plot", False), "n": ("stats", False), "q": ("quiet", True), "s": ("separate", True)}
_WITH_VALUE = {"C": _column, "d": _delimiters, "w": _width}


def _write(pieces) -> None:
    """Write the report pieces to standard output (bytes, so that file
    names which are not UTF-8 come out as given)."""
    out = getattr(sys.stdout, "buffer", None)
    if out is None:
        for piece in pieces:
            sys.stdout.write(piece)
        sys.stdout.flush()
        return
    sys.stdout.flush()
    for piece in pieces:
        out.write(piece.encode("utf-8", "surrogateescape"))
    out.flush()


def _error(message: str) -> None:
    from abstat.terminal_text import terminal  # a file name's controls shown escaped (standard library only)

    sys.stderr.write(f"abstat ministat: {terminal(message)}\n")
    sys.stderr.flush()


def main(argv: list[str] | None = None) -> int:
    """Run ``abstat ministat`` with *argv* (without the command name)."""
    args = list(sys.argv[1:] if argv is None else argv)
    chosen = _dialect(args)
    if chosen is None:
        return 2
    dialect, args = chosen
    if args and args[0] in ("--help", "-h"):
        sys.stdout.write(usage_text(dialect) + _ABSTAT_NOTE.format(env=ENV_DIALECT))
        return 0
    try:
        options = parse_options(args, dialect, terminal_width(_stdout_fd()))
    except _Usage as err:
        prefix = f"ministat: {err.getopt_message}\n" if err.getopt_message else ""
        sys.stderr.write(prefix + err.whine + "\n" + usage_text(dialect))
        return 2
    try:
        return _report(options, dialect)
    except AbstatError as err:
        _error(str(err))
        return err.exit_status
    except MemoryError:
        _error("out of memory reading the data sets")
        return 2


def _dialect(args: list[str]) -> tuple[str, list[str]] | None:
    """The dialect (``--dialect`` first, else the environment's, else classic) and the arguments after
    it; None (the error written) when it is missing or unknown."""
    dialect = os.environ.get(ENV_DIALECT) or "classic"
    if args and args[0].startswith("--dialect"):
        if args[0] == "--dialect" and len(args) > 1:
            dialect = args[1]
            args = args[2:]
        elif args[0].startswith("--dialect="):
            dialect = args[0][len("--dialect=") :]
            args = args[1:]
        else:
            _error("--dialect needs a value: classic or freebsd")
            return None
    if dialect not in _OPTIONS:
        _error(f"unknown dialect {dialect!r}: use classic or freebsd")
        return None
    return dialect, args


def _report(options: _Options, dialect: str) -> int:
    """Read the data sets and write the report."""
    samples, names = read_datasets(options, dialect)
    from abstat.ministat.report import PlotError, iter_report

    try:
        pieces = iter_report(
            samples,
            names,
            confidence=options.confidence,
            width=options.width,
            plot=options.plot,
            stats=options.stats,
            dialect=dialect,
            separate_bars=options.separate,
            quiet=options.quiet,
        )
    except PlotError as err:
        _error(str(err))
        return 2
    _write(pieces)
    return 0
