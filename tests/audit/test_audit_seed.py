"""abstat audit on the eight ministat comparisons of the Xen hypercall write-up (seed 000)."""

from __future__ import annotations

import re
from functools import lru_cache

import pytest

from abstat.audit import audit_text
from support import paths

DATA = paths.DATA / "audit"
SEED = (DATA / "xen-hypercall-ministat.txt").read_text()

# (legend of the candidate, printed relative difference) -- from the seed itself.
EXPECTED = [
    ("milan-hcall-pv64-after", -15.5277),
    ("milan-hcall-pv32-after", -10.9251),
    ("naples-hcall-pv64-after", -17.4306),
    ("naples-hcall-pv32-after", -1.98614),
    ("cflr-hcall-pv64-after", -4.5201),
    ("cflr-hcall-pv32-after", -2.46305),
    ("skx-hcall-pv64-after", -2.64181),
    ("skx-hcall-pv32-after", -1.44032),
]


def test_all_eight_comparisons_are_consistent_and_classic() -> None:
    report = audit_text(SEED)
    blocks = [b for b in report.blocks if b.kind == "ministat"]
    assert len(blocks) == 8
    assert report.exit_status == 0
    for block, (candidate, percent) in zip(blocks, EXPECTED):
        assert block.consistent is True
        assert block.dialect == "classic"
        assert not block.damaged
        assert block.command.startswith("ministat -A ")
        (comparison,) = block.comparisons
        assert comparison.candidate == candidate
        assert comparison.baseline == candidate.replace("-after", "-before")
        assert comparison.consistent is True
        assert comparison.dialect == "classic"
        assert comparison.printed.percent.value == percent
        # Every printed line was checked, and the freebsd relative interval does not fit.
        fields = {check.field for check in comparison.recomputation.checks}
        assert fields == {"verdict", "difference", "half_width", "percent", "pooled_s", "percent_half_width"}
        assert all(check.ok for check in comparison.recomputation.checks)


def test_block_lines_point_at_the_legend() -> None:
    lines = SEED.split("\n")
    for block in audit_text(SEED).blocks:
        assert lines[block.line - 1].strip().startswith("x ")
        assert lines[block.end_line - 1].strip().startswith("(Student's t, pooled s =")


_COMPARISON_LINE = re.compile(r"^\s+(-?[\d.]+)%? \+/- ([\d.]+)%?$|^\s+\(Student's t, pooled s = ([\d.]+)\)$")


def _digit_mutations(text: str):
    """Every copy of ``text`` with one digit of one printed comparison number changed."""
    lines = text.split("\n")
    for index, line in enumerate(lines):
        match = _COMPARISON_LINE.match(line)
        if not match:
            continue
        for group in (1, 2, 3):
            if match.group(group) is None:
                continue
            start = match.start(group)
            for offset, char in enumerate(match.group(group)):
                if not char.isdigit():
                    continue
                position = start + offset
                mutated = line[:position] + str((int(char) + 1) % 10) + line[position + 1 :]
                yield index + 1, "\n".join(lines[:index] + [mutated] + lines[index + 1 :])


_VITALS = re.compile(r"^\s*[x+]\s+(\d+)\s+\S+\s+\S+\s+\S+\s+(\S+)\s+(\S+)$")
_FIELDS = ("difference", "half_width", "relative_pct", "relative_half_width_pct", "pooled_sd")


def _rounding_box(text: str) -> tuple[float, float]:
    """Values that %.8g prints as ``text`` (independent of abstat.audit.printed)."""
    value = float(text)
    exponent = int(f"{abs(value):e}".split("e")[1])
    # A hair wider than half a unit: values exactly on a rounding boundary
    # count as reachable (the audit gives the benefit of the doubt there).
    half = 0.5 * 10.0 ** (exponent - 7) * (1 + 1e-6)
    return value - half, value + half


@lru_cache(maxsize=None)
def _reachable_strings(text: str, first_line: int) -> dict[str, set[str]]:
    """What ministat's own arithmetic (abstat.stats.student.pooled_t) prints for
    vitals anywhere inside the rounding box of the printed ones: corners, centre
    and random points."""
    import itertools
    import random

    from abstat.stats.student import pooled_t

    lines = text.split("\n")
    vitals = [_VITALS.match(lines[first_line - 1 + k]) for k in range(0, 3)]
    vitals = [m for m in vitals if m][:2]
    (nb, ab, sb), (nc, ac, sc) = [(int(m.group(1)), m.group(2), m.group(3)) for m in vitals]
    boxes = [_rounding_box(x) for x in (ab, sb, ac, sc)]
    points = list(itertools.product(*boxes)) + [tuple(float(x) for x in (ab, sb, ac, sc))]
    rng = random.Random(7)
    points += [tuple(rng.uniform(lo, hi) for lo, hi in boxes) for _ in range(400)]
    seen: dict[str, set[str]] = {f: set() for f in _FIELDS}
    for a1, s1, a2, s2 in points:
        result = pooled_t(nb, a1, s1, nc, a2, s2, 95.0)
        for name in _FIELDS:
            seen[name].add("%g" % getattr(result, name))
    return seen


def test_every_single_digit_change_in_a_printed_comparison_is_flagged_unless_reachable() -> None:
    mutations = list(_digit_mutations(SEED))
    assert len(mutations) == 245  # every digit of the 40 printed comparison numbers
    original = SEED.split("\n")
    blocks = audit_text(SEED).blocks
    unflagged = 0
    for line, text in mutations:
        block = next(b for b in blocks if b.line <= line <= b.end_line)
        seen = _reachable_strings(SEED, block.line + 3)
        numbers = re.findall(r"-?[\d.]+", text.split("\n")[line - 1])
        old_numbers = re.findall(r"-?[\d.]+", original[line - 1])
        changed = next(i for i, (a, b) in enumerate(zip(numbers, old_numbers)) if a != b)
        kind = original[line - 1].strip()
        if kind.startswith("(Student"):
            field = "pooled_sd"
        elif "%" in kind:
            field = ("relative_pct", "relative_half_width_pct")[changed]
        else:
            field = ("difference", "half_width")[changed]
        reachable = numbers[changed] in seen[field]
        report = audit_text(text)
        if reachable:
            unflagged += 1
            assert report.exit_status == 0, f"line {line}: {numbers[changed]} is reachable but flagged"
            continue
        assert report.exit_status == 1, f"change on line {line} not flagged"
        flagged = [c for b in report.blocks for c in b.comparisons if c.consistent is False]
        assert len(flagged) == 1
        assert any(check.line == line and not check.ok for check in flagged[0].recomputation.checks)
    # A handful of last-digit changes stay inside what the rounded vitals allow.
    assert 5 <= unflagged <= 8


@pytest.mark.parametrize(
    "old, new",
    [
        ("438.97959     6.6564899", "438.97959     7.6564899"),  # baseline stddev
        ("370.81633      12.57337", "371.81633      12.57337"),  # candidate average
        ("1767.5     35.688713", "1767.5     34.688713"),
        ("x 100          2176", "x  10          2176"),  # N
    ],
)
def test_changed_vitals_are_flagged(old: str, new: str) -> None:
    assert old in SEED
    report = audit_text(SEED.replace(old, new, 1))
    assert report.exit_status == 1
    bad = [c for b in report.blocks for c in b.comparisons if c.consistent is False]
    assert len(bad) == 1
    assert any("inconsistent" == f.code for f in bad[0].findings)


def test_a_last_digit_of_the_vitals_within_rounding_stays_consistent() -> None:
    # 438.97959 -> 438.97958 moves the difference by 1e-5: below what %g prints.
    report = audit_text(SEED.replace("438.97959", "438.97958", 1))
    assert report.blocks[0].comparisons[0].consistent is True


def test_verdict_contradiction_is_flagged() -> None:
    text = SEED.replace(
        "Difference at 95.0% confidence\n          -25.3489 +/- 13.5082\n          -1.98614% +/- 1.0584%\n"
        "          (Student's t, pooled s = 47.8673)",
        "No difference proven at 95.0% confidence",
    )
    assert text != SEED
    report = audit_text(text)
    (bad,) = [c for b in report.blocks for c in b.comparisons if c.consistent is False]
    assert bad.candidate == "naples-hcall-pv32-after"
    assert "exceeds the half-width" in " ".join(f.message for f in bad.findings)
