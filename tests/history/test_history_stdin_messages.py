"""attack16 B and F: ``history --input -`` names standard input ``<stdin>`` in every error, says it can be read
once, and says when a column's numbers are none of them finite; a change's level prints as the data's values
do (``6`` beside ``5``, not ``6.000``: float error of the change-point model)."""

from __future__ import annotations

import json

from support.cli import run_abstat


def test_empty_stdin_is_named_stdin(tmp_path):
    done = run_abstat("history", "--input", "-", "--no-state", stdin="", cwd=tmp_path)
    assert (done.returncode, done.stderr) == (2, "abstat history: <stdin>: empty input\n")


def test_stdin_given_twice_is_a_usage_error():
    done = run_abstat("history", "--input", "-", "--input", "-", "--no-state", stdin="rev,wall\na,1\nb,2\n")
    assert (done.returncode, done.stderr) == (2, "abstat history: standard input (--input -) can be given once\n")


def test_a_column_of_only_nan_and_inf_says_no_finite_values():
    done = run_abstat("history", "--input", "-", "--no-state", stdin="rev,wall\na,nan\nb,inf\nc,1e400\nd,-inf\n")
    assert done.returncode == 2
    assert done.stderr.startswith("abstat history: <stdin>: CSV column 'wall' has no finite values"), done.stderr
    words = run_abstat("history", "--input", "-", "--no-state", stdin="rev,wall\na,x\nb,2\n")
    assert "<stdin>: CSV file has no column of numbers to follow" in words.stderr  # words are no numbers


def test_a_change_level_prints_as_the_data_values():
    rows = "".join(f"r{i:02d},{5 if i < 20 else 6}\n" for i in range(40))
    text = run_abstat("history", "--input", "-", "--no-state", stdin="rev,wall\n" + rows).stdout
    change = next(line.split() for line in text.splitlines() if line.lstrip().startswith("r20"))
    assert change[:3] == ["r20", "5", "6"], text
    data = json.loads(
        run_abstat("history", "--input", "-", "--no-state", "--format", "json", stdin="rev,wall\n" + rows).stdout
    )
    found = data["series"][0]["change_points"][0]
    assert (found["before"], found["after"]) == (5.0, 6.0)


def test_stdin_without_revision_labels_is_named_stdin():
    """attack17 8: the one message left that named standard input ``-``."""
    done = run_abstat("history", "--input", "-", "--no-state", stdin="rev,wall\n,1\n,2\n")
    assert done.returncode == 2
    assert done.stderr.startswith("abstat history: <stdin>: no values with a 'rev' label"), done.stderr


def test_stdin_empty_cells_note_names_stdin():
    done = run_abstat("history", "--input", "-", "--no-state", stdin="rev,wall\na,1\nb,\nc,3\n")
    assert "warning: <stdin>: 1 empty cell(s) left out" in done.stdout, done.stdout
