"""The comparison a lab run ends with: one per host, each boot a run group.

Text and Markdown: a heading per host, then :func:`abstat.render.run_report.comparison_report`
of that host's runs; JSON: ``{"experiment", "hosts": {HOST: document}}``;
CSV: one table with a ``host`` column first.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from abstat.render.escape import json_text
from abstat.render import escape


def _csv_field(text: str) -> str:
    text = str(escape.csv_cell(text))  # formula cells neutralised (OWASP)
    return '"' + text.replace('"', '""') + '"' if any(c in text for c in ',"\n\r') else text


def lab_report(
    store: Any, experiment: str, hosts: Sequence[str], *, labels: dict[str, str], fmt: str = "text", **options: Any
) -> str:
    """Every host's comparison (``options``: those of ``comparison_report``: baseline, confidence...)."""
    from abstat.render.run_report import comparison_report

    documents: dict[str, Any] = {}
    out: list[str] = []
    csv_header = False
    for host in hosts:
        report = comparison_report(store, experiment, fmt=fmt, labels={**labels, "host": host}, **options)
        if fmt == "json":
            documents[host] = json.loads(report) if report.strip() else None
        elif fmt == "csv":
            lines = report.splitlines()
            if lines and not csv_header:
                out.append("host," + lines[0] + "\n")
                csv_header = True
            out.extend(f"{_csv_field(host)},{line}\n" for line in lines[1:])
        else:
            heading = "# " if fmt == "markdown" else "== "
            shown = escape.markdown(host) if fmt == "markdown" else escape.terminal(host)
            out.append(f"{heading}host {shown}{'' if heading == '# ' else ' =='}\n")
            out.append(report)
    if fmt == "json":
        out.append(json_text({"experiment": experiment, "hosts": documents}))
    return "".join(out)
