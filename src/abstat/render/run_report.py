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
import re
from collections.abc import Sequence
from typing import Any

from abstat.errors import UsageError
from abstat.render import escape, tables
from abstat.render.units import common_scale


def machine_differences(store: Any, experiment: str, variants: list[str], baseline: str,
                        invocations: Sequence[int] | None = None) -> dict[str, str]:
    """Variant -> warning text, for variants measured under another machine record than the baseline
    (only the records of ``invocations`` when given).  Linear in the invocations: each record is
    read once, and each field compared through its distinct values (not every pair of records)."""
    from abstat.box.machine import differing_fields_between

    records = store.machine_records_by_variant(experiment, invocations=invocations)
    base_records = records.get(baseline, [])
    warnings: dict[str, str] = {}
    for name in variants:
        if name == baseline:
            continue
        fields = differing_fields_between(base_records, records.get(name, []))
        if fields:
            warnings[name] = (
                f"{baseline} and {name} were measured under different machine records: {', '.join(fields)}"
            )
    return warnings


def comparison_report(
    store: Any,
    experiment: str,
    *,
    baseline: str | None = None,
    fmt: str = "text",
    confidence: float = 95.0,
    higher_is_better: Sequence[str] = (),
    metrics: Sequence[str] | None = None,
    seed: int = 0,
    color: bool = False,
    labels: dict[str, str] | None = None,
    invocations: Sequence[int] | None = None,
    verbose: bool = False,
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
    same way.  Returns the rendered text.
    """
    window = None
    if invocations is not None:
        invocations = list(invocations) or [-1]
    if labels is not None:
        matching = store.invocation_ids(experiment, labels)
        matching = [i for i in matching if invocations is None or i in invocations]
        invocations = recent_invocations(store, matching) or [-1]
        if len(invocations) < len(matching):
            window = (len(invocations), len(matching))
    text = _report(store, experiment, baseline=baseline, fmt=fmt, confidence=confidence,
                   higher_is_better=higher_is_better, metrics=metrics, seed=seed, color=color,
                   invocations=invocations, verbose=verbose)
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
        return json.dumps(document, indent=2) + "\n"
    line = (f"note: compared the latest {compared:,} of the {stored:,} invocations with these labels"
            f" (at most {RECENT_RUNS:,} runs at the end of a run); abstat show {experiment} compares every one")
    return text.rstrip("\n") + "\n\n" + (f"- {escape.markdown(line)}" if fmt == "markdown" else escape.terminal(line)) + "\n"


def _report(
    store: Any,
    experiment: str,
    *,
    baseline: str | None,
    fmt: str,
    confidence: float,
    higher_is_better: Sequence[str],
    metrics: Sequence[str] | None,
    seed: int,
    color: bool,
    invocations: Sequence[int] | None,
    verbose: bool,
) -> str:
    groups = store.groups_by_metric(experiment, invocations=invocations)  # metric -> variant -> runs
    variants = [v for v in store.variant_names(experiment) if any(v in by_variant for by_variant in groups.values())]
    if not variants:
        return f"experiment {experiment}: no successful runs stored\n" if fmt == "text" else ""
    if baseline is None:
        baseline = variants[0]
    elif baseline not in variants:
        raise UsageError(f"--baseline {baseline!r}: experiment {experiment!r} has no successful runs of it "
                         f"(variants: {', '.join(variants)})")
    if metrics:
        metric_names = list(metrics)
    else:  # the metrics of the runs read (not another pass over the experiment's samples)
        from abstat.store.read import ordered_metrics

        metric_names = ordered_metrics(groups)
    from abstat.render import monitors

    metric_names, monitor_names = monitors.split_monitors(metric_names) if not metrics else (metric_names, [])
    others = monitors.from_groups(groups, monitor_names, baseline, {m: store.unit(experiment, m)
                                                                    for m in monitor_names})
    machine_notes = machine_differences(store, experiment, variants, baseline, invocations)
    from abstat.comparison.commands import command_warnings

    command_notes = command_warnings(store, experiment, invocations)
    sections: list[tuple[str, str | None, dict[str, Any]]] = []
    for metric in metric_names:
        by_variant = groups.get(metric, {})
        data = {name: runs[0] if len(runs) == 1 else runs
                for name in variants if (runs := by_variant.get(name))}
        if baseline in data and len(data) >= 2:
            sections.append((metric, store.unit(experiment, metric), data))
    if len(variants) < 2 or not sections:
        text = _summary_only(store, experiment, variants, metric_names, fmt, groups, invocations)
        if fmt in ("text", "markdown"):  # the medians above pool the runs of every command
            clean = escape.markdown if fmt == "markdown" else escape.terminal
            text += "".join(clean(f"warning: {line}") + "\n" for line in _with_advice(command_notes))
            text += "".join(line + "\n" for line in note_lines(run_notes(store, experiment, invocations),
                                                                 markdown=fmt == "markdown"))
        return text
    from abstat.errors import AbstatError
    from abstat.report.analysis import analyse
    from abstat.render.compare_text import render, summary_block
    from abstat.report.inputs import higher_is_better as is_higher_better
    from abstat.stats.warnings import StatWarning

    rendered: list[tuple[str, str | None, list[Any]]] = []
    not_compared: list[tuple[str, str]] = []
    for metric, unit, data in sections:
        try:
            comparisons = analyse(
                data, baseline=baseline, adjust=None, confidence=confidence / 100.0,
                higher_is_better=is_higher_better(metric, unit, higher_is_better), seed=seed,
            )
        except AbstatError as err:
            not_compared.append((metric, str(err)))
            continue
        for comparison in comparisons:
            note = machine_notes.get(comparison.candidate)
            if note is not None:
                comparison.warnings.append(StatWarning("machine-differs", note, comparison.candidate))
            for variant in dict.fromkeys((comparison.baseline, comparison.candidate)):
                if variant in command_notes:
                    comparison.warnings.append(command_notes[variant])
        rendered.append((metric, unit, comparisons))
    from abstat.report.adjust import adjust_sections, family_caption

    rendered = adjust_sections(rendered)  # one family: every metric x candidate shown (Holm)
    family = family_caption([c for _, _, comps in rendered for c in comps])
    if fmt == "json":
        document = {
            "experiment": experiment,
            "baseline": baseline,
            "metrics": {
                metric: {"unit": unit, "comparisons": json.loads(render(comparisons, fmt="json"))}
                for metric, unit, comparisons in rendered
            },
            "machine_warnings": list(machine_notes.values()),
            "command_warnings": [w.message for w in command_notes.values()],
            "run_notes": run_notes(store, experiment, invocations),
            "not_compared": {metric: reason for metric, reason in not_compared},
            **({"what_else_changed": monitors.as_json(others)} if others.tested else {}),
        }
        return json.dumps(document, indent=2) + "\n"
    if fmt == "csv":
        header: list[str] = []
        body: list[list[Any]] = []
        cells: dict[tuple[str, str], str] = {}  # (baseline, candidate) -> notes of their runs
        for metric, _unit, comparisons in rendered:
            rows = list(csv.reader(io.StringIO(render(comparisons, fmt="csv"))))
            if not rows:
                continue
            header = ["metric", *rows[0], "notes"]
            for row, comparison in zip(rows[1:], comparisons):
                pair = (comparison.baseline, comparison.candidate)
                if pair not in cells:
                    cells[pair] = notes_cell(store, experiment, invocations, pair)
                body.append([metric, *row, cells[pair]])
        return tables.csv_text(header, body) if header else ""
    notes = run_notes(store, experiment, invocations)
    if fmt == "text" and not verbose:
        parts = [escape.terminal(f"experiment {experiment}, baseline {baseline}"),
                 summary_block(rendered, color=color).rstrip("\n")]
    else:
        parts = []
        heading = "## " if fmt == "markdown" else ""
        clean = escape.markdown if fmt == "markdown" else escape.terminal
        for metric, unit, comparisons in rendered:
            parts.append(heading + clean(f"{experiment}: {metric}" + (f" ({unit})" if unit else "")))
            parts.append(render(comparisons, fmt=fmt, color=color and fmt == "text", unit=unit, metric=metric,
                                footnotes=fmt != "text").rstrip("\n"))
            parts.append("")
        if fmt == "text":  # --verbose: each footnote with what to do about it
            parts.append(summary_block(rendered, color=color, advice=True).rstrip("\n"))
        elif family:
            parts.append(clean(family[0].upper() + family[1:] + "."))
    clean = escape.markdown if fmt == "markdown" else escape.terminal
    for metric, reason in not_compared:
        parts.append(clean(f"{experiment}: {metric}: not compared: {reason}"))
    if not rendered:
        for note in [*machine_notes.values(), *_with_advice(command_notes)]:
            parts.append(clean(f"warning: {note}"))
    if others.tested:
        parts += ["", *monitors.lines(others, markdown=fmt == "markdown")]
    parts += note_lines(notes, markdown=fmt == "markdown")
    return "\n".join(parts).rstrip("\n") + "\n"


def _with_advice(warnings: dict[str, Any]) -> list[str]:
    """Warnings shown outside a table's footnotes, each with its footnote's advice."""
    from abstat.report.notes import KINDS

    return [f"{w.message}; {KINDS[w.code][1]}" for w in warnings.values()]


def run_notes(store: Any, experiment: str, invocations: Sequence[int] | None = None,
              variants: Sequence[str] | None = None) -> list[dict[str, Any]]:
    """The notes the runs left (``{"note", "runs"}``), each once with its count;
    only those of ``variants`` when given."""
    getter = getattr(store, "run_notes", None)
    if getter is None:
        return []
    return getter(experiment, invocations) if variants is None else getter(experiment, invocations, variants)


def notes_cell(store: Any, experiment: str, invocations: Sequence[int] | None, variants: Sequence[str]) -> str:
    """The CSV ``notes`` cell of a row about ``variants``: the notes their
    successful runs left, joined by ``; `` as ``abstat export`` joins a run's
    notes, each once (figures merged into ranges, as the text shows them)
    with the variants that left it and the run count:
    ``killed processes ... (b: 3 runs); peak RSS not recorded: at most ... 25320 to 25328 KiB ... (a, b: 6 runs)``."""
    variants = list(dict.fromkeys(variants))
    entries: list[dict[str, Any]] = []
    left_by: dict[str, list[str]] = {}  # a note with its figures masked -> the variants that left it
    for name in variants:
        for entry in run_notes(store, experiment, invocations, [name]):
            entries.append(entry)
            who = left_by.setdefault(_NUMBER.sub("#", str(entry["note"])), [])
            if name not in who:
                who.append(name)
    parts = []
    for entry, who in zip(merge_notes(entries), left_by.values()):  # both in order of first appearance
        count = int(entry.get("runs") or 0)
        parts.append(f"{entry['note']} ({', '.join(who)}: {count} run{'s' if count != 1 else ''})")
    return "; ".join(parts)


_NUMBER = re.compile(r"\d+(?:\.\d+)?")


def merge_notes(notes: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Notes that differ only in their figures, as one with ranges:
    ``at most abstat's own 20228 to 20244 KiB`` (run counts added up)."""
    groups: dict[str, list[dict[str, Any]]] = {}
    for entry in notes:
        groups.setdefault(_NUMBER.sub("#", str(entry["note"])), []).append(entry)
    merged = []
    for key, entries in groups.items():
        figures = [_NUMBER.findall(str(e["note"])) for e in entries]
        texts = iter(key.split("#"))
        parts = [next(texts)]
        for position, rest in enumerate(texts):
            column = [float(f[position]) for f in figures]
            low, high = min(column), max(column)
            # a figure that does not vary stays as written (127.0.0.1 is no range)
            parts.append(figures[0][position] if low == high else f"{low:g} to {high:g}")
            parts.append(rest)
        merged.append({"note": "".join(parts), "runs": sum(int(e.get("runs") or 0) for e in entries)})
    return merged


def note_lines(notes: Sequence[dict[str, Any]], *, markdown: bool = False) -> list[str]:
    lines = [""] if notes else []
    for entry in merge_notes(notes):
        count = entry.get("runs") or 0
        where = f" ({count} run{'s' if count != 1 else ''})" if count > 1 else ""
        text = f"note: {entry['note']}{where}"
        lines.append(f"- {escape.markdown(text)}" if markdown else escape.terminal(text))
    return lines


def _summary_only(store: Any, experiment: str, variants: list[str], metrics: Sequence[str], fmt: str,
                  groups: dict[str, dict[str, list[list[float]]]], invocations: Sequence[int] | None) -> str:
    """Per-variant medians when there is nothing to compare (``groups`` as ``Store.groups_by_metric``)."""
    import statistics

    rows = []
    for metric in metrics:
        unit = store.unit(experiment, metric)
        for name in variants:
            values = [v for group in groups.get(metric, {}).get(name, []) for v in group]
            if values:
                rows.append({"metric": metric, "variant": name, "n": len(values), "unit": unit,
                             "median": statistics.median(values), "min": min(values), "max": max(values)})
    if fmt == "json":
        # "note" stays in the document's shape (it is always null now that the comparison always exists)
        return json.dumps({"experiment": experiment, "summary": rows, "note": None}, indent=2) + "\n"
    if fmt == "csv":
        notes = {name: notes_cell(store, experiment, invocations, [name]) for name in variants}
        return tables.csv_text(["metric", "variant", "n", "median", "min", "max", "unit", "notes"],
                               [[r["metric"], r["variant"], r["n"], repr(r["median"]), repr(r["min"]),
                                 repr(r["max"]), r["unit"] or "", notes[r["variant"]]] for r in rows])
    head = f"experiment {experiment}" + (" (one variant: nothing to compare)" if len(variants) < 2 else "")
    body = []
    for metric in metrics:
        mine = [r for r in rows if r["metric"] == metric]
        if not mine:
            continue
        scale = common_scale([v for r in mine for v in (r["median"], r["min"], r["max"])], mine[0]["unit"], metric)
        body += [[r["metric"], r["variant"], f"{r['n']:,}", scale(r["median"]), scale(r["min"]), scale(r["max"])]
                 for r in mine]
    lines = [escape.terminal(head)]
    lines += ["  " + line for line in tables.plain(["metric", "variant", "N", "median", "min", "max"], body,
                                                     ["l", "l", "r", "r", "r", "r"], rule=False)]
    return "\n".join(lines) + "\n"
