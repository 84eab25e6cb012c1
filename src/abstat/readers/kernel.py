"""The kernel world's tools, registered with the peer readers (:mod:`abstat.readers.peers`).

Detected by content before the general CSV reader (a ``perf stat -x,`` file
has no header: its first row is data).  See docs/peers.md for the table of
tools, what is read and how a pasted result is audited.
"""

from __future__ import annotations

from abstat.readers import fio, kbench, perfstat, stressng
from abstat.readers.kernel_formats import FORMATS  # noqa: F401 -- the names, read here too
from abstat.readers.sampleset import SampleSet

_HEAD_CHARS = 1 << 16


def detect(text: str) -> str | None:
    """The kernel tool whose output ``text`` is, or None."""
    head = text[:_HEAD_CHARS]
    if head.lstrip().startswith("{") or "\n{" in head[:4096]:
        found = _detect_json(text)
        if found:
            return found
    return perfstat.detect(head) or kbench.detect(head) or stressng.detect(head)


def _detect_json(text: str) -> str | None:
    head = text[:_HEAD_CHARS]
    if perfstat.is_json(head):
        return "perf-stat-json"
    if '"fio version"' not in head and not ('"start"' in head and '"intervals"' in text):
        return None  # not fio's nor iperf3's: no second parse of a large JSON file
    try:
        doc = fio.load_document("", text)
    except Exception:  # noqa: BLE001 -- not a JSON document: not one of these tools
        return None
    return fio.detect_doc(doc)


def read(path: str, fmt: str, text: str) -> list[SampleSet]:
    """``path``'s sample sets in kernel tool format ``fmt`` (one of FORMATS)."""
    if fmt.startswith("perf-stat"):
        return perfstat.read(path, fmt, text)
    reader = {**fio.READERS, **kbench.READERS, **stressng.READERS}[fmt]
    try:
        return reader(path, text)
    except ValueError as err:  # a number beyond the float range
        from abstat.errors import InputError

        raise InputError(f"{fmt}: not a finite number: {str(err)[:40]!r}", path=path) from None
