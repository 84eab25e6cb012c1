"""Issues 21, 34 (items 6-7) and 40: reproducers, on whichever abstat is first on sys.path: run it on two trees.

    PYTHONPATH=/path/to/old/src python benchmarks/history_reproducers.py
    PYTHONPATH=src python benchmarks/history_reproducers.py

Each line: a reproducer, tab, what ``detect`` reported (change indices, or counts over
seeded series).  A detector without per-sample input (before issue 21) gets the
nightly history's revision medians, as ``abstat history`` gave it.
"""

import os
import json, numpy as np, inspect
import abstat.history.changepoints as C

detect = C.detect
new = "drift" in inspect.signature(detect).parameters
d = json.load(
    open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "data", "history", "otava.json"))
)
out = {}
rng = np.random.default_rng(21)
samples = [list(rng.normal(1000 * (1.03 if i >= 12 else 1), 20, 8)) for i in range(20)]
pts = samples if new else [float(np.median(s)) for s in samples]
out["nightly 20x8, +3% at 12"] = [c.index for c in detect(pts).change_points]
out["Otava single_series (p 1e-4, window 10)"] = [
    c.index for c in detect(d["single_series"]["series"], max_pvalue=0.0001, window=10).change_points
]
out["Otava single_series (defaults)"] = [c.index for c in detect(d["single_series"]["series"]).change_points]
tb = d["tigerbeetle"]["series"]
out["Tigerbeetle (defaults)"] = [(c.index, round(100 * c.relative, 1)) for c in detect(tb).change_points]
out["Tigerbeetle (p 0.01, window 30, min 5%)"] = [
    c.index for c in detect(tb, max_pvalue=0.01, window=30, min_magnitude=0.05).change_points
]
out["noiseless ramp, 1000 points: changes"] = len(detect(np.linspace(0, 1, 1000)).change_points)
for rise in (3, 10, 20, 100):
    rng = np.random.default_rng(9)
    out[f"noisy ramp (rise {rise} SD, 100 points): series alarmed of 200"] = sum(
        bool(detect(np.linspace(0, rise, 100) + rng.normal(0, 1, 100)).change_points) for _ in range(200)
    )
j = np.arange(1000)
y = 0.2 * np.cos(j / 100.0) + 1.0 * (j >= 500)
rng = np.random.default_rng(3)
res = [[c.index for c in detect(y + rng.normal(0, 0.05, 1000)).change_points] for _ in range(20)]
out["cosine + step (noise 0.05), exactly [500] of 20"] = sum(r == [500] for r in res)
out["cosine + step (noise 0.05), other changes reported"] = sum(len([i for i in r if i != 500]) for r in res)
rng = np.random.default_rng(8)
for length in (18, 24, 30):
    miss = 0
    for _ in range(200):
        while True:
            at = int(rng.integers(8, length - 7))
            v = np.r_[rng.normal(1.0, 0.05, at), rng.normal(1.5, 0.05, length - at)]
            if v[:at].max() < v[at:].min():
                break
        miss += at not in [c.index for c in detect(v).change_points]
    out[f"perfectly separated 50% steps, {length} points: missed of 200"] = miss
for k, v in out.items():
    print(f"{k}\t{v}")
# issue 34 item 6: 440 -> 420 -> 440 at revisions 80/120, 5 samples per revision on a grid of 20, 3% interrupts
rng = np.random.default_rng(0)
cyc = []
for level in [440] * 80 + [420] * 40 + [440] * 80:
    v = np.round((level + rng.normal(0, 8, 5)) / 20) * 20
    hit = rng.random(5) < 0.03
    v[hit] *= rng.uniform(1.3, 1.8, int(hit.sum()))
    cyc.append(list(v) if new else float(np.median(v)))
found = detect(cyc)
print(
    f"440 -> 420 -> 440 (grid 20, interrupts)\t{[(c.index, round(100 * c.relative, 1)) for c in found.change_points]}"
    f" segments {[round(m) for _, _, m in found.segment_medians]}"
)
# issue 34 item 7: 1000 revisions of N(100, 1), +3.2 SD at r500-r519
y = np.random.default_rng(1).normal(100, 1, 1000)
y[500:520] += 3.2
print(f"1000 x N(100, 1), +3.2 SD at r500-r519\t{[c.index for c in detect(y).change_points]}")
# issue 40: reported changes whose interval includes 0 (over the reproducers above)
print(
    "reported with an interval including 0\t"
    f"{sum(1 for c in [*found.change_points, *detect(y).change_points, *detect(tb).change_points] if c.low <= 0 <= c.high)}"
)
