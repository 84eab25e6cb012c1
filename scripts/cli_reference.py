"""Write (or check) docs/cli-reference.md: every command's ``--help``, from the commands' own parsers.

    python scripts/cli_reference.py           # rewrite docs/cli-reference.md
    python scripts/cli_reference.py --check   # exit 1 and name the commands whose text differs

The help is formatted 100 columns wide (``COLUMNS=100``).  argparse's layout changes between Python
versions, so the page names the version it was written with; tests/cli/test_cli_reference.py compares
only under that version.
"""

from __future__ import annotations

import contextlib
import io
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PAGE = os.path.join(ROOT, "docs", "cli-reference.md")


def _help_of(name: str) -> str:
    from abstat.cli import main

    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()), contextlib.suppress(SystemExit):
        main([name, "--help"] if name else ["--help"])
    return out.getvalue().rstrip() + "\n"


def render() -> str:
    os.environ["COLUMNS"] = "100"
    from abstat.cli.registry import COMMANDS

    version = f"{sys.version_info[0]}.{sys.version_info[1]}"
    parts = [
        "# Command-line reference",
        "",
        "Every command's `--help`, generated from the parsers by `python scripts/cli_reference.py`",
        f"(Python {version}, 100 columns) and checked against them by `tests/cli/test_cli_reference.py`.",
        "The shared grammar is explained in `docs/cli.md`.",
        "",
        "## abstat",
        "",
        "```",
        _help_of("").rstrip(),
        "```",
        "",
    ]
    for name in COMMANDS:
        parts += [f"## abstat {name}", "", "```", _help_of(name).rstrip(), "```", ""]
    return "\n".join(parts)


def recorded_version(text: str) -> str | None:
    marker = "(Python "
    at = text.find(marker)
    return text[at + len(marker) :].split(",", 1)[0] if at >= 0 else None


def main(argv: list[str]) -> int:
    sys.path.insert(0, os.path.join(ROOT, "src"))
    text = render()
    if "--check" in argv:
        with open(PAGE, encoding="utf-8") as handle:
            old = handle.read()
        if old != text:
            sys.stderr.write("docs/cli-reference.md differs from the parsers: run python scripts/cli_reference.py\n")
            return 1
        return 0
    with open(PAGE, "w", encoding="utf-8") as handle:
        handle.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
