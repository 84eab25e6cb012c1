"""Go benchmark text, read as golang.org/x/perf/benchfmt reads it.

References: bent's size and DWARF files and benchstat's units test (copied,
trimmed, from golang/perf's testdata into tests/data/report/peers), benchstat's
printed output for that test, and benchfmt's documented rules and error
messages (reader.go) for the malformed lines below.
"""

from __future__ import annotations

import json
import os

import pytest

from abstat.cli import main as cli_main
from abstat.errors import InputError
from abstat.readers import peers
from abstat.readers.gobench import read_gobench
from abstat.report import api
from support import paths

DATA = os.path.join(str(paths.DATA), "report", "peers")


def data(name: str) -> str:
    return os.path.join(DATA, name)


def write(tmp_path, text: str, name: str = "bench.txt") -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def by_name(sets) -> dict[tuple[str, str], list[float]]:
    return {(s.labels["benchmark"], s.labels["metric"]): s.values for s in sets}


# -- bent's files: lower-case names, junk lines ------------------------------


@pytest.mark.parametrize("name", ["bent-base.benchsize", "bent-tip.benchsize", "bent-tip.benchdwarf"])
def test_bent_files_are_read_whole(name):
    path = data(name)
    text = peers.read_text(path)
    assert peers.detect_format(path, text) == "go"
    sets = read_gobench(path, text)
    # independently: every line that starts with "Benchmark" is one result
    expected = {}
    for line in open(path):
        if line.startswith("Benchmark"):
            fields = line.split()
            expected[(fields[0][len("Benchmark") :], fields[3])] = [float(fields[2])]
    assert expected and by_name(sets) == expected
    assert all(s.labels["goos"] == "linux" and s.labels["goarch"] == "amd64" for s in sets)
    assert not any(s.notes for s in sets)  # bent's "tmp dwarf ..." lines are not results: ignored


def test_bent_sizes_compare_across_files(capsys):
    assert cli_main(["report", "--format", "json", data("bent-base.benchsize"), data("bent-tip.benchsize")]) == 0
    doc = json.loads(capsys.readouterr().out)
    text = json.dumps(doc)
    assert "k8s_schedulercache_text" in text and "cespare_xxhash_total" in text


# -- Unit ... assume=exact (benchstat's units test) --------------------------

# benchstat's output for units.txt (golang/perf cmd/benchstat/testdata/units.stdout):
#   Size       100.0 ± 0%     105.0 ± 0%  +5.00% (n=1)
#   NonExact   101.0 ± 1% ¹   101.0 ± 0%   0.00% (n=3)
#   geomean    100.5          103.0       +2.47%
#   ¹ exact distribution expected, but values range from 100 to 101


def test_assume_exact_is_honoured_as_benchstat_does():
    sets = api.load([data("benchstat-units.txt")])
    assert {s.extra.get("assume") for s in sets} == {"exact"}
    report = api.build(sets, by="note")
    rows = {r.labels["benchmark"]: r.cells["after"] for r in report.rows}
    size, nonexact = rows["Size"].comparison, rows["NonExact"].comparison
    assert size.delta_pct == pytest.approx(5.0) and size.method == "exact" and size.significant
    assert nonexact.delta_pct == 0.0 and not nonexact.significant
    assert report.rows[0].cells["before"].n == 1  # one value is enough for an exact unit
    notes = " ".join(report.footnotes)
    assert "range from 100 to 101" in notes and "NonExact" in notes
    geomean = (105 / 100 * 101 / 101) ** 0.5 - 1
    assert geomean * 100 == pytest.approx(2.47, abs=0.005)


def test_without_assume_exact_one_value_is_not_enough(tmp_path):
    text = open(data("benchstat-units.txt")).read().replace("Unit text-bytes assume=exact\n", "")
    sets = api.load([write(tmp_path, text, "units.txt")])
    report = api.build(sets, by="note")
    size = next(r for r in report.rows if r.labels["benchmark"] == "Size")
    assert size.cells["after"].comparison is None


# -- malformed lines: reported and skipped, as benchfmt does -----------------

MALFORMED = """\
BenchmarkGood 100 1 ns/op
BenchmarkTailingSpaceNoIter 
BenchmarkBadIter abc
BenchmarkHugeIter 9999999999999999999999999999999
BenchmarkMissingVal 100
BenchmarkBadVal 100 abc
BenchmarkMissingUnit 100 1
BenchmarkMissingUnit2 100 1 ns/op 2
BenchmarkUnderscoreIter 1_000 1 ns/op
BenchmarkUnderscoreVal 100 1_000 ns/op
Unit
Unit ns/op blah
Unit ns/op a=1
Unit ns/op a=2
BenchmarkOnlyTheName
BenchmarkGood 100 2 ns/op
BenchmarkHugeVal 1 9999999999999999999999999999999 ns/op
BenchmarkEmSpace\u2003 1\u20031\u2003ns/op
"""


def test_malformed_lines_are_reported_and_skipped(tmp_path):
    path = write(tmp_path, MALFORMED)
    sets = read_gobench(path)
    assert by_name(sets) == {("Good", "ns/op"): [1.0, 2.0], ("HugeVal", "ns/op"): [1e31], ("EmSpace", "ns/op"): [1.0]}
    note = sets[0].notes[0]
    assert all(note in s.notes for s in sets)
    # benchfmt's messages, by line (reader_test.go "errors"), plus Go's rejection of 1_000
    assert note.startswith(f"{path}: 12 malformed lines skipped")
    for expected in (
        "line 2: missing iteration count",
        "line 3: parsing iteration count: invalid syntax",
        "line 4: parsing iteration count: value out of range",
    ):
        assert expected in note
    assert "and 9 more" in note


def test_every_malformed_line_has_benchfmts_message(tmp_path):
    from abstat.readers import gobench

    expected = {
        "BenchmarkTailingSpaceNoIter ": "missing iteration count",
        "BenchmarkBadIter abc": "parsing iteration count: invalid syntax",
        "BenchmarkHugeIter 9999999999999999999999999999999": "parsing iteration count: value out of range",
        "BenchmarkMissingVal 100": "missing measurements",
        "BenchmarkBadVal 100 abc": "parsing measurement: invalid syntax",
        "BenchmarkMissingUnit 100 1": "missing units",
        "BenchmarkMissingUnit2 100 1 ns/op 2": "missing units",
        "BenchmarkUnderscoreIter 1_000 1 ns/op": "parsing iteration count: invalid syntax",
        "BenchmarkUnderscoreVal 100 1_000 ns/op": "parsing measurement: invalid syntax",
    }
    for line, message in expected.items():
        with pytest.raises(gobench._Skip) as skip:
            gobench._result(line)
        assert skip.value.args[0].startswith(message), line
    units: dict = {}
    assert gobench._unit_line("Unit", units) == ["missing unit"]
    assert gobench._unit_line("Unit ns/op blah", units)[0].startswith("expected key=value")
    assert gobench._unit_line("Unit ns/op a=1", units) == []
    assert gobench._unit_line("Unit ns/op a=2", units) == ["metadata a of unit ns/op already set to 1"]
    assert gobench._unit_line("Unit ns/op a=1", units) == []  # the same value again is fine


def test_go_numbers_are_go_numbers(tmp_path):
    path = write(tmp_path, "BenchmarkA 1 0x1p-2 ns/op\nBenchmarkA 1 1e3 ns/op\nBenchmarkA +2 .5 ns/op\n")
    assert by_name(read_gobench(path)) == {("A", "ns/op"): [0.25, 1000.0, 0.5]}


def test_a_file_of_only_bad_lines_names_the_first(tmp_path):
    path = write(tmp_path, "goos: linux\nBenchmarkX 1_000 5 ns/op\nBenchmarkY 1 2\n")
    with pytest.raises(InputError) as err:
        read_gobench(path)
    assert str(err.value).startswith(f"{path}:2: parsing iteration count")


def test_indented_result_lines_are_not_results(tmp_path):
    path = write(tmp_path, "BenchmarkA 1 5 ns/op\n    BenchmarkA 1 99 ns/op\n\tBenchmarkB 1 7 ns/op\n")
    sets = read_gobench(path)
    assert by_name(sets) == {("A", "ns/op"): [5.0]}
    assert any("2 indented Benchmark lines ignored" in n for n in sets[0].notes)


def test_not_finite_measurements_are_skipped_with_a_note(tmp_path):
    path = write(tmp_path, "BenchmarkA 1 5 ns/op\nBenchmarkA 1 NaN ns/op\nBenchmarkA 1 +Inf ns/op\n")
    sets = read_gobench(path)
    assert by_name(sets) == {("A", "ns/op"): [5.0]}
    assert "2 malformed lines" in sets[0].notes[0]


# -- configuration lines ------------------------------------------------------


def test_configuration_lines_as_benchfmt_reads_them(tmp_path):
    text = (
        "key1:    \t value\n: not a key\nab:not a key\na b: also not a key\nkey2: value\n"
        "Key3: upper case\nBenchmarkOne 100 1 ns/op\nkey1:\nkey2: second\nBenchmarkTwo 100 2 ns/op\n"
    )
    sets = read_gobench(write(tmp_path, text))
    one, two = (next(s for s in sets if s.labels["benchmark"] == b) for b in ("One", "Two"))
    assert {k: v for k, v in one.labels.items() if k.startswith(("key", "ab", "a ", "Key"))} == {
        "key1": "value",
        "key2": "value",
    }
    assert "key1" not in two.labels and two.labels["key2"] == "second"


# -- sub-benchmark keys that clash with abstat's labels or the configuration --


def test_clashing_sub_benchmark_keys_keep_benchmarks_and_configuration_apart(tmp_path):
    text = (
        "goos: linux\n"
        "BenchmarkX/metric=a-8 1 10 ns/op\n"
        "BenchmarkX/metric=b-8 1 20 ns/op\n"
        "BenchmarkX/benchmark=y 1 30 ns/op\n"
        "BenchmarkX/goos=windows 1 40 ns/op\n"
        "BenchmarkX/size=1K 1 50 ns/op\n"
    )
    sets = read_gobench(write(tmp_path, text))
    assert len(sets) == 5
    labels = [s.labels for s in sets]
    assert [l.get("/metric") for l in labels[:2]] == ["a", "b"]
    assert all(l["metric"] == "ns/op" and l["benchmark"] == "X" and l["goos"] == "linux" for l in labels)
    assert labels[0]["gomaxprocs"] == "8"
    assert labels[2]["/benchmark"] == "y" and labels[3]["/goos"] == "windows"
    assert labels[4]["size"] == "1K" and "/size" not in labels[4]
    # and the report keeps them in five rows, not one pooled cell
    report = api.build(api.load([str(tmp_path / "bench.txt")]), by="variant")
    assert len(report.rows) == 5


# -- compare accepts Go files as report does ----------------------------------


def test_compare_reads_go_files_like_report(capsys):
    old, new = data("go-old.txt"), data("go-new.txt")
    assert cli_main(["compare", "--format", "json", old, new]) == 0
    compared = json.loads(capsys.readouterr().out)
    assert cli_main(["report", "--format", "json", old, new]) == 0
    reported = json.loads(capsys.readouterr().out)
    assert compared == reported
