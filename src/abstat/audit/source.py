"""Read the text to audit: a file or standard input, UTF-8 (or Latin-1) text."""

from __future__ import annotations

from typing import TYPE_CHECKING

from abstat.errors import InputError

if TYPE_CHECKING:
    from abstat.audit.report import AuditReport


def decode_document(data: bytes, name: str) -> str:
    """Text of ``data``; binary, UTF-16 or empty input raises InputError naming ``name``."""
    from abstat.readers.text import decode_text

    text = decode_text(data, name, latin1=True)
    if not text.strip():
        raise InputError("empty input: nothing to audit", path=name)
    return text.replace("\r\n", "\n").replace("\r", "\n")


def _display_name(path: str) -> str:
    from abstat.readers.text import STDIN_NAME

    return STDIN_NAME if path == "-" else path


def read_document(path: str) -> str:
    """Contents of ``path`` (``-``: standard input) as text."""
    from abstat.readers.text import read_bytes

    return decode_document(read_bytes(path), _display_name(path))


def audit_file(path: str, *, threshold: float | None = None) -> AuditReport:
    """Audit the file at ``path`` (``-``: standard input)."""
    from abstat.audit.report import audit_text

    return audit_text(read_document(path), threshold=threshold, source=_display_name(path))
