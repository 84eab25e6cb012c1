"""Reading a wide CSV of integer columns (perf counters: attack23 #9) against the csv module itself.

``report FILE.csv`` reads a CSV with :func:`abstat.readers.peers.read_csv`: the header, each column's kind
(text, numbers, a configuration of few integers: :mod:`abstat.readers.csvconfig`) and one sample set per
variant and column.  Looking each cell's column up by name (``header.index`` per cell) made it quadratic in
the number of columns (70.8 s for 1,000 rows x 1,500 columns).  At each of ``--columns`` (``--rows`` rows,
two variants, integers up to 10^6 as counters print them) the script times, in this process, best of
``--repeat`` CPU times taken in turn:

- ``read_csv`` on the file's text,
- the anchor: ``csv.reader`` over the same text and ``float`` of every numeric cell (the least a reader
  of the table does),

and prints the ratio to the anchor and the growth exponents of both in the number of cells (1: linear;
the range of sizes is ``max/min`` of ``--columns``, 100x by default).  ``--src`` times another checkout's
``read_csv`` (its ``src`` directory) with the same files, e.g. main's before a change.

    python benchmarks/csv_read_speed.py [--rows 1000] [--columns 15,150,1500] [--repeat 3] [--src DIR]
"""

from __future__ import annotations

import argparse
import csv
import io
import math
import os
import sys

import numpy as np

SRC = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "src")

from text_read_speed import best  # noqa: E402  (best CPU time of each function, taken in turn)


def table(rows: int, columns: int, rng: np.random.Generator) -> str:
    counters = rng.integers(0, 10**6, size=(rows, columns))
    lines = ["variant," + ",".join(f"c{i}" for i in range(columns))]
    lines += [("old" if k % 2 else "new") + "," + ",".join(map(str, counters[k].tolist())) for k in range(rows)]
    return "\n".join(lines) + "\n"


def anchor(text: str) -> int:
    rows = csv.reader(io.StringIO(text))
    next(rows)
    return sum(len([float(cell) for cell in row[1:]]) for row in rows)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1000)
    parser.add_argument("--columns", default="15,150,1500")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--src", default=SRC, help="the src directory whose read_csv is timed")
    args = parser.parse_args()
    sys.path.insert(0, os.path.abspath(args.src))
    from abstat.readers.peers import read_csv

    rng = np.random.default_rng(1)
    sizes = [int(x) for x in args.columns.split(",")]
    print(f"read_csv of {args.src}; {args.rows} rows")
    print(f"{'columns':>8} {'cells':>9} {'read_csv s':>10} {'anchor s':>9} {'ratio':>7} {'ns/cell':>8}  load")
    ours, theirs = [], []
    for columns in sizes:
        text = table(args.rows, columns, rng)
        sets = read_csv("wide.csv", text)
        assert len(sets) == 2 * columns, len(sets)
        mine, reference = best(
            [lambda text=text: read_csv("wide.csv", text), lambda text=text: anchor(text)], args.repeat
        )
        ours.append(mine)
        theirs.append(reference)
        cells = args.rows * columns
        print(
            f"{columns:>8} {cells:>9} {mine:>10.3f} {reference:>9.3f} {mine / reference:>7.2f}"
            f" {mine / cells * 1e9:>8.0f}  {os.getloadavg()[0]:.1f}",
            flush=True,
        )
    if len(sizes) > 1:
        span = math.log(sizes[-1] / sizes[0])
        print(
            f"growth in cells, {sizes[0]} to {sizes[-1]} columns: read_csv n^{math.log(ours[-1] / ours[0]) / span:.2f},"
            f" anchor n^{math.log(theirs[-1] / theirs[0]) / span:.2f}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
