"""The comparison ``abstat run`` ends with, and ``abstat show`` prints.

:func:`comparison_report` compares every stored variant of an experiment
for every metric and renders the result: by default (text) one summary line
per metric and candidate with the grouped footnotes and the notes the runs
left (e.g. why peak RSS was not recorded); ``verbose`` puts the per-metric
tables first.  Markdown, JSON and CSV carry the details.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Sequence
from typing import Any

from abstat.render.escape import json_text
from abstat.render import escape, tables
from abstat.render.run_medians import medians_report
from abstat.render.run_rows import Stored, compared_rows, machine_differences, read_rows, row_names
from abstat.render.run_notes import merge_notes, note_lines, notes_cell, run_notes  # noqa: F401 -- run_report's


def comparison_report(
    store: Any,
    experiment: str,
    *,
    baseline: str | None = None,
    fmt: str = "text",
    confidence: float | None = None,
    higher_is_better: Sequence[str] = (),
    lower_is_better: Sequence[str] = (),
    metrics: Sequence[str] | None = None,
    seed: int = 0,
    color: bool = False,
    labels: dict[str, str] | None = None,
    invocations: Sequence[int] | None = None,
    verbose: bool = False,
    threshold: float | None = None,
) -> str:
    """Compare every stored variant of ``experiment`` for every metric.

    Each ``abstat run`` invocation is a run group (nested data) once a
    variant has more than one.  With ``labels`` (the report ``abstat run``
    and the lab end with), only the invocations with exactly these
    ``--label``s count: runs on another host or mode of the same experiment
    are another configuration, not another run group; and only the latest
    of them, up to ``RECENT_RUNS`` runs (at least the latest invocation), so
    that a nightly job's report costs the same on its 10,000th night as on
    its first; a line says how many were left out (``abstat show``, without
    ``labels``, compares every one).  ``invocations`` (ids, e.g. one
    configuration's from ``Store.sample_sets``) restricts the comparison the
    same way.  ``baseline``, ``confidence`` (percent), ``higher_is_better``, ``lower_is_better`` and
    ``threshold`` (percent) default to the analysis the experiment was run with
    (:func:`abstat.report.analysis.stored_judging`; given ones override it,
    a metric named in either takes that direction).  Returns the rendered text.
    """
    from abstat.report.analysis import stored_judging

    judging = stored_judging(store, [experiment]).over(
        baseline=baseline,
        confidence=confidence,
        higher_is_better=higher_is_better,
        lower_is_better=lower_is_better,
        threshold=threshold,
    )
    window = None
    if invocations is not None:
        invocations = list(invocations) or [-1]
    if labels is not None:
        matching = store.invocation_ids(experiment, labels)
        matching = [i for i in matching if invocations is None or i in invocations]
        invocations = recent_invocations(store, matching) or [-1]
        if len(invocations) < len(matching):
            window = (len(invocations), len(matching))
    text = _report(
        store,
        experiment,
        baseline=judging.baseline,
        fmt=fmt,
        confidence=judging.percent,
        directions=judging,
        metrics=metrics,
        seed=seed,
        color=color,
        invocations=invocations,
        verbose=verbose,
        threshold=judging.threshold,
    )
    return _with_window(text, window, experiment, fmt)


RECENT_RUNS = 2000


def recent_invocations(store: Any, invocations: Sequence[int], budget: int | None = None) -> list[int]:
    """The latest of ``invocations`` (ids, oldest first) whose runs add up to at most
    ``budget`` (default ``RECENT_RUNS``), and at least the latest one; oldest first."""
    budget = RECENT_RUNS if budget is None else budget
    chosen: list[int] = []
    total = 0
    pending = list(invocations)
    while pending:
        chunk, pending = pending[-200:], pending[:-200]
        counts = store.run_counts(chunk)
        for invocation in reversed(chunk):
            total += counts.get(invocation, 0)
            if chosen and total > budget:
                return chosen[::-1]
            chosen.append(invocation)
    return chosen[::-1]


def _with_window(text: str, window: tuple[int, int] | None, experiment: str, fmt: str) -> str:
    """The report, saying which invocations the end-of-run report left out."""
    if window is None or fmt == "csv" or not text:
        return text
    compared, stored = window
    if fmt == "json":
        document = json.loads(text)
        document["invocations"] = {"compared": compared, "stored": stored}
        return json_text(document)
    line = (
        f"note: compared the latest {compared:,} of the {stored:,} invocations with these labels"
        f" (at most {RECENT_RUNS:,} runs at the end of a run); abstat show {experiment} compares every one"
    )
    return (
        text.rstrip("\n")
        + "\n\n"
        + (f"- {escape.markdown(line)}" if fmt == "markdown" else escape.terminal(line))
        + "\n"
    )


def _report(
    store: Any,
    experiment: str,
    *,
    baseline: str | None,
    fmt: str,
    confidence: float,
    directions: Any,
    metrics: Sequence[str] | None,
    seed: int,
    color: bool,
    invocations: Sequence[int] | None,
    verbose: bool,
    threshold: float | None,
) -> str:
    stored = read_rows(store, experiment, invocations, baseline)
    if stored is None:
        return f"experiment {experiment}: no successful runs stored\n" if fmt == "text" else ""
    names, monitor_names = row_names(stored, metrics)
    from abstat.comparison.commands import command_warnings
    from abstat.render import monitors

    others = monitors.from_groups(
        stored.groups(), monitor_names, stored.baseline, {m: stored.unit(m) for m in monitor_names}
    )
    machine_notes = machine_differences(store, experiment, stored.variants, stored.baseline, invocations)
    command_notes = command_warnings(store, experiment, invocations)
    sections = compared_rows(stored, names)
    if len(stored.variants) < 2 or not sections:
        return _nothing_compared(stored, names, fmt, command_notes)
    rendered, not_compared = _compare_sections(
        sections, stored.baseline, (confidence, threshold), directions, seed, machine_notes, command_notes
    )
    if fmt == "json":
        return _json(stored, rendered, not_compared, machine_notes, command_notes, others)
    if fmt == "csv":
        return _csv(stored, rendered)
    return _text(stored, rendered, not_compared, machine_notes, command_notes, others, fmt, color, verbose)


def _text(
    stored: Stored,
    rendered: Sequence[tuple[str, str | None, list[Any]]],
    not_compared: Sequence[tuple[str, str]],
    machine_notes: dict[str, str],
    command_notes: dict[str, Any],
    others: Any,
    fmt: str,
    color: bool,
    verbose: bool,
) -> str:
    """Text or Markdown: the tables, the rows not compared, the warnings no table shows, what else changed and
    the notes of the runs."""
    from abstat.render import monitors

    parts = _tables(stored, rendered, fmt, color, verbose)
    clean = escape.markdown if fmt == "markdown" else escape.terminal
    parts += _unreachable(rendered)
    parts += [clean(f"{stored.experiment}: {name}: not compared: {reason}") for name, reason in not_compared]
    if not rendered:
        parts += [clean(f"warning: {note}") for note in [*machine_notes.values(), *_with_advice(command_notes)]]
    if others.tested:
        parts += ["", *monitors.lines(others, markdown=fmt == "markdown")]
    parts += note_lines(stored.notes(), markdown=fmt == "markdown")
    return "\n".join(parts).rstrip("\n") + "\n"


def _unreachable(rendered: Sequence[tuple[str, str | None, list[Any]]]) -> list[str]:
    """report's line when no comparison of the family (every row x candidate, Holm) can be significant
    whatever the data (:func:`abstat.report.adjust.unreachable`): run and show said "no difference proven" for
    intervals far from 0 with nothing telling why (newcomer22 #3)."""
    from abstat.report.adjust import unreachable

    family = [c for _, _, comparisons in rendered for c in comparisons if c.p_value is not None]
    ranks = [c for c in family if "permutation" in c.method]
    line = unreachable(ranks, "holm", 1.0 - ranks[0].confidence, len(family)) if ranks else None
    if line and len(ranks) < len(family):
        line = line.replace(
            "No cell can be significant", "A cell compared by ranks can be significant only after another", 1
        )
    return ["", line] if line else []


def _nothing_compared(stored: Stored, names: Sequence[str], fmt: str, command_notes: dict[str, Any]) -> str:
    """Per-variant medians (one variant, or no row with two), with the warnings and notes."""
    text = medians_report(stored, names, fmt)
    if fmt in ("text", "markdown"):  # the medians above pool the runs of every command
        clean = escape.markdown if fmt == "markdown" else escape.terminal
        text += "".join(clean(f"warning: {line}") + "\n" for line in _with_advice(command_notes))
        text += "".join(line + "\n" for line in note_lines(stored.notes(), markdown=fmt == "markdown"))
    return text


def _compare_sections(
    sections: Sequence[tuple[str, str | None, dict[str, Any], str]],
    baseline: str,
    judged: tuple[float, float | None],
    directions: Any,
    seed: int,
    machine_notes: dict[str, str],
    command_notes: dict[str, Any],
) -> tuple[list[tuple[str, str | None, list[Any]]], list[tuple[str, str]]]:
    """Each row compared at ``judged`` (confidence in percent, threshold) (its warnings attached), Holm over every row x candidate shown; the rows
    that could not be compared, with why."""
    from abstat.errors import AbstatError
    from abstat.report.adjust import adjust_sections
    from abstat.report.analysis import analyse
    from abstat.report.inputs import higher_is_better
    from abstat.stats.warnings import StatWarning

    rendered: list[tuple[str, str | None, list[Any]]] = []
    not_compared: list[tuple[str, str]] = []
    for name, unit, data, metric in sections:
        try:
            comparisons = analyse(
                data,
                baseline=baseline,
                adjust=None,
                confidence=judged[0] / 100.0,
                threshold=judged[1],
                higher_is_better=higher_is_better(
                    metric, unit, directions.higher_is_better, directions.lower_is_better
                ),
                seed=seed,
            )
        except AbstatError as err:
            not_compared.append((name, str(err)))
            continue
        for comparison in comparisons:
            note = machine_notes.get(comparison.candidate)
            if note is not None:
                comparison.warnings.append(StatWarning("machine-differs", note, comparison.candidate))
            for variant in dict.fromkeys((comparison.baseline, comparison.candidate)):
                if variant in command_notes:
                    comparison.warnings.append(command_notes[variant])
        rendered.append((name, unit, comparisons))
    return adjust_sections(rendered), not_compared  # one family: every row x candidate shown (Holm)


def _json(
    stored: Stored,
    rendered: Sequence[tuple[str, str | None, list[Any]]],
    not_compared: Sequence[tuple[str, str]],
    machine_notes: dict[str, str],
    command_notes: dict[str, Any],
    others: Any,
) -> str:
    from abstat.render import monitors
    from abstat.render.compare_text import render

    document = {
        "experiment": stored.experiment,
        "baseline": stored.baseline,
        "metrics": {
            name: {
                "metric": stored.rows[name][0],
                "unit": unit,
                "comparisons": json.loads(render(comparisons, fmt="json")),
            }
            for name, unit, comparisons in rendered
        },
        "machine_warnings": list(machine_notes.values()),
        "command_warnings": [w.message for w in command_notes.values()],
        "run_notes": stored.notes(),
        "not_compared": dict(not_compared),
        **({"what_else_changed": monitors.as_json(others)} if others.tested else {}),
    }
    return json_text(document)


def _csv(stored: Stored, rendered: Sequence[tuple[str, str | None, list[Any]]]) -> str:
    """One CSV row per comparison: its row's name, the comparison's columns, the notes of its runs."""
    from abstat.render.compare_text import render

    header: list[str] = []
    body: list[list[Any]] = []
    cells: dict[tuple[str, str], str] = {}  # (baseline, candidate) -> notes of their runs
    for name, unit, comparisons in rendered:
        rows = list(csv.reader(io.StringIO(render(comparisons, fmt="csv"))))
        if not rows:
            continue
        header = ["metric", *rows[0], "metric_unit", "notes"]
        for row, comparison in zip(rows[1:], comparisons):
            pair = (comparison.baseline, comparison.candidate)
            if pair not in cells:
                cells[pair] = notes_cell(stored.store, stored.experiment, stored.invocations, pair)
            converted = [n for n in stored.unit_notes if n.startswith(f"{stored.rows[name][0]}: ")]  # its units
            body.append(
                [
                    stored.rows[name][0],
                    *row,
                    unit or "",
                    "; ".join([*converted, cells[pair]] if cells[pair] else converted),
                ]
            )
    return tables.csv_text(header, body) if header else ""


def _tables(
    stored: Stored, rendered: Sequence[tuple[str, str | None, list[Any]]], fmt: str, color: bool, verbose: bool
) -> list[str]:
    """Text: one summary line per row and candidate; ``--verbose``, Markdown: each row's table."""
    from abstat.render.compare_text import summary_block

    if fmt == "text" and not verbose:
        return [
            escape.terminal(f"experiment {stored.experiment}, baseline {stored.baseline}"),
            summary_block(rendered, color=color).rstrip("\n"),
        ]
    parts = _row_tables(stored, rendered, fmt, color)
    if fmt == "text":  # --verbose: each footnote with what to do about it
        parts.append(summary_block(rendered, color=color, advice=True).rstrip("\n"))
        return parts
    from abstat.report.adjust import family_caption

    family = family_caption([c for _, _, comps in rendered for c in comps])
    if family:
        clean = escape.markdown if fmt == "markdown" else escape.terminal
        parts.append(clean(family[0].upper() + family[1:] + "."))
    return parts


def _row_tables(
    stored: Stored, rendered: Sequence[tuple[str, str | None, list[Any]]], fmt: str, color: bool
) -> list[str]:
    """Each row's heading and table (its footnotes under it in Markdown)."""
    from abstat.render.compare_text import render

    parts = []
    heading = "## " if fmt == "markdown" else ""
    clean = escape.markdown if fmt == "markdown" else escape.terminal
    for name, unit, comparisons in rendered:
        parts.append(heading + clean(f"{stored.experiment}: {name}" + (f" ({unit})" if unit else "")))
        parts.append(
            render(
                comparisons, fmt=fmt, color=color and fmt == "text", unit=unit, metric=name, footnotes=fmt != "text"
            ).rstrip("\n")
        )
        parts.append("")
    return parts


def _with_advice(warnings: dict[str, Any]) -> list[str]:
    """Warnings shown outside a table's footnotes, each with its footnote's advice."""
    from abstat.report.notes import KINDS

    return [f"{w.message}; {KINDS[w.code][1]}" for w in warnings.values()]
