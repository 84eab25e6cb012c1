"""``abstat history``: a benchmark across revisions, its change points and their stability.

abstat history EXPERIMENT [--metric M] [--where k=v] [--format text|markdown|json|html]
abstat history --input asv-results/ --exit-code     # exit 1 when a new change point is found
abstat history nightly --confirm --bisect --build 'make' --run ./bench --run-metric 'ns=ns: (\\d+)'
"""

from __future__ import annotations

import argparse
import math
import os
import sys

from abstat.cli.args.history_parser import build_parser
from abstat.cli.commands.where import resolve_revisions
from abstat.errors import InputError, UsageError
from abstat.history.analysis import HistoryReport


def _confirm(args: argparse.Namespace, report: object, store_path: str | None, render) -> tuple[list, str]:
    """Confirm (and bisect) the report's change points; (confirmations, their rendering)."""
    from abstat.cli.commands.bisect import metric_choice
    from abstat.history.bisect.confirm import render_confirmations
    from abstat.history.bisect.loop import Loop, confirm_and_bisect
    from abstat.store import resolve_store_path

    if not args.run:
        raise UsageError("--confirm needs --run CMD (the benchmark, run in each revision's tree)")
    if args.format not in ("text", "json", "email") or args.output:
        raise UsageError("--confirm writes text, json or email (a mail for a nightly job) to standard output")
    if args.confirm_runs < 3 or (args.timeout is not None and not (args.timeout > 0 and math.isfinite(args.timeout))):
        raise UsageError("--confirm-runs must be at least 3, --timeout a positive number of seconds")
    metric_text = args.run_metric or next((m.strip() for m in ",".join(args.metric).split(",") if m.strip()), "wall")
    metric, spec = metric_choice(metric_text)
    store = store_path or resolve_store_path(args.store)
    _approved(args, report)

    def progress(text: str) -> None:
        sys.stderr.write(f"abstat history: {text}\n")

    loop = Loop(
        repo=args.repo,
        run=args.run,
        metric=metric,
        metric_spec=spec,
        build=args.build,
        runs=args.confirm_runs,
        store=store,
        confidence=args.confidence / 100.0,
        timeout=args.timeout,
        bisect=args.bisect,
    )
    found = confirm_and_bisect(report, loop, progress)
    if args.format != "email":
        return found, render_confirmations(found, args.format)
    from abstat.history.bisect.confirm import render_email

    common = [
        "--repo",
        os.path.abspath(args.repo),
        *(["--build", args.build] if args.build else []),
        "--run",
        args.run,
        "--metric",
        metric_text,
        "--store",
        store,
    ]
    reproduce = {
        (i.before, i.after): ["abstat", "bisect", "--good", i.before, "--bad", i.after, *common] for i in found
    }
    return found, render_email(found, render(report, "text"), reproduce)


def _approved(args: argparse.Namespace, report: object) -> None:
    """The revisions to build are named by the data (a CSV, a store's labels): shown, and built only with --yes."""
    from abstat.history.bisect.confirm import to_confirm
    from abstat.history.revision import checkout_listing
    from abstat.render import escape

    revs = [rev for _, before, after, _ in to_confirm(report) for rev in (before, after)]
    if not revs or args.yes:
        return
    between = " and the commits between each pair (--bisect)" if args.bisect else ""
    sys.stderr.write(f"abstat history: --confirm checks out and builds these revisions{between}:\n")
    sys.stderr.writelines(escape.terminal(line) + "\n" for line in checkout_listing(revs, args.repo))
    raise UsageError("--confirm builds and runs the revisions above, named by the data; check them, then add --yes")


def _check(args: argparse.Namespace) -> None:
    if args.experiment is None and not args.input:
        raise UsageError("give an EXPERIMENT or --input FILE")
    if not (0 < args.max_pvalue <= 1):
        raise UsageError("--max-pvalue must be in (0, 1]")
    if not all(math.isfinite(v) and v >= 0 for v in (args.min_magnitude, args.min_change)):
        raise UsageError("--min-magnitude and --min-change must be percentages >= 0")
    if not (math.isfinite(args.penalty) and args.penalty >= 0):
        raise UsageError("--penalty must be a number >= 0")
    if args.min_segment < 2 or args.window < args.min_segment:
        raise UsageError("--min-segment must be at least 2 and --window at least --min-segment")
    if not os.path.isdir(args.repo):
        raise InputError("--repo: no such directory", path=args.repo)
    if args.output:
        from abstat.cli.outfile import check_output

        check_output(args.output, [*args.input, args.store, args.state])  # before the work: never onto an input


def _analyse(args: argparse.Namespace, store_path: str | None) -> tuple[HistoryReport, dict, str | None]:
    """The history's report, the updated record of change points, and where that record lives."""
    from abstat.history import state as state_mod
    from abstat.history.analysis import Settings, analyse
    from abstat.history.load import load_history
    from abstat.report.inputs import parse_where_args

    history = load_history(
        store_path=store_path,
        experiment=args.experiment,
        inputs=args.input,
        metrics=[m.strip() for item in args.metric for m in item.split(",") if m.strip()] or None,
        where=parse_where_args(resolve_revisions(args.where, args.store)),
        repo=args.repo,
        rev_label=args.rev_label,
        label_columns=args.label_column or None,
    )
    settings = Settings(
        max_pvalue=args.max_pvalue,
        min_magnitude=args.min_magnitude / 100.0,
        min_segment=args.min_segment,
        window=args.window,
        confidence=args.confidence / 100.0,
        drift=args.drift,
        penalty=args.penalty,
        min_change=args.min_change / 100.0,
    )
    state_path = None if args.no_state else (args.state or (state_mod.sidecar_path(store_path) if store_path else None))
    previous = state_mod.load(state_path) if state_path else {}
    report, updated = analyse(history, settings, previous)
    return report, updated, state_path


def _with_confirmations(args: argparse.Namespace, report: object, store_path: str | None, render) -> tuple[str, list]:
    """The text to write: the history's, with the confirmations' added (or, as a mail, instead)."""
    text = render(report, "text" if args.format == "email" else args.format)
    if not (args.confirm or args.bisect):
        return text, []
    confirmed, more = _confirm(args, report, store_path, render)
    if args.format == "email":
        return more, confirmed
    if args.format == "json":
        import json

        from abstat.render.escape import json_text

        return json_text({**json.loads(text), **json.loads(more)}), confirmed
    return text + "\n" + (more or "no change point to confirm\n"), confirmed


def main(argv: list[str]) -> int:
    from abstat.history import state as state_mod
    from abstat.history.render import render

    args = build_parser().parse_args(argv)
    _check(args)
    store_path = None
    if args.experiment is not None:  # files alone need no store code: a quicker start
        from abstat.store import resolve_store_path

        store_path = resolve_store_path(args.store)
    report, updated, state_path = _analyse(args, store_path)
    if args.format == "email" and not (args.confirm or args.bisect):
        raise UsageError("--format email is the mail of --confirm (and --bisect)")
    text, confirmed = _with_confirmations(args, report, store_path, render)
    if args.output:
        from abstat.cli.outfile import write_output

        write_output(args.output, lambda handle: handle.write(text))
    else:
        sys.stdout.write(text)
    if state_path:
        state_mod.keep(state_path, updated)
    elif not args.no_state:  # input read only from files: no store to keep the record beside
        sys.stderr.write(
            "abstat history: note: no record of change points is kept for input read only from files "
            "(every change point is new on every run"
            + (", --exit-code 1 each time" if args.exit_code else "")
            + "); give --state FILE to keep one\n"
        )
    if args.exit_code and (args.confirm or args.bisect):
        return 1 if any(item.holds for item in confirmed) else 0
    return int(args.exit_code and any(s != "kept" for r in report.results for s in r.status.values()))
