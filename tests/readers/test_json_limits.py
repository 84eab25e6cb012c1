"""attack19 F15-F17: JSON that Python's decoder cannot hold (an integer beyond a double's range, nesting
deeper than the recursion limit) in any reader's input is a one-line error naming the file, never an
internal error."""

from __future__ import annotations

import json
import os

import pytest

from abstat.errors import InputError
from abstat.readers import peers
from abstat.report.inputs import load_files
from support import paths

KERNEL = os.path.join(str(paths.DATA), "kernel")
PEERS = os.path.join(str(paths.DATA), "peers")
REPORT = os.path.join(str(paths.DATA), "report", "peers")
FILES = [
    os.path.join(REPORT, "hyperfine-params.json"),
    os.path.join(REPORT, "pyperf-after.json"),
    os.path.join(PEERS, "bmf", "report_latency.json"),
    os.path.join(PEERS, "gbench", "test1_run1.json"),
    os.path.join(KERNEL, "fio_randread.json"),
    os.path.join(KERNEL, "perf_stat_r5.jsonl"),
]
HUGE = "1" + "0" * 400
DEEP = "[" * 100_000 + "]" * 100_000
MARK = "\x00placeholder\x00"


def _first_number(node):
    """The path (keys) to the first number in ``node`` (depth first, dict order)."""
    items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else []
    for key, value in items:
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return [key]
        found = _first_number(value)
        if found:
            return [key, *found]
    return None


def _with_first_number(source: str, replacement: str, tmp_path) -> str:
    """A copy of ``source`` whose first number (in its first JSON document or line) is ``replacement``."""
    with open(source, encoding="utf-8") as handle:
        text = handle.read()
    lines = text.splitlines(keepends=True) if source.endswith(".jsonl") else [text]
    document = json.loads(lines[0])
    keys = _first_number(document)
    assert keys, source
    node = document
    for key in keys[:-1]:
        node = node[key]
    node[keys[-1]] = MARK
    lines[0] = json.dumps(document).replace(json.dumps(MARK), replacement) + ("\n" if len(lines) > 1 else "")
    path = tmp_path / os.path.basename(source)
    path.write_text("".join(lines), encoding="utf-8")
    return str(path)


@pytest.mark.parametrize("source", FILES, ids=os.path.basename)
@pytest.mark.parametrize("bad, said", [(HUGE, "beyond a double's range"), (DEEP, "nested too deeply")])
def test_json_a_reader_cannot_hold_is_a_one_line_error_naming_the_file(source, bad, said, tmp_path):
    path = _with_first_number(source, bad, tmp_path)
    with pytest.raises(InputError) as err:
        load_files([path])
    message = str(err.value)
    assert message.startswith(f"{path}") and said in message and "\n" not in message, message


def test_the_unchanged_files_are_read():
    for source in FILES:
        text = peers.read_text(source)
        assert peers.read_peer(source, peers.detect_format(source, text), text=text)


def test_an_integer_a_double_holds_is_read_as_before():
    from abstat.readers.values import decode_json

    assert decode_json('{"a": ' + "9" * 308 + "}")["a"] == int("9" * 308)
    assert decode_json("[12, -3, 1.5]") == [12, -3, 1.5]
    with pytest.raises(ValueError):
        decode_json("[-" + HUGE + "]")
