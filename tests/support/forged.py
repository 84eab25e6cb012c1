"""Stores forged as an attacker would leave them: an unfinished invocation whose stored settings a resume
reads (``abstat run --resume`` / ``abstat.resume()``, ``abstat bisect --resume``)."""

from __future__ import annotations

from typing import Any

from abstat.engine import ExperimentSpec
from abstat.engine.spec import encode
from abstat.store import open_store


def run_store(path: str, spec: ExperimentSpec) -> None:
    """A failed ``abstat run`` of ``spec`` on its lab: what ``run --resume`` reads."""
    with open_store(path) as store:
        invocation = store.start_invocation(
            "x",
            {"hostname": "m"},
            argv=["abstat", "run"],
            settings={"spec": encode(spec), "lab": {}},
            labels={"host": "m"},
            variants=[v.name for v in spec.variants],
        )
        store.finish_invocation(invocation, "failed", [])


def bisect_store(path: str, config: dict[str, Any]) -> None:
    """A failed ``abstat bisect --host`` with the bisection's ``config``: what ``bisect --resume`` reads."""
    with open_store(path) as store:
        invocation = store.start_invocation(
            "bx",
            {"hostname": "m"},
            argv=["abstat", "bisect"],
            settings={"caller": {"bisect": {"config": config}}},
            labels={"host": "box"},
            variants=["a"],
        )
        store.finish_invocation(invocation, "failed", [])
