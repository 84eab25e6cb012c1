"""Labels from file names: ``--pattern '{host}-hcall-{mode}-{variant}'``.

A pattern is literal text with ``{key}`` fields.  It is matched against the
base name of a file without its extension (unless the pattern ends with one)
and, failing that, the whole base name, so ``milan-hcall-pv64-before`` and
``milan-hcall-pv64-before.txt`` both give ``host=milan, mode=pv64,
variant=before``.  A pattern that contains
``/`` is matched against as many trailing path components as it has.
A file that does not match is an error naming it.
"""

from __future__ import annotations

import os
import re

from abstat.errors import InputError, UsageError
from abstat.fastdataclass import dataclass

_FIELD = re.compile(r"\{([^{}]*)\}")
_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]*\Z")


@dataclass(frozen=True)
class FilePattern:
    """A compiled ``--pattern``: its text, its keys and the regular expression."""

    text: str
    keys: tuple[str, ...]
    regex: re.Pattern[str]

    def labels(self, path: str) -> dict[str, str]:
        """The labels the pattern gives ``path``; InputError if it does not match."""
        depth = self.text.count("/") + 1
        parts = os.path.normpath(path).split(os.sep)
        subject = "/".join(parts[-depth:])
        candidates = [subject]
        stem, ext = os.path.splitext(subject)
        if ext and "/" not in ext:
            # Without an extension in the pattern, fields stop before it.
            tail = self.text.rsplit("}", 1)[-1]
            candidates.insert(1 if "." in tail else 0, stem)
        for candidate in candidates:
            match = self.regex.fullmatch(candidate)
            if match:
                return {key: match.group(f"f{i}") for i, key in enumerate(self.keys)}
        raise InputError(f"file name does not match {{pattern}} {self.text!r}", path=path, fields=["pattern"])


def compile_pattern(text: str) -> FilePattern:
    """Compile ``text`` (literal text and ``{key}`` fields) into a FilePattern."""
    if not text:
        raise UsageError("{pattern}: empty pattern", fields=["pattern"])
    pieces: list[str] = []
    keys: list[str] = []
    pos = 0
    for match in _FIELD.finditer(text):
        pieces.append(_literal(text, text[pos : match.start()]))
        key = match.group(1)
        _check_key(text, key, keys)
        # Fields never span a directory separator; they are non-greedy so that
        # the literal text between fields decides where each one ends.
        pieces.append(f"(?P<f{len(keys)}>[^/]+?)")
        keys.append(key)
        pos = match.end()
    pieces.append(_literal(text, text[pos:]))
    if not keys:
        raise UsageError(f"{{pattern}} {text!r}: no {{key}} field", fields=["pattern"])
    return FilePattern(text=text, keys=tuple(keys), regex=re.compile("".join(pieces)))


def _literal(text: str, literal: str) -> str:
    """The literal text between fields, escaped; a brace in it is one left unbalanced."""
    if "{" in literal or "}" in literal:
        raise UsageError(f"{{pattern}} {text!r}: unbalanced brace", fields=["pattern"])
    return re.escape(literal)


def _check_key(text: str, key: str, keys: list[str]) -> None:
    """A field's name: a valid name, not taken by an earlier field."""
    if not _KEY.match(key):
        raise UsageError(f"{{pattern}} {text!r}: bad field name {{{key}}}", fields=["pattern"])
    if key in keys:
        raise UsageError(f"{{pattern}} {text!r}: field {{{key}}} appears twice", fields=["pattern"])
