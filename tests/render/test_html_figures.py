"""Figures that show the data (issue 27): on the seeds' shapes, the bulk fills the plot, legends
stay off the data, one unit per axis and table, constant cells get a sentence, and --plots keeps a
4000-cell page small.  Geometry is read back from the SVG the page holds; Chromium renders it."""

from __future__ import annotations

import re

import pytest
from support.seed_shapes import build_sets, ipi_sets, tsc_sets
from support.chromium import chromium, console_lines, needs_chromium

from abstat.readers.sampleset import SampleSet
from abstat.render.svg_history import BOX as HISTORY_BOX
from abstat.render.svg_history import history_figure
from abstat.render.svg_plots import ECDF_BOX, LEGEND_Y, STRIP_BOX
from abstat.report import api

SHAPES = {
    "tsc": (tsc_sets, {}),
    "build": (build_sets, {}),
    "ipi": (ipi_sets, {"by": "patch", "rows": ["base", "metric"]}),
}


def page(shape: str, **options) -> str:
    make, kwargs = SHAPES[shape]
    return api.render(api.build(make(), **kwargs), "html", **options)


def sections(html: str) -> list[str]:
    return re.findall(r'<section class="cell".*?</section>', html, flags=re.S)


def ecdf_steps(svg: str) -> list[list[tuple[float, float]]]:
    """Each ECDF path as its (x, y) vertices."""
    paths = []
    for d in re.findall(r'<path class="data" d="([^"]*)"', svg):
        x = y = 0.0
        points = []
        for op, value in re.findall(r"([MHV])([-0-9.,]+)", d):
            if op == "M":
                x, y = map(float, value.split(","))
            elif op == "H":
                x = float(value)
            else:
                y = float(value)
            points.append((x, y))
        paths.append(points)
    return paths


def x_at(points: list[tuple[float, float]], fraction: float) -> float:
    left, top, right, bottom = ECDF_BOX
    level = bottom - fraction * (bottom - top)
    return next(x for x, y in points if y <= level + 1e-6)


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_the_bulk_spans_a_third_of_the_plot(shape):
    width = ECDF_BOX[2] - ECDF_BOX[0]
    checked = 0
    for section in sections(page(shape)):
        svg = re.search(r"<svg\b.*?</svg>", section, flags=re.S)
        if svg is None:
            continue
        paths = ecdf_steps(svg.group(0))
        lows, highs = [x_at(p, 0.05) for p in paths], [x_at(p, 0.95) for p in paths]
        # the samples' bulk (5th to 95th percentile of both sets) fills at least a third of the panel,
        assert max(highs) - min(lows) >= width / 3, (shape, lows, highs)
        # and so does each set's own bulk when the sets overlap, unless the clock's grid puts
        # that bulk on one or two steps (one step of three cannot fill a third once padded)
        steps = [len({round(x, 1) for x, _ in p}) for p in paths]
        if max(lows) < min(highs):
            assert all(h - lo >= width / 3 for lo, h, k in zip(lows, highs, steps) if k > 8), (shape, lows, highs)
        checked += 1
    assert checked >= 4


def test_far_outliers_are_clipped_and_said():
    html = page("build")
    syscall = next(s for s in sections(html) if "metric=syscall" in s)
    note = re.search(r'axis-note">([^<]*)', syscall).group(1)
    assert "variant=before 1 above (up to 160.0 ms)" in note and "variant=after 1 above" in note
    assert syscall.count('class="beyond"') == 2  # a mark at the edge per set


def test_a_few_far_outliers_in_a_small_set_do_not_make_a_log_axis():
    """30 quantized samples, 2 of them (7%) 40x the bulk: the axis is clipped to the bulk, not logarithmic."""
    before = [420, 440, 440, 460] * 7 + [440, 440]
    after = [380, 400, 400, 420] * 7 + [400, 17600]
    after[5] = 17600
    sets = [
        SampleSet({"variant": "before"}, [before], unit="cycles"),
        SampleSet({"variant": "after"}, [after], unit="cycles"),
    ]
    (section,) = sections(api.render(api.build(sets), "html"))
    assert "log scale" not in section and "variant=after 2 above (up to 17,600 cycles)" in section
    paths = ecdf_steps(re.search(r"<svg\b.*?</svg>", section, flags=re.S).group(0))
    assert x_at(paths[0], 0.95) - x_at(paths[1], 0.05) >= (ECDF_BOX[2] - ECDF_BOX[0]) / 3
    assert "<td>variant=after</td><td>30</td><td>380</td><td>17,600</td><td>400</td>" in section


def test_legend_is_outside_the_panels():
    for section in sections(page("tsc")):
        svg = re.search(r"<svg\b.*?</svg>", section, flags=re.S).group(0)
        legend = re.findall(r'<g class="legend">(.*?)</g>', svg)
        assert len(legend) == 2
        ys = [float(v) for g in legend for v in re.findall(r'\by[12]?="([-0-9.]+)"', g)]
        assert min(ys) - 12 > ECDF_BOX[3] + 36 and min(ys) - 12 > STRIP_BOX[3] + 36  # below the axis titles
        data = " ".join(re.findall(r'<path class="(?:data|dots)" d="([^"]*)"', svg))
        data_ys = [float(y) for y in re.findall(r"[, ]([0-9.]+)(?=h0|H|$)", data)] + [
            float(y) for y in re.findall(r"V([0-9.]+)", data)
        ]
        assert data_ys and max(data_ys) <= ECDF_BOX[3] + 0.1 < LEGEND_Y - 12


def test_ticks_and_stats_in_one_unit():
    html = page("tsc")
    first = sections(html)[0]
    svg = re.search(r"<svg\b.*?</svg>", first, flags=re.S).group(0)
    ticks = re.findall(r'font-size="11">([^<]*)</text>', svg)
    numbers = [t for t in ticks if re.fullmatch(r"[0-9,.]+", t)]
    assert numbers[:4] == ["400", "420", "440", "460"]  # integers: no 1,000.0, no unit per tick
    assert ">cycles<" in svg
    build = page("build")
    syscall = next(s for s in sections(build) if "metric=syscall" in s)
    assert "<th>Max (µs)</th>" in syscall and "<th>Stddev (µs)</th>" in syscall
    table = re.search(r'<table class="stats">.*?</table>', syscall, flags=re.S).group(0)
    assert " ms<" not in table and " µs<" not in table  # the unit is in the header only


def test_constant_cells_get_a_sentence_and_no_empty_p_value():
    html = page("ipi")
    dry = [s for s in sections(html) if "metric=dry-run" in s]
    assert len(dry) == 2
    for section in dry:
        assert "<svg" not in section
        assert "every sample of patch=with is 0 s and every sample of patch=without is 0 s" in section
    assert not re.search(r";\s*</p>", html) and "p-value;" not in html.replace("p-value from", "")
    assert "<h3>base=with, metric=self-ipi: patch without vs with</h3>" in html


def test_no_warning_sends_the_reader_to_this_page():
    html = api.render(
        api.build(
            [
                SampleSet({"variant": "before"}, [[1.0, 1.1, 0.9, 1.0, 1.05, 0.95] * 5]),
                SampleSet({"variant": "after"}, [[1.0, 2.0, 0.1, 1.0, 1.9, 0.2] * 5]),
            ]
        ),
        "html",
    )
    assert "--format html" not in html


def test_machine_table_is_short_and_agrees_with_the_doctor():
    record = {
        "hostname": "milan",
        "cpu_model": "EPYC",
        "kernel_cmdline": "quiet " * 120,
        "hypervisor_flag": True,
        "hypervisor_type": "unknown (hypervisor CPU flag set)",
        "doctor": {
            "hypervisor": {
                "status": "warn",
                "evidence": "running under a hypervisor: KVM (kvm-clock)"
                "; steal time 0.1% of CPU time since boot: other guests share",
            },
            "smt": {"status": "ok", "evidence": "SMT off"},
        },
    }
    sets = tsc_sets()[:2]
    for s in sets:
        s.machine = dict(record)
    html = api.render(api.build(sets), "html")
    machines = html[html.index('<h2 id="machines">') :]
    assert "unknown (hypervisor CPU flag set)" not in machines
    assert "<tr><th>hypervisor_type</th><td>KVM (kvm-clock) (named by abstat doctor)</td></tr>" in machines
    open_part = machines[: machines.index("<details")]
    assert "doctor: smt" not in open_part and "kernel_cmdline" not in open_part  # collapsed
    assert '<details class="machine-rest"><summary>2 more fields and 2 doctor checks (1 warnings)' in machines
    assert "(720 characters)</summary>" in machines  # the long command line folds


def test_plots_option_keeps_a_large_page_small():
    sets = []
    for row in range(201):  # one more than AUTO_ALL (render/html.py): auto then draws the significant ones only
        for variant, shift in (("before", 1.0), ("after", 1.0 if row % 3 else 0.8)):
            values = [100 * shift + (i * 37 % 11) for i in range(30)]
            sets.append(SampleSet({"bench": f"b{row:03d}", "variant": variant}, [values], unit="ns"))
    report = api.build(sets)
    auto = api.render(report, "html")
    assert auto.count("<svg") == 67  # the significant ones (every third row)
    assert "67 of 201 compared cells drawn (significant)" in auto
    assert api.render(report, "html", plots="none").count("<svg") == 0
    assert api.render(report, "html", plots="all").count("<svg") == 201


def test_history_step_is_visible_despite_outliers():
    revs = [f"r{i:02d}" for i in range(30)]
    values = [[100.0 * (1.1 if i >= 15 else 1.0) + k % 3 for k in range(5)] for i in range(30)]
    values[4][0] = 900.0  # one far outlier
    figure = history_figure(
        revs,
        values,
        [sorted(v)[2] for v in values],
        [(0, 15, 101.0), (15, 30, 111.0)],
        [(15, 101.0, 111.0, False)],
        unit="ns",
        metric="ns",
    )
    greens = [float(y) for y in re.findall(r'y1="([0-9.]+)" x2="[0-9.]+" y2="[0-9.]+" stroke="#2ca02c"', figure.svg)]
    assert abs(greens[0] - greens[1]) > 0.3 * (HISTORY_BOX[3] - HISTORY_BOX[1])
    assert "1 above (up to 900.0 ns)" in figure.note and "+9.9%" in figure.svg
    assert "ns (ns)" not in figure.svg and "1e" not in figure.svg


@needs_chromium
def test_chromium_draws_the_seed_pages_at_1280(tmp_path):
    from matplotlib.image import imread

    for shape in SHAPES:
        target = tmp_path / f"{shape}.html"
        target.write_text(page(shape), encoding="utf-8")
        shot = tmp_path / f"{shape}.png"
        done = chromium(tmp_path, target.as_uri(), "--window-size=1280,1600", f"--screenshot={shot}")
        assert done.returncode == 0 and console_lines(done.stderr) == []
        pixels = (imread(str(shot))[:, :, :3] * 255).round().astype(int)
        blue = (abs(pixels - (0x1F, 0x77, 0xB4)) <= 30).all(axis=2)
        rows, cols = blue.nonzero()
        assert pixels.shape[1] == 1280 and cols.size > 200
        assert cols.max() - cols.min() > 1280 / 5  # the first ECDFs are drawn wide
