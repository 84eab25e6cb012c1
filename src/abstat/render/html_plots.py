"""Inline SVG plots for the HTML report (matplotlib, no pyplot state)."""
from __future__ import annotations

import io
import re
from typing import Sequence

_PROLOGUE = re.compile(r"\A.*?(?=<svg[\s>])", re.S)
_METADATA = re.compile(r"\s*<metadata>.*?</metadata>", re.S)


def ecdf_svg(series: Sequence[tuple[str, Sequence[float]]], *, xlabel: str, salt: str,
             width: float = 6.0, height: float = 2.6) -> str:
    """An SVG element (text) with the empirical CDF of each (name, values) series.

    Text is written as SVG ``<text>`` (escaped by matplotlib's XML writer),
    mathtext is off so ``$`` in a name is shown as typed, and ids are salted
    with ``salt`` so several plots can share one HTML page.
    """
    import matplotlib
    from matplotlib.backends.backend_svg import FigureCanvasSVG
    from matplotlib.figure import Figure

    styles = [("#1f77b4", "-"), ("#d62728", "--"), ("#2ca02c", "-."), ("#9467bd", ":")]
    with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": salt,
                                "text.parse_math": False, "font.size": 9}):
        figure = Figure(figsize=(width, height))
        FigureCanvasSVG(figure)
        axes = figure.add_subplot()
        for index, (name, values) in enumerate(series):
            ordered = sorted(values)
            n = len(ordered)
            if not n:
                continue
            ys = [(i + 1) / n for i in range(n)]
            color, dash = styles[index % len(styles)]
            axes.step(ordered, ys, where="post", color=color, linestyle=dash,
                      label=f"{name} (n={n})")
        axes.set_xlabel(xlabel)
        axes.set_ylabel("fraction of samples ≤ x")
        axes.set_ylim(0, 1.02)
        axes.grid(True, alpha=0.3)
        axes.legend(loc="best", fontsize=8)
        return svg_element(figure)


def svg_element(figure: object) -> str:
    """A matplotlib figure as an inline ``<svg>`` element (no XML prologue, no metadata);
    call it inside the ``rc_context`` that set ``svg.hashsalt``."""
    figure.tight_layout()  # type: ignore[attr-defined]
    buffer = io.StringIO()
    figure.savefig(buffer, format="svg", metadata={"Date": None, "Creator": None})  # type: ignore[attr-defined]
    text = _PROLOGUE.sub("", buffer.getvalue(), count=1)
    text = _METADATA.sub("", text, count=1)
    return text.strip()
