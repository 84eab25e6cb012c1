"""What a host worker sends a box's runner is the JSON form of the engine's plan of the spec (the plan a
local run runs) and the block's slots: recorded by a stand-in box, against the request written out."""

from __future__ import annotations

import json
import queue
import subprocess
import sys
import threading

from abstat.box.runner.plan import ExperimentPlan
from abstat.engine.parts import Hooks, Host, Lab, Variant
from abstat.engine.session import experiment_plan
from abstat.engine.spec import ExperimentSpec
from abstat.lab.config import boot_slots
from abstat.lab.host import HostWorker

# A box that reads the bundle, says hello, keeps the request it gets and refuses it.
RECORDER = """
import json, sys
source = sys.stdin.buffer
source.read(int(source.readline()))
print(json.dumps({"hello": {"machine": {}, "boot_id": "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0"}}), flush=True)
with open(sys.argv[1], "wb") as handle:
    handle.write(source.readline())
print(json.dumps({"error": "recorded"}), flush=True)
"""


class _Ssh:
    """The parts of :class:`abstat.lab.ssh.SshHost` a block uses, every session a recorder."""

    destination = "box"

    def __init__(self, path: str) -> None:
        self.path = path

    def connect(self, timeout: float) -> None:
        pass

    def open(self, command: str) -> subprocess.Popen:
        return subprocess.Popen(
            [sys.executable, "-I", "-c", RECORDER, self.path],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )

    def close_session(self, session) -> None:
        session.close()

    def close(self) -> None:
        pass


def test_the_box_gets_the_engines_plan_as_json_with_the_blocks_slots(tmp_path):
    spec = ExperimentSpec(
        (Variant("a", "./a --fast"), Variant("b", "./b")),
        runs=2,
        warmup=1,
        seed=11,
        timeout=30.0,
        hooks=Hooks(prepare="sync"),
        experiment="x",
        lab=Lab((Host("box", "box"),)),
    )
    plan = experiment_plan(spec)
    events: queue.Queue = queue.Queue()
    recorded = tmp_path / "request.json"
    worker = HostWorker(plan, spec.lab, spec.lab.hosts[0], _Ssh(str(recorded)), [0], events, threading.Event())
    worker.run()  # in this thread: one boot, one session, refused
    kinds = []
    while not events.empty():
        kinds.append(events.get_nowait())
    assert [(e.kind, e.data.get("message")) for e in kinds if e.kind == "failed"] == [
        ("failed", "on the host: recorded")
    ]
    request = json.loads(recorded.read_bytes())["run"]
    slots = boot_slots(plan, spec.lab, "box", 0)
    assert request == {
        "variants": {"a": "./a --fast", "b": "./b"},
        "runs": 2,
        "warmup": 1,
        "order": "interleaved",
        "seed": 11,
        "shell": False,
        "timeout": 30.0,
        "hooks": {"prepare": "sync"},
        "background": [],
        "sources": [{"source": "json-lines"}],
        "ignore_failure": False,
        "cpus": [],
        "isolate": False,
        "decide": False,
        "variant_hooks": {},
        "slots": slots,
    }
    assert len(slots) == 2 * (2 + 1) and [slot[3] for slot in slots] == list(range(6))
    box_plan = ExperimentPlan.from_json(request)
    assert box_plan == plan  # the box runs what a local run of the spec runs, on the block's slots
