"""A box's error that names an option crosses ssh with its fields: the controller's command line names the flag.

The runner on a box is standard library only and sends text; an error about an option (``--isolate``,
a metric source's ``--trace``) is sent as ``{"error": TEXT, "fields": [...]}`` with each field still
``{FIELD}`` in TEXT (box/runner/remote.py), and the controller names it as the command running
names it (abstat.errors.naming, set by the CLI).
"""

from __future__ import annotations

import pytest

from abstat.box.isolate import IsolationError
from abstat.box.runner.model import FieldError
from abstat.box.runner.remote import error_message
from abstat.cli.flags import namer
from abstat.errors import naming
from abstat.lab.conversation import Conversation, HostFailed
from abstat.lab.protocol import ProtocolError, decode_fields


def test_an_isolation_error_names_its_field_by_its_usual_flag_or_as_the_caller_says():
    err = IsolationError("{isolate}: cannot make cpuset /sys/fs/cgroup/x: Permission denied", "isolate")
    assert str(err) == "--isolate: cannot make cpuset /sys/fs/cgroup/x: Permission denied"
    assert err.named(str.upper) == "ISOLATE: cannot make cpuset /sys/fs/cgroup/x: Permission denied"
    assert (err.message, err.fields) == (
        "{isolate}: cannot make cpuset /sys/fs/cgroup/x: Permission denied",
        ("isolate",),
    )
    assert str(IsolationError("--isolate needs root")) == "--isolate needs root"  # no field: as written


def test_the_runner_sends_an_error_s_fields_with_its_message():
    sent = error_message(IsolationError("{isolate}: cannot make cpuset /x: No space left on device", "isolate"))
    assert sent == {"error": "{isolate}: cannot make cpuset /x: No space left on device", "fields": ["isolate"]}
    assert error_message(FieldError("{trace}: two probes are named 'a'", "trace")) == {
        "error": "{trace}: two probes are named 'a'",
        "fields": ["trace"],
    }
    assert error_message(ValueError("the plan's cpus must be a list of CPU numbers")) == {
        "error": "the plan's cpus must be a list of CPU numbers"
    }


@pytest.mark.parametrize("fields", ["isolate", ["--isolate"], ["x"] * 9, [1], ["Isolate"], {"isolate": 1}], ids=repr)
def test_fields_a_box_sends_are_field_names_or_the_message_is_refused(fields):
    with pytest.raises(ProtocolError):
        decode_fields(fields)


def test_the_fields_a_box_sends_are_read():
    assert decode_fields(None) == []
    assert decode_fields(["isolate", "trace_all_cpus"]) == ["isolate", "trace_all_cpus"]


class _Block(Conversation):
    """The part of a host worker that reads a block's messages, without a host."""

    def __init__(self) -> None:
        self.decider = None
        self.events: list[tuple[str, dict]] = []

    def emit(self, kind: str, index: int, **data: object) -> None:
        self.events.append((kind, data))


def _failure(message: dict) -> str:
    block = _Block()
    with pytest.raises(HostFailed) as failed:
        block._answer(None, 0, {}, message)  # type: ignore[arg-type]
    assert block.events == [("end", {"status": "failed", "note": str(failed.value)[len("on the host: ") :]})]
    return str(failed.value)


def test_the_controller_names_the_flag_of_a_field_the_box_names():
    message = {"error": "{isolate}: cannot make cpuset /x: Permission denied", "fields": ["isolate"]}
    with naming(namer("run", advice=True)):
        assert _failure(message) == "on the host: --isolate: cannot make cpuset /x: Permission denied"
    with naming(lambda field: f"<{field}>"):  # the controller's naming, not the box's text
        assert _failure(message) == "on the host: <isolate>: cannot make cpuset /x: Permission denied"
    # without fields, braces are the box's text, kept as sent
    assert _failure({"error": "{isolate} as sent"}) == "on the host: {isolate} as sent"
