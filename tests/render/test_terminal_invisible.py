"""Invisible format characters in data are shown as escapes on a terminal (attack19 L1): two stored commands
that differ only by a U+200E or a tag character must not look the same in a --resume listing."""

from __future__ import annotations

import unicodedata

import pytest

from abstat.terminal_text import terminal


@pytest.mark.parametrize("char", ["\u200b", "\u200e", "\u200f", "\u061c", "\ufeff", "\u00ad", "\u2061", "\U000e0041"])
def test_invisible_format_characters_are_escaped(char: str) -> None:
    assert unicodedata.category(char) == "Cf"
    shown = terminal(f"echo a{char}b")
    assert char not in shown
    assert shown.isprintable() and shown.startswith("echo a\\") and shown.endswith("b")
    assert terminal(f"echo a{char}b") != terminal("echo ab")


def test_printable_text_is_unchanged() -> None:
    for text in ("µs → ms ± 2", "naïve", "日本語", "plain"):
        assert terminal(text) == text
