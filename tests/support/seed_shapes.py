"""Sample sets shaped like the seeds' data (/work/shared/seeds), for the HTML, publish and size tests.

* ``tsc_sets``: seed 000, TSC cycles quantized to a 20-cycle grid, ~100 samples per variant,
  a few interrupt outliers 20-60x the bulk, 2 machines x 2 modes;
* ``build_sets``: seed 002, ``make -j8`` elapsed/user/system in seconds, 5 runs, one run slowed
  by background load, plus a 0.9 ms bulk with one 160 ms preemption;
* ``ipi_sets``: seed 003, five IPI metrics in ns, 2x2 design (base x patch), 100 runs, one metric
  all zero (the dry run of a build without the tracer).
"""

from __future__ import annotations

import random

from abstat.readers.sampleset import SampleSet


def tsc_sets(seed: int = 0) -> list[SampleSet]:
    rng = random.Random(seed)
    sets = []
    for host, centre in (("milan", 440), ("naples", 1280)):
        for mode, factor in (("pv64", 1.0), ("pv32", 1.4)):
            for variant, shift in (("before", 1.0), ("after", 0.97)):
                values = [round(rng.gauss(centre * factor * shift, centre * 0.02) / 20) * 20 for _ in range(100)]
                for i in rng.sample(range(100), 3):
                    values[i] = centre * rng.uniform(20, 60)  # an interrupt in the timed window
                sets.append(
                    SampleSet(labels={"host": host, "mode": mode, "variant": variant}, runs=[values], unit="cycles")
                )
    return sets


def build_sets(seed: int = 0) -> list[SampleSet]:
    rng = random.Random(seed)
    sets = []
    for metric, centre in (("wall", 11.2), ("user", 70.5), ("sys", 9.1)):
        for variant, shift in (("before", 1.0), ("after", 0.96)):
            values = [rng.gauss(centre * shift, centre * 0.01) for _ in range(5)]
            values[2] *= 1.25  # the run that met the background load
            sets.append(SampleSet(labels={"metric": metric, "variant": variant}, runs=[values], unit="s"))
    for variant, shift in (("before", 1.0), ("after", 1.05)):
        values = [rng.lognormvariate(0, 0.05) * 0.9e-3 * shift for _ in range(200)]
        values[17] = 0.160  # one preemption
        sets.append(SampleSet(labels={"metric": "syscall", "variant": variant}, runs=[values], unit="s"))
    return sets


IPI_METRICS = ("dry-run", "self-ipi", "normal-ipi", "broadcast-ipi", "broadcast-lock")


def ipi_sets(seed: int = 0) -> list[SampleSet]:
    rng = random.Random(seed)
    sets = []
    for base in ("with", "without"):
        for patch in ("with", "without"):
            for metric, centre in zip(IPI_METRICS, (0.0, 600.0, 4200.0, 95000.0, 180000.0)):
                factor = 0.9 if patch == "with" and metric.startswith("broadcast") else 1.0
                values = [max(0.0, round(rng.lognormvariate(0, 0.08) * centre * factor)) for _ in range(100)]
                sets.append(
                    SampleSet(labels={"base": base, "patch": patch, "metric": metric}, runs=[values], unit="ns")
                )
    return sets
