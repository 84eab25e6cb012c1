"""``escape.html`` hands back a common cell as it is: the same text as terminal() then html.escape()."""

from __future__ import annotations

import html as std_html
import random

from abstat.render import escape

ALPHABET = ["a", "Z", "0", ".", "-", "+", "%", " ", "\t", "\n", "\x1b", "\x7f", "&", "<", ">", '"', "'", ":", "#"]
ALPHABET += ["[", "é", "µ", "\u200b", "\u2028", "\ud800", "ー", "\U0001f600", "\\", "x"]


def reference(text: object) -> str:
    return std_html.escape(escape.terminal(text), quote=True)


def test_random_texts_escape_as_terminal_then_html():
    rng = random.Random(42)
    for _ in range(20000):
        text = "".join(rng.choice(ALPHABET) for _ in range(rng.randint(0, 8)))
        assert escape.html(text) == reference(text), repr(text)


def test_ci_commands_numbers_and_other_objects():
    for value in ["::error::x", "  ::warning", "##[group]", "#x", "a:b", "12.5 ms", "+3.1%", "", 3, 2.5, None, b"x<"]:
        assert escape.html(value) == reference(value), repr(value)
    assert escape.html("::set-output") != "::set-output"  # the case the fast path must not take


class Text(str):
    def __str__(self) -> str:
        return "<b>"


def test_a_str_subclass_goes_through_str():
    assert escape.html(Text("plain")) == "&lt;b&gt;"
