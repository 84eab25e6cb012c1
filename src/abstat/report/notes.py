"""Footnotes grouped by kind: one note per kind of warning, listing its cells.

A warning is a value (:class:`abstat.stats.warnings.StatWarning`) whose
``message`` names its variant and its exact figures; those stay in the JSON
(and the HTML page's per-cell sections).  Tables number one footnote per
*kind*: the warning's ``code`` plus a coarse parameter (the quantisation
grid), worded without names, followed by the cells it concerns and what to
do about it:

    [1] heavily tied/quantized data (grid 20): milan/pv64, milan/pv32 (before);
        medians move in whole steps ...
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any

from abstat.errors import named
from abstat.fastdataclass import dataclass, field

# code -> (what was found, what to do), each field the advice names as {FIELD} (ADVICE_FIELDS)
TEMPLATES: dict[str, tuple[str, str]] = {
    "ties": (
        "heavily tied/quantized data",
        "medians move in whole steps (the default comparison reads tied values as spread over "
        "their step); a finer clock or more work per sample resolves smaller changes",
    ),
    "unequal-spread": (
        "the spreads of the two sides differ",
        "the change may be in shape, not only in location; look at the distributions (abstat report --format html)",
    ),
    "bimodal": (
        "several modes in the distribution",
        "a single centre summarises it poorly; look at the distributions (abstat report --format html)",
    ),
    "drift": (
        "trend or autocorrelation along the sample order",
        "samples are not independent (warm-up, throttling, background load?); measure several independent runs",
    ),
    "autocorrelation": (
        "samples resemble their neighbours in sample order",
        "the interval is widened for it (the AR(1) variance factor of the ranks' lag-1 "
        "autocorrelation); interleaved or several independent runs avoid it",
    ),
    "runs-disagree": (
        "the runs differ more than their own noise explains",
        "runs, not samples, are compared; more runs narrow the interval",
    ),
    "far-out-share": (
        "far-out values are more frequent on one side",
        "the change is also in how often they occur; look at the distributions",
    ),
    "too-few-samples": ("too few samples for a useful interval", "collect more (abstat plan says how many)"),
    "outliers": ("outliers beyond Tukey's fences, kept", "{outliers} tukey or mad drops them"),
    "summary-only": (
        "summary statistics only (n, mean, stddev)",
        "the cells show the mean, and changes compare means (Welch's t); medians, outliers, "
        "ties and drift need the raw samples",
    ),
    "zero-baseline": (
        "the baseline centre is 0",
        "a relative change is undefined; the p-value still tests for a difference",
    ),
    "zero-baseline-judged": ("the baseline centre is 0, so a relative change is undefined", ""),
    "medians-disagree": (
        "shapes differ: the medians do not move as the change",
        "no pair of centres summarises the change; see the distributions ({format} html)",
    ),
    "medians-step": (
        "medians in grid steps: one step from agreeing with the change",
        "integer data move in whole steps of their grid; the change is between them",
    ),
    "scales-differ": (
        "values 100x or more apart from the baseline's",
        "different units? {unit} names a plain file's unit",
    ),
    "machine-differs": (
        "measured under different machine records",
        "measure on one machine and boot, or say why the difference does not matter",
    ),
    "separate-invocations": (
        "each side measured in one abstat run of its own, not interleaved",
        "a shift between the two runs' times (load, clock frequency, a reboot) is read as the change; "
        "measure the variants in one run (-v old=... -v new=...) or several runs a side",
    ),
    "command-differs": (
        "runs of one variant ran different commands",
        "they are pooled as one variant; if that was not meant, measure under a new {experiment} "
        "name, or {label} the invocations and choose with {where}",
    ),
}
ADVICE_FIELDS = ("outliers", "format", "unit", "experiment", "label", "where")


class _Kinds(Mapping[str, tuple[str, str]]):
    """:data:`TEMPLATES`, each field the advice names called as the command running names it
    (:func:`abstat.errors.named`: its flag)."""

    def __getitem__(self, code: str) -> tuple[str, str]:
        head, advice = TEMPLATES[code]
        return head, named(advice, *ADVICE_FIELDS)

    def __iter__(self) -> Iterator[str]:
        return iter(TEMPLATES)

    def __len__(self) -> int:
        return len(TEMPLATES)


KINDS: Mapping[str, tuple[str, str]] = _Kinds()  # code -> (what was found, what to do)
# Patterns compiled on first use (re's cache), by the kind of warning that needs them: a comparison without
# those warnings compiles none (start-up, issue 42)
_ZERO_BASELINE = r"the baseline(?:'s run \w+ average| \w+ is) 0, so a relative change is undefined"
_GRID = r"grid (?:of )?([0-9.e+\-/]+)"
_FIELDS = r"machine records: (.+)$"
_COMMANDS = r"ran different commands: (.+)$"
MAX_SUBJECTS = 8


def kind_of(warning: Any) -> tuple[str, str]:
    """(head, advice) of a warning: its kind, worded without names."""
    code = getattr(warning, "code", "note")
    message = str(getattr(warning, "message", warning))
    if code == "cannot-judge" and re.match(_ZERO_BASELINE, message):  # median, mean, runs' centres alike
        code = "zero-baseline-judged"
    if code not in KINDS or (code == "summary-only" and not message.startswith("summary statistics only")):
        variant = getattr(warning, "variant", None)
        if variant and message.startswith(f"{variant}: "):
            message = message[len(variant) + 2 :]
        return message, ""
    head, advice = KINDS[code]
    grid = re.search(_GRID, message) if code == "ties" else None
    if grid:
        head += f" (grid {grid.group(1)})"
    fields = re.search(_FIELDS, message) if code == "machine-differs" else None
    if fields:
        head += f" ({fields.group(1)})"
    commands = re.search(_COMMANDS, message) if code == "command-differs" else None
    if commands:
        head += f" ({commands.group(1)})"
    return head, advice


@dataclass
class Footnote:
    head: str
    advice: str = ""
    subjects: list[Subject] = field(default_factory=list)

    def text(self, limit: int = MAX_SUBJECTS, advice: bool = True) -> str:
        """The finding, whom it concerns and (``advice``) what to do about it."""
        text = self.head
        subjects = compact(self.subjects)
        if subjects:
            shown = subjects[:limit]
            more = len(subjects) - len(shown)
            text += ": " + ", ".join(shown) + (f" and {more} more" if more else "")
        return text + (f"; {self.advice}" if self.advice and advice else "")

    def short(self, width: int) -> str:
        """One line of at most ``width`` columns (with its ``[n] `` mark): the finding and whom it
        concerns, without the advice (that is in --verbose, the HTML page and docs/output.md)."""
        subjects = compact(self.subjects)
        for shown in range(len(subjects), -1, -1):
            more = len(subjects) - shown
            text = self.head + (": " + ", ".join(subjects[:shown]) if shown else "")
            text += f" and {more} more" if more and shown else (f" ({len(subjects)} cells)" if more else "")
            if len(text) <= width:
                return text
        return self.head  # the finding whole, longer than the line: the e-mail wraps it


Subject = tuple[str, str]  # (place, side): ("milan/pv64", "before"), ("wall", "after vs before")


def compact(subjects: list[Subject]) -> list[str]:
    """``[("milan/pv64", "before"), ("milan/pv64", "after")]`` -> ``["milan/pv64 (before, after)"]``."""
    by_place: dict[str, list[str]] = {}
    for place, side in subjects:
        by_place.setdefault(place, []).append(side)
    out = []
    for place, sides in by_place.items():
        sides = [s for s in sides if s]
        if not place:
            out += sides
        elif not sides:
            out.append(place)
        else:
            out.append(f"{place} {sides[0]}" if len(sides) == 1 else f"{place} ({', '.join(sides)})")
    return out


class Footnotes:
    """Numbered notes, one per (head, advice); subjects collected in order."""

    def __init__(self) -> None:
        self.items: list[Footnote] = []
        self._numbers: dict[tuple[str, str], int] = {}

    def add(self, head: str, subject: Subject | str | None = None, advice: str = "") -> int:
        key = (head, advice)
        if key not in self._numbers:
            self.items.append(Footnote(head, advice))
            self._numbers[key] = len(self.items)
        number = self._numbers[key]
        note = self.items[number - 1]
        if isinstance(subject, str):
            subject = (subject, "")
        if subject and subject not in note.subjects:
            note.subjects.append(subject)
        return number

    def add_warning(self, warning: Any, subject: Subject | str | None = None) -> int:
        head, advice = kind_of(warning)
        return self.add(head, subject, advice)

    @property
    def texts(self) -> list[str]:
        """Each note with its advice (JSON, Markdown, HTML, ``--verbose``)."""
        return [note.text() for note in self.items]

    @property
    def findings(self) -> list[str]:
        """Each note as one line: the finding and whom it concerns (text formats; the advice is in
        ``--verbose``, the HTML page and docs/output.md)."""
        return [note.text(advice=False) for note in self.items]

    def short_texts(self, width: int) -> list[str]:
        """:meth:`Footnote.short` of each note, ``width`` the columns its ``[n] `` mark leaves."""
        return [note.short(width - len(f"[{number}] ")) for number, note in enumerate(self.items, 1)]


def plural(count: int, word: str, plural_form: str | None = None) -> str:
    """``1 run``, ``2 runs``."""
    return f"{count} {word if count == 1 else (plural_form or word + 's')}"
