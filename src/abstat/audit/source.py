"""Read the text to audit: a file or standard input, UTF-8 (or Latin-1) text."""
from __future__ import annotations

from abstat.errors import InputError

_CONTROL_LIMIT = 0.05  # share of control characters beyond which Latin-1 "text" is binary


def decode_document(data: bytes, name: str) -> str:
    """Text of ``data``; binary, UTF-16 or empty input raises InputError naming ``name``."""
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        raise InputError("UTF-16 text is not supported; convert it to UTF-8", path=name, line=1)
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    nul = data.find(b"\0")
    if nul >= 0:
        line = data.count(b"\n", 0, nul) + 1
        if nul < 2 and len(data) > 1:
            raise InputError("looks like UTF-16 text (NUL bytes); convert it to UTF-8", path=name, line=line)
        raise InputError("binary data (NUL byte), not a text to audit", path=name, line=line)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as err:
        text = data.decode("latin-1")
        controls = sum(1 for ch in text if ord(ch) < 32 and ch not in "\t\n\r\f" or 0x7F <= ord(ch) < 0xA0)
        if controls > _CONTROL_LIMIT * len(text):
            line = data.count(b"\n", 0, err.start) + 1
            raise InputError("binary data, not a text to audit", path=name, line=line) from None
    if not text.strip():
        raise InputError("empty input: nothing to audit", path=name)
    return text.replace("\r\n", "\n").replace("\r", "\n")


def read_document(path: str) -> str:
    """Contents of ``path`` (``-``: standard input) as text."""
    from abstat.readers.text import read_bytes

    return decode_document(read_bytes(path), "<stdin>" if path == "-" else path)


def audit_file(path: str, *, threshold: float | None = None):  # -> AuditReport
    """Audit the file at ``path`` (``-``: standard input)."""
    from abstat.audit.report import audit_text

    return audit_text(read_document(path), threshold=threshold, source="<stdin>" if path == "-" else path)
