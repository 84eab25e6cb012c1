"""Markdown output never makes a GitHub mention or a GFM autolink of text from data (attack18 L5).

GitHub finds mentions (``@name``) and GFM's extended autolinks (``https://x.y``, ``www.x.y``, ``a@b.c``,
``mailto:a@b.c``) twice: in the Markdown source while parsing, and again in the rendered text (after
backslash escapes and entities are decoded: micromark-extension-gfm-autolink-literal's notes; GitHub's
mention filter reads text nodes). The reference here is independent of abstat: markdown-it-py (CommonMark
with GFM tables) renders the output, and patterns that are a superset of the GFM spec's autolink rules
(case-insensitive schemes and ``www``, any preceding character) and of GitHub's mention pattern are
looked for in the source and in every rendered text, which must also read as the data did, once the
zero-width spaces are taken out.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from markdown_it import MarkdownIt

from abstat.cli import main as cli_main
from abstat.render import escape

# superset of: GFM spec 0.29 "Autolinks (extension)" (www., http://, https://, ftp:// as cmark-gfm reads
# them, case-insensitive; e-mail local@domain, and mailto:/xmpp:, which need one) and GitHub's @mention
# and @org/team: whatever comes before, and an @ followed by any name character
LIVE = re.compile(r"(?i)(?:www\.[a-z0-9_-]|(?:https?|ftp)://[^\s<]|@[a-z0-9_-])")
HOSTILE = [
    "@octocat",
    "ping @github/security now",
    "perf by jane.doe+perf@example.com",
    "mailto:a@example.com",
    "xmpp:a@example.com/home",
    "https://evil.example/x?y=1",
    "HTTP://EVIL.EXAMPLE",
    "ftp://files.example",
    "(www.evil.example)",
    "WwW.evil.example/path",
    "*https://evil.example*",
    "~www.evil.example~",
    "<https://evil.example>",
    "[x](https://evil.example)",
    "a\\@b.co \\www.x.y https\\://x.y",
    "&#64;octocat &#x77;ww.x.y",
    "x_www.evil.example_y",
]


def _renderer() -> MarkdownIt:
    return MarkdownIt("commonmark").enable("table")


def _texts(source: str) -> tuple[list[str], list[str]]:
    """(every rendered text run, every link's target) of ``source``, as markdown-it-py parses it."""
    texts, links = [], []
    for block in _renderer().parse(source):
        if block.type != "inline":
            continue
        runs = []
        for token in block.children or []:
            if token.type in ("text", "text_special", "code_inline"):
                runs.append(token.content)
            elif token.type == "link_open":
                links.append(str(token.attrs.get("href")))
            elif token.type in ("softbreak", "hardbreak"):
                runs.append("\n")
        texts.append("".join(runs))
    return texts, links


def assert_inert(source: str) -> None:
    """No mention or autolink in ``source`` as written or as rendered, and no link at all."""
    texts, links = _texts(source)
    assert links == [], links
    found = [m.group() for m in LIVE.finditer(source)] + [m.group() for t in texts for m in LIVE.finditer(t)]
    assert found == [], (found, source)


@pytest.mark.parametrize("text", HOSTILE)
def test_escaped_text_has_no_mention_or_autolink_and_reads_as_written(text):
    shown = escape.markdown(text)
    for source in (shown, f"| a | b |\n|---|---|\n| {shown} | x |\n", f"- {shown}\n", f"### {shown}\n"):
        assert_inert(source)
    (rendered,), _ = _texts(shown)
    assert rendered.replace("\u200b", "") == text  # the data, every character of it, and nothing else


def test_plain_names_and_numbers_are_unchanged():
    for text in ("new.txt", "hcall-pv64-before", "100.33 ms", "w.x", "ww.x", "a:b//c", "x://"):
        assert escape.markdown(text) == text.replace("://", ":&#8203;//")


def _write(path: Path, values) -> None:
    path.write_text("".join(f"{v:.4f}\n" for v in values))


def test_compare_markdown_and_github_name_no_one(tmp_path, monkeypatch, capsys):
    """File names and NAME= labels of compare, in Markdown and in the GitHub step summary."""
    rng = np.random.default_rng(5)
    monkeypatch.chdir(tmp_path)
    _write(tmp_path / "@octocat.txt", rng.normal(100, 1, 20))
    _write(tmp_path / "www.evil.example.txt", rng.normal(95, 1, 20))
    _write(tmp_path / "c.txt", rng.normal(100, 1, 20))
    inputs = ["@octocat.txt", "www.evil.example.txt", "ping me@example.com, mailto:x@y.z=c.txt"]
    for fmt in ("markdown", "github"):
        assert cli_main(["compare", *inputs, "--format", fmt]) == 0
        out = capsys.readouterr().out
        assert "octocat" in out and "evil" in out and "example.com" in out
        assert_inert(out)


def test_report_markdown_names_no_one(tmp_path, monkeypatch, capsys):
    """report's labels (from a --pattern over file names) in its Markdown table, footer and notes."""
    rng = np.random.default_rng(6)
    monkeypatch.chdir(tmp_path)
    for variant, centre in (("before", 100), ("after", 90)):
        for host in ("@octocat", "www.evil.example"):
            _write(tmp_path / f"{host}-{variant}", rng.normal(centre, 1, 20))
    files = sorted(str(p.name) for p in tmp_path.iterdir())
    assert cli_main(["report", "--pattern", "{host}-{variant}", "--format", "markdown", *files]) == 0
    out = capsys.readouterr().out
    assert "octocat" in out and "evil.example" in out
    assert_inert(out)


def test_history_markdown_names_no_one(tmp_path, monkeypatch, capsys):
    """history's revisions, benchmark labels and metric name (a CSV's cells) in its Markdown."""
    monkeypatch.chdir(tmp_path)
    rows = ["rev,commit_time,bench,@octocat ms"]
    rng = np.random.default_rng(7)
    for i in range(24):
        rev = f"https://evil.example/r{i:02d}" if i % 2 else f"www.evil.example/r{i:02d}"
        rows.append(f"{rev},{1000 + i},see @github/security,{10 + (i >= 12) + rng.normal(0, 0.05):.4f}")
    (tmp_path / "h.csv").write_text("\n".join(rows) + "\n")
    assert cli_main(["history", "--input", "h.csv", "--no-state", "--format", "markdown"]) == 0
    out = capsys.readouterr().out
    assert "evil" in out and "octocat" in out and "security" in out
    assert_inert(out)
