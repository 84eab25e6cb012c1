"""The values of the shared options: percentages and counts, read as the options' types (one
message each, one place)."""

import argparse


def _percent_value(text: str) -> tuple[float, bool]:
    stripped = text.strip()
    try:
        value = float(stripped.rstrip("%").strip())
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a percentage: {text!r}") from None
    if value != value or value in (float("inf"), float("-inf")):
        raise argparse.ArgumentTypeError(f"not a finite percentage: {text!r}")
    return value, stripped.endswith("%")


def percent(text: str) -> float:
    """``2``, ``2%`` or ``2.5 %`` -> the number of percent (finite)."""
    return _percent_value(text)[0]


MAX_CONFIDENCE = 99.99  # percent (attack21 B4: 99.999 took 2.3 GB; the draws are capped since attack22 A2)


def confidence_percent(text: str) -> float:
    """``95``, ``95%`` or ``99.5`` -> the confidence level in percent, in [50, 99.99]."""
    value, _ = _percent_value(text)
    if not 50.0 <= value <= MAX_CONFIDENCE:
        raise argparse.ArgumentTypeError(
            f"{text!r}: the confidence level must be at least 50 and at most {MAX_CONFIDENCE:g} (percent)"
        )
    return value


def power_percent(text: str) -> float:
    """``80`` or ``80%`` -> the power in percent, in (1, 100)."""
    value, with_sign = _percent_value(text)
    if 0.0 < value < 1.0 and not with_sign:
        raise argparse.ArgumentTypeError(
            f"{text!r}: the power is a percentage, like the confidence: {value * 100:g} for {value:g}"
        )
    if not 0.0 < value < 100.0:
        raise argparse.ArgumentTypeError(f"{text!r}: the power must lie strictly between 0 and 100 (percent)")
    return value


def positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r}: must be 1 or more")
    return value


def threshold_percent(text: str) -> float:
    value = percent(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"{text!r}: the threshold must not be negative")
    return value


def cpus_of(text: str | None) -> tuple[int, ...]:
    """``--cpus 0-3,8`` (the kernel's list syntax, as ``doctor --cpus``) as CPU numbers."""
    from abstat.box.doctor.base import parse_cpu_list
    from abstat.engine.parts import MAX_CPU
    from abstat.errors import UsageError

    if text is None:
        return ()
    numbers = text.replace("-", ",").split(",")
    cpus = (
        None
        if len(text) > 4096 or any(n.strip().isdigit() and int(n) > MAX_CPU for n in numbers)
        else (parse_cpu_list(text))
    )
    if not cpus:
        raise UsageError(f"--cpus {text!r}: expected a CPU list such as 0-3,8 (CPUs 0 to {MAX_CPU})")
    return tuple(sorted(set(cpus)))
