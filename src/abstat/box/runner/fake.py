"""A fake executor for deterministic tests of scheduling, order, hooks and failures."""

from __future__ import annotations

from collections.abc import Callable, Mapping

from abstat.box.runner.model import Command, Measurement, RunContext

FakeBehaviour = Callable[[RunContext], "float | dict[str, float] | Measurement"]


class FakeBackground:
    def __init__(self, command: Command, log: list[tuple]) -> None:
        self.command = command
        self._log = log
        self._log.append(("background-start", command.text))

    def exited(self) -> str | None:
        return None

    def failure(self) -> str | None:
        return None

    def stop(self) -> list[str]:
        self._log.append(("background-stop", self.command.text))
        return []


class FakeExecutor:
    """Records every call in :attr:`log`; values come from ``behaviour``.

    ``behaviour(context)`` returns the wall time in seconds, a dict of
    metric values (``wall`` included or defaulting to 1.0), or a complete
    :class:`Measurement`.  ``failing_hooks`` maps a hook kind to the
    variant it fails for (``"*"`` for all).
    """

    def __init__(
        self,
        behaviour: FakeBehaviour | None = None,
        *,
        failing_hooks: Mapping[str, str] | None = None,
    ) -> None:
        self.behaviour = behaviour or (lambda context: 1.0)
        self.failing_hooks = dict(failing_hooks or {})
        self.log: list[tuple] = []
        self.closed = False

    def measure(self, command: Command, context: RunContext, *, timeout: float | None) -> Measurement:
        self.log.append(("run", context.variant, context.iteration, context.warmup))
        result = self.behaviour(context)
        if isinstance(result, Measurement):
            return result
        if isinstance(result, dict):
            values = {name: [float(v)] for name, v in result.items()}
        else:
            values = {"wall": [float(result)]}
        values.setdefault("wall", [1.0])
        return Measurement("ok", 0, values["wall"][0], values, {"wall": "s"})

    def run_hook(self, kind: str, command: Command, context: RunContext, *, timeout: float | None) -> Measurement:
        self.log.append((kind, context.variant, context.iteration))
        target = self.failing_hooks.get(kind)
        if target is not None and target in ("*", context.variant):
            return Measurement("failed", 1, 0.0, notes=["exit status 1"], stderr_tail="fake failure")
        return Measurement("ok", 0, 0.0)

    def start_background(self, command: Command) -> FakeBackground:
        return FakeBackground(command, self.log)

    def close(self) -> None:
        self.closed = True
