"""publish gives no percentage for a change against a level at or below 0 (attack17 1, the site's half):
history says the relative change is undefined there, and the site's pages must not print one of their own
(before: ``+20.0%`` for -10 -> -12, the sign of a percentage of a negative level)."""

from __future__ import annotations

import random
import re

from abstat.render.site.site import publish
from abstat.store import open_store


def _store(path: str, levels: tuple[float, float]) -> None:
    rng = random.Random(7)
    with open_store(path) as store:
        for r in range(24):
            invocation = store.start_invocation(
                "offset", {"hostname": "ci"}, labels={"rev": f"r{r:02d}"}, variants=["x"]
            )
            for i in range(5):
                value = levels[r >= 12] + rng.gauss(0, 0.05)
                store.add_run(
                    invocation,
                    variant="x",
                    command="probe",
                    iteration=i,
                    position=i,
                    status="ok",
                    exit_code=0,
                    started_at=100.0 * r + i,
                    wall=0.01,
                    values={"offset": [value]},
                    units={"offset": "ns"},
                )
            store.finish_invocation(invocation, "complete")


def _change_cells(site) -> list[str]:
    text = (site / "index.html").read_text() + "".join(p.read_text() for p in (site / "series").iterdir())
    return re.findall(r"([+-]?\d+\.\d%|n/a) at r1[12]", text) + re.findall(r"<td>([+-]?\d+\.\d%|n/a)</td>", text)


def test_a_change_below_zero_has_no_percentage_on_the_site(tmp_path):
    _store(str(tmp_path / "neg.db"), (-10.0, -12.0))
    publish(str(tmp_path / "neg.db"), str(tmp_path / "neg"))
    cells = _change_cells(tmp_path / "neg")
    assert cells and set(cells) == {"n/a"}, cells


def test_a_change_above_zero_keeps_its_percentage(tmp_path):
    _store(str(tmp_path / "pos.db"), (10.0, 12.0))
    publish(str(tmp_path / "pos.db"), str(tmp_path / "pos"))
    cells = _change_cells(tmp_path / "pos")
    assert cells and all(abs(float(cell.rstrip("%")) - 20.0) < 1.0 for cell in cells), cells  # 12 / 10 - 1
