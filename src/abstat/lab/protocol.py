"""The controller's side of the runner protocol: reading what a test box sends.

:mod:`abstat.runner.remote` (on the box) writes one JSON object per line:
``{"hello": {...}}`` first, then ``{"result": RUN}`` per run and
``{"done": OUTCOME}`` or ``{"error": TEXT}``, or the answer to a question
(``{"doctor": FINDINGS}``).  Everything a box sends is read here, and only
here: lines that are not JSON objects (a login script's greeting) are
skipped.  The box is not trusted: a validating decoder of each message
belongs in this module (docs/architecture.md).
"""
from __future__ import annotations

import json
import subprocess
from typing import Any


def _stderr_tail(process: subprocess.Popen) -> str:
    """The last line the session wrote on standard error (read once it ended)."""
    try:
        assert process.stderr is not None
        lines = process.stderr.read().decode(errors="replace").strip().splitlines()
    except (OSError, ValueError):
        return ""
    return lines[-1].strip() if lines else ""


def _hello(stream: Any, limit: int = 200) -> dict[str, Any] | None:
    """The runner's first message, past any lines a login script printed first."""
    for _ in range(limit):
        line = stream.readline()
        if not line:
            return None
        message = _message(line)
        if message is not None and "hello" in message:
            return message
    return None


def _message(line: bytes) -> dict[str, Any] | None:
    try:
        message = json.loads(line)
    except ValueError:
        return None
    return message if isinstance(message, dict) else None
