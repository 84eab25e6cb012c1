"""Inline SVG from a matplotlib figure (used by ``abstat history``'s plots).

The report's many small per-cell plots are drawn directly as SVG
(``render/svg_plots.py``), because one matplotlib
figure per cell cost 80 ms; a history page has one plot per series, where
matplotlib's axes and ticks are worth their cost.
"""
from __future__ import annotations

import io
import re

_PROLOGUE = re.compile(r"\A.*?(?=<svg[\s>])", re.S)
_METADATA = re.compile(r"\s*<metadata>.*?</metadata>", re.S)


def svg_element(figure: object) -> str:
    """A matplotlib figure as an inline ``<svg>`` element (no XML prologue, no metadata);
    call it inside the ``rc_context`` that set ``svg.hashsalt``."""
    figure.tight_layout()  # type: ignore[attr-defined]
    buffer = io.StringIO()
    figure.savefig(buffer, format="svg", metadata={"Date": None, "Creator": None})  # type: ignore[attr-defined]
    text = _PROLOGUE.sub("", buffer.getvalue(), count=1)
    text = _METADATA.sub("", text, count=1)
    return text.strip()
