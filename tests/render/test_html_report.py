"""abstat report --format html: self-contained, escaped, and really rendered by Chromium."""

from __future__ import annotations

import os
import re
import shutil


from abstat.report import api
from support import paths
from support.chromium import CHROMIUM, chromium, console_lines, needs_chromium  # noqa: F401

HERE = str(paths.TESTS)
DATA = os.path.join(HERE, "data", "report")
HCALL = os.path.join(DATA, "hcall")
GOLDEN = os.path.join(DATA, "golden")
PATTERN = "{host}-hcall-{mode}-{variant}"
FILES = [f"{h}-hcall-{m}-{v}" for h in ("milan", "naples") for m in ("pv64", "pv32") for v in ("before", "after")]
EVIL = '<script>document.title="PWNED"</script><img src=x onerror="document.title=1">'


def hcall_html(tmp_path=None, labels=None, pattern=PATTERN, files=FILES, machine=None, **options) -> str:
    """The hcall report as HTML; ``machine(host)``: a machine record for each set."""
    cwd = os.getcwd()
    os.chdir(HCALL)
    try:
        sets = api.load(files, pattern=pattern, labels=labels)
    finally:
        os.chdir(cwd)
    for sample_set in sets if machine else ():
        sample_set.machine = machine(sample_set.labels["host"])
    return api.render(api.build(sets, **options), "html")


def evil_html(tmp_path) -> str:
    """A report whose labels, file names and machine record carry markup."""
    names = []
    for variant in ("before", "after"):
        name = tmp_path / f"x<b>-{variant}"
        shutil.copy(os.path.join(HCALL, f"milan-hcall-pv64-{variant}"), name)
        names.append(str(name))
    sets = api.load(names, pattern="{host}-{variant}", labels=[f"kernel={EVIL}"])
    for sample_set in sets:
        sample_set.machine = {"hostname": EVIL, "cpu": "</dd><script>alert(1)</script>"}
        sample_set.labels["host"] = EVIL
    return api.render(api.build(sets), "html")


def without_svg(html: str) -> str:
    return re.sub(r"<svg\b.*?</svg>", "<svg/>", html, flags=re.S)


# -- static checks ----------------------------------------------------------------


def test_html_golden_without_plots():
    html = hcall_html()
    path = os.path.join(GOLDEN, "hcall.html")
    if os.environ.get("ABSTAT_UPDATE_GOLDEN"):
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(without_svg(html))
    with open(path, encoding="utf-8") as handle:
        assert without_svg(html) == handle.read()


def test_html_is_self_contained():
    html = hcall_html()
    assert html.count("<svg") == 4  # one plot per compared cell
    assert "<script" not in html.lower()
    assert not re.search(r"\b(src|srcset|action|formaction)\s*=", html, re.I)
    assert not re.search(r"""\bhref\s*=\s*["'](?!#)""", html, re.I)  # only in-page links
    assert not re.search(r"url\((?!#)", html)  # no external CSS resources
    assert "@import" not in html and "@font-face" not in html
    no_namespaces = re.sub(r'xmlns(:\w+)?="[^"]*"', "", html)
    assert "http://" not in no_namespaces and "https://" not in no_namespaces
    assert "Content-Security-Policy" in html and "default-src 'none'" in html


def test_every_user_string_is_escaped(tmp_path):
    html = evil_html(tmp_path)
    assert "<script" not in html.lower() and "<img" not in html.lower()
    assert "<b>" not in html
    assert "&lt;script&gt;document.title=&quot;PWNED&quot;&lt;/script&gt;" in html
    assert "x&lt;b&gt;-after" in html
    # inside the SVG plots too (legend text)
    svgs = re.findall(r"<svg\b.*?</svg>", html, flags=re.S)
    assert svgs and all("<b>" not in s for s in svgs)
    assert any("x&lt;b&gt;-before" in s for s in svgs)


def test_dollar_signs_are_not_mathtext(tmp_path):
    for variant in ("before", "after"):
        shutil.copy(os.path.join(HCALL, f"milan-hcall-pv64-{variant}"), tmp_path / f"$x$-{variant}")
    sets = api.load([str(tmp_path / "$x$-before"), str(tmp_path / "$x$-after")], pattern="{host}-{variant}")
    html = api.render(api.build(sets), "html")
    assert "$x$-before (n=30)" in html


# -- Chromium ---------------------------------------------------------------------


@needs_chromium
def test_console_capture_sees_errors(tmp_path):
    """The control: a page that does log errors is caught by console_lines()."""
    page = tmp_path / "noisy.html"
    page.write_text('<!DOCTYPE html><p>x</p><script>console.error("abstat-probe")</script>')
    result = chromium(tmp_path, page.as_uri(), "--dump-dom")
    assert any("abstat-probe" in line for line in console_lines(result.stderr))


@needs_chromium
def test_chromium_renders_the_table_without_console_errors(tmp_path):
    from html import escape

    from abstat.render.matrix import change_text

    page = tmp_path / "report.html"
    page.write_text(hcall_html(), encoding="utf-8")
    cwd = os.getcwd()
    os.chdir(HCALL)
    try:
        report = api.build(api.load(FILES, pattern=PATTERN))
    finally:
        os.chdir(cwd)
    dom = chromium(tmp_path, page.as_uri(), "--dump-dom")
    assert dom.returncode == 0
    assert console_lines(dom.stderr) == []
    assert '<table class="matrix" id="summary">' in dom.stdout
    for row in report.rows:
        assert f">{escape(change_text(row.cells['after']), quote=False)}</td>" in dom.stdout
    shot = tmp_path / "report.png"
    result = chromium(tmp_path, page.as_uri(), f"--screenshot={shot}")
    assert result.returncode == 0 and console_lines(result.stderr) == []
    from matplotlib.image import imread

    pixels = (imread(str(shot))[:, :, :3] * 255).round().astype(int)
    height, width, _ = pixels.shape
    assert (height, width) == (1000, 1200)
    # the table's header cells are painted in #eef1f5, a colour nothing else uses
    header = (pixels[:, :, 0] == 0xEE) & (pixels[:, :, 1] == 0xF1) & (pixels[:, :, 2] == 0xF5)
    rows, cols = header.nonzero()
    assert header.sum() > 2000, "table header not visible in the screenshot"
    assert rows.min() < 200 and cols.min() < 100  # near the top left, where the table is
    # and there is text (dark pixels) inside the table's area
    top = pixels[rows.min() : rows.min() + 250, :700]
    assert (top.sum(axis=2) < 200).sum() > 500


@needs_chromium
def test_script_in_a_label_is_shown_as_text_not_run(tmp_path):
    page = tmp_path / "evil.html"
    page.write_text(evil_html(tmp_path), encoding="utf-8")
    result = chromium(tmp_path, page.as_uri(), "--dump-dom")
    assert result.returncode == 0
    assert console_lines(result.stderr) == []
    dom = result.stdout
    # the DOM has no script or img element, the title was not changed,
    # and the label is there as text (serialised with &lt;)
    assert "<script" not in dom.lower() and "<img" not in dom.lower()
    assert "PWNED</title>" not in dom and "<title>1</title>" not in dom
    assert '&lt;script&gt;document.title="PWNED"&lt;/script&gt;' in dom


# -- issue 10 / 14 / 15: plots written from the data, machine table, extreme input ---------


def machines_html() -> str:
    return hcall_html(
        machine=lambda host: {
            "hostname": host,
            "cpu_model": f"CPU of {host}",
            "microcode": "0x1",
            "governor": None,
            "smt": True,
            "boot_id": f"boot-{host}",
            "vulnerabilities": {"meltdown": "Not affected", "spectre_v2": "Mitigation: x"},
        }
    )


def test_machine_record_is_a_readable_table():
    html = machines_html()
    table = html[html.index('<table class="machine">') :]
    assert "null" not in table and "{" not in table  # no raw nulls, no JSON blobs
    assert "<th>governor</th>" not in table  # recorded by no machine: left out
    assert '<tr class="differs"><th>boot_id</th>' in table and '<tr class="differs"><th>cpu_model</th>' in table
    assert "<tr><th>microcode</th>" in table  # the same everywhere: not highlighted
    assert "affected: spectre_v2" in table


def test_every_compared_cell_has_its_plot_with_its_name():
    html = hcall_html()
    sections = re.findall(r'<section class="cell".*?</section>', html, flags=re.S)
    assert len(sections) == 4
    for section in sections:
        name = re.search(r"<h3>(.*?)</h3>", section).group(1)
        svg = re.search(r"<svg\b.*?</svg>", section, flags=re.S).group(0)
        assert f"<title>{name}</title>" in svg
        dots = "".join(re.findall(r'<path class="dots" d="([^"]*)"', svg))
        assert "empirical CDF" in svg and "box plot" in svg and dots.count("h0") == 60  # one dot per sample


def test_extreme_values_plot_without_overflow(tmp_path):
    # "arange: cannot compute length" with matplotlib
    for variant, values in (
        ("before", [1e308, 1.5e308, 1.2e308, 1.7e308, 1.1e308]),
        ("after", [1.3e308, 1.6e308, 1.4e308, 1.75e308, 1.25e308]),
    ):
        (tmp_path / f"big-{variant}").write_text("\n".join(repr(v) for v in values))
    sets = api.load([str(tmp_path / "big-before"), str(tmp_path / "big-after")], pattern="{host}-{variant}")
    html = api.render(api.build(sets), "html")
    svg = re.search(r"<svg\b.*?</svg>", html, flags=re.S).group(0)
    assert "inf" not in svg and "nan" not in svg.lower().replace("nan-", "")
    numbers = [float(x) for x in re.findall(r'(?:x|y|cx|cy|x1|x2|y1|y2)="(-?[0-9.]+)"', svg)]
    assert numbers and all(-1 <= x <= 1000 for x in numbers)


def test_non_utf8_label_is_shown_escaped(tmp_path):
    # matplotlib raised TypeError: set_text() on surrogates
    sets = []
    for variant in ("before", "after"):
        sets += api.load(
            [os.path.join(HCALL, f"milan-hcall-pv64-{variant}")],
            pattern=None,
            labels=[f"variant={variant}", "host=h\udcff"],
        )
    html = api.render(api.build(sets), "html")
    html.encode("utf-8")  # writable
    # the undecodable byte is shown as the byte it was (report/inputs.py display names)
    assert "h\\xff" in html and "\udcff" not in html and html.count("<svg") == 1


@needs_chromium
def test_chromium_screenshot_at_1280(tmp_path):
    """The page a reviewer prints: table first, plots at a useful width, machines highlighted."""
    page = tmp_path / "machines.html"
    page.write_text(machines_html(), encoding="utf-8")
    shot = tmp_path / "page.png"
    result = chromium(tmp_path, page.as_uri(), "--window-size=1280,5200", f"--screenshot={shot}")
    assert result.returncode == 0 and console_lines(result.stderr) == []
    from matplotlib.image import imread

    pixels = (imread(str(shot))[:, :, :3] * 255).round().astype(int)
    height, width, _ = pixels.shape
    assert width == 1280

    def where(rgb: tuple[int, int, int], tolerance: int = 0):
        match = (abs(pixels - rgb) <= tolerance).all(axis=2)
        return match.nonzero()

    header_rows, _ = where((0xEE, 0xF1, 0xF5))  # the summary table's header: first
    plot_rows, plot_cols = where((0x1F, 0x77, 0xB4), 40)  # the baseline's ECDF line and dots
    machine_rows, _ = where((0xFF, 0xF4, 0xD6))  # highlighted machine fields
    assert header_rows.size and header_rows.min() < 150
    assert plot_rows.size and plot_rows.min() > header_rows.max()
    frame_rows, frame_cols = where((0x88, 0x88, 0x88))  # the plots' panel frames
    frame_cols = frame_cols[frame_rows > header_rows.max() + 100]
    assert frame_cols.max() - frame_cols.min() > 0.7 * width  # plots use the page's width
    assert machine_rows.size > 1000 and machine_rows.min() > plot_rows.max()
