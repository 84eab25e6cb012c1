"""abstat audit on every report of the ministat conformance corpus (real outputs
of Debian's classic ministat and of FreeBSD's ministat)."""

from __future__ import annotations

import json
import tarfile
from functools import lru_cache

import pytest

from abstat.audit import audit_text
from support import paths

CORPUS = paths.DATA / "ministat-conformance.tar.xz"


@lru_cache(maxsize=None)
def _cases(dialect: str) -> tuple[dict, ...]:
    with tarfile.open(CORPUS) as archive:
        for member in archive.getmembers():
            if member.name.endswith(f"{dialect}/cases.json"):
                handle = archive.extractfile(member)
                assert handle is not None
                cases = json.load(handle)
                return tuple(c for c in cases if c["rc"] == 0 and c["stdout"].strip())
    raise AssertionError(f"no {dialect}/cases.json in {CORPUS}")


@lru_cache(maxsize=None)
def _audit_all(dialect: str, quoted: bool = False):
    results = []
    for case in _cases(dialect):
        text = _quote(case["stdout"]) if quoted else case["stdout"]
        results.append((case, audit_text(text, source=case["name"])))
    return tuple(results)


def _quote(text: str) -> str:
    """As a mail client quotes a reply that itself indented the report with a tab."""
    return (
        "Hi,\n\nthe numbers:\n\n" + "\n".join("> \t" + line if line else ">" for line in text.split("\n")) + "\nBye\n"
    )


@pytest.mark.parametrize("dialect", ["classic", "freebsd"])
def test_every_corpus_report_is_found_and_consistent(dialect: str) -> None:
    results = _audit_all(dialect)
    assert len(results) > 190
    comparisons = 0
    for case, report in results:
        datasets = sum(1 for a in case["args"] if a.startswith("data/")) + (1 if case["stdin"] else 0)
        (block,) = [b for b in report.blocks if b.kind == "ministat"]
        assert not block.damaged, case["name"]
        assert len(block.datasets) == max(datasets, 1), case["name"]
        assert report.exit_status == 0, case["name"]
        printed = [c for c in block.comparisons if c.printed is not None]
        if "-n" not in case["args"] and datasets >= 2:
            assert len(printed) == datasets - 1, case["name"]
        for comparison in printed:
            comparisons += 1
            assert comparison.consistent is True, (case["name"], comparison.findings)
    assert comparisons > 350


@pytest.mark.parametrize("dialect, other", [("classic", "freebsd"), ("freebsd", "classic")])
def test_dialect_is_identified_and_never_wrong(dialect: str, other: str) -> None:
    decided = undecided = 0
    for case, report in _audit_all(dialect):
        for block in report.blocks:
            assert block.dialect != other, case["name"]
            for comparison in block.comparisons:
                if comparison.printed is None or not comparison.printed.difference_proven:
                    continue
                assert comparison.dialect in (dialect, "both"), case["name"]
                if comparison.dialect == dialect:
                    decided += 1
                else:
                    undecided += 1
    # The relative interval decides the dialect unless the means are close
    # (or both spreads vanish): measured 147/156 classic, 164/183 freebsd.
    assert decided > 5 * undecided
    assert decided > 130


@pytest.mark.parametrize("dialect", ["classic", "freebsd"])
def test_quoted_and_indented_corpus_reports_audit_the_same(dialect: str) -> None:
    plain = _audit_all(dialect)
    quoted = _audit_all(dialect, True)
    for (case, a), (_, b) in zip(plain, quoted):
        (block_a,) = a.blocks
        (block_b,) = b.blocks
        assert block_b.line == block_a.line + 4
        assert [c.consistent for c in block_a.comparisons] == [c.consistent for c in block_b.comparisons]
        assert block_a.dialect == block_b.dialect
        assert block_a.datasets == [{**d, "line": d["line"] - 4} for d in block_b.datasets], case["name"]


def test_freebsd_quiet_output_without_legend_or_header_is_parsed() -> None:
    quiet = [(c, r) for c, r in _audit_all("freebsd") if "-q" in c["args"]]
    assert len(quiet) > 10
    for case, report in quiet:
        (block,) = report.blocks
        assert all(d["name"] is None for d in block.datasets)
        assert block.consistent in (True, None), case["name"]


def test_several_corpus_reports_in_one_mail() -> None:
    cases = _cases("freebsd")[:20] + _cases("classic")[:20]
    text = "\n\nand then\n\n".join(c["stdout"] for c in cases)
    report = audit_text(text)
    assert len(report.blocks) == 40
    assert report.exit_status == 0
