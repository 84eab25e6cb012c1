"""The experiment engine: the specification as data, its JSON form as untrusted input, events, results."""

from __future__ import annotations

import io
import json
import os

import pytest

from abstat.engine import Engine, ExperimentSpec, Hooks, Host, Lab, SpecError, Variant
from abstat.engine import events as ev
from abstat.engine.spec import MAX_RUNS, decode, dumps, encode, loads
from abstat.box.runner.sources import JsonLines, Perf, RegexMetric
from abstat.store import open_store
from support import paths
from support.cli import run_abstat as abstat

SRC = paths.SRC

FULL = ExperimentSpec(
    (Variant("before", "./bench --old", {"rev": "abc"}), Variant("after", "./bench --new")),
    runs=7,
    warmup=2,
    order="sequential",
    seed=41,
    shell=True,
    timeout=2.5,
    on_failure="continue",
    hooks=Hooks(setup="make", prepare="make clean"),
    background=("stress -c 1",),
    metrics=(RegexMetric("ops", r"ops: (\d+)", "op/s"), JsonLines(), Perf(("cycles", "instructions"))),
    experiment="hcall",
    labels={"mode": "pv64"},
    rev=".",
    lab=Lab(
        (Host("milan", "root@milan"), Host("naples", "naples")),
        boot={"before": "b1", "after": "b2"},
        check={"before": "c1"},
        boots=3,
        boot_timeout=30.0,
    ),
    store="lab.db",
)


# --------------------------------------------------------------------------
# the JSON form


def test_every_field_survives_the_json_form():
    document = json.loads(json.dumps(encode(FULL)))
    assert document["abstat_spec"] == 1
    assert decode(document) == FULL
    assert loads(dumps(FULL)) == FULL
    assert FULL.to_json() == encode(FULL) and ExperimentSpec.from_json(document) == FULL


def test_a_short_document_takes_the_defaults():
    spec = decode({"abstat_spec": 1, "variants": [{"name": "a", "command": "true"}]})
    assert spec == ExperimentSpec((Variant("a", "true"),))
    assert (spec.runs, spec.warmup, spec.order, spec.seed, spec.on_failure) == (10, 0, "interleaved", None, "stop")
    assert spec.metrics == (JsonLines(),) and spec.lab is None and spec.analysis.confidence == 95.0


GOOD = {"abstat_spec": 1, "variants": [{"name": "a", "command": "true"}]}


@pytest.mark.parametrize(
    "change, named",
    [
        ({"abstat_spec": 4}, "abstat_spec: version 4 was written by a newer abstat"),
        ({"abstat_spec": "1"}, "abstat_spec: missing or not a version number"),
        ({"variants": []}, "variants: give at least one variant"),
        ({"variants": "true"}, "variants: must be a list"),
        ({"variants": [{"name": "a b", "command": "true"}]}, "variant name: 'a b': use letters"),
        ({"variants": [{"name": "a", "command": ""}]}, "variant 'a' command: must not be empty"),
        ({"variants": [{"name": "a", "command": "x" * 70_000}]}, "is longer than 65,536 characters"),
        ({"variants": [{"name": "a", "command": "t"}, {"name": "a", "command": "t"}]}, "variant 'a' given twice"),
        ({"variants": [{"name": "a", "command": "t", "x": 1}]}, "variants[0]: unknown field 'x'"),
        ({"runs": 0}, "runs: must be from 1 to 1,000,000 (got 0)"),
        ({"runs": MAX_RUNS + 1}, "runs: must be from 1 to 1,000,000"),
        ({"runs": 3.0}, "runs: must be an integer, not float"),
        ({"runs": True}, "runs: must be an integer, not bool"),
        ({"seed": 2**70}, "seed: must be from"),
        ({"order": "backwards"}, "order: 'backwards': choose one of interleaved, sequential, random"),
        ({"timeout": -1}, "timeout: must be a positive number of seconds"),
        ({"timeout": float("nan")}, "timeout: must be a positive number of seconds"),
        ({"shell": "yes"}, "shell: must be true or false"),
        ({"on_failure": "ignore"}, "on_failure: 'ignore': choose one of stop, continue"),
        ({"hooks": {"setup": 3}}, "hooks.setup: must be a string, not int"),
        ({"hooks": {"teardown": "x"}}, "hooks: unknown field 'teardown'"),
        ({"background": ["x"] * 101}, "background: must be a list of at most 100 commands"),
        ({"metrics": [{"source": "regex", "name": "x", "pattern": "("}]}, "metrics[0]: metric 'x': bad regular"),
        ({"metrics": [{"source": "regex", "name": "wall", "pattern": "(1)"}]}, "a built-in metric name"),
        ({"metrics": [{"source": "regex", "name": "x", "pattern": "no group"}]}, "has no capture group"),
        ({"metrics": [{"source": "ktap"}]}, "metrics[0]: unknown metric source 'ktap'"),
        ({"metrics": [{"source": "perf", "events": ["cycles;rm -rf /"]}]}, "bad event name"),
        ({"labels": {"variant": "x"}}, "labels: 'variant' is set by abstat itself"),
        ({"labels": {"k": 3}}, "labels['k']: must be a string"),
        ({"labels": {f"k{i}": "v" for i in range(101)}}, "labels: more than 100 labels"),
        ({"experiment": "a:b"}, "experiment: bad name 'a:b'"),
        ({"lab": {"hosts": []}}, "lab.hosts: give at least one host"),
        ({"lab": {"hosts": [{"label": "m", "destination": "-oProxyCommand=x"}]}}, "not an ssh destination"),
        ({"lab": {"hosts": [{"label": "m", "destination": "a b"}]}}, "not an ssh destination"),
        ({"lab": {"hosts": [{"label": "-m", "destination": "m"}]}}, "host label: '-m'"),
        ({"lab": {"hosts": [{"label": "m", "destination": "m"}], "boot": {"b": "reboot"}}}, "lab.boot: no variant 'b'"),
        ({"lab": {"hosts": [{"label": "m", "destination": "m"}], "check": {"a": "true"}}}, "lab.check: needs boot"),
        ({"lab": {"hosts": [{"label": "m", "destination": "m"}], "boots": 0}}, "lab.boots: must be from 1"),
        ({"lab": {"hosts": [{"label": "m", "destination": "m"}], "boot_timeout": 0}}, "lab.boot_timeout: must be"),
        ({"lab": {"hosts": [{"label": "m", "destination": "m"}]}, "labels": {"host": "x"}}, "labels: 'host' is"),
        ({"analysis": {"confidence": 100}}, "analysis.confidence: must be a percentage from 50 to 99.99"),
        ({"analysis": {"confidence": 99.999}}, "analysis.confidence: must be a percentage from 50 to 99.99"),
        ({"something": 1}, "specification: unknown field 'something'"),
    ],
)
def test_a_forged_or_damaged_document_is_one_line_naming_the_field(change, named):
    with pytest.raises(SpecError) as raised:
        decode({**GOOD, **change}, source="job.json")
    message = str(raised.value)
    assert named in message and message.startswith("job.json: ") and "\n" not in message


def test_not_json_at_all_is_one_line():
    for text in ("{", "[1, 2]", "null", "[" * 100_000):
        with pytest.raises(SpecError) as raised:
            loads(text, "job.json")
        assert "\n" not in str(raised.value)


def test_building_a_spec_in_python_checks_it_too():
    with pytest.raises(SpecError, match="runs: must be an integer, not str"):
        ExperimentSpec((Variant("a", "true"),), runs="10")
    with pytest.raises(SpecError, match="variants: must hold variants"):
        ExperimentSpec(("true",))
    with pytest.raises(SpecError, match="lab.boot: give one for every variant"):
        ExperimentSpec((Variant("a", "x"), Variant("b", "y")), lab=Lab((Host("m", "m"),), boot={"a": "r"}))
    spec = ExperimentSpec((Variant("a", "true"),))
    with pytest.raises(SpecError, match="warmup"):
        spec.replace(warmup=-1)


# --------------------------------------------------------------------------
# the engine, here


def test_a_local_run_reports_events_in_order_and_stores_the_spec(tmp_path):
    spec = ExperimentSpec(
        (Variant("a", "true"), Variant("b", 'sh -c \'echo "{\\"n\\": 4}"\'')),
        runs=3,
        warmup=1,
        experiment="e",
        store=str(tmp_path / "s.db"),
        labels={"k": "v"},
    )
    seen: list = []
    result = Engine(on_event=seen.append, argv=["test"]).run(spec)
    kinds = [event.kind for event in seen]
    assert kinds[0] == "experiment_started" and kinds[-1] == "experiment_done"
    assert kinds.count("run_started") == 8 and kinds.count("run_done") == 6  # warm-ups start, are not reported
    assert result.status == "complete" and result.experiment == "e" and len(result.runs) == 6
    assert result.values("b", "n") == [4.0, 4.0, 4.0] and len(result.values("a")) == 3
    started = seen[0]
    assert started.spec.seed is not None and started.spec.seed == result.spec.seed  # drawn once, reported, kept
    done = seen[-1]
    assert (done.runs, done.total, done.failed_runs, done.error) == (6, 6, 0, None)
    with open_store(spec.store) as store:
        (invocation,) = store.invocations("e")
        assert invocation["status"] == "complete" and invocation["labels"] == {"k": "v"}
        stored = decode(invocation["settings"]["spec"])
        assert stored == result.spec.replace(store=None)
        assert invocation["settings"]["runs"] == 3 and invocation["settings"]["variants"]["a"] == "true"


def test_a_failing_run_stops_unless_the_policy_is_to_continue(tmp_path):
    spec = ExperimentSpec(
        (Variant("a", "true"), Variant("bad", "false")), runs=3, order="sequential", store=str(tmp_path / "s.db")
    )
    stopped = Engine().run(spec)
    assert stopped.status == "failed" and "run 1 of variant 'bad' failed: exit status 1" in stopped.error
    assert [r.status for r in stopped.runs] == ["ok", "ok", "ok", "failed"]
    went_on = Engine().run(spec.replace(on_failure="continue"))
    assert went_on.status == "complete" and len(went_on.failed_runs) == 3 and went_on.error is None


def test_a_command_that_cannot_run_is_refused_before_the_store_exists(tmp_path):
    from abstat.errors import UsageError

    spec = ExperimentSpec((Variant("a", "/no/such/bench"),), store=str(tmp_path / "s.db"))
    with pytest.raises(UsageError, match="variant 'a': command not found or not executable: '/no/such/bench'"):
        Engine().run(spec)
    assert not (tmp_path / "s.db").exists()


def test_a_session_measures_single_runs_through_the_spec_s_metric_sources():
    from abstat.box.runner import Command, RunContext

    spec = ExperimentSpec((Variant("bench", "echo"),), metrics=(RegexMetric("x", r"x=(\d+)"),), timeout=5.0)
    with Engine().session(spec) as session:
        measurement = session.measure(Command("echo x=12", shell=True), RunContext("bench"), timeout=5.0)
        hook = session.run_hook("build", Command("exit 3", shell=True), RunContext("bench"), timeout=5.0)
    assert measurement.ok and measurement.values["x"] == [12.0] and "n" not in measurement.values
    assert not hook.ok and hook.exit_code == 3


# --------------------------------------------------------------------------
# events drawn


def test_the_display_draws_a_local_run_as_abstat_run_always_has():
    from abstat.cli.progress.display import RunDisplay

    spec = ExperimentSpec((Variant("a", "true"), Variant("b", "true")), runs=1, seed=5)
    stream = io.StringIO()
    with RunDisplay(stream, progress=True) as display:
        display(ev.ExperimentStarted("e", spec, "s.db", ("a note",), ("load: busy",)))
        display(ev.RunStarted("a", 0, False, 0, 2))
        display(ev.RunDone("a", 0, 0, "ok", 0.0015))
        display(ev.RunDone("b", 0, 1, "failed", 0.002))
        display(ev.Note("store went away: runs spooled to x.db"))
        display(ev.ExperimentDone("e", "interrupted", 2, 2, 1, None, ("background ignored SIGTERM",)))
    lines = stream.getvalue().splitlines()
    assert lines[:3] == [
        "abstat run: experiment 'e', 2 variant(s) x 1 runs (+0 warm-up), order interleaved, seed 5, store s.db",
        "note: a note",
        "note: abstat doctor warns: load: busy",
    ]
    assert lines[3].startswith("note: under load, wall time includes waiting")  # the doctor warned of load
    assert lines[4].startswith("[1/2] a run 1: 1.500 ms  median: a 1.500 ms, b -  ETA ")
    assert lines[5].startswith("[2/2] b run 1: FAILED  median: a 1.500 ms, b - (1 failed)")
    assert lines[6:] == [
        "store went away: runs spooled to x.db",
        "note: background ignored SIGTERM",
        "note: 1 failed run(s) recorded as failed, not used in the comparison",
        "abstat run: interrupted: 2 of 2 runs done; partial report follows",
    ]


def test_the_display_escapes_what_a_box_says():
    from abstat.cli.progress.display import RunDisplay

    spec = ExperimentSpec((Variant("a", "true"),), seed=1, lab=Lab((Host("m", "m"),)))
    stream = io.StringIO()
    with RunDisplay(stream, progress=False) as display:
        display(ev.ExperimentStarted("e", spec, "s.db", todo={"m": (1, 0)}))
        display(ev.HostLost("the box said \x1b[2Jgoodbye", host="m"))
    assert "\x1b" not in stream.getvalue() and "\\x1b[2Jgoodbye" in stream.getvalue()


# --------------------------------------------------------------------------
# --resume of stored specifications, forged or old


def _lab_store(path: str, settings: dict) -> None:
    with open_store(path) as store:
        invocation = store.start_invocation(
            "x", {"hostname": "m"}, argv=["abstat", "run"], settings=settings, labels={"host": "m"}, variants=["a"]
        )
        store.finish_invocation(invocation, "failed", [])


def _failing_ssh(tmp_path) -> dict[str, str]:
    ssh = tmp_path / "ssh"
    ssh.write_text("#!/bin/sh\necho 'ssh: Could not resolve hostname m: Name or service not known' >&2\nexit 255\n")
    ssh.chmod(0o755)
    return dict(os.environ, ABSTAT_SSH_COMMAND=str(ssh))


@pytest.mark.parametrize(
    "stored, named",
    [
        ({"runs": 0}, "runs: must be from 1"),
        ({"lab": {"hosts": [{"label": "m", "destination": "-oProxyCommand=touch /tmp/x"}]}}, "not an ssh destination"),
        ({"variants": "nope"}, "variants: must be a list"),
        ({"abstat_spec": 99}, "version 99 was written by a newer abstat"),
        ({"lab": None}, "lab: not a lab experiment"),
    ],
)
def test_a_forged_stored_specification_is_one_line_and_runs_nothing(tmp_path, stored, named):
    spec = {**encode(ExperimentSpec((Variant("a", "true"),), seed=1, lab=Lab((Host("m", "m"),)))), **stored}
    _lab_store(str(tmp_path / "s.db"), {"spec": spec, "lab": {"host": "m", "seed": 1, "boot": 0}})
    result = abstat(
        "run",
        "--resume",
        "x",
        "--yes",
        "--store",
        str(tmp_path / "s.db"),
        cwd=str(tmp_path),
        env=_failing_ssh(tmp_path),
    )
    assert result.returncode == 2, result.stderr
    assert result.stderr.count("\n") == 1 and "internal error" not in result.stderr
    assert (
        "--resume 'x': the stored specification (invocation 1) is not valid" in result.stderr and named in result.stderr
    )


def test_an_experiment_stored_as_a_command_line_still_resumes(tmp_path):
    argv = ["--host", "m", "-v", "a=true", "-v", "b=true", "-n", "3", "--experiment", "x", "--format", "json"]
    _lab_store(str(tmp_path / "s.db"), {"lab": {"argv": argv, "seed": 77, "host": "m", "boot": 0}})
    result = abstat(
        "run",
        "--resume",
        "x",
        "--yes",
        "--store",
        str(tmp_path / "s.db"),
        "--no-progress",
        cwd=str(tmp_path),
        env=_failing_ssh(tmp_path),
    )
    # converted into a specification (the seed is the stored one), validated, run: the host cannot be reached
    assert "abstat run: experiment 'x' on 1 host(s), 2 variant(s) x 3 runs, seed 77" in result.stderr
    assert "host m failed: cannot reach the host: ssh: Could not resolve hostname m" in result.stderr
    assert result.returncode == 2 and result.stderr.splitlines()[-1].startswith("abstat run: 1 of 1 host(s) stopped")
    assert json.loads(result.stdout)["hosts"] == {"m": None}  # the stored --format json renders the report


@pytest.mark.parametrize(
    "argv, named",
    [
        ("not a list", "are not a list of arguments"),
        (["--host", "m", "-v", "a=true", "--no-such-option"], "cannot be resumed: unrecognized arguments"),
        (["-v", "a=true"], "cannot be resumed: not a --host experiment"),
        (
            ["--host=-oProxyCommand=x", "-v", "a=true"],
            "cannot be resumed: --host '-oProxyCommand=x': the label must be",
        ),
        (["--help"], "cannot be resumed"),
    ],
)
def test_a_damaged_stored_command_line_is_one_line(tmp_path, argv, named):
    _lab_store(str(tmp_path / "s.db"), {"lab": {"argv": argv, "seed": 1, "host": "m", "boot": 0}})
    result = abstat(
        "run",
        "--resume",
        "x",
        "--yes",
        "--store",
        str(tmp_path / "s.db"),
        cwd=str(tmp_path),
        env=_failing_ssh(tmp_path),
    )
    assert result.returncode == 2 and result.stderr.count("\n") == 1, result.stderr
    assert named in result.stderr and "usage:" not in result.stdout + result.stderr


def test_the_api_refuses_an_old_store_in_one_line(tmp_path):
    from abstat.errors import InputError

    _lab_store(str(tmp_path / "s.db"), {"lab": {"argv": ["--host", "m", "-v", "a=true"], "seed": 1}})
    with pytest.raises(InputError, match="stored by an older abstat, as a command line; resume it once with"):
        Engine().resume("x", store=str(tmp_path / "s.db"))


# --------------------------------------------------------------------------
# the job as a file: --print-spec, --spec


def test_the_options_printed_as_a_specification_run_as_a_file(tmp_path):
    printed = abstat(
        "run",
        "-v",
        "a=true",
        "-v",
        "b=true",
        "-n",
        "3",
        "--label",
        "k=v",
        "--seed",
        "9",
        "--metric",
        "x=x=(\\d+)",
        "--no-json-lines",
        "--print-spec",
        cwd=str(tmp_path),
    )
    assert printed.returncode == 0 and printed.stderr == ""
    assert not (tmp_path / "abstat.db").exists()  # nothing ran, no store
    spec = loads(printed.stdout)
    assert spec.runs == 3 and spec.seed == 9 and spec.labels == {"k": "v"} and spec.store is None
    assert spec.metrics == (RegexMetric("x", "x=(\\d+)"),)
    (tmp_path / "job.json").write_text(printed.stdout.replace('"true"', '"echo x=5"'))
    ran = abstat(
        "run", "--spec", "job.json", "--yes", "--store", "s.db", "--format", "json", "--no-progress", cwd=str(tmp_path)
    )
    assert ran.returncode == 0, ran.stderr
    assert "seed 9" in ran.stderr.splitlines()[0]
    with open_store(str(tmp_path / "s.db")) as store:
        (name,) = store.experiment_names()
        (invocation,) = store.invocations(name)
        assert invocation["labels"] == {"k": "v"} and invocation["settings"]["metrics"] == ["x=x=(\\d+)"]
    assert set(json.loads(ran.stdout)["metrics"]) >= {"x", "wall"}


@pytest.mark.parametrize(
    "text, named",
    [
        ('{"abstat_spec": 1, "variants": [{"name": "a", "command": "true"}], "timeout": 0}', "job.json: timeout: must"),
        ("not json", "job.json: not a JSON specification"),
        ('{"variants": []}', "job.json: abstat_spec: missing"),
    ],
)
def test_a_bad_specification_file_is_one_line(tmp_path, text, named):
    (tmp_path / "job.json").write_text(text)
    result = abstat("run", "--spec", "job.json", cwd=str(tmp_path))
    assert result.returncode == 2 and result.stderr.count("\n") == 1 and named in result.stderr, result.stderr
    assert not (tmp_path / "abstat.db").exists()


def test_a_specification_file_takes_no_experiment_options(tmp_path):
    (tmp_path / "job.json").write_text(dumps(ExperimentSpec((Variant("a", "true"),))))
    result = abstat("run", "--spec", "job.json", "-n", "5", cwd=str(tmp_path))
    assert result.returncode == 2 and "--spec takes the experiment from its file" in result.stderr
    assert "(got --runs)" in result.stderr
    missing = abstat("run", "--spec", "nowhere.json", cwd=str(tmp_path))
    assert missing.returncode == 2 and "nowhere.json: cannot read the specification" in missing.stderr
