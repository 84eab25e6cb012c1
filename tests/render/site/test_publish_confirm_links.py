"""Change points on a series page link to their confirmation (``history --confirm``: confirm-BEFORE-AFTER)
and bisection (bisect-GOOD-BAD) when the store holds them, and a republish picks up one stored later
(issue 27)."""

from __future__ import annotations

import re
import shutil

from support.publish_store import add_nightly

from abstat.render.site import publish
from abstat.render.site.site import slug
from abstat.store import open_store


def _ab(store, name: str, before: str, after: str) -> None:
    invocation = store.start_invocation(name, {"hostname": "ci"}, variants=["before", "after"])
    for i in range(10):
        variant = ("before", "after")[i % 2]
        store.add_run(
            invocation,
            variant=variant,
            command="make",
            iteration=i // 2,
            position=i,
            status="ok",
            exit_code=0,
            started_at=9000.0 + i,
            wall=1.0,
            values={"wall": [12.0 * (1.1 if i % 2 else 1)]},
            units={"wall": "s"},
        )
    store.finish_invocation(invocation, "complete")


def _series_page(root) -> str:
    pages = list((root / "series").glob("*.html"))
    assert len(pages) == 1
    return pages[0].read_text()


def _follow_ups(html: str) -> str:
    return html[html.index('id="follow-ups"') :]


def test_change_points_link_to_their_confirmation_and_bisection(tmp_path):
    store_path = str(tmp_path / "team.db")
    with open_store(store_path) as store:
        add_nightly(store, range(30))  # a +10% step at r15
    site = tmp_path / "site"
    publish(store_path, str(site))
    first = _follow_ups(_series_page(site))
    assert "r14..r15" in first and "not confirmed" in first and "not bisected" in first
    assert 'class="confirmation"' not in first

    with open_store(store_path) as store:  # history --confirm, then --bisect, stored later
        _ab(store, "confirm-r14-r15", "r14", "r15")
        _ab(store, "bisect-r14-r15", "r14", "r15")
        _ab(store, "confirm-r03-r04", "r03", "r04")  # another change's: not linked here
    again = publish(store_path, str(site))
    assert any(p.startswith("series/") for p in again.written)  # the series page is rewritten
    html = _series_page(site)
    shown = _follow_ups(html)
    row = next(r for r in shown.split("<tr>") if "r14..r15" in r)
    targets = dict(re.findall(r'<a class="(confirmation|bisection)" href="([^"]+)"', row))
    assert targets == {
        "confirmation": f"../experiments/{slug('confirm-r14-r15')}.html",
        "bisection": f"../experiments/{slug('bisect-r14-r15')}.html",
    }
    for kind, target in targets.items():  # the linked pages exist and are the experiments' own
        linked = (site / "series" / target).resolve()
        assert linked.exists()
        assert f"{'confirm' if kind == 'confirmation' else 'bisect'}-r14-r15" in linked.read_text()
    assert "confirm-r03-r04" not in shown
    regressions = (site / "regressions.html").read_text()
    assert f'href="experiments/{slug("confirm-r14-r15")}.html"' in regressions

    # a third publish with nothing new rewrites no experiment page
    third = publish(store_path, str(site))
    assert [p for p in third.written if p.startswith(("series/", "experiments/"))] == []


def test_an_unrelated_new_run_does_not_rewrite_the_series(tmp_path):
    store_path = str(tmp_path / "team.db")
    with open_store(store_path) as store:
        add_nightly(store, range(20))
        _ab(store, "other", "a", "b")
    site = tmp_path / "site"
    publish(store_path, str(site))
    with open_store(store_path) as store:
        _ab(store, "other", "a", "b")
    again = publish(store_path, str(site))
    assert [p for p in again.written if p.startswith(("series/", "experiments/"))] == [
        f"experiments/{slug('other')}.html"
    ]
    shutil.rmtree(site)


def test_the_index_names_hosts_as_report_does(tmp_path):
    """An invocation's ``host`` label (what ``report --rows host`` shows), else its hostname."""
    store_path = str(tmp_path / "h.db")
    with open_store(store_path) as store:
        for hostname, labels in (("box-17.lab", {"host": "milan"}), ("box-18.lab", {})):
            invocation = store.start_invocation("ab", {"hostname": hostname}, labels=labels, variants=["a"])
            store.add_run(
                invocation,
                variant="a",
                command="true",
                iteration=0,
                position=0,
                status="ok",
                exit_code=0,
                started_at=1.0,
                wall=0.01,
                values={"wall": [0.01]},
                units={"wall": "s"},
            )
            store.finish_invocation(invocation, "complete")
    publish(store_path, str(tmp_path / "site"))
    row = next(
        line
        for line in (tmp_path / "site" / "index.html").read_text().split("<tr")
        if ">ab<" in line or "ab.html" in line
    )
    assert "milan" in row and "box-18.lab" in row and "box-17.lab" not in row
