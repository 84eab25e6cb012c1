"""Where the checkout's files are, wherever a test file sits under tests/."""

from __future__ import annotations

from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]
ROOT = TESTS.parent
DATA = TESTS / "data"
SUPPORT = TESTS / "support"
SRC = str(ROOT / "src")  # a text: it goes into PYTHONPATH
