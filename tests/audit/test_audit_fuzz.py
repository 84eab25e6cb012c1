"""Issue 15: the audit scanner on mutated e-mails raises nothing but abstat's documented error type.

The e-mails are real ones (tests/data/audit, the seeds); hypothesis mutates
them: bytes flipped, lines dropped, duplicated or swapped, digits stretched
to hundreds of places, control and non-ASCII characters inserted, quoting
added.  ``audit_text`` must return a report (or raise AbstatError), and the
report must render as text and as valid JSON.
"""

from __future__ import annotations

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from abstat import audit_text
from abstat.audit.render import render
from abstat.errors import AbstatError
from support import paths

DATA = paths.DATA
EMAILS = [
    p.read_text(encoding="utf-8", errors="replace")
    for p in sorted((DATA / "audit").glob("*.txt"))
    + sorted((DATA / "audit").glob("*.md"))
    + sorted((DATA / "seeds").glob("*.txt"))
]

ODD = [
    "\x00",
    "\x1b]0;title\x07",
    "\u00a0",
    "\u2028",
    "\ufeff",
    "١٢٣",
    "\r",
    "\t",
    "nan",
    "inf",
    "-0",
    "9" * 400,
    "1e999",
    "0x" + "f" * 300,
    "> ",
    "|",
    "+",
    "%",
    "e+",
    ".",
]


@st.composite
def mutated_email(draw: st.DrawFn) -> str:
    lines = draw(st.sampled_from(EMAILS)).splitlines()
    for _ in range(draw(st.integers(1, 6))):
        if not lines:
            break
        where = draw(st.integers(0, len(lines) - 1))
        action = draw(st.sampled_from(["insert", "replace_char", "drop", "dup", "swap", "quote", "stretch", "cut"]))
        line = lines[where]
        if action == "insert":
            at = draw(st.integers(0, len(line)))
            piece = draw(st.one_of(st.sampled_from(ODD), st.text(max_size=8)))
            lines[where] = line[:at] + piece + line[at:]
        elif action == "replace_char" and line:
            at = draw(st.integers(0, len(line) - 1))
            lines[where] = line[:at] + draw(st.characters()) + line[at + 1 :]
        elif action == "drop":
            del lines[where]
        elif action == "dup":
            lines.insert(where, line)
        elif action == "swap" and where + 1 < len(lines):
            lines[where], lines[where + 1] = lines[where + 1], line
        elif action == "quote":
            lines[where] = "> " + line
        elif action == "stretch":
            lines[where] = "".join(c * draw(st.integers(1, 3)) if c.isdigit() else c for c in line)
            lines[where] = lines[where].replace("0", "0" * draw(st.integers(1, 400)), 1)
        elif action == "cut":
            lines[where] = line[: draw(st.integers(0, len(line)))]
    return "\n".join(lines) + "\n"


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=mutated_email(), threshold=st.one_of(st.none(), st.floats(0, 50)))
def test_audit_of_mutated_emails_raises_only_abstat_errors(text, threshold):
    try:
        report = audit_text(text, threshold=threshold, source="mail")
    except AbstatError:
        return
    assert render(report, "text")
    json.loads(render(report, "json"))


def test_the_400_digit_n_of_issue_15_is_a_damaged_data_set():
    text = (
        "    N           Min           Max        Median           Avg        Stddev\n"
        f"x {'9' * 400}         1         5         3         3     1.5811388\n"
        "+ 5         2         6         4         4     1.5811388\n"
    )
    report = audit_text(text).to_dict()
    block = report["blocks"][0]
    assert block["damaged"] and any("N has 400 digits" in p["message"] for p in block["problems"])
