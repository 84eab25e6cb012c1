"""Bisection on continuous measurements: the search (``search``), git worktrees, builds and
recording (``workspace``), the driver of ``abstat bisect`` and ``abstat bisect step``."""
