"""One CLI habit across commands (issue 27): ``-v`` is ``--variant`` wherever it exists and ``--verbose``
is spelled out; an old ``compare -v`` is a one-line error naming the new spelling; ``run -- CMD`` measures
one variant; every ``--help`` ends with an example; the shells' completion offers the stored experiments
(read from the store named on the line, at completion time) and doctor's checks -- checked in real bash,
zsh and fish."""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from abstat.cli import COMMANDS, main as cli_main
from abstat.cli.args import option_strings
from support import paths
from support.zsh_driver import ZSH_DRIVER

SRC = paths.SRC


def _parsers() -> dict[str, argparse.ArgumentParser]:
    from abstat.cli.commands.bisect import step_parser
    from abstat.cli.commands.bisect_host import resume_parser

    found = {
        name: __import__(module, fromlist=["build_parser"]).build_parser()
        for name, (module, _) in COMMANDS.items()
        if name != "ministat"
    }
    found["bisect step"], found["bisect --resume"] = step_parser(), resume_parser()
    return found


PARSERS = _parsers()


@pytest.mark.parametrize("name", sorted(PARSERS))
def test_every_help_ends_with_an_example_of_its_command(name):
    lines = PARSERS[name].format_help().rstrip().splitlines()
    title = max(i for i, line in enumerate(lines) if line in ("example:", "examples:"))
    examples = lines[title + 1 :]
    command = name.split()[0]
    assert examples and all(line.startswith("  ") and f"abstat {command}" in line for line in examples), examples
    # ...and each example parses as the command's own arguments (quotes as a shell reads them)
    import shlex

    for line in examples:
        words = shlex.split(line.split("#")[0])
        words = words[words.index("abstat") + 2 :]
        if words[:1] == ["step"]:
            words = words[1:]
        words = words[: next((i for i, w in enumerate(words) if w in (">", "|")), len(words))]
        PARSERS[name].parse_args(words)  # no UsageError


def test_the_top_level_help_ends_with_an_example(capsys):
    assert cli_main(["--help"]) == 0
    lines = capsys.readouterr().out.rstrip().splitlines()
    assert lines[-2] == "example:" and lines[-1].startswith("  abstat run ")


def test_v_is_variant_wherever_it_exists_and_verbose_is_spelled_out():
    seen_variant = 0
    for name, parser in PARSERS.items():
        options = option_strings(parser)
        if "-v" in options:
            action = options["-v"]
            if action.help == argparse.SUPPRESS:  # the old -v of compare: refused (below)
                assert name == "compare"
            else:
                assert action.option_strings == ["-v", "--variant"], name
                seen_variant += 1
        if "--verbose" in options:
            assert options["--verbose"].option_strings == ["--verbose"], name
        assert "-V" not in options, name
    assert seen_variant >= 1


@pytest.mark.parametrize("argv", [["compare", "-v", "a.txt", "b.txt"], ["compare", "a.txt", "b.txt", "-v"]])
def test_old_compare_v_is_a_one_line_error_naming_verbose(argv, capsys, tmp_path):
    os.chdir(tmp_path)
    Path("a.txt").write_text("1\n2\n3\n")
    Path("b.txt").write_text("2\n3\n4\n")
    assert cli_main(argv) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and "--verbose" in lines[0] and "--variant" in lines[0]
    # the new spelling works
    assert cli_main(["compare", "--verbose", "a.txt", "b.txt"]) == 0
    assert "a.txt" in capsys.readouterr().out


def test_run_dash_dash_command_is_one_variant_named_after_its_program(capsys):
    assert cli_main(["run", "-n", "3", "--print-spec", "--", "./bench", "--quick", "-n", "5"]) == 0
    spec = json.loads(capsys.readouterr().out)
    assert [(v["name"], v["command"]) for v in spec["variants"]] == [("bench", "./bench --quick -n 5")]
    assert spec["runs"] == 3
    assert cli_main(["run", "--shell", "--print-spec", "--", "sleep 0.1 && true"]) == 0
    spec = json.loads(capsys.readouterr().out)
    assert [(v["name"], v["command"]) for v in spec["variants"]] == [("sleep", "sleep 0.1 && true")]
    # both spellings at once, or a command with --resume: one line, exit 2
    assert cli_main(["run", "-v", "a=true", "--print-spec", "--", "true"]) == 2
    assert "not both" in capsys.readouterr().err
    assert cli_main(["run", "--resume", "x", "--", "true"]) == 2
    err = capsys.readouterr().err
    assert "a command after --" in err and len(err.strip().splitlines()) == 1


def test_run_dash_dash_command_measures_it(tmp_path):
    env = {**os.environ, "PYTHONPATH": SRC}
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "abstat",
            "run",
            "-n",
            "2",
            "--no-progress",
            "--store",
            str(tmp_path / "s.db"),
            "--experiment",
            "one",
            "--",
            "true",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )
    assert done.returncode == 0, done.stderr
    assert "one variant" in done.stdout and "true" in done.stdout
    listed = subprocess.run(
        [sys.executable, "-m", "abstat", "list", "--format", "json", "--store", str(tmp_path / "s.db")],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )
    assert json.loads(listed.stdout)[0]["variants"] == ["true"]


# --------------------------------------------------------------------------
# completion of stored experiments and doctor's checks, in the real shells


@pytest.fixture(scope="module")
def stores(tmp_path_factory):
    """./abstat.db with three experiments, other.db with one; an abstat on PATH running this tree."""
    root = tmp_path_factory.mktemp("completion")
    _fill(root / "abstat.db", ("ipi-broadcast", "ipi-unicast", "nightly"))
    _fill(root / "other.db", ("elsewhere",))
    bin_dir = root / "bin"
    bin_dir.mkdir()
    (bin_dir / "abstat").write_text(f'#!/bin/sh\nPYTHONPATH={SRC} exec {sys.executable} -m abstat "$@"\n')
    (bin_dir / "abstat").chmod(0o755)
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}", "ABSTAT_STORE": ""}
    for shell in ("bash", "zsh", "fish"):
        out = subprocess.run(
            [sys.executable, "-m", "abstat", "completion", shell],
            capture_output=True,
            text=True,
            env={**env, "PYTHONPATH": SRC},
            check=True,
        ).stdout
        (root / {"bash": "abstat.bash", "zsh": "_abstat", "fish": "abstat.fish"}[shell]).write_text(out)
    return root, env


def _fill(path: Path, names) -> None:
    for name in names:
        subprocess.run(
            [
                sys.executable,
                "-m",
                "abstat",
                "run",
                "-n",
                "1",
                "--no-progress",
                "--store",
                str(path),
                "--experiment",
                name,
                "--",
                "true",
            ],
            capture_output=True,
            check=True,
            timeout=120,
            env={**os.environ, "PYTHONPATH": SRC},
        )


def _need(program: str) -> str:
    path = shutil.which(program)
    if path is None:
        pytest.skip(f"{program} is not installed (.ci/run installs it)")
    return path


def test_list_names_is_quiet_and_cheap(stores):
    root, env = stores
    code = (
        "import sys; from abstat.cli import main; main(['list', '--names', '--store', sys.argv[1]]); "
        "sys.stderr.write(repr([m for m in ('numpy', 'scipy', 'rich') if m in sys.modules]))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(root / "abstat.db")],
        capture_output=True,
        text=True,
        env={**env, "PYTHONPATH": SRC},
        timeout=60,
    )
    assert done.stdout.split() == ["ipi-broadcast", "ipi-unicast", "nightly"] and done.stderr == "[]"
    missing = subprocess.run(
        [sys.executable, "-m", "abstat", "list", "--names", "--store", str(root / "no.db")],
        capture_output=True,
        text=True,
        env={**env, "PYTHONPATH": SRC},
        timeout=60,
    )
    assert (missing.returncode, missing.stdout, missing.stderr) == (0, "", "")
    assert not (root / "no.db").exists()


def _bash(root: Path, env, *words: str) -> list[str]:
    line = " ".join(words)
    code = (
        f"source abstat.bash; COMP_WORDS=({line}); COMP_CWORD={len(words) - 1}; COMP_LINE='{line}'; "
        f"COMP_POINT=${{#COMP_LINE}}; _shtab_abstat abstat '{words[-1]}' '{words[-2]}'; "
        "printf '%s\\n' \"${COMPREPLY[@]}\""
    )
    done = subprocess.run([_need("bash"), "-c", code], capture_output=True, text=True, timeout=60, cwd=root, env=env)
    return done.stdout.split()


def test_bash_completes_stored_experiments_and_doctor_checks(stores):
    root, env = stores
    assert _bash(root, env, "abstat", "show", "ipi") == ["ipi-broadcast", "ipi-unicast"]
    assert _bash(root, env, "abstat", "run", "--resume", "n") == ["nightly"]
    assert _bash(root, env, "abstat", "history", "--store", "other.db", "''") == ["elsewhere"]
    assert _bash(root, env, "abstat", "doctor", "--only", "c") == ["cpu-governor", "cpu-isolation", "c-states"]


def test_fish_completes_stored_experiments_and_doctor_checks(stores):
    root, env = stores
    code = (
        'source abstat.fish; complete -C "abstat show ipi"; echo ::; complete -C "abstat noise --store '
        'other.db --experiment "; echo ::; complete -C "abstat doctor --only t"'
    )
    done = subprocess.run([_need("fish"), "-c", code], capture_output=True, text=True, timeout=60, cwd=root, env=env)
    shown, other, checks = (
        {line.split("\t")[0] for line in part.split("\n") if line} for part in done.stdout.split("::")
    )
    assert shown == {"ipi-broadcast", "ipi-unicast"}
    assert other == {"elsewhere"}
    assert checks == {"turbo", "transparent-hugepages", "thermal-throttle"}


@pytest.mark.parametrize(
    "line,expected,absent",
    [
        ("abstat show ipi", ["ipi-broadcast", "ipi-unicast"], "nightly"),
        ("abstat history --store other.db ", ["elsewhere"], "nightly"),
        ("abstat doctor --only t", ["thermal-throttle", "transparent-hugepages", "turbo"], "cpu-governor"),
    ],
)
def test_zsh_completes_stored_experiments_and_doctor_checks(stores, line, expected, absent):
    root, env = stores
    (root / "driver.zsh").write_text(ZSH_DRIVER)
    done = subprocess.run(
        [_need("zsh"), "-f", "driver.zsh", line, expected[-1]],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=root,
        env=env,
    )
    shown = done.stdout.split(line, 1)[-1]
    assert all(name in shown for name in expected), done.stdout[-500:]
    assert absent not in shown
