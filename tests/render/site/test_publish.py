"""abstat publish: a static site from a store, navigated in Chromium from file:// (issue 27)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from urllib.parse import urljoin

import pytest
from support.publish_store import EVIL, add_nightly, fill
from support.store_pg import new_store, server_url
from support.chromium import chromium, console_lines, needs_chromium

from abstat.render.site import publish
from abstat.render.site.site import MANIFEST
from abstat.store import open_store
from support import paths


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    root = tmp_path_factory.mktemp("publish")
    store = str(root / "team.db")
    fill(store)
    done = publish(store, str(root / "site"))
    return root, store, done


def read(root, relative: str) -> str:
    return (root / "site" / relative).read_text(encoding="utf-8")


def links(html: str) -> list[str]:
    return re.findall(r'<a href="([^"#][^"]*)"', html)


def test_site_has_every_page_and_links_resolve(site):
    root, _, done = site
    assert sorted(p for p in done.written if p.endswith(".html"))[:2] == [
        "experiments/hcall-14eb1f93.html",
        "experiments/nightly-d7900bba.html",
    ]
    pages = [p for p in done.written if p.endswith(".html")]
    assert {"index.html", "regressions.html"} <= set(pages) and sum(p.startswith("series/") for p in pages) == 1
    for page in pages:
        html = read(root, page)
        assert "<script" not in html.lower() and "default-src 'none'" in html
        for href in links(html):
            assert not re.match(r"[a-z]+:", href) and (root / "site" / os.path.dirname(page) / href).exists(), href


def test_index_says_the_verdicts_and_escapes_names(site):
    root, _, _ = site
    index = read(root, "index.html")
    hcall = re.search(r'<tr class="row (\w+)"><td><a href="experiments/hcall[^"]*">hcall</a>.*?</tr>', index).group(0)
    assert 'class="row faster"' in hcall and "2 faster of 2 compared" in hcall
    assert "&lt;script&gt;document.title=&quot;PWNED&quot;&lt;/script&gt;" in index and EVIL not in index
    series = re.search(r'<tr class="row changed slower">.*?</tr>', index).group(0)
    assert "+9.5% at r15" in series or re.search(r"\+(9|10)\.\d% at r1[45]", series)
    assert "#show-slower:checked ~ div.lists tr.row:not(.slower) { display: none; }" in index
    regressions = read(root, "regressions.html")
    assert re.search(r"<td>r1[45]</td><td>\+(9|10)\.\d%</td>", regressions)


def test_republish_rewrites_only_what_changed(site, tmp_path):
    root, store, _ = site
    again = publish(store, str(root / "site"))
    assert sorted(again.unchanged) == sorted(["hcall", "nightly", f"x{EVIL}"])
    assert sorted(again.written) == ["index.html", "regressions.html"]
    copy = tmp_path / "copy.db"
    copy.write_bytes((root / "team.db").read_bytes())
    site_copy = tmp_path / "site"
    publish(str(copy), str(site_copy))
    with open_store(str(copy)) as handle:
        add_nightly(handle, [30])
    third = publish(str(copy), str(site_copy))  # the speed is benchmarks/publish_speed.py
    assert "nightly" not in third.unchanged and sorted(third.unchanged) == ["hcall", f"x{EVIL}"]
    series = [p for p in third.written if p.startswith("series/")]
    assert len(series) == 1 and "31 revision(s)" in (site_copy / series[0]).read_text(encoding="utf-8")


def test_publish_from_postgresql_matches_sqlite(site, tmp_path):
    """The same runs in PostgreSQL give the same index (names, verdicts, series)."""
    root, _, _ = site
    server_url()  # skips when no PostgreSQL can be started
    url = new_store("postgresql", tmp_path)
    fill(url)
    publish(url, str(tmp_path / "pg"))

    def rows(html: str) -> list[str]:
        return [re.sub(r"<td>[0-9T:Z-]{20}</td>", "", row) for row in re.findall(r'<tr class="row.*?</tr>', html)]

    assert rows((tmp_path / "pg" / "index.html").read_text(encoding="utf-8")) == rows(read(root, "index.html"))


def test_a_damaged_manifest_only_rewrites(site, tmp_path):
    root, store, _ = site
    target = tmp_path / "site"
    target.mkdir()
    (target / MANIFEST).write_text(
        json.dumps(
            {
                "experiments": {
                    "hcall": {"fingerprint": 3, "entry": "<b>"},
                    "zzz": {"fingerprint": "x", "entry": {}, "pages": ["../../etc/passwd"]},
                }
            }
        )
    )
    done = publish(store, str(target))
    assert done.unchanged == [] and done.removed == [] and (target / "index.html").exists()
    (target / MANIFEST).write_text("{not json")
    assert publish(store, str(target)).unchanged == []


def test_cli_publish_and_bad_directory(site, tmp_path):
    root, store, _ = site
    env = dict(os.environ, PYTHONPATH=paths.SRC)
    done = subprocess.run(
        [sys.executable, "-m", "abstat", "publish", "--store", store, str(tmp_path / "s")],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert done.returncode == 0 and "wrote 6 page(s)" in done.stdout, done.stderr
    (tmp_path / "file").write_text("x")
    bad = subprocess.run(
        [sys.executable, "-m", "abstat", "publish", "--store", store, str(tmp_path / "file")],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert bad.returncode == 2 and "not a directory" in bad.stderr and "Traceback" not in bad.stderr
    for name, content in (("garbage.db", b"\x00not a store" * 200), ("empty.db", b"")):
        (tmp_path / name).write_bytes(content)
        proc = subprocess.run(
            [
                sys.executable,
                "-m",
                "abstat",
                "publish",
                "--store",
                str(tmp_path / name),
                str(tmp_path / f"site-{name}"),
            ],
            capture_output=True,
            text=True,
            env=env,
            timeout=120,
        )
        assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1 and name in proc.stderr
        assert (tmp_path / name).read_bytes() == content and not (tmp_path / f"site-{name}").exists()
    missing = subprocess.run(
        [sys.executable, "-m", "abstat", "publish", "--store", str(tmp_path / "no.db"), str(tmp_path / "s2")],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert missing.returncode == 2 and "Traceback" not in missing.stderr


# -- Chromium: index -> experiment -> series, nothing but file:// ----------------------------


def page_requests(net_log: str) -> list[str]:
    """URLs the page asked for (initiator: the page's opaque file origin), not the browser's own."""
    events = json.loads(
        open(net_log, encoding="utf-8").read().rstrip().rstrip(",") + ("" if net_log.endswith("]}") else "")
    )
    urls = []
    for event in events.get("events", []):
        params = event.get("params") or {}
        initiator = str(params.get("initiator", ""))
        if "url" in params and (initiator == "null" or initiator.startswith("file:")):
            urls.append(params["url"])
    return urls


def visit(tmp_path, url: str, *extra: str) -> tuple[str, list[str]]:
    net = tmp_path / f"net{len(list(tmp_path.glob('net*')))}.json"
    done = chromium(tmp_path, url, f"--log-net-log={net}", *extra)
    assert done.returncode == 0 and console_lines(done.stderr) == [], done.stderr[-2000:]
    return done.stdout, page_requests(str(net))


@needs_chromium
def test_the_request_check_sees_a_page_that_fetches(tmp_path):
    """The control: a page (no CSP) that loads an image from loopback is caught."""
    page = tmp_path / "fetches.html"
    page.write_text('<!DOCTYPE html><p>x</p><img src="http://127.0.0.1:9/x.png">')
    _, requests = visit(tmp_path, page.as_uri(), "--dump-dom")
    assert any(r.startswith("http://127.0.0.1:9/") for r in requests)


@needs_chromium
def test_chromium_navigates_the_site_from_file(site, tmp_path):
    root, _, _ = site
    index_url = (root / "site" / "index.html").as_uri()
    index, requests = visit(tmp_path, index_url, "--dump-dom")
    assert requests == [] and "<title>abstat: experiments and history</title>" in index
    experiment = urljoin(index_url, next(h for h in links(index) if "hcall" in h))
    dom, requests = visit(tmp_path, experiment, "--dump-dom")
    assert requests == [] and '<table class="matrix" id="summary">' in dom and dom.count("<svg") == 2
    series = urljoin(index_url, next(h for h in links(index) if h.startswith("series/")))
    dom, requests = visit(tmp_path, series, "--dump-dom")
    assert requests == [] and 'class="change"' in dom and "abstat history" in dom
    back = urljoin(series, next(h for h in links(dom) if "experiments/" in h))
    assert back == urljoin(index_url, next(h for h in links(index) if "nightly" in h))
    evil = urljoin(index_url, next(h for h in links(index) if "PWNED" in h))
    dom, _ = visit(tmp_path, evil, "--dump-dom")
    assert "<script>document.title" not in dom and "PWNED</title>" not in dom
    for url in (experiment, series):  # the index: test_the_index_filters_without_a_script
        shot = tmp_path / "shot.png"
        visit(tmp_path, url, "--window-size=1280,1200", f"--screenshot={shot}")
        from matplotlib.image import imread

        pixels = (imread(str(shot))[:, :, :3] * 255).round().astype(int)
        header = (pixels[:, :, 0] == 0xEE) & (pixels[:, :, 1] == 0xF1) & (pixels[:, :, 2] == 0xF5)
        assert pixels.shape[1] == 1280 and header.sum() > 1000  # the tables are drawn


@needs_chromium
def test_the_index_filters_without_a_script(site, tmp_path):
    from matplotlib.image import imread

    root, _, _ = site
    index = read(root, "index.html")
    slower_only = root / "site" / "index-slower-test.html"
    slower_only.write_text(
        index.replace('id="show-all" checked>', 'id="show-all">').replace(
            'id="show-slower">', 'id="show-slower" checked>'
        ),
        encoding="utf-8",
    )
    try:
        counts = []
        for page in (root / "site" / "index.html", slower_only):
            shot = tmp_path / f"{page.stem}.png"
            visit(tmp_path, page.as_uri(), "--window-size=1280,900", f"--screenshot={shot}")
            pixels = (imread(str(shot))[:, :, :3] * 255).round().astype(int)
            green = ((pixels == (0xE3, 0xF4, 0xE1)).all(axis=2)).sum()  # tr.faster td.verdict
            red = ((pixels == (0xFB, 0xE3, 0xE1)).all(axis=2)).sum()  # tr.slower td.verdict
            counts.append((green, red))
    finally:
        slower_only.unlink()
    (all_green, all_red), (slower_green, slower_red) = counts
    assert all_green > 500 and all_red > 500  # both rows shown
    assert slower_green == 0 and slower_red > 500  # "slower" hides the faster experiment
