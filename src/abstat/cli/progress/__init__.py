"""The progress views of the command line: the engine's events drawn on standard error.

:mod:`~abstat.cli.progress.display` (``RunDisplay``, the ``on_event`` of ``abstat run``, ``demo``
and ``noise``), :mod:`~abstat.cli.progress.local` (a run here) and :mod:`~abstat.cli.progress.lab`
(one line per host).
"""
