"""``abstat publish DIR``: a static, self-contained site from a store (SQLite or PostgreSQL).

``index.html`` lists the experiments (variants, hosts, runs, last run, latest verdict) and the
history series (revisions, change points), filterable on the page without scripts (radio
buttons and CSS); ``experiments/*.html`` hold each experiment's report (the HTML report's body:
table, distributions, machines); ``series/*.html`` each history series with its change points
drawn; ``regressions.html`` every change point that made a series slower (worse), largest
first.  Pages link to one another by relative paths, so the site works from ``file://`` and
from any web server; nothing is fetched (the report's Content-Security-Policy).

Publishing is incremental: ``DIR/.abstat-publish.json`` keeps, per experiment, a fingerprint
of its runs (invocations, runs, last run) and of ``plots``, and what the index needs; an experiment whose
fingerprint did not change keeps its pages.  The file is read as untrusted input: anything
malformed in it only makes every page be rewritten.
"""

from __future__ import annotations

from abstat.render.site.site import Published, publish

__all__ = ["Published", "publish"]
