"""The run report (:mod:`abstat.render.run_report`) when nothing is compared (one variant, or no row with
two): each row's per-variant count, median, minimum and maximum, as text, JSON or CSV.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from abstat.render.escape import json_text
from abstat.render import escape, tables
from abstat.render.run_notes import notes_cell
from abstat.render.run_rows import Stored
from abstat.render.units import common_scale


def medians_report(stored: Stored, names: Sequence[str], fmt: str) -> str:
    """Per-variant medians when there is nothing to compare (one row per metric and unit)."""
    rows = _summary_rows(stored, names)
    variants = stored.variants
    if fmt == "json":
        # "note" stays in the document's shape (it is always null now that the comparison always exists)
        return json_text({"experiment": stored.experiment, "summary": rows, "note": None})
    if fmt == "csv":
        return _summary_csv(stored, rows)
    head = f"experiment {stored.experiment}" + (" (one variant: nothing to compare)" if len(variants) < 2 else "")
    lines = [escape.terminal(head)]
    lines += [
        "  " + line
        for line in tables.plain(
            ["metric", "variant", "N", "median", "min", "max"],
            _summary_table(names, rows),
            ["l", "l", "r", "r", "r", "r"],
            rule=False,
        )
    ]
    return "\n".join(lines) + "\n"


def _summary_csv(stored: Stored, rows: list[dict[str, Any]]) -> str:
    """The medians as CSV, with the notes of each variant's runs."""
    notes = {name: notes_cell(stored.store, stored.experiment, stored.invocations, [name]) for name in stored.variants}
    return tables.csv_text(
        ["metric", "variant", "n", "median", "min", "max", "unit", "notes"],
        [
            [
                r["metric"],
                r["variant"],
                r["n"],
                repr(r["median"]),
                repr(r["min"]),
                repr(r["max"]),
                r["unit"] or "",
                notes[r["variant"]],
            ]
            for r in rows
        ],
    )


def _summary_table(names: Sequence[str], rows: list[dict[str, Any]]) -> list[list[str]]:
    """The medians' table body: each row's variants, scaled to one unit per row."""
    body = []
    for name in names:
        mine = [r for r in rows if r["row"] == name]
        if not mine:
            continue
        scale = common_scale(
            [v for r in mine for v in (r["median"], r["min"], r["max"])], mine[0]["unit"], mine[0]["metric"]
        )
        body += [
            [name, r["variant"], f"{r['n']:,}", scale(r["median"]), scale(r["min"]), scale(r["max"])] for r in mine
        ]
    return body


def _summary_rows(stored: Stored, names: Sequence[str]) -> list[dict[str, Any]]:
    """Each row's per-variant count, median, minimum and maximum (what a report without a comparison shows)."""
    import statistics

    rows = []
    for name in names:
        metric, unit, by_variant = stored.rows.get(name, (name, stored.unit(name), {}))
        for variant in stored.variants:
            values = [v for group in by_variant.get(variant, []) for v in group]
            if values:
                rows.append(
                    {
                        "metric": metric,
                        "variant": variant,
                        "n": len(values),
                        "unit": unit,
                        "median": statistics.median(values),
                        "min": min(values),
                        "max": max(values),
                        "row": name,
                    }
                )
    return rows
