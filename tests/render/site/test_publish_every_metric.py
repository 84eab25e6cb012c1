"""publish tells the store's story (issue 35): a +10% regression found on ``user`` time while the wall
clock (a loaded machine) hides it is on the series pages and the regressions page."""

from __future__ import annotations

import random
import re

from abstat.render.site.site import publish
from abstat.store import open_store


def test_a_regression_on_user_time_reaches_the_regressions_page(tmp_path):
    rng = random.Random(5)
    path = str(tmp_path / "s.db")
    with open_store(path) as store:
        for r in range(24):
            invocation = store.start_invocation(
                "loaded", {"hostname": "ci"}, labels={"rev": f"r{r:02d}"}, variants=["build"]
            )
            for i in range(6):
                user = 10.0 * (1.10 if r >= 12 else 1.0) * (1 + rng.gauss(0, 0.005))
                wall = user + rng.uniform(0, 8)  # waiting for the other work: wall is noise, user is not
                store.add_run(
                    invocation,
                    variant="build",
                    command="make",
                    iteration=i,
                    position=i,
                    status="ok",
                    exit_code=0,
                    started_at=100.0 * r + i,
                    wall=wall,
                    values={"wall": [wall], "user": [user]},
                    units={"wall": "s", "user": "s"},
                )
            store.finish_invocation(invocation, "complete")
    site = tmp_path / "site"
    publish(path, str(site))
    series = sorted(p.name for p in (site / "series").iterdir())
    assert len(series) == 2  # wall and user, not only the default metric
    regressions = (site / "regressions.html").read_text()
    assert "No change point made a series worse" not in regressions
    assert re.search(r"<td>r1[12]</td><td>\+(9|10|11)\.\d%</td>", regressions), regressions
