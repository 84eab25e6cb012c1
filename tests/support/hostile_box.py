#!/usr/bin/env python3
"""Hostile test boxes without sshd: a stand-in for ``ssh`` and a fake ``python3``.

``ABSTAT_SSH_COMMAND="PYTHON tests/support/hostile_box.py"`` (see :func:`environment`):
a master connection (``-M -N``) creates its ``ControlPath`` and waits to be
stopped; a command runs here with ``sh -c``, with a directory holding a fake
``python3`` first on ``PATH``.  Each destination's behaviour is the JSON
object ``$HOSTILE_SCENARIOS[destination]``; a destination without one is
healthy (the fake ``python3`` execs the real one: the real shipped runner).

The fake runner reads the shipped bundle like the real bootstrap, then
speaks the runner protocol with what the scenario says:

- ``before_hello``: ``{"banner_lines": N, "junk_lines": N, "stderr_bytes": N,
  "endless_line": true}`` written first;
- ``hello``: fields replacing those of a good hello (``machine``,
  ``boot_id``, ``doctor_warnings``);
- ``stall``: after the hello, read the request and never answer;
- ``error``: answer the plan with ``{"error": TEXT}``;
- ``result``: fields replacing those of every result (``result_index``: only
  that one); ``extra_results``: that many results for slots of the plan
  sent again; ``many_values``: that many values of ``wall`` (with ``result_index``);
  ``done``: fields replacing those of the final ``done``;
- ``doctor``: the answer to a ``{"doctor": ...}`` request;
- ``ssh_stdout``: text the stand-in writes before running any command (a
  ``.bashrc`` that echoes a greeting).
"""

from __future__ import annotations

import json
import os
import sys
import time
import uuid

HERE = os.path.dirname(os.path.abspath(__file__))
SCENARIOS_ENV = "HOSTILE_SCENARIOS"


def environment(scenarios: dict[str, dict], bin_dir: str, base: dict[str, str] | None = None) -> dict[str, str]:
    """The environment of an abstat process whose hosts behave as ``scenarios`` say
    (``bin_dir``: an empty directory for the fake ``python3``)."""
    fake = os.path.join(bin_dir, "python3")
    with open(fake, "w") as handle:
        handle.write(f'#!/bin/sh\nexec {sys.executable} {os.path.abspath(__file__)} --python "$@"\n')
    os.chmod(fake, 0o755)
    env = dict(base if base is not None else os.environ)
    env["ABSTAT_SSH_COMMAND"] = f"{sys.executable} {os.path.abspath(__file__)}"
    env[SCENARIOS_ENV] = json.dumps(scenarios)
    env["HOSTILE_BIN"] = bin_dir
    env["HOSTILE_REAL_PYTHON"] = sys.executable
    return env


def _scenario(destination: str) -> dict:
    return json.loads(os.environ.get(SCENARIOS_ENV) or "{}").get(destination) or {}


def ssh(argv: list[str]) -> int:
    sys.path.insert(0, HERE)
    import local_ssh

    _, destination, command = local_ssh.parse(argv)  # a master (-M) is served there
    if destination is None:
        sys.stderr.write("hostile_box: no destination\n")
        return 255
    scenario = _scenario(destination)
    if scenario.get("ssh_stdout"):
        sys.stdout.write(scenario["ssh_stdout"])
        sys.stdout.flush()
    if not command:
        return 0
    os.environ["HOSTILE_DESTINATION"] = destination
    os.environ["ABSTAT_LEASE"] = os.path.join(os.environ["HOSTILE_BIN"], f"{destination}.lease")
    os.environ["PATH"] = os.environ["HOSTILE_BIN"] + os.pathsep + os.environ.get("PATH", "")
    os.execvp("sh", ["sh", "-c", " ".join(command)])
    return 255


def _send(message: dict) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def fake_python(argv: list[str]) -> int:
    scenario = _scenario(os.environ.get("HOSTILE_DESTINATION", ""))
    if not scenario or "remote.main()" not in " ".join(argv):  # a healthy box, or not the runner (the lease)
        os.execv(os.environ["HOSTILE_REAL_PYTHON"], [os.environ["HOSTILE_REAL_PYTHON"], *argv])
    source = sys.stdin.buffer
    size = int(source.readline())
    source.read(size)  # the shipped runner, unused
    before = scenario.get("before_hello") or {}
    for index in range(before.get("banner_lines", 0)):
        sys.stdout.write(f"Welcome to the box, line {index}\n")
    for _ in range(before.get("junk_lines", 0)):
        sys.stdout.write("{not json\n")
    if before.get("stderr_bytes"):
        sys.stderr.write("e" * before["stderr_bytes"] + "\n")
        sys.stderr.flush()
    if before.get("endless_line"):
        chunk = "x" * 65536
        while True:  # until the controller goes away (a broken pipe ends it)
            sys.stdout.write(chunk)
    sys.stdout.flush()
    hello = {
        "machine": {"hostname": "hostile", "kernel": "6.0"},
        "boot_id": str(uuid.uuid5(uuid.NAMESPACE_DNS, "b")),
        "doctor_warnings": [],
        "python": "3.11.0",
    }
    hello.update(scenario.get("hello") or {})
    _send({"hello": hello})
    line = source.readline()
    if not line:
        return 0
    request = json.loads(line)
    if scenario.get("stall"):
        time.sleep(3600)
    if "doctor" in request:
        _send({"doctor": scenario.get("doctor", [])})
        return 0
    plan = request.get("run")
    if plan is None:
        return 0
    if scenario.get("error") is not None:
        _send({"error": scenario["error"]})
        return 0
    measured = [slot for slot in plan["slots"] if not slot[2]]
    extra = [measured[i % len(measured)] for i in range(scenario.get("extra_results", 0))]
    for index, (variant, iteration, _, position) in enumerate(measured + extra):
        wall = 0.01 + 0.001 * (index % 7)
        result = {
            "variant": variant,
            "iteration": iteration,
            "position": position,
            "started_at": time.time(),
            "status": "ok",
            "exit_code": 0,
            "wall": wall,
            "values": {"wall": [wall]},
            "units": {"wall": "s"},
            "notes": [],
            "stderr_tail": "",
        }
        if "result_index" not in scenario or scenario["result_index"] == index:
            result.update(scenario.get("result") or {})
            if scenario.get("many_values"):
                result["values"] = {"wall": [0] * scenario["many_values"]}
        _send({"result": result})
    done = {"error": None, "interrupted": False, "notes": []}
    done.update(scenario.get("done") or {})
    _send({"done": done})
    return 0


if __name__ == "__main__":
    if sys.argv[1:2] == ["--python"]:
        sys.exit(fake_python(sys.argv[2:]))
    sys.exit(ssh(sys.argv[1:]))
