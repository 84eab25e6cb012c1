"""Size of ``abstat report --format html`` against the Markdown of the same report (issue 26, item 10).

Builds reports of CELLS sample sets (CELLS / 2 compared cells, 30 samples each, one row in three
with a real change, half the rows TSC-like quantized), at three sizes 100x apart, and prints for
each ``--plots`` choice the page's bytes, its ratio to the Markdown report of the same table, the
number of figures and of DOM elements (tags), and the growth exponent of the size over the sizes.
Target: the 4000-cell page <= 5 MB with ``--plots auto`` (the default).

    python benchmarks/report_html_size.py [--cells 40,400,4000]
"""

from __future__ import annotations

import argparse
import math
import os
import random
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src"))

from abstat.readers.sampleset import SampleSet  # noqa: E402
from abstat.report import api  # noqa: E402

TARGET = 5 * 1024 * 1024


def sets_of(cells: int, samples: int = 30) -> list[SampleSet]:
    rng = random.Random(0)
    out = []
    for row in range(cells // 2):
        quantized = row % 2 == 0
        for variant, centre in (("before", 440.0), ("after", 425.0 if row % 3 == 0 else 440.0)):
            values = [rng.gauss(centre, 7) for _ in range(samples)]
            if quantized:
                values = [round(v / 20) * 20 for v in values]
            out.append(
                SampleSet(
                    {"host": f"h{row // 10:04d}", "mode": f"m{row % 10}", "variant": variant}, [values], unit="cycles"
                )
            )
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cells", default="40,400,4000", help="comma-separated cell counts")
    args = parser.parse_args(argv)
    sizes = [int(x) for x in args.cells.split(",")]
    results: dict[str, list[int]] = {}
    ok = True
    print(f"{'cells':>6} {'plots':>11} {'bytes':>11} {'/markdown':>9} {'figures':>7} {'tags':>8}")
    for cells in sizes:
        report = api.build(sets_of(cells))
        markdown = len(api.render(report, "markdown").encode())
        for plots in ("auto", "significant", "all", "none"):
            html = api.render(report, "html", plots=plots)
            size = len(html.encode())
            results.setdefault(plots, []).append(size)
            print(
                f"{cells:>6} {plots:>11} {size:>11,} {size / markdown:>9.1f} {html.count('<svg'):>7} "
                f"{html.count('<') - html.count('</'):>8,}"
            )
            if plots == "auto" and cells >= 4000 and size > TARGET:
                ok = False
    if len(sizes) > 1 and sizes[-1] > sizes[0]:
        span = math.log(sizes[-1] / sizes[0])
        for plots, values in results.items():
            print(
                f"growth of the page with --plots {plots}: size ~ cells^{math.log(values[-1] / values[0]) / span:.2f}"
            )
    print(f"4000-cell page with --plots auto <= 5 MB: {'OK' if ok else 'FAIL'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
