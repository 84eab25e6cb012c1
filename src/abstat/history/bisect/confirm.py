"""``abstat history --confirm`` and ``--bisect``: re-measure a detected change point right away.

For each change point ``history`` reports as new or moved (or provisional),
the last revision before it and the first after it are checked out in
abstat's own worktrees (:mod:`abstat.history.bisect.worktrees`), built with
``--build``, and measured as one interleaved A/B experiment
(:class:`~abstat.engine.ExperimentSpec`, variants ``old`` and ``new``
labelled with their ``rev`` and ``role`` ``before``/``after``, run by
:meth:`abstat.engine.Engine.run`): both in the same minutes on the same
machine, as JuliaLang/julia#11709 asks.  Nothing but the revision tells the
two sides apart (an A/A of two identical revisions must come out 0):

- the worktrees' paths and the variants' names (``$ABSTAT_VARIANT``) have the
  same length, so the benchmark starts with an environment (``$PWD``...) and
  a command line of the same size on both sides: a size that differs moves the
  initial stack and with it the alignment of everything on it (Mytkowicz et
  al., "Producing wrong data without doing anything obviously wrong!", 2009);
- one warm-up block (each side once, not measured) takes the first run after
  the builds (a cold page cache for the revision built first, the dynamic
  loader's caches...);
- the interleaved blocks are balanced: the engine's schedule is
  counterbalanced (:mod:`abstat.box.runner.schedule`), so each side runs first
  in half of the measured blocks (the odd one out when ``runs`` is odd).

The
change is the one ``abstat compare BEFORE AFTER`` states on those runs (the
library's one comparison: its estimand, interval, p-value and label), and it
*holds* when that interval excludes zero on the side the history saw; otherwise it is "not
reproduced" (a spike, a noisy night, a change of the machine).  A change
that holds can then be bisected between the two revisions (``--bisect``:
:func:`abstat.history.bisect.driver.run_bisect`).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

NAMES = ("old", "new")  # the variants (and worktrees) of before and after: the same length
WARMUP = 1  # warm-up blocks


def leads(schedule: list[Any], names: tuple[str, ...] = NAMES) -> dict[str, int]:
    """How many measured blocks of ``schedule`` (runner Slots) each variant runs first in."""
    first: dict[int, str] = {}
    for slot in schedule:
        if not slot.warmup:
            first.setdefault(slot.iteration, slot.variant)
    return {name: sum(1 for variant in first.values() if variant == name) for name in names}


@dataclass
class Confirmation:
    """One change point re-measured: the detected size, and what the A/B run found."""

    series: str
    before: str  # the last revision before the change (full hash)
    after: str  # the first after it
    detected: float | None  # relative size history reported (after / before - 1)
    holds: bool = False
    relative: float | None = None  # compare's change of the A/B runs (after / before - 1 of its estimand)
    low: float | None = None  # its interval, relative; None when compare cannot judge
    high: float | None = None
    centers: tuple[float, float] | None = None  # the centres compare prints, before and after
    p_value: float | None = None
    estimand: str = ""  # compare's label of what the change is
    verdict: str = ""  # compare's word
    runs: int = 0
    experiment: str = ""
    why: str = ""  # when it could not be measured
    bisect: Any = None  # the bisection's report (--bisect)
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "series": self.series,
            "before": self.before,
            "after": self.after,
            "detected": self.detected,
            "holds": self.holds,
            "relative": self.relative,
            "interval": None if self.low is None else [self.low, self.high],
            "estimand": self.estimand or None,
            "verdict": self.verdict or None,
            "centers": None if self.centers is None else list(self.centers),
            "p_value": self.p_value,
            "runs": self.runs,
            "experiment": self.experiment,
            "why": self.why or None,
        }


def to_confirm(report: Any, *, provisional: bool = True) -> list[tuple[str, str, str, float | None]]:
    """(series title, revision before, revision after, detected relative size) of every change point
    ``report`` (a history report) flags new or moved, and of provisional ones; each pair once."""
    found, seen = [], set()
    for result in report.results:
        points = result.series.points
        for i, change in enumerate(result.detection.change_points):
            status = result.status.get(i, "new")
            if status == "kept" and not (provisional and change.provisional):
                continue
            pair = (points[change.index - 1].rev, points[change.index].rev)
            if pair not in seen:
                seen.add(pair)
                found.append((result.series.title, *pair, change.relative))
    return found


def confirm(
    series: str,
    before: str,
    after: str,
    detected: float | None,
    *,
    repo: str,
    run: str,
    metric: str,
    metric_spec: str | None,
    build: str | None,
    runs: int,
    store: str,
    experiment: str,
    confidence: float = 0.95,
    timeout: float | None = None,
    progress: Callable[[str], None] = lambda text: None,
) -> Confirmation:
    """Build ``before`` and ``after`` and measure them interleaved, ``runs`` runs each."""
    from abstat.history.bisect.measure import measurement_session
    from abstat.history.bisect.workspace import build as build_in, in_dir
    from abstat.history.bisect.worktrees import Worktrees
    from abstat.engine import Engine, ExperimentSpec, Variant
    from abstat.history.revision import resolve
    from abstat.box.runner.sources import RegexMetric

    shas = resolve([before, after], repo)
    result = Confirmation(series, shas.get(before) or before, shas.get(after) or after, detected, experiment=experiment)
    if None in shas.values():
        result.why = "revision not in the repository: " + ", ".join(r for r, s in shas.items() if s is None)
        return result
    progress(f"confirming {series}: {result.before[:12]} -> {result.after[:12]}, {runs} runs each, interleaved")
    session = measurement_session(run, metric_spec, timeout)
    try:
        with Worktrees(repo) as trees:
            variants = []
            for name, role, sha in ((NAMES[0], "before", result.before), (NAMES[1], "after", result.after)):
                path = trees.checkout(name, sha)
                failure = build_in(session, build, path, role, timeout)
                if failure is not None:
                    result.why = f"{sha[:12]} does not build: {failure}"
                    return result
                variants.append(Variant(name, in_dir(path, run).text, labels={"rev": sha, "role": role}))
            metrics = (RegexMetric.parse(metric_spec),) if metric_spec else ()
            spec = ExperimentSpec(
                tuple(variants),
                runs=runs,
                warmup=WARMUP,
                shell=True,
                timeout=timeout,
                metrics=metrics,
                experiment=experiment,
                store=store,
                on_failure="continue",
            )
            done = Engine(argv=["abstat", "history", "--confirm"]).run(spec)
    finally:
        session.close()
    if done.interrupted:
        raise KeyboardInterrupt
    a = [float(v) for v in done.values(NAMES[0], metric)]
    b = [float(v) for v in done.values(NAMES[1], metric)]
    result.runs = len(done.runs)
    if len(a) < 3 or len(b) < 3:
        result.why = f"too few runs gave a value of {metric} ({len(a)} before, {len(b)} after)"
        return result
    _judge(result, a, b, detected, confidence)
    return result


def _judge(result: Confirmation, before: list[float], after: list[float], detected: float | None, confidence: float):
    """Fill ``result`` with compare's change from ``before`` to ``after`` and whether it holds on the side the
    history saw (either side when it saw none)."""
    from abstat.history.bisect.outcome import change

    found = change(before, after, None, confidence)
    result.relative = found.delta_pct / 100
    result.p_value = None if math.isnan(found.p_value) else found.p_value
    result.estimand, result.verdict = found.estimand_label, found.verdict
    if found.centers is not None:
        result.centers = (float(found.centers[0]), float(found.centers[1]))
    if found.ci_pct is None:
        result.holds = False
        return
    result.low, result.high = found.ci_pct[0] / 100, found.ci_pct[1] / 100
    side = math.copysign(1.0, detected) if detected else 0.0
    result.holds = bool(
        side > 0 and result.low > 0 or side < 0 and result.high < 0 or not side and (result.low > 0 or result.high < 0)
    )


def render_confirmations(items: list[Confirmation], fmt: str) -> str:
    """The confirmations as text lines, or a JSON document."""
    import json

    from abstat.render.escape import terminal as _t

    if fmt == "json":
        docs = []
        for item in items:
            doc = item.to_dict()
            if item.bisect is not None:
                from abstat.history.bisect.render import render

                doc["bisect"] = json.loads(render(item.bisect, "json"))
            docs.append(doc)
        from abstat.render.escape import json_text

        return json_text({"confirmations": docs})
    pct = lambda v: "?" if v is None else f"{v * 100:+.2f}%"
    lines = []
    for item in items:
        head = f"{_t(item.series)}: {item.before[:12]} -> {item.after[:12]}"
        detected = f"detected {item.detected * 100:+.2f}%" if item.detected is not None else "detected"
        if item.why:
            lines.append(f"{head}: not measured: {_t(item.why)}")
            continue
        interval = "no interval: cannot judge" if item.low is None else f"[{pct(item.low)}, {pct(item.high)}]"
        p = "?" if item.p_value is None else f"{item.p_value:.2g}"
        size = (
            f"{pct(item.relative)} {interval} (after vs before: {_t(item.estimand or 'change')}, p={p}, "
            f"{item.runs} interleaved runs, experiment {_t(item.experiment)})"
        )
        lines.append(f"{head}: {'confirmed' if item.holds else 'not reproduced'}: {size}; {detected}")
        if item.bisect is not None:
            from abstat.history.bisect.render import render

            lines.extend("  " + line for line in render(item.bisect, "text").splitlines())
    return "\n".join(lines) + ("\n" if lines else "")


def render_email(items: list[Confirmation], history_text: str, reproduce: dict[tuple[str, str], list[str]]) -> str:
    """A plain-text mail (RFC 5322 headers, then the body) for a nightly job: what holds, its size and
    interval, the culprit when bisected, and the commands that reproduce each (``reproduce``: argv
    lists keyed by (before, after)).  Everything from data is escaped; the subject is one line."""
    import shlex

    from abstat.render.escape import terminal as _t

    held = [item for item in items if item.holds]
    culprits = [
        item.bisect.commits[item.bisect.outcome.culprit][:12]
        for item in held
        if item.bisect is not None and item.bisect.outcome.culprit is not None
    ]
    if held:
        subject = f"abstat: {len(held)} change(s) confirmed" + (f", culprit {', '.join(culprits)}" if culprits else "")
    else:
        subject = f"abstat: no change confirmed ({len(items)} checked)"
    lines = [
        f"Subject: {_t(subject)}",
        "MIME-Version: 1.0",
        "Content-Type: text/plain; charset=utf-8",
        "Content-Transfer-Encoding: 8bit",
        "",
        render_confirmations(items, "text").rstrip("\n"),
    ]
    for item in items:
        argv = reproduce.get((item.before, item.after))
        if argv:
            lines += ["", f"reproduce {item.before[:12]} -> {item.after[:12]}:", "    " + shlex.join(argv)]
    lines += ["", "the history:", history_text.rstrip("\n")]
    return (
        "\n".join(_t(line) if not line.startswith(("Subject:", "MIME", "Content")) else line for line in lines) + "\n"
    )
