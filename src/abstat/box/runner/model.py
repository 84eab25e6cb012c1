"""Plain data the runner works with: commands, metric patterns, run results.

Standard library only: the runner must work on a bare test box.
"""

from __future__ import annotations

import re
import shlex
import shutil
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from abstat.box.runner.backtracking import MESSAGE as BACKTRACKING, exponential

TYPE_CHECKING = False  # not typing's: its import is a tenth of the runner's start in a TCG guest (issue 38)
if TYPE_CHECKING:
    from typing import Protocol
else:
    Protocol = object

# Metrics every measured run gets from the operating system, with units.
BUILTIN_METRICS: dict[str, str] = {
    "wall": "s",
    "user": "s",
    "sys": "s",
    "maxrss": "KiB",
    "vcsw": "count",
    "ivcsw": "count",
}


class FieldError(ValueError):
    """A ValueError about the fields named ``{FIELD}`` in its message (``metric``, ``trace``...):
    ``str()`` names the fields, :meth:`named` lets the caller name them (the CLI: by their flags).
    The box's twin of :class:`abstat.errors.AbstatError`'s fields (the box imports nothing of abstat)."""

    def __init__(self, message: str, *fields: str) -> None:
        self.message = message
        self.fields = fields
        super().__init__(self.named())

    def named(self, name: Callable[[str], str] = str) -> str:
        text = self.message
        for field_name in self.fields:
            text = text.replace("{" + field_name + "}", name(field_name))
        return text

    def __str__(self) -> str:
        return self.named()


# Checked with fullmatch: "$" would also match before a trailing newline.
_METRIC_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.\-]*")
_UNIT = re.compile(r"[A-Za-z%/_][A-Za-z0-9%/_.\-]*")


@dataclass(frozen=True)
class Command:
    """A command line as the user typed it, run with or without a shell."""

    text: str
    shell: bool = False

    def argv(self) -> list[str]:
        """The argument vector handed to exec (``/bin/sh -c`` with ``shell``)."""
        if self.shell:
            return ["/bin/sh", "-c", self.text]
        return shlex.split(self.text)


@dataclass(frozen=True)
class VariantCommand:
    """One named thing to measure, e.g. ``before='./bench-old'``."""

    name: str
    command: Command


@dataclass(frozen=True)
class MetricPattern:
    """``--metric NAME=REGEX[:UNIT]``: every match adds one value (group 1)."""

    name: str
    regex: re.Pattern[str]
    unit: str | None = None


def check_metric_name(name: str) -> str:
    if not _METRIC_NAME.fullmatch(name):
        raise ValueError(f"bad metric name {name!r}: use letters, digits, '_', '.', '-' (starting with a letter)")
    return name


def parse_metric_pattern(spec: str) -> MetricPattern:
    """Parse ``NAME=REGEX`` or ``NAME=REGEX:UNIT``.

    The text after the last ``:`` is a unit when it looks like one (letters,
    digits, ``%``, ``/``, ``_``) and what precedes it is a regular expression
    with a capture group; otherwise the whole text after ``=`` is the regex.
    Raises ValueError with a message fit for the user.
    """
    name, sep, rest = spec.partition("=")
    if not sep or not name or not rest:
        raise FieldError(f"{{metric}} {spec!r}: expected NAME=REGEX or NAME=REGEX:UNIT", "metric")
    check_metric_name(name)
    if name in BUILTIN_METRICS:
        raise FieldError(f"{{metric}} {spec!r}: {name!r} is a built-in metric name", "metric")
    candidates: list[tuple[str, str | None]] = []
    head, colon, tail = rest.rpartition(":")
    if colon and head and _UNIT.fullmatch(tail):
        candidates.append((head, tail))
    candidates.append((rest, None))
    last_error = ""
    for text, unit in candidates:
        try:
            regex = re.compile(text, re.MULTILINE)
        except re.error as err:
            last_error = f"bad regular expression {text!r}: {err}"
            continue
        if regex.groups < 1:
            last_error = f"regular expression {text!r} has no capture group (the value is group 1)"
            continue
        if exponential(text, re.MULTILINE):
            last_error = f"regular expression {text!r}: {BACKTRACKING}"
            continue
        return MetricPattern(name, regex, unit)
    raise FieldError(f"{{metric}} {spec!r}: {last_error}", "metric")


@dataclass
class Measurement:
    """What one execution of a command produced.

    ``status`` is ``ok``, ``failed`` (non-zero exit, killed by a signal, could
    not start) or ``timeout``.  ``values`` maps a metric name to the values
    the run produced (the built-in metrics have one value each; a regex or a
    JSON-lines metric may have several).
    """

    status: str
    exit_code: int | None
    wall_s: float
    values: dict[str, list[float]] = field(default_factory=dict)
    units: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    stdout: str = ""
    stderr_tail: str = ""

    @property
    def ok(self) -> bool:
        return self.status == "ok"


@dataclass
class RunResult:
    """One measured (or warm-up) run of one variant, in schedule order."""

    variant: str
    iteration: int  # 0-based index of this variant's measured runs
    position: int  # 0-based position in the whole schedule
    warmup: bool
    measurement: Measurement
    started_at: float  # time.time() when the run started

    @property
    def ok(self) -> bool:
        return self.measurement.ok


@dataclass(frozen=True)
class RunContext:
    """Which variant and iteration a command runs for (exported to it)."""

    variant: str
    iteration: int = -1
    warmup: bool = False

    def env(self) -> dict[str, str]:
        return {
            "ABSTAT_VARIANT": self.variant,
            "ABSTAT_ITERATION": str(self.iteration),
            "ABSTAT_WARMUP": "1" if self.warmup else "0",
        }


class BackgroundHandle(Protocol):
    command: Command

    def exited(self) -> str | None:
        """None while running, else how it ended (e.g. ``exit status 1``)."""

    def failure(self) -> str | None:
        """None while it provides the load, else how it failed or ended."""

    def stop(self) -> list[str]:
        """Stop it with its whole process group; return notes."""


class Executor(Protocol):
    def measure(self, command: Command, context: RunContext, *, timeout: float | None) -> Measurement: ...

    def run_hook(self, kind: str, command: Command, context: RunContext, *, timeout: float | None) -> Measurement: ...

    def start_background(self, command: Command) -> BackgroundHandle: ...

    def close(self) -> None: ...


class Collector(Protocol):
    """A metric source that acts around each measured run (``runner/sources.py`` builds them from a spec).

    ``wrap`` is called just before the command starts and may replace its
    argument vector (``perf stat ... --``); ``collect`` is called after every
    measured command, failed ones too (``measurement.ok``), and adds values,
    units and notes (or marks the run failed); ``close`` releases what the
    source holds and returns notes.  Standard library only: collectors run on the test box.
    """

    def wrap(self, argv: list[str], context: RunContext) -> list[str]: ...

    def collect(self, measurement: Measurement, context: RunContext) -> None: ...

    def close(self) -> list[str]: ...


# What /bin/sh would act on outside quotes: operators, redirections, subshells, substitutions, expansions
# (``$NAME``, ``${``, ``$(``, ``$1``, ``$$``...), and at a word's start a comment or the home directory.
_SYNTAX = re.compile(r"\d*[<>]+&?\d*|[|&;]+|[()`\n]|\$(?:[A-Za-z_][A-Za-z0-9_]*|[{(0-9@*#?$!-])")
_WORD_START = re.compile(r"#|~(?=/|\s|$)")


def shell_syntax(text: str) -> str | None:
    """The first piece of shell syntax outside quotes in ``text`` (:data:`_SYNTAX`), or None.  Without a
    shell it would reach the program as an argument (``rm a && echo b > c`` removes files named ``&&``,
    ``echo``, ``b``, ``>`` and ``c``); a backslash or quotes make it a word."""
    quote, escaped = "", False
    for index, char in enumerate(text):
        if escaped:
            escaped = False
        elif char == "\\" and quote != "'":
            escaped = True
        elif quote:
            quote = "" if char == quote else quote
        elif char in "'\"":
            quote = char
        else:
            found = _SYNTAX.match(text, index)
            if found is None and (index == 0 or text[index - 1].isspace()):
                found = _WORD_START.match(text, index)
            if found is not None:
                return found.group()
    return None


def command_problem(what: str, text: str, shell: bool) -> str | None:
    """Why ``text`` cannot be executed here (one line naming ``what``), or None."""
    try:
        argv = Command(text, shell).argv()
    except ValueError as err:
        return f"{what}: cannot split {text!r}: {err}"
    if not argv:
        return f"{what}: empty command"
    syntax = None if shell else shell_syntax(text)
    if syntax is not None:
        return (
            f"{what}: {syntax!r} is shell syntax, but commands run without a shell unless --shell is given"
            " (it would reach the program as an argument): add --shell, or quote it to pass it on"
        )
    if shutil.which(argv[0]) is None:
        return f"{what}: command not found or not executable: {argv[0]!r}" + (
            "" if shell else " (use --shell for shell syntax)"
        )
    return None


def command_problems(commands: Sequence[tuple[str, str]], shell: bool) -> list[str]:
    """:func:`command_problem` of each (what, text)."""
    return [problem for what, text in commands if (problem := command_problem(what, text, shell)) is not None]
