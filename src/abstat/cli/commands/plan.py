"""``abstat plan VARIANT...``: how many samples (or runs x samples) a claim needs.

Pilot data as for ``abstat compare``: sample files, ``name=n:mean:stddev``
summaries, ``'name=runs/*.txt'`` (one file per run: nested data) or stored
variants.  The first variant is the baseline.
"""

from __future__ import annotations

import argparse
import math
import sys

from abstat.cli.args import (
    ArgumentParser,
    add_center,
    add_columns,
    add_confidence,
    add_format,
    add_power,
    add_store,
    add_where,
    stored_metric,
)
from abstat.cli.commands.where import resolve_revisions
from abstat.errors import InputError, UsageError
from abstat.render.plan import plan_json, render_text


def _detect(text: str) -> tuple[float, bool]:
    stripped = text.strip()
    relative = stripped.endswith("%")
    try:
        value = float(stripped.rstrip("%").strip())
    except ValueError:
        raise UsageError(f"--detect {text!r}: expected a change such as 1% or 4.5 (absolute)") from None
    if not (value > 0 and math.isfinite(value)):
        raise UsageError(f"--detect {text!r}: must be a positive change")
    return value, relative


def _positive(text: str | None, option: str) -> float | None:
    if text is None:
        return None
    try:
        value = float(text)
    except ValueError:
        raise UsageError(f"{option} {text!r}: expected a positive number") from None
    if not (value > 0 and math.isfinite(value)):
        raise UsageError(f"{option} {text!r}: expected a positive number")
    return value


def build_parser() -> argparse.ArgumentParser:
    parser = ArgumentParser(
        prog="abstat plan",
        examples=("abstat plan --detect 2% --power 90 old=pilot-old.txt new=pilot-new.txt",),
        description="From pilot data, the samples per variant (or runs x samples per run for nested data, "
        "allocated as in Kalibera & Jones 2013) needed to detect a change with a given power.",
    )
    parser.add_argument(
        "variants",
        nargs="+",
        metavar="VARIANT",
        help="pilot data: FILE, name=FILE, 'name=runs/*.txt', name=n:mean:stddev, EXPERIMENT:VARIANT",
    )
    parser.add_argument(
        "--detect",
        default="1%",
        help="change to detect: a percentage of the baseline's centre (the pseudo-median compare compares by default; "
        "the mean with --center mean, summary statistics or runs) or an absolute value (default 1%%)",
    )
    add_power(parser)
    add_confidence(parser)
    parser.add_argument("--run-cost", metavar="SECONDS", help="cost of starting a new run (boot, build, warm-up)")
    parser.add_argument("--sample-cost", metavar="SECONDS", help="cost of one more sample inside a run")
    add_center(parser)
    parser.add_argument(
        "--outliers",
        choices=("none", "tukey", "mad"),
        default="none",
        help="drop the pilot's outliers by this rule, as abstat compare --outliers would (default none)",
    )
    add_columns(parser)
    add_store(parser)
    parser.add_argument(
        "--metric",
        default=None,
        metavar="METRIC",
        help="the metric of stored variants (default: the experiment's own metric, the one its "
        "benchmark prints, else wall)",
    )
    add_where(parser)
    add_format(parser, ("text", "json"), default="text")
    return parser


def main(argv: list[str]) -> int:
    args = build_parser().parse_args(argv)
    args.where = resolve_revisions(args.where, args.store)  # --where rev=PREFIX: the stored full revision
    detect, relative = _detect(args.detect)
    power = args.power / 100.0
    confidence = args.confidence
    if power <= 1.0 - confidence / 100.0:
        raise UsageError(f"--power {args.power:g}: must exceed the false-positive rate {100 - confidence:g}%")
    run_cost = _positive(args.run_cost, "--run-cost")
    sample_cost = _positive(args.sample_cost, "--sample-cost")
    if (run_cost is None) != (sample_cost is None):
        raise UsageError("--run-cost and --sample-cost go together")
    cost_ratio = None if run_cost is None else run_cost / sample_cost  # type: ignore[operator]
    from abstat.readers.specs import parse_variant_specs
    from abstat.report.inputs import parse_where_args
    from abstat.comparison.planning import plan

    metric = args.metric or _own_metric(args.store, args.variants)
    variants = parse_variant_specs(
        args.variants,
        column=args.column,
        delimiters=args.delimiters,
        store=args.store,
        metric=metric,
        where=parse_where_args(args.where),
    )
    try:
        result = plan(
            variants,
            detect=detect,
            relative=relative,
            power=power,
            confidence=confidence,
            cost_ratio=cost_ratio,
            center=args.center,
            outliers=args.outliers,
        )
    except ValueError as err:
        raise InputError(str(err)) from None
    except ArithmeticError:  # overflow: values near the limits of double precision
        raise InputError(
            f"{', '.join(args.variants)}: the pilot values are too large to plan with in double precision"
        ) from None
    if args.format == "json":
        sys.stdout.write(plan_json(result))
    else:
        text = render_text(result)
        metric, unit = stored_metric(args.store, metric, variants.values())
        if metric is not None:  # stored variants: say what the raw figures below are
            first, _, rest = text.partition("\n")
            text = f"{first}\nmetric {metric}" + (f", figures in {unit}" if unit else "") + f"\n{rest}"
        sys.stdout.write(text)
    return 0


def _own_metric(store_arg: str | None, specs: list[str]) -> str:
    """The metric of stored variants when ``--metric`` is not given: the
    experiment's own (the first one its benchmark printed, not one abstat
    measures of every run), else ``wall``."""
    import os
    import re

    values = [spec.split("=", 1)[-1] for spec in specs]
    experiments = {
        v.rsplit(":", 1)[0] for v in values if not os.path.exists(v) and re.fullmatch(r"[^:]+:[A-Za-z0-9_.+@-]+", v)
    }
    if not experiments:
        return "wall"
    from abstat.box.runner.model import BUILTIN_METRICS  # (12 ms of imports: only for stored variants)
    from abstat.store import open_store, resolve_store_path

    try:
        with open_store(resolve_store_path(store_arg), create=False) as store:
            own = [
                m
                for e in sorted(experiments)
                if store.has_experiment(e)
                for m in store.metrics(e)
                if m not in BUILTIN_METRICS
            ]
    except InputError:
        return "wall"
    return own[0] if own else "wall"
