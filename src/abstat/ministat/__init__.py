"""A byte-exact drop-in for ``ministat(1)`` (classic and FreeBSD dialects).

``render_report`` returns the text ministat prints; ``abstat ministat`` (see
:mod:`abstat.ministat.cli`) is the command.  Pure Python on the small-input
path; numpy is only imported to read large integer files quickly.
"""

from abstat.ministat.dataset import SampleSet, sample_set
from abstat.ministat.report import DIALECTS, render_report

__all__ = ["DIALECTS", "SampleSet", "render_report", "sample_set"]
