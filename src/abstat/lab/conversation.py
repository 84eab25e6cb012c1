"""The runner session of one block on a host: the conversation with the shipped runner.

:class:`Conversation` is the part of :class:`abstat.lab.host.HostWorker` that speaks the lab protocol
(:mod:`abstat.lab.protocol`) over one ssh session: it sends the bundle, waits for the runner's hello,
sends the experiment's plan (:meth:`abstat.box.runner.plan.ExperimentPlan.to_json`) with the block's
runs left, and turns each message (result, look, error, done) into a
:class:`~abstat.lab.host.HostEvent` or a :class:`HostFailed`.
"""

from __future__ import annotations

import json
from typing import Any

from abstat.lab import bundle
from abstat.box.runner.plan import ExperimentPlan
from abstat.lab.config import Decider
from abstat.lab.boxsession import BoxSession
from abstat.lab.protocol import NoAnswer, ProtocolError, decode_done, decode_error, decode_fields, decode_result
from abstat.lab.ssh import SshHost
from abstat.errors import named

HELLO_TIMEOUT_S = 120.0  # from the session's start to the runner's hello (Python starting, the machine record)
SESSION_END_S = 10.0  # a session that ended its output is killed after this long


class HostFailed(Exception):
    """This host's part stops; the message is the one line the user sees."""


class Conversation:
    """The runner session of a block (mixed into :class:`abstat.lab.host.HostWorker`, which sets these)."""

    plan: ExperimentPlan
    ssh: SshHost
    decider: Decider | None
    block_boot_id: str | None
    last_loss: str
    _early: BoxSession | None = None  # the next block's runner session, opened ahead (_open_early)

    def emit(self, kind: str, boot: int = 0, **data: Any) -> None:
        raise NotImplementedError

    def state(self, state: str, boot: int = 0, **data: Any) -> None:
        raise NotImplementedError

    def _open_early(self) -> None:
        """The block's runner session opened ahead (its Python starts and waits for the bundle on standard
        input: nothing runs on the box until :meth:`_hello` sends it, after the lease is held)."""
        self._drop_early()
        try:
            self._early = BoxSession(self.ssh.open(bundle.remote_command()))
        except OSError:
            self._early = None  # opened again, and its error told, by _session

    def _drop_early(self) -> None:
        early, self._early = self._early, None
        if early is not None:
            early.kill()
            self.ssh.close_session(early)

    def _session(self, index: int, pending: dict[int, list[Any]], started: bool) -> str | None:
        """One runner session; None when the block is done, else why it ended early."""
        session, self._early = self._early, None
        if session is not None and session.process.poll() is not None:
            self.ssh.close_session(session)  # it ended before the bundle came (the connection dropped)
            session = None
        try:
            session = session or BoxSession(self.ssh.open(bundle.remote_command()))
        except OSError as err:
            raise HostFailed(f"cannot run ssh: {err}") from None
        try:
            try:
                return self._converse(session, index, pending, started)
            except ProtocolError as err:
                session.kill()  # a box that breaks the protocol is not listened to any longer
                raise HostFailed(
                    f"the host sent an invalid {err.args[1] if len(err.args) > 1 else 'message'}: {err.args[0]}"
                ) from None
        finally:
            self.ssh.close_session(session)

    def _converse(self, session: BoxSession, index: int, pending: dict[int, list[Any]], started: bool) -> str | None:
        process = session.process
        hello = self._hello(session)
        if hello is None:
            return self._lost(session, started)
        if self.block_boot_id is None:
            self.block_boot_id = hello.boot_id
        boot_id = self.block_boot_id
        if hello.boot_id != boot_id:
            return "lost-started" if started else "lost"
        if not started:
            self.emit(
                "boot",
                index,
                machine=hello.machine,
                boot_id=boot_id,
                slots=sum(1 for slot in pending.values() if not slot[2]),
                doctor_warnings=hello.doctor_warnings,
            )
            started = True
        self.state("running", index)
        request = {**self.plan.to_json(), "slots": sorted(pending.values(), key=lambda s: s[3])}  # the runs left
        try:
            assert process.stdin is not None
            process.stdin.write((json.dumps({"run": request}) + "\n").encode())
            process.stdin.flush()
        except (OSError, ValueError):
            return "lost-started"
        while True:
            message = session.message()
            if message is None:
                break
            if self._answer(session, index, pending, message):
                return None
        self.last_loss = session.end(SESSION_END_S)[1]
        return "lost-started"

    def _hello(self, session: BoxSession) -> Any:
        """Send the bundle; the runner's hello (None: the session ended first)."""
        process = session.process
        try:
            assert process.stdin is not None
            process.stdin.write(bundle.payload())
            process.stdin.flush()
        except (OSError, ValueError):
            pass  # the session ended: no hello follows
        try:
            return session.hello(HELLO_TIMEOUT_S)
        except NoAnswer:
            raise HostFailed(f"the runner did not answer within {HELLO_TIMEOUT_S:g} s of starting") from None
        except ProtocolError as err:
            raise ProtocolError(str(err), "hello") from None

    def _look(self, session: BoxSession, runs: Any) -> None:
        """``--until-decided``: the runner ended a block and waits to hear whether to go on."""
        if self.decider is None or not isinstance(runs, int) or isinstance(runs, bool):
            raise ProtocolError(f"a look at {str(runs)[:40]!r} runs, not asked for", "look")
        reason = self.decider.decide()
        answer = {"stop": reason} if reason is not None else {"go": True}
        process = session.process
        try:
            assert process.stdin is not None
            process.stdin.write((json.dumps(answer) + "\n").encode())
            process.stdin.flush()
        except (OSError, ValueError):
            pass  # the session ended: told when its messages stop

    def _answer(self, session: BoxSession, index: int, pending: dict[int, list[Any]], message: dict[str, Any]) -> bool:
        """One message of the runner during the block; True once the block is done."""
        if "result" in message:
            try:
                result = decode_result(message["result"], pending)
            except ProtocolError as err:
                raise ProtocolError(str(err), "result") from None
            pending.pop(result["position"], None)
            if self.decider is not None:
                self.decider.add(result)
            self.emit("run", index, result=result)
            return False
        if "look" in message:
            self._look(session, message["look"])
            return False
        if "error" in message:
            error = named(decode_error(message["error"]), *decode_fields(message.get("fields")))
            self.emit("end", index, status="failed", note=error)
            raise HostFailed(f"on the host: {error}")
        if "done" not in message:
            raise ProtocolError(f"a message that is none of result, error, done ({sorted(message)[:3]})", "message")
        try:
            done = decode_done(message["done"])
        except ProtocolError as err:
            raise ProtocolError(str(err), "end of the block") from None
        status = "interrupted" if done["interrupted"] else ("failed" if done["error"] else "complete")
        self.emit("end", index, status=status, notes=done["notes"], error=done["error"])
        if done["error"]:
            raise HostFailed(done["error"])
        if done["interrupted"]:
            raise InterruptedError
        return True

    def _lost(self, session: BoxSession, started: bool) -> str:
        """The session ended before the runner said hello: a Python problem on the box, or the connection."""
        code, err = session.end(SESSION_END_S)
        if code not in (255, -9, -15) and err:  # not the connection: the box cannot run the runner
            raise HostFailed(f"cannot start the runner with python3 on the host: {err}")
        self.last_loss = err
        return "lost-started" if started else "lost"
