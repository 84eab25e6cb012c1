"""The history figure maps its dots and its line of medians through ``Axis.positions`` (numpy, at once):
the same pixels, to the bit, as ``Axis.__call__`` value by value, and the same SVG as drawing each dot
in turn (the reference below is the figure's code before)."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest

from abstat.render import svg_history
from abstat.render.svg_axes import choose_axis


def _draws(rng: random.Random, kind: str, n: int) -> list[list[float]]:
    if kind == "log":
        return [[10 ** rng.uniform(-3, 4) for _ in range(rng.randint(1, 7))] for _ in range(n)]
    values = [[rng.gauss(100, 3) for _ in range(rng.randint(1, 7))] for _ in range(n)]
    if kind == "clipped":
        values[n // 2].append(1e6)
        values[n // 3].append(-1e5)
    if kind == "odd":
        values[1] += [math.nan, math.inf, -0.0, 5e-324, 1e300]
        values[2] = []
    return values


def _old_samples(values, centres, x, y, n):
    left, _, right, _ = svg_history.BOX
    spread = min(12.0, (right - left) / n * 0.5)
    dots = []
    for index, vs in enumerate(values):
        limit = svg_history.MAX_DOTS_PER_REV
        shown = vs if len(vs) <= limit else sorted(vs)[:: math.ceil(len(vs) / limit)]
        for k, value in enumerate(shown):
            if math.isfinite(value):
                dots.append(f"M{x(index) + ((k * 0.6180339887) % 1.0 - 0.5) * spread:.1f} {y(value):.1f}h0")
    out = [
        f'<path class="dots" d="{"".join(dots)}" stroke="#8fa3b8" stroke-opacity="0.6" stroke-width="3" '
        'stroke-linecap="round"/>'
    ]
    line = [f"{'M' if i == 0 else 'L'}{x(i):.1f} {y(c):.1f}" for i, c in enumerate(centres) if math.isfinite(c)]
    if line:
        out.append(f'<path class="data" d="{"".join(line)}" fill="none" stroke="#1f77b4" stroke-width="1.2"/>')
    return out


@pytest.mark.parametrize("kind", ["linear", "clipped", "log", "odd"])
@pytest.mark.parametrize("n", [1, 7, 300])
def test_dots_and_medians_as_drawn_one_by_one(kind, n):
    rng = random.Random(f"{kind}{n}")
    values = _draws(rng, kind, max(n, 4))[:n]
    if n >= 7:
        values[3] = (values[3] * 40)[:150]  # more than MAX_DOTS_PER_REV: thinned
    finite = sorted(v for vs in values for v in vs if math.isfinite(v))
    y = choose_axis([finite], 250, 30)
    if n == 300:  # each kind of axis
        assert y.kind == {"log": "log", "linear": "linear"}.get(kind, "clipped")
    left, _, right, _ = svg_history.BOX

    def x(index: float) -> float:
        return left + (index + 0.5) / n * (right - left)

    centres = [sorted(vs)[len(vs) // 2] if vs else math.nan for vs in values]
    if n > 1:
        centres[0] = math.nan  # the line then starts with L, as before
    assert svg_history._samples(values, centres, x, y, n) == _old_samples(values, centres, x, y, n)
    assert y.positions(finite) == [y(v) for v in finite]


@pytest.mark.parametrize("kind", ["linear", "clipped", "log", "odd"])
def test_dots_and_medians_from_arrays_as_from_lists(kind):
    rng = random.Random(kind)
    values = _draws(rng, kind, 300)
    values[3] = (values[3] * 40)[:150]
    finite = sorted(v for vs in values for v in vs if math.isfinite(v))
    y = choose_axis([finite], 250, 30)
    n = len(values)

    def x(index: float) -> float:
        return 84 + (index + 0.5) / n * 856

    centres = [sorted(vs)[len(vs) // 2] if vs else math.nan for vs in values]
    samples = svg_history.as_samples(values)
    assert svg_history._samples(samples, centres, x, y, n) == _old_samples(values, centres, x, y, n)


def _ties(rng: random.Random) -> float:
    """A value near a tie of its first decimal (x.x5), or on one, or an exact half of a tenth."""
    return rng.choice([rng.randint(0, 99999) / 10 + 0.05, rng.randint(0, 9999) * 0.05, rng.randint(0, 9999) / 20])


@pytest.mark.parametrize("seed", range(10))
def test_path_text_is_format(seed):
    rng = random.Random(seed)
    draws = [
        rng.uniform(0, 1000),
        _ties(rng),
        rng.uniform(0, 1e6),
        rng.choice([0.0, 0.04, 0.05, 0.15, 0.25, 0.35, 84.25, 999999.94, 999999.96, 9.95, 99.95]),
    ]
    xs = [rng.choice(draws) for _ in range(2000)]
    ys = [rng.choice(draws) for _ in range(2000)]
    expected = "".join(f"M{a:.1f} {b:.1f}h0" for a, b in zip(xs, ys, strict=True))
    assert svg_history.path_text("M", np.array(xs), np.array(ys), "h0") == expected
    assert svg_history.path_text("L", np.array(xs[:1]), np.array(ys[:1]), "") == f"L{xs[0]:.1f} {ys[0]:.1f}"
    assert svg_history.path_text("L", np.array([]), np.array([]), "") == ""


@pytest.mark.parametrize("odd", [-0.0, -0.04, -3.0, 1e6, 2e300, math.inf, math.nan])
def test_path_text_of_values_it_does_not_write_itself(odd):
    xs, ys = np.array([1.25, odd, 3.0]), np.array([2.0, 2.05, odd])
    assert svg_history.path_text("M", xs, ys, "h0") == "".join(
        f"M{a:.1f} {b:.1f}h0" for a, b in zip(xs.tolist(), ys.tolist(), strict=True)
    )
